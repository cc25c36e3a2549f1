"""Inverse questions: the one unknown of a job that just holds on a card.

"How long a context fits 8B QLoRA on my 3090?", "biggest batch?", "largest model I can QLoRA on a
4090?", "how many 4090s?", "cheapest way to finish by tomorrow?". Each is answered by searching
the same memory and time model the forward plan uses (no second formula):

- the limit is the largest value whose forward plan still holds on the card: required memory
  within the card's usable memory (verdict "fits" or "tight"); `comfortable` is the largest
  value with the verdict "fits" (10 % headroom or more);
- memory grows monotonically with context and micro-batch (a property the memory model is tested
  for), so both are found by bisection: contexts in multiples of CONTEXT_STEP tokens up to the
  model's context window, micro-batches up to the JobSpec limit;
- models are catalog entries: the largest (by total parameters) of the asked family, or of any
  family, whose plan holds — every larger entry does not;
- GPU counts are tried on the ladder GPU_COUNT_LADDER, each with the layouts that need fewest
  changes first: DDP (each GPU holds a full copy), ZeRO-2, FSDP/ZeRO-3, then FSDP with the
  optimizer state offloaded to CPU RAM;
- a card for a deadline or budget is the market's own pick (the cheapest run that meets it),
  or, when none does, by how much the best miss misses.

The answer says what binds it: memory, the model's context window, the budget or the deadline.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import get_args

from planner.catalog.gpus import GpuSpec, gpu_by_key, requested_card
from planner.catalog.models import ModelArch, all_models, lookup_model
from planner.errors import PlanningError
from planner.estimate.memory import estimate_memory
from planner.estimate.memory.estimate import required_gib
from planner.estimate.memory.host import GPUS_PER_NODE, node_host_ram_gib
from planner.job.resolved import ResolvedJob
from planner.market.options import in_nodes, verdict_for
from planner.market.suggestions import HF_FAMILY
from planner.messages import SOLVE
from planner.plan import Asked, Lever, Plan, Solve, SolvedCard, Verdict
from planner.resolve.defaults import FSDP_ONLY_FRAMEWORKS, resolve
from planner.spec import MAX_MICRO_BATCH, Framework, JobSpec, Method, Sharding

CONTEXT_STEP = 256
# Without a window in the catalog, contexts are searched up to this (no dense model trains past).
LONGEST_CONTEXT_SEARCHED = 1 << 20
GPU_COUNT_LADDER = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512)
# Cards an inverse question is answered on when it names none: the sizes people rent most.
REFERENCE_CARDS = ("rtx4090", "a100-80g-sxm", "h100-sxm")
ASKED_FIELDS: tuple[str, ...] = get_args(Asked)


def holds(verdict: Verdict) -> bool:
    return verdict != "no"


def job_verdict(job: ResolvedJob, gpu: GpuSpec) -> Verdict:
    """The forward plan's verdict for `job` on its own count of `gpu` (Plan.requested's)."""
    return verdict_for(required_gib(job, job.num_gpus, job.sharding), gpu.usable_gib)


def _largest(lowest: int, highest: int, ok: Callable[[int], bool]) -> int | None:
    """The largest n in [lowest, highest] with ok(n), for ok true up to some n and false after."""
    if not ok(lowest):
        return None
    return highest if ok(highest) else _last_true(lowest, highest, ok)


def _last_true(good: int, bad: int, ok: Callable[[int], bool]) -> int:
    """Bisection between a `good` (ok) and a `bad` (not ok) value: the last ok one."""
    while bad - good > 1:
        middle = (good + bad) // 2
        if ok(middle):
            good = middle
        else:
            bad = middle
    return good


class _Search:
    """One inverse question's job: what the user said, the card, and the architecture given."""

    def __init__(self, spec: JobSpec, gpu: GpuSpec, arch: ModelArch | None) -> None:
        self.spec, self.gpu, self.arch = spec, gpu, arch

    def job(self, **patch: object) -> ResolvedJob:
        return resolve(self.spec.model_copy(update=patch), self.arch)

    def verdict(self, **patch: object) -> Verdict:
        return job_verdict(self.job(**patch), self.gpu)

    def answer(self, value: float | None, **found: object) -> SolvedCard:
        """The answer on this search's card (`value` None: nothing holds)."""
        found.setdefault("count", self.spec.num_gpus or 1)
        return SolvedCard(gpu=self.gpu.key, gpu_name=self.gpu.name, value=value, **found)


