"""An answer never contradicts itself: the picks, the headline, the table, the chat deltas and the
suggestions all say what the plan's own rows say (issue #13)."""

from __future__ import annotations

import itertools
import re

import pytest

from bot.conversation import Conversation, answer_once
from bot.state.threads import MemoryStore
from bot.threads import ThreadKey
from planner.market.attach import best_value_of, candidates, cheapest_of, fastest_of
from planner.plan import Option, Plan
from planner.planner import make_plan
from planner.spec import JobSpec

# The questions quoted in the issue, and others like them.
EIGHT_H100 = "llama 3.1 8b full fine-tune 4k ctx on 8xH100 with zero3, 1B tokens"
GEMMA_3090 = "gemma-2-9b lora 4k ctx on a 3090"

# Jobs over sizes, methods, contexts, cards and counts: the rules hold for every one.
_AXES = {
    "params_b": (1.0, 8.0, 13.0, 70.0),
    "method": ("full", "lora", "qlora"),
    "seq_len": (2048, 16384),
    "placement": ((None, None), ("4090", 1), ("H100", 4), ("A100 40GB", 8)),
}
MANY_JOBS = [
    JobSpec(
        **dict(zip(("params_b", "method", "seq_len"), values[:3], strict=True)),
        gpu=values[3][0],
        num_gpus=values[3][1],
        dataset_tokens=50e6,
    )
    for values in itertools.product(*_AXES.values())
]


def _runs(plan: Plan) -> list[Option]:
    return candidates(plan.options, plan.requested)


def _id(spec: JobSpec) -> str:
    return f"{spec.params_b:g}B-{spec.method}-{spec.seq_len}-{spec.num_gpus}x{spec.gpu}"


@pytest.fixture(scope="module")
def plans() -> list[Plan]:
    return [make_plan(spec) for spec in MANY_JOBS]


def test_a_run_that_cannot_happen_has_no_hours_and_no_cost(plans: list[Plan]) -> None:
    for plan in plans:
        rows = [*plan.options, *([plan.requested] if plan.requested else [])]
        for option in rows:
            if option.verdict == "no":
                fields = (option.hours, option.overhead_hours, option.cost_usd)
                assert fields == (None, None, None), option
                assert option.cost_usd_median is None


def test_the_picks_are_over_every_run_that_fits_the_requested_one_included(
    plans: list[Plan],
) -> None:
    for plan in plans:
        runs = _runs(plan)
        picks = plan.recommendation
        assert picks.fastest == fastest_of(runs)
        assert picks.cheapest == cheapest_of(runs)
        assert picks.best_value == best_value_of(runs)
        for pick in (picks.fastest, picks.cheapest, picks.best_value):
            assert pick is None or pick.verdict != "no"
        if picks.fastest is not None:
            assert all(picks.fastest.hours <= run.hours for run in runs)


def test_the_requested_eight_h100s_are_the_fastest_and_best_value() -> None:
    plan = answer_once(EIGHT_H100).plan
    requested = plan.requested
    assert requested is not None and requested.count == 8 and requested.verdict != "no"
    assert plan.recommendation.fastest == requested
    assert plan.recommendation.best_value == requested
    reply = answer_once(EIGHT_H100).reply
    row = next(r for r in reply.table if r.count == 8 and "H100" in r.gpu_name)
    assert "fastest" in row.highlight and "best value" in row.highlight
    assert "Fastest: 8× NVIDIA H100" in " ".join(reply.recommendation)


def test_a_card_that_does_not_fit_is_never_priced_in_the_answer() -> None:
    reply = answer_once("13B lora on a 4090, 10M tokens").reply
    assert "does not fit on 1× NVIDIA GeForce RTX 4090." in reply.verdict or (
        "does not fit on 1× NVIDIA GeForce RTX 4090," in reply.verdict
    )
    assert "4090 (" not in reply.verdict  # no "(3.9 h, $1.18)" after a "does not fit"
    for row in reply.table:
        if row.verdict == "no":
            assert (row.hours, row.cost_usd, row.cost_usd_median) == (None, None, None)


def test_chat_deltas_quote_no_cost_for_a_job_that_no_longer_fits() -> None:
    conversation = Conversation(MemoryStore(), limit_rate=False)
    key = ThreadKey(platform="test", thread="deltas")
    conversation.handle(key, "7B qlora on a 4090, 10M tokens")
    after = conversation.respond(key, "what if 64k ctx?")
    assert after.plan.requested.verdict == "no"
    headline = [line for line in after.reply.changes if line.startswith("your card")]
    assert headline and "$" not in headline[0] and " h" not in headline[0]


def test_a_multi_gpu_verdict_names_the_layout() -> None:
    ddp = answer_once("7B lora on 4x H100 with ddp, 10M tokens").reply.verdict
    assert "4× NVIDIA H100 SXM5 80GB with DDP (each GPU holds a full copy)" in ddp
    more = answer_once("70B qlora on a 4090 with unsloth").reply.verdict
    assert "does not fit on 1× NVIDIA GeForce RTX 4090" in more
    assert "with FSDP (the model sharded across the GPUs) hold it" in more


