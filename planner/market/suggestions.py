"""What to change when the job does not fit (or the named card is poor value), with the effect of
each change computed by re-planning the changed job, never guessed.

Every suggestion carries its patch (JobSpec fields), the per-GPU memory before and after, the
change in training time on the reference card (the named card, else the cheapest option's, else
an H100), and the cheapest run after the change.

Gradient checkpointing gets its own verdict: it is worth it when it lets you rent a cheaper card
(or makes the named one fit); when the job already fits without it, it only costs time, so
turning it off is suggested instead.
"""

from __future__ import annotations

import math
from bisect import bisect_left
from functools import cache
from typing import NamedTuple

from planner.catalog.gpus import GENERIC_PREFIX, GpuSpec, all_gpus, gpu_by_key
from planner.estimate.memory.estimate import rollout_phase
from planner.estimate.memory.host import node_host_ram_gib
from planner.job.resolved import ResolvedJob
from planner.market.options import (
    MarketContext,
    cheapest_run,
    multi_gpu_sharding,
    speed_on,
    verdict_for,
)
from planner.messages import SUGGESTIONS
from planner.plan import Option, Suggestion
from planner.resolve.defaults import changed
from planner.spec import Framework, Method, Objective, Optimizer, Quant, Rollout, Sharding
from planner.units import hours_text

MAX_SUGGESTIONS = 6
# Stacks that run the HF Trainer's eager loss and in-GPU checkpoints, which Unsloth replaces.
HF_FAMILY = (
    Framework.hf,
    Framework.trl,
    Framework.axolotl,
    Framework.llama_factory,
    Framework.ms_swift,
)
REFERENCE_CARD = "h100-sxm"
# A named card whose run costs this much more than the cheapest run is "poor value".
POOR_VALUE_RATIO = 1.5
SHORTEST_CONTEXT_SUGGESTED = 512
# A change that leaves the job too big is worth showing only if it cuts memory by 5 % or more.
MEANINGFUL_CUT = 0.95
# A vLLM pool this much above the engine's own weights, one round's KV cache and CUDA graphs.
VLLM_POOL_MARGIN = 1.25
# Fields whose change is software or settings (the stack, LoRA's quantisation, the optimizer,
# what is recomputed or offloaded), not where the job runs nor what data it trains on.
SOFTWARE_FIELDS = frozenset(
    {
        "framework",
        "method",
        "quant",
        "optimizer",
        "gradient_checkpointing",
        "cpu_offload",
        "activation_offloading",
        "micro_batch",
        "grad_accum",
    }
)
SHARDING_NAMES = {Sharding.fsdp: "FSDP", Sharding.zero3: "ZeRO-3"}
# Stacks with an activation-offloading switch: TRL's SFTConfig(activation_offloading=True)
# (behind HF Trainer recipes) and torchtune's enable_activation_offloading.
OFFLOADS_ACTIVATIONS_ON_REQUEST = frozenset({Framework.hf, Framework.trl, Framework.torchtune})


class Change(NamedTuple):
    label: str
    patch: dict[str, object]
    changes_the_job: bool  # a different model quality or data shape, not just a setting


def candidate_changes(context: MarketContext, card: GpuSpec | None) -> list[Change]:
    job = context.job
    changes = []
    if not job.gradient_checkpointing:
        changes.append(Change("gradient checkpointing", {"gradient_checkpointing": True}, False))
    if job.method == Method.full:
        changes.append(Change(SUGGESTIONS("label.lora_for_full"), {"method": Method.lora}, True))
        if job.optimizer in (Optimizer.adamw, Optimizer.paged_adamw):
            changes.append(
                Change(SUGGESTIONS("label.adamw_8bit"), {"optimizer": Optimizer.adamw_8bit}, False)
            )
    if job.method in (Method.full, Method.lora):
        qlora = {"method": Method.qlora, "quant": Quant.nf4}
        instead_of = "lora" if job.method == Method.lora else "full"
        changes.append(Change(SUGGESTIONS(f"label.qlora_for_{instead_of}"), qlora, True))
    # An online job's length is its prompt + completion: shortening the completion is below.
    if job.seq_len >= 2 * SHORTEST_CONTEXT_SUGGESTED and job.completion_len is None:
        shorter = job.seq_len // 2
        label = SUGGESTIONS("label.context", shorter=shorter, now=job.seq_len)
        changes.append(Change(label, {"seq_len": shorter}, True))
    if (
        job.method in (Method.lora, Method.qlora)
        and job.framework in HF_FAMILY
        and job.num_gpus == 1
    ):
        # Its chunked loss and offloaded checkpoints remove most of what long contexts cost.
        label = SUGGESTIONS("label.unsloth")
        changes.append(Change(label, {"framework": Framework.unsloth}, False))
    if (
        job.gradient_checkpointing
        and not job.activation_offloading
        and job.framework in OFFLOADS_ACTIVATIONS_ON_REQUEST
    ):
        label = SUGGESTIONS("label.activation_offloading")
        changes.append(Change(label, {"activation_offloading": True}, False))
    if job.micro_batch > 1:
        keep_batch = {"micro_batch": 1, "grad_accum": job.grad_accum * job.micro_batch}
        changes.append(Change(SUGGESTIONS("label.micro_batch_1"), keep_batch, False))
    if not job.cpu_offload:
        sharded = job.sharding in (Sharding.fsdp, Sharding.zero3)
        moved = SUGGESTIONS("label.offload.sharded" if sharded else "label.offload")
        changes.append(Change(moved, {"cpu_offload": True}, False))
    changes.extend(post_training_changes(context, card))
    changes.extend(_more_gpus(context, card))
    return changes