def _max_seq_len(search: _Search) -> SolvedCard:
    window = search.job().arch.max_context
    top = (window or LONGEST_CONTEXT_SEARCHED) // CONTEXT_STEP
    steps = _largest(1, top, lambda k: holds(search.verdict(seq_len=k * CONTEXT_STEP)))
    if steps is None:
        return search.answer(None)
    comfortable = _largest(1, steps, lambda k: search.verdict(seq_len=k * CONTEXT_STEP) == "fits")
    binding = "context_window" if steps == top and window else "memory"
    comfortable_tokens = comfortable * CONTEXT_STEP if comfortable else None
    return search.answer(steps * CONTEXT_STEP, comfortable=comfortable_tokens, binding=binding)


def _max_micro_batch(search: _Search) -> SolvedCard:
    def ok(batch: int) -> bool:
        return holds(search.verdict(micro_batch=batch))

    if not ok(1):
        return search.answer(None)
    # Doubling first: the limit is usually small, and each try is a full estimate.
    batch = MAX_MICRO_BATCH
    bound = 1
    while bound < MAX_MICRO_BATCH:
        upper = min(bound * 2, MAX_MICRO_BATCH)
        if not ok(upper):
            batch = _last_true(bound, upper, ok)
            break
        bound = upper
    comfortable = _largest(1, batch, lambda b: search.verdict(micro_batch=b) == "fits")
    return search.answer(batch, comfortable=comfortable)


def _family_models(spec: JobSpec) -> list[ModelArch]:
    """Catalog entries to try, largest first: the named model's family (or families: "qwen"
    is every Qwen generation), else every family."""
    named = lookup_model(spec.model) if spec.model else None
    families = {named.family} if named is not None else _families_named(spec.model)
    models = [m for m in all_models() if not families or m.family in families]
    return sorted(models, key=lambda m: m.total_params, reverse=True)


def _families_named(name: str | None) -> set[str]:
    """The catalog families a name said without a size stands for ('llama 3' → llama3;
    'qwen' → qwen, qwen2.5, qwen3); empty for none."""
    if not name:
        return set()
    word = re.sub(r"[\s_-]", "", name.lower())
    families = {m.family for m in all_models()}
    prefixed = {f for f in families if f.replace("-", "").startswith(word)}
    return prefixed or {f for f in families if word.startswith(f.replace("-", ""))}


def _largest_model(search: _Search) -> SolvedCard:
    models = _family_models(search.spec)
    if search.arch is not None or not models:
        raise PlanningError("say which family to search (e.g. 'largest qwen model')", "model")
    best = comfortable = None
    for model in models:
        verdict = search.verdict(model=model.key, params_b=None)
        if best is None and holds(verdict):
            best = model
        if verdict == "fits":
            comfortable = model
            break
    if best is None:
        return search.answer(None)
    return search.answer(
        round(best.params_b, 3),
        model=best.key,
        model_name=best.name,
        comfortable=round(comfortable.params_b, 3) if comfortable else None,
        comfortable_model=comfortable.name if comfortable else None,
    )


def layouts(spec: JobSpec, count: int) -> list[dict[str, object]]:
    """The layouts tried on `count` GPUs, fewest changes first (the user's own when said)."""
    if spec.sharding is not None:
        return [{"sharding": spec.sharding}]
    if count == 1:
        plain: list[dict[str, object]] = [{"sharding": Sharding.none}]
        if spec.method is Method.full and spec.cpu_offload is None:
            plain.append({"sharding": Sharding.none, "cpu_offload": True})
        return plain
    tried: list[dict[str, object]] = []
    if spec.framework not in FSDP_ONLY_FRAMEWORKS:
        tried += [{"sharding": Sharding.ddp}, {"sharding": Sharding.zero2}]
    tried.append({"sharding": Sharding.fsdp})
    if spec.cpu_offload is None:
        tried.append({"sharding": Sharding.fsdp, "cpu_offload": True})
    return tried


