"""Inverse answers hold on the forward plan, and one step past them does not."""

from __future__ import annotations

import pytest

from planner.catalog.gpus import gpu_by_key
from planner.catalog.models import all_models
from planner.estimate.memory import estimate_memory
from planner.estimate.memory.host import node_host_ram_gib
from planner.market.solve import (
    CONTEXT_STEP,
    GPU_COUNT_LADDER,
    layouts,
    pick_for_constraints,
    solve,
)
from planner.planner import make_plan
from planner.resolve.defaults import resolve
from planner.spec import JobSpec

JOBS = [
    {"model": "llama 3.1 8b", "method": "qlora"},
    {"model": "llama 3.1 8b", "method": "lora"},
    {"model": "mistral 7b", "method": "lora", "framework": "unsloth"},
    {"model": "qwen2.5 14b", "method": "qlora", "micro_batch": 2},
    {"model": "llama 2 7b", "method": "full"},
    {"model": "llama 2 13b", "method": "lora", "gradient_checkpointing": False},
]
CARDS = ["RTX 3090", "RTX 4090", "L40S", "A100 80GB", "H100"]


def _verdict(spec: JobSpec) -> str:
    plan = make_plan(spec)
    assert plan.requested is not None
    return plan.requested.verdict


@pytest.mark.parametrize("card", CARDS)
@pytest.mark.parametrize("job", JOBS, ids=lambda job: f"{job['model']}-{job['method']}")
def test_the_longest_context_holds_and_256_more_do_not(job: dict, card: str) -> None:
    spec = JobSpec(**job, gpu=card)
    answered, answer = solve(spec, "seq_len")
    if answer.value is None:
        assert _verdict(spec.model_copy(update={"seq_len": CONTEXT_STEP})) == "no"
        return
    assert answer.value % CONTEXT_STEP == 0 and answered.seq_len == answer.value
    assert _verdict(answered) != "no"
    if answer.binding == "memory":
        past = answered.model_copy(update={"seq_len": answer.value + CONTEXT_STEP})
        assert _verdict(past) == "no"
    else:
        assert answer.binding == "context_window"
        assert answer.value == make_plan(answered).model.max_context // CONTEXT_STEP * 256
    if answer.comfortable is not None:
        comfortable = answered.model_copy(update={"seq_len": answer.comfortable})
        assert _verdict(comfortable) == "fits"
        assert answer.comfortable <= answer.value


@pytest.mark.parametrize("card", ["RTX 4090", "A100 80GB"])
@pytest.mark.parametrize("job", JOBS[:4], ids=lambda job: f"{job['model']}-{job['method']}")
def test_the_biggest_micro_batch_holds_and_one_more_does_not(job: dict, card: str) -> None:
    spec = JobSpec(**{**job, "micro_batch": None}, gpu=card, seq_len=2048)
    answered, answer = solve(spec, "micro_batch")
    if answer.value is None:
        assert _verdict(spec.model_copy(update={"micro_batch": 1})) == "no"
        return
    assert _verdict(answered) != "no"
    past = answered.model_copy(update={"micro_batch": int(answer.value) + 1})
    assert _verdict(past) == "no"


@pytest.mark.parametrize("card", ["RTX 4090", "H100", "A10G"])
@pytest.mark.parametrize(
    "job",
    [
        {"model": "llama 2 7b", "method": "full"},
        {"model": "llama 2 70b", "method": "lora"},
        {"model": "llama 2 70b", "method": "qlora"},
        {"model": "llama 3.1 8b", "method": "full", "framework": "torchtune"},
    ],
    ids=lambda job: f"{job['model']}-{job['method']}",
)
def test_the_fewest_gpus_hold_and_the_next_smaller_count_does_not(job: dict, card: str) -> None:
    spec = JobSpec(**job, gpu=card)
    answered, answer = solve(spec, "num_gpus")
    assert answer.value is not None
    assert _verdict(answered) != "no"
    smaller = [count for count in GPU_COUNT_LADDER if count < answer.value]
    if smaller and not answer.cpu_offload:
        # The count leads without offload: a smaller count holds only with offload, or with
        # more host RAM than one node of the card has
        # (planner.estimate.memory.host.NODE_HOST_RAM_GB).
        count = smaller[-1]
        node_gib = node_host_ram_gib(gpu_by_key(answer.gpu).card_class)
        for layout in layouts(spec, count):
            if layout.get("cpu_offload"):
                continue
            changed = spec.model_copy(update={"num_gpus": count, **layout})
            if (estimate_memory(resolve(changed)).host_ram_gib or 0.0) <= node_gib:
                assert _verdict(changed) == "no"


@pytest.mark.parametrize("card", ["RTX 4090", "A100 80GB"])
@pytest.mark.parametrize("family", [None, "qwen", "llama 3"])
def test_the_largest_model_holds_and_every_larger_one_does_not(card: str, family) -> None:
    spec = JobSpec(model=family, method="qlora", gpu=card)
    answered, answer = solve(spec, "params_b")
    assert answer.value is not None and answer.model is not None
    assert _verdict(answered) != "no"
    found = next(m for m in all_models() if m.key == answer.model)
    larger = [
        m
        for m in all_models()
        if m.total_params > found.total_params and (family is None or m.key in _family(answer))
    ]
    for model in larger[:8]:
        assert _verdict(spec.model_copy(update={"model": model.key})) == "no", model.key


def _family(answer) -> set[str]:
    family = next(m.family for m in all_models() if m.key == answer.model)
    return {m.key for m in all_models() if m.family == family}


def test_no_card_named_answers_on_each_reference_card() -> None:
    _, answer = solve(JobSpec(model="llama 3.1 8b", method="qlora"), "seq_len")
    assert len(answer.cards) == 3
    values = [card.value for card in answer.cards]
    # The 24 GB card, then the 80 GB ones (the A100's 80.0 GiB holds a step more than the H100's
    # 79.6 GiB).
    assert values[0] < min(values[1:])


def test_a_deadline_question_names_the_cheapest_run_that_meets_it_or_the_miss() -> None:
    job = {"model": "13B", "method": "qlora", "dataset_tokens": 20e6, "epochs": 3}
    met = pick_for_constraints(make_plan(JobSpec(**job, deadline_hours=24)))
    plan = make_plan(JobSpec(**job, deadline_hours=24))
    assert met.value == plan.recommendation.meets_deadline.gpu and met.binding == "deadline"
    missed = pick_for_constraints(make_plan(JobSpec(**job, deadline_hours=0.1)))
    assert missed.value is None and missed.closest_miss is not None
    assert missed.closest_miss.hours > 0.1


def test_the_405b_count_leads_without_offload_and_says_the_offload_count_after() -> None:
    spec = JobSpec(model="llama 3.1 405b", method="full", gpu="H100")
    _, answer = solve(spec, "num_gpus")
    assert answer.value is not None and not answer.cpu_offload
    offload = [lever for lever in answer.levers if lever.change == "with CPU offload"]
    assert offload and offload[0].value < answer.value


def test_a_consumer_card_count_stays_within_one_node_and_agrees_with_the_plan() -> None:
    spec = JobSpec(model="qwen3 8b", method="full", seq_len=2048, gpu="4090")
    answered, answer = solve(spec, "num_gpus")
    assert answer.value == 2 and answer.cpu_offload
    assert _verdict(answered) != "no"
