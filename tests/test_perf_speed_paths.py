"""Round 3's precomputed paths (per-card speed figures, lean memory figures, copied rows, a
placement change keeping the job's work) give what the documented functions give."""

from __future__ import annotations

import pytest

from planner.catalog.gpus import all_gpus
from planner.defaults import resolve
from planner.memory import estimate_memory
from planner.memory.estimate import required_gib
from planner.options import MarketContext, market_cards
from planner.plan import Option
from planner.spec import JobSpec, Sharding
from planner.throughput import (
    ACHIEVED_BANDWIDTH_FRACTION,
    card_matmul_factor,
    card_speed,
    job_work,
    scaling_efficiency,
    sustained_clock_fraction,
    tokens_per_s_at,
    tokens_per_s_on,
)

JOBS = (
    JobSpec(model="13B", method="qlora", seq_len=4096, dataset_tokens=20e6, epochs=3),
    JobSpec(params_b=70, method="full", seq_len=8192, cpu_offload=True, dataset_tokens=1e8),
    JobSpec(params_b=8, method="lora", num_gpus=2, sharding="zero3", precision="fp32"),
    JobSpec(model="mixtral 8x7b", method="lora", micro_batch=4, gradient_checkpointing=False),
)
LAYOUTS = (
    (1, Sharding.none),
    (2, Sharding.ddp),
    (4, Sharding.fsdp),
    (8, Sharding.zero3),
    (8, Sharding.zero2),
    (2, Sharding.device_map),
)


def test_a_cards_speed_figures_are_the_documented_functions_of_it() -> None:
    for gpu in all_gpus():
        speed = card_speed(gpu)
        assert speed is card_speed(gpu)
        assert speed.peak_flops_per_s == gpu.bf16_tflops * 1e12
        assert speed.matmul_factor == card_matmul_factor(gpu)
        assert speed.clock_fraction == sustained_clock_fraction(gpu)
        assert speed.achieved_bytes_per_s == gpu.bandwidth_gbs * 1e9 * ACHIEVED_BANDWIDTH_FRACTION


@pytest.mark.parametrize("spec", JOBS, ids=lambda spec: f"{spec.params_b or spec.model}")
def test_speed_from_held_figures_equals_speed_from_the_card(spec: JobSpec) -> None:
    resolved = resolve(spec)
    work = job_work(resolved.spec, resolved.arch)
    for gpu in all_gpus():
        if gpu.bf16_tflops <= 0:
            continue
        for count, sharding in LAYOUTS:
            held = tokens_per_s_at(work, card_speed(gpu), count, sharding)
            assert held == tokens_per_s_on(work, gpu, count, sharding)
            assert 0 < scaling_efficiency(gpu, count, sharding) <= 1.0


@pytest.mark.parametrize("spec", JOBS, ids=lambda spec: f"{spec.params_b or spec.model}")
def test_the_lean_memory_figure_is_the_estimates(spec: JobSpec) -> None:
    resolved = resolve(spec)
    for count, sharding in LAYOUTS:
        estimate = estimate_memory(resolved.spec, resolved.arch, count, sharding)
        assert required_gib(resolved.spec, resolved.arch, count, sharding) == (
            estimate.required_gib
        )


def test_every_cards_row_lists_the_option_fields_in_their_json_order() -> None:
    for card in market_cards(MarketContext(*_resolved(JOBS[0])).prices).every:
        assert list(card.row) == list(Option.model_fields)
        assert card.row["gpu"] == card.gpu.key and card.row["usable_gib"] == card.gpu.usable_gib


@pytest.mark.parametrize("spec", JOBS, ids=lambda spec: f"{spec.params_b or spec.model}")
def test_a_placement_change_keeps_the_jobs_work_and_another_change_recomputes_it(
    spec: JobSpec,
) -> None:
    context = MarketContext(*_resolved(spec))
    more_gpus = context.patched({"num_gpus": 8, "sharding": Sharding.fsdp})
    assert more_gpus.work == job_work(more_gpus.spec, more_gpus.arch)
    assert more_gpus.known is context.known
    shorter = context.patched({"seq_len": 512})
    assert shorter.work == job_work(shorter.spec, shorter.arch) != context.work
    assert shorter.known is not context.known


def _resolved(spec: JobSpec) -> tuple[JobSpec, object]:
    resolved = resolve(spec)
    return resolved.spec, resolved.arch