def counts_searched(gpu: GpuSpec) -> list[int]:
    """The GPU counts tried on `gpu`: only cards rented as multi-node clusters
    (options.in_nodes) go past one node of GPUS_PER_NODE."""
    return [n for n in GPU_COUNT_LADDER if in_nodes(gpu) or n <= GPUS_PER_NODE]


def _fewest_gpus(search: _Search) -> SolvedCard:
    """The fewest GPUs that hold the job, without CPU offload first (offload is slow and its
    host RAM is rarely there); either way only layouts whose host RAM one node of the card
    offers (planner.estimate.memory.host.NODE_HOST_RAM_GB), so the count is one a person can
    rent."""
    node_gib = node_host_ram_gib(search.gpu.card_class)
    ladder = counts_searched(search.gpu)
    for offloaded in (False, True):
        for count in ladder:
            for layout in layouts(search.spec, count):
                if bool(layout.get("cpu_offload", search.spec.cpu_offload)) is not offloaded:
                    continue
                job = search.job(num_gpus=count, **layout)
                if not holds(job_verdict(job, search.gpu)):
                    continue
                if (estimate_memory(job).host_ram_gib or 0.0) > node_gib:
                    continue
                sharding = layout["sharding"]
                return search.answer(
                    count,
                    count=count,
                    sharding=getattr(sharding, "value", str(sharding)),
                    cpu_offload=offloaded,
                )
    return search.answer(None)


_SOLVERS: dict[str, Callable[[_Search], SolvedCard]] = {
    "seq_len": _max_seq_len,
    "micro_batch": _max_micro_batch,
    "params_b": _largest_model,
    "num_gpus": _fewest_gpus,
}


def solve_cards(
    spec: JobSpec, asked: Asked, arch: ModelArch | None = None
) -> tuple[list[SolvedCard], list[str]]:
    """The answer on the card the job names, else on each reference card; and what was assumed."""
    card = requested_card(spec.gpu, spec.gpu_vram_gb)
    if card.gpu is not None:
        gpus, said = [card.gpu], list(card.assumptions)
    else:
        gpus = [gpu for key in REFERENCE_CARDS if (gpu := gpu_by_key(key)) is not None]
        said = [
            *card.warnings,
            "no card named: answered for " + ", ".join(gpu.name for gpu in gpus),
        ]
    return [_SOLVERS[asked](_Search(spec, gpu, arch)) for gpu in gpus], said


def solved_spec(spec: JobSpec, answer: SolvedCard, asked: Asked) -> JobSpec:
    """The job at the answer, as the user would ask it forward (the plan shown with it)."""
    # With no card named, the answer's reference card becomes the job's (a size stays a size).
    named = spec.gpu is not None or spec.gpu_vram_gb is not None
    update: dict[str, object] = {} if named else {"gpu": answer.gpu}
    if answer.value is None:
        return spec.model_copy(update=update)
    if asked == "seq_len":
        update["seq_len"] = int(answer.value)
    elif asked == "micro_batch":
        update["micro_batch"] = int(answer.value)
    elif asked == "params_b":
        update |= {"model": answer.model, "params_b": None}
    elif asked == "num_gpus":
        update |= {"num_gpus": answer.count, "sharding": Sharding(answer.sharding)}
        if answer.cpu_offload:
            update["cpu_offload"] = True
    return spec.model_copy(update=update)


def levers(spec: JobSpec, asked: Asked) -> list[tuple[str, dict[str, object]]]:
    """Changes of software (not of the job) that move a context or batch limit, with labels."""
    if asked not in ("seq_len", "micro_batch"):
        return []
    found: list[tuple[str, dict[str, object]]] = []
    stack = spec.framework or Framework.hf
    if spec.method is not Method.full and stack in HF_FAMILY and (spec.num_gpus or 1) == 1:
        found.append(("with Unsloth", {"framework": Framework.unsloth}))
    if spec.method is Method.lora:
        found.append(("with QLoRA", {"method": Method.qlora}))
    if spec.gradient_checkpointing is False:
        found.append(("with gradient checkpointing", {"gradient_checkpointing": True}))
    return found