def _holding_tensor_parallel(job: ResolvedJob, pool_gib: float) -> int | None:
    """The smallest tensor-parallel size above the job's, dividing its GPUs, at which the
    colocated engine's minimum fits its pool of `pool_gib` (the widest when none does): one
    suggestion, not one per size. None when the job's GPUs allow no wider engine."""
    current = job.rollout_tensor_parallel or 1
    sizes = [n for n in range(current + 1, job.num_gpus + 1) if job.num_gpus % n == 0]
    for size in sizes:
        wider = changed(job, {"rollout_tensor_parallel": size})
        if rollout_phase(wider, wider.num_gpus, wider.sharding).minimum_gib <= pool_gib:
            return size
    return sizes[-1] if sizes else None


def post_training_changes(context: MarketContext, card: GpuSpec | None) -> list[Change]:
    """Preference and RL jobs: drop the reference copy (precomputed log-probs; beta = 0), a
    smaller vLLM pool that still holds the engine, fewer generations per prompt, and the rollout
    on a card of its own. LoRA instead of full fine-tuning is among the changes above."""
    job = context.job
    changes = []
    if job.reference_copy and job.objective in (Objective.dpo, Objective.kto):
        label = SUGGESTIONS("label.precomputed_reference")
        changes.append(Change(label, {"reference_model": False}, False))
    elif job.reference_copy and job.objective in (Objective.grpo, Objective.rloo):
        changes.append(Change(SUGGESTIONS("label.beta_0"), {"reference_model": False}, True))
    if job.rollout is Rollout.vllm_colocate and job.rollout_memory_fraction:
        target = card if card is not None and card.usable_gib > 0 else gpu_by_key(REFERENCE_CARD)
        minimum = rollout_phase(job, job.num_gpus, job.sharding).minimum_gib
        fraction = math.ceil(minimum * VLLM_POOL_MARGIN / target.usable_gib / 0.05) * 0.05
        now = job.rollout_memory_fraction
        if fraction < now - 0.01:
            label = SUGGESTIONS("label.vllm_fraction", fraction=fraction, now=now)
            changes.append(Change(label, {"rollout_memory_fraction": round(fraction, 2)}, False))
    if job.rollout is Rollout.vllm_colocate and not job.rollout_sleep:
        label = SUGGESTIONS("label.vllm_sleep")
        changes.append(Change(label, {"rollout_sleep": True}, False))
    if job.rollout is Rollout.vllm_colocate and job.rollout_memory_fraction:
        target = card if card is not None and card.usable_gib > 0 else gpu_by_key(REFERENCE_CARD)
        if wider := _holding_tensor_parallel(job, job.rollout_memory_fraction * target.usable_gib):
            label = SUGGESTIONS("label.vllm_tp", tp=wider)
            changes.append(Change(label, {"rollout_tensor_parallel": wider}, False))
    if job.completion_len is not None and job.completion_len >= SHORTEST_CONTEXT_SUGGESTED:
        shorter = job.completion_len // 2
        label = SUGGESTIONS("label.completions", shorter=shorter, now=job.completion_len)
        changes.append(Change(label, {"completion_len": shorter}, True))
    generations = job.num_generations or 1
    if generations >= 4:
        fewer = generations // 2
        label = SUGGESTIONS("label.generations", fewer=fewer, now=generations)
        changes.append(Change(label, {"num_generations": fewer}, True))
    if job.rollout in (Rollout.vllm_colocate, Rollout.hf):
        label = SUGGESTIONS("label.rollout_server")
        patch = {"rollout": Rollout.vllm_server, "rollout_gpus": 1}
        changes.append(Change(label, patch, False))
    return changes