def test_a_software_change_that_fits_the_asked_card_comes_first() -> None:
    reply = answer_once(GEMMA_3090).reply
    verdict = reply.verdict
    assert "does not fit on 1× NVIDIA GeForce RTX 3090, but it fits with Unsloth" in verdict
    # The single-card fix is the answer: no costlier multi-card layout pushed beside it.
    assert not re.search(r"\d+× NVIDIA GeForce RTX 3090", verdict.replace("1× NVIDIA", ""))
    plan = answer_once(GEMMA_3090).plan
    first = next(s for s in plan.suggestions if s.fits_as_asked)
    assert first.patch == {"framework": "unsloth"}


def test_short_runs_read_in_minutes() -> None:
    reply = answer_once("1B lora, 1M tokens").reply
    text = " ".join([reply.verdict, *reply.recommendation])
    assert "min" in text and "0.0 h" not in text


@pytest.mark.parametrize("spec", MANY_JOBS[::3], ids=_id)
def test_a_suggestion_is_a_re_plan_of_the_same_change(spec: JobSpec) -> None:
    """A suggestion patches what the user said and resolves it again: its figures are those of
    make_plan on the raw spec with the patch applied."""
    plan = make_plan(spec)
    for suggestion in plan.suggestions:
        raw = spec.model_dump(exclude_none=True)
        replan = make_plan(JobSpec.model_validate({**raw, **suggestion.patch}))
        assert suggestion.required_gib_after == replan.memory.required_gib, suggestion.change
        cheapest = cheapest_of(candidates(replan.options, None))
        after = suggestion.cheapest_option
        assert (after.cost_usd if after else None) == (cheapest.cost_usd if cheapest else None)


def test_hints_never_exceed_the_models_context_window() -> None:
    reply = answer_once("llama 3.1 8b lora 128k ctx").reply
    window = answer_once("llama 3.1 8b lora 128k ctx").plan.model.max_context
    assert window == 131072
    assert not any("256k" in text for text in [*reply.followups, *(w.text for w in reply.whatifs)])
    shorter = answer_once("llama 3.1 8b lora 8k ctx").reply
    assert any(w.text == "what if 16k ctx?" for w in shorter.whatifs)


def test_a_model_known_by_a_newer_name_is_shown_by_it_with_the_shared_architecture() -> None:
    turn = answer_once("Llama 3.3 70B qlora 4k ctx")
    assert turn.plan.model.name == "Llama-3.3-70B"
    assert turn.reply.title.startswith("Llama-3.3-70B")
    assert any("shares Llama-3.1-70B's architecture" in said for said in turn.plan.assumptions)
    assert answer_once("Llama 3.1 70B qlora").plan.model.name == "Llama-3.1-70B"


@pytest.mark.parametrize(
    ("question", "names"),
    [
        ("Qwen3-8B lora vs qlora", ["Qwen3-8B · LoRA", "Qwen3-8B · QLoRA"]),
        ("7B or 13B qlora on a 4090", ["Llama-2-7B · QLoRA", "Llama-2-13B · QLoRA"]),
        ("compare 7B and 13B", ["Llama-2-7B · LoRA", "Llama-2-13B · LoRA"]),
        ("lora vs qlora for 8b", ["· LoRA", "· QLoRA"]),
        ("llama 3 8b lora vs mistral 7b lora", ["Llama-3-8B", "Mistral-7B"]),
    ],
)
def test_a_comparison_plans_every_job_side_by_side(question: str, names: list[str]) -> None:
    turn = answer_once(question)
    assert len(turn.alternatives) == len(names) and turn.alternatives[0] == turn.plan
    assert len(turn.reply.comparison) == len(names)
    for line, name in zip(turn.reply.comparison, names, strict=True):
        assert name in line and "GiB per GPU" in line
    memory = [f"{plan.memory.required_gib:.1f} GiB" for plan in turn.alternatives]
    assert all(m in line for m, line in zip(memory, turn.reply.comparison, strict=True))


def test_a_compared_card_on_a_named_card_says_whether_each_job_fits_it() -> None:
    lines = answer_once("7B or 70B qlora on a 4090, 20M tokens").reply.comparison
    assert "fits on 1× NVIDIA GeForce RTX 4090 (" in lines[0]
    assert "does not fit on 1× NVIDIA GeForce RTX 4090" in lines[1]
    assert "does not fit on 1× NVIDIA GeForce RTX 4090 (" not in lines[1]  # never priced


def test_a_thread_keeps_the_first_job_of_a_comparison() -> None:
    conversation = Conversation(MemoryStore(), limit_rate=False)
    key = ThreadKey(platform="test", thread="compare")
    conversation.handle(key, "7B or 13B qlora, 20M tokens")
    followup = conversation.respond(key, "what if 4k ctx?")
    assert followup.plan.model.name == "Llama-2-7B" and followup.alternatives == ()