def solve(spec: JobSpec, asked: Asked, arch: ModelArch | None = None) -> tuple[JobSpec, Solve]:
    """The job at the answer (to plan forward) and the answer itself, for `asked` in
    ASKED_FIELDS other than "gpu" (a deadline or budget pick is the market's: see
    `pick_for_constraints`)."""
    cards, said = solve_cards(spec, asked, arch)
    answered = [card for card in cards if card.value is not None]
    main = answered[0] if answered else cards[-1]
    binding = main.binding if main.value is not None else "memory"
    main_gpu = gpu_by_key(main.gpu) or requested_card(spec.gpu, spec.gpu_vram_gb).gpu
    moved = []
    if main_gpu is not None:
        for label, patch in levers(spec, asked):
            lever = _SOLVERS[asked](_Search(spec.model_copy(update=patch), main_gpu, arch))
            moved.append(Lever(change=label, patch=_json_patch(patch), value=lever.value))
    if asked == "num_gpus" and main_gpu is not None and main.value and not main.cpu_offload:
        # The count without offload leads; say how few hold it with offload, if fewer.
        fewer = _fewest_gpus(_Search(spec.model_copy(update={"cpu_offload": True}), main_gpu, arch))
        if fewer.value is not None and fewer.value < main.value:
            patch = {"num_gpus": fewer.count, "sharding": fewer.sharding, "cpu_offload": True}
            moved.append(Lever(change="with CPU offload", patch=patch, value=fewer.value))
    result = Solve(
        asked=asked,
        value=main.value,
        gpu=main.gpu,
        count=main.count,
        binding=binding,
        comfortable=main.comfortable,
        model=main.model,
        model_name=main.model_name,
        comfortable_model=main.comfortable_model,
        sharding=main.sharding,
        cpu_offload=main.cpu_offload,
        tolerance=_TOLERANCE[asked],
        cards=cards if len(cards) > 1 else [],
        levers=moved,
        assumptions=said,
    )
    return solved_spec(spec, main, asked), result


def _json_patch(patch: dict[str, object]) -> dict[str, object]:
    return {name: getattr(value, "value", value) for name, value in patch.items()}


_TOLERANCE = {
    "seq_len": SOLVE("tolerance.seq_len", step=CONTEXT_STEP),
    "micro_batch": SOLVE("tolerance.micro_batch"),
    "params_b": SOLVE("tolerance.params_b"),
    "num_gpus": SOLVE(
        "tolerance.num_gpus",
        counts=", ".join(str(n) for n in GPU_COUNT_LADDER),
        most=GPUS_PER_NODE,
    ),
    "gpu": SOLVE("tolerance.gpu"),
}


def pick_for_constraints(plan: Plan) -> Solve:
    """The card for a deadline or budget question: the market's cheapest run that meets it,
    else the run that misses by least, with what binds."""
    job = plan.spec
    recommendation = plan.recommendation
    pick = recommendation.meets_deadline or recommendation.within_budget
    binding = "deadline" if job.deadline_hours is not None else "budget"
    if pick is not None:
        return Solve(
            asked="gpu",
            value=pick.gpu,
            gpu=pick.gpu,
            count=pick.count,
            binding=binding,
            tolerance=_TOLERANCE["gpu"],
        )
    fits = [o for o in plan.options if holds(o.verdict) and o.hours is not None]
    closest = None
    if fits and job.deadline_hours is not None:
        closest = min(fits, key=lambda o: (o.hours, o.cost_usd or 0))
    elif fits:
        priced = [o for o in fits if o.cost_usd is not None]
        closest = min(priced, key=lambda o: o.cost_usd) if priced else None
    return Solve(
        asked="gpu",
        value=None,
        gpu=closest.gpu if closest else None,
        count=closest.count if closest else None,
        binding=binding,
        tolerance=_TOLERANCE["gpu"],
        closest_miss=closest,
    )