def _more_gpus(context: MarketContext, card: GpuSpec | None) -> list[Change]:
    """The fewest cards of the named kind (else H100s) that hold the job sharded."""
    count_now = context.job.num_gpus
    sharding = multi_gpu_sharding(context.job)
    reference = gpu_by_key(REFERENCE_CARD)
    kinds = [card, reference] if card is not None and card is not reference else [reference]
    for gpu in kinds:
        for count in (2, 4, 8):
            if count <= count_now:
                continue
            required = context.memory(count, sharding).on(gpu.usable_gib)
            if verdict_for(required, gpu.usable_gib) != "no":
                label = SUGGESTIONS(
                    "label.more_gpus",
                    count=count,
                    card=_card_label(gpu),
                    sharding=SHARDING_NAMES[sharding],
                )
                patch = {"num_gpus": count, "sharding": sharding, "gpu": gpu.key}
                if gpu.key.startswith(GENERIC_PREFIX):
                    patch = {"num_gpus": count, "sharding": sharding}
                return [Change(label, patch, False)]
    return []


def _card_label(gpu: GpuSpec) -> str:
    if gpu.key.startswith(GENERIC_PREFIX):
        return SUGGESTIONS("card.generic", gb=gpu.marketed_gb)
    return gpu.name


def _fit_phrase(
    required_gib: float, card: GpuSpec | None, count: int, among: frozenset[str] | None
) -> str:
    if card is not None:
        verdict = verdict_for(required_gib, card.usable_gib)
        label = _card_label(card)
        where = (
            SUGGESTIONS("where.many", count=count, card=label)
            if count > 1
            else SUGGESTIONS("where.one", card=label)
        )
        return SUGGESTIONS(f"fit.{verdict}", where=where, gib=card.usable_gib)
    smallest = _smallest_card_holding(required_gib, among)
    if smallest is None:
        return SUGGESTIONS("fit.none")
    size = f"{smallest.marketed_gb:g}"
    return SUGGESTIONS(f"fit.smallest.{_article(size)}", size=size, name=smallest.name)


def _article(number: str) -> str:
    """'an' before numbers spoken with a vowel sound: 8, 80, 800…, 11, 18."""
    return "an" if number.startswith("8") or number in ("11", "18") else "a"


@cache
def _cards_by_size() -> tuple[list[float], list[GpuSpec]]:
    """The catalog smallest first (a stable sort: equal sizes keep catalog order)."""
    gpus = sorted(all_gpus(), key=lambda gpu: gpu.usable_gib)
    return [gpu.usable_gib for gpu in gpus], gpus


def _smallest_card_holding(
    required_gib: float, among: frozenset[str] | None = None
) -> GpuSpec | None:
    """The catalog's smallest card that holds the job; in a comparison, the compared one."""
    sizes_gib, gpus = _cards_by_size()
    # A card holds the job when required_gib <= usable_gib (verdict_for's "no" is the opposite).
    index = bisect_left(sizes_gib, required_gib)
    if among is not None:
        return next((gpu for gpu in gpus[index:] if gpu.key in among), None)
    return gpus[index] if index < len(gpus) else None


def _time_phrase(pct: float | None) -> str:
    if pct is None or abs(pct) < 1:
        return SUGGESTIONS("time.same")
    return SUGGESTIONS("time.pct", pct=pct)


def _reference(card: GpuSpec | None, cheapest: Option | None) -> GpuSpec:
    if card is not None and card.bf16_tflops > 0:
        return card
    if cheapest is not None:
        return gpu_by_key(cheapest.gpu) or gpu_by_key(REFERENCE_CARD)
    return gpu_by_key(REFERENCE_CARD)


def _hours_change_pct(
    before_tokens_per_s: float | None, after_tokens_per_s: float | None, tokens_ratio: float = 1.0
):
    """From speeds as an Option shows them (to 0.1 token/s), so the figure matches the rows;
    `tokens_ratio` is the trained tokens after ÷ before (fewer generations train fewer)."""
    if not before_tokens_per_s or not after_tokens_per_s:
        return None
    return round((tokens_ratio * before_tokens_per_s / after_tokens_per_s - 1) * 100, 1)


def _tokens_ratio(before: MarketContext, after: MarketContext) -> float:
    if not before.total_tokens or after.total_tokens is None:
        return 1.0
    return after.total_tokens / before.total_tokens


def _shown_speed(context: MarketContext, gpu: GpuSpec, count: int) -> float | None:
    sharding = context.multi_gpu_sharding if count > 1 else Sharding.none
    tokens_per_s = speed_on(context, gpu, count, sharding)
    return round(tokens_per_s, 1) if tokens_per_s else None


class After(NamedTuple):
    """A change applied: its market, the card it is judged on, and whether the job then fits."""

    context: MarketContext
    target: GpuSpec | None
    count: int
    required_gib: float
    fits: bool  # on the target card, or with no card named on some single card
    # The layout's host RAM (when it offloads) is within one node of the target card.
    host_ram_ok: bool = True


def _apply(context: MarketContext, change: Change, card: GpuSpec | None) -> After:
    after_context = context.patched(change.patch)
    patched = after_context.job
    count = patched.num_gpus
    target = gpu_by_key(str(change.patch["gpu"])) if "gpu" in change.patch else card
    sharding = patched.sharding if count > 1 else Sharding.none
    footprint = after_context.memory(count, sharding)
    after_gib = footprint.on(target.usable_gib) if target is not None else footprint.required_gib
    if target is not None:
        fits = verdict_for(after_gib, target.usable_gib) != "no"
    else:
        fits = _smallest_card_holding(after_gib, context.among) is not None
    # An offload no node of the card has the host RAM for is not a run a person can rent
    # (issue 28 item 5, as the market table and the GPU-count solver).
    host_ram_ok = target is None or footprint.host_ram_gib <= node_host_ram_gib(target.card_class)
    return After(after_context, target, count, after_gib, fits and host_ram_ok, host_ram_ok)


def _before_gib(context: MarketContext, requested: Option | None) -> float:
    """Memory per GPU before a change: on the named card, else on one GPU."""
    if requested is not None:
        return requested.required_gib
    return context.memory(1, Sharding.none).required_gib


def _evaluate(
    context: MarketContext,
    change: Change,
    after: After,
    requested: Option | None,
    cheapest_before: Option | None,
) -> tuple[Suggestion, float | None]:
    """The suggestion for an applied change, and the cost of the cheapest run after it."""
    before_gib = _before_gib(context, requested)
    after_gib, count = after.required_gib, after.count
    reference = _reference(after.target, cheapest_before)
    pct = _hours_change_pct(
        _shown_speed(context, reference, context.job.num_gpus),
        _shown_speed(after.context, reference, count),
        _tokens_ratio(context, after.context),
    )
    cheapest_after = cheapest_run(after.context)
    then = (
        SUGGESTIONS(
            "then",
            count=cheapest_after.count,
            gpu=cheapest_after.gpu_name,
            cost=cheapest_after.cost_usd,
        )
        if cheapest_after is not None
        else ""
    )
    fit = _fit_phrase(after_gib, after.target, count, context.among)
    time = _time_phrase(pct)
    text = SUGGESTIONS(
        "line",
        label=change.label,
        before=before_gib,
        after=after_gib,
        fit=fit,
        time=time,
        then=then,
    )
    fits_as_asked = (
        requested is not None
        and requested.verdict == "no"
        and SOFTWARE_FIELDS.issuperset(change.patch)
        # A full fine-tune that becomes an adapter is a different result, not a setting.
        and not (context.job.method is Method.full and "method" in change.patch)
        and verdict_for(after_gib, requested.usable_gib) != "no"
    )
    suggestion = Suggestion(
        change=text,
        label=change.label,
        fits_as_asked=fits_as_asked,
        patch={key: getattr(value, "value", value) for key, value in change.patch.items()},
        required_gib_before=before_gib,
        required_gib_after=after_gib,
        hours_change_pct=pct,
        cheapest_option=cheapest_after,
    )
    return suggestion, cheapest_after.cost_usd if cheapest_after else None


def checkpointing_advice(
    context: MarketContext, card: GpuSpec | None, requested: Option | None, cheapest: Option | None
) -> Suggestion | None:
    """Flip gradient checkpointing when that makes the cheapest run cheaper (and the named card
    still holds the job): on when it lets you rent a cheaper card, off when it only costs time."""
    if cheapest is None:
        return None
    on = context.job.gradient_checkpointing
    label = SUGGESTIONS("label.checkpointing_off" if on else "label.checkpointing")
    change = Change(label, {"gradient_checkpointing": not on}, False)
    after = _apply(context, change, card)
    if card is not None and not after.fits:
        return None  # decided before searching the market for the cheapest run
    suggestion, cost_after = _evaluate(context, change, after, requested, cheapest)
    if cost_after is None or cost_after >= cheapest.cost_usd:
        return None
    if not on:
        verdict = SUGGESTIONS("checkpointing.worth")
    elif _same_run(suggestion.cheapest_option, cheapest) or _still_holds(after, cheapest):
        # Without it the same card still holds the job: another card is cheapest now only
        # because the run got faster.
        verdict = SUGGESTIONS("checkpointing.costs_time")
    else:
        # It is what lets the small card hold the job, yet a bigger card without the recompute
        # finishes sooner and costs less in total: the cheapest card per hour is not per run.
        verdict = SUGGESTIONS(
            "checkpointing.bigger_card", count=cheapest.count, gpu=cheapest.gpu_name
        )
    suggestion.change = SUGGESTIONS("with_verdict", change=suggestion.change, verdict=verdict)
    return suggestion


def _still_holds(after: After, option: Option) -> bool:
    """Whether `option`'s card and count still hold the job as changed."""
    required = after.context.memory(option.count, Sharding(option.sharding)).required_gib
    return verdict_for(required, option.usable_gib) != "no"


def _same_run(after: Option | None, before: Option) -> bool:
    return after is not None and (after.gpu, after.count) == (before.gpu, before.count)


def _switch_card(requested: Option, cheapest: Option) -> Suggestion:
    return Suggestion(
        label=SUGGESTIONS("label.rent", count=cheapest.count, gpu=cheapest.gpu_name),
        change=SUGGESTIONS(
            "rent",
            count=cheapest.count,
            gpu=cheapest.gpu_name,
            cost=cheapest.cost_usd,
            hours=hours_text(cheapest.hours),
            now_cost=requested.cost_usd,
            now_hours=hours_text(requested.hours),
            now_count=requested.count,
            now_gpu=requested.gpu_name,
        ),
        patch={"gpu": cheapest.gpu, "num_gpus": cheapest.count},
        required_gib_before=requested.required_gib,
        required_gib_after=cheapest.required_gib,
        hours_change_pct=_hours_change_pct(requested.tokens_per_s, cheapest.tokens_per_s),
        cheapest_option=cheapest,
    )


def suggest(
    context: MarketContext,
    card: GpuSpec | None,
    requested: Option | None,
    options: list[Option],
    cheapest: Option | None,
) -> list[Suggestion]:
    """Concrete changes for a job that doesn't fit the named card (or any single card), a named
    card that is poor value, and checkpointing that only costs time; `cheapest` is the
    recommendation's, so every part of the answer compares against the same run."""
    suggestions: list[Suggestion] = []
    single_fits = any(o.count == 1 and o.verdict != "no" for o in options)
    stuck = (requested is not None and requested.verdict != "fits") or not single_fits
    if stuck:
        helpful, partial = [], []
        cut_gib = MEANINGFUL_CUT * _before_gib(context, requested)
        for change in candidate_changes(context, card):
            after = _apply(context, change, card)
            if after.fits:
                suggestion, cost = _evaluate(context, change, after, requested, cheapest)
                moves_card = "gpu" in change.patch
                rank = (moves_card, change.changes_the_job, cost or float("inf"))
                helpful.append((*rank, suggestion))
            elif after.host_ram_ok and after.required_gib < cut_gib:
                partial.append((after.required_gib, change, after))
        # Changes that make it fit: on the named card before another card, settings before job
        # changes, cheapest first; then the biggest memory cuts, priced only if there is room.
        suggestions.extend(item[-1] for item in sorted(helpful, key=lambda item: item[:3]))
        shown_partial = sorted(partial, key=lambda item: item[0])
        for _, change, after in shown_partial[: max(0, MAX_SUGGESTIONS - len(suggestions))]:
            suggestions.append(_evaluate(context, change, after, requested, cheapest)[0])
    elif (
        requested is not None
        and requested.cost_usd is not None
        and cheapest is not None
        and requested.cost_usd > POOR_VALUE_RATIO * cheapest.cost_usd
    ):
        suggestions.append(_switch_card(requested, cheapest))
    # Advice after a full list would not be shown.
    if len(suggestions) < MAX_SUGGESTIONS and not any(
        "gradient_checkpointing" in shown.patch for shown in suggestions
    ):
        advice = checkpointing_advice(context, card, requested, cheapest)
        if advice is not None:
            suggestions.append(advice)
    return suggestions[:MAX_SUGGESTIONS]
