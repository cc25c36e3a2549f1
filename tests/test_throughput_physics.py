"""The throughput model's physical ceilings: board power, memory bandwidth, communication."""

from __future__ import annotations

from dataclasses import replace

import pytest

from planner.catalog.gpus import all_gpus, gpu_by_key, resolve_gpu
from planner.estimate.throughput import (
    POWER_REFERENCE_CARD,
    estimate_throughput,
    job_work,
    scaling_efficiency,
    sustained_clock_fraction,
    tokens_per_s_on,
)
from planner.market.options import OVERHEAD_FRACTION
from planner.resolve.defaults import resolve
from planner.spec import JobSpec, Sharding

SEED = {"model": "13B", "method": "qlora", "seq_len": 4096, "dataset_tokens": 20e6, "epochs": 3}


def _speed(gpu: str, count: int = 1, sharding: Sharding | None = None, **fields) -> float:
    resolved = resolve(JobSpec(**fields))
    card = resolve_gpu(gpu)
    return estimate_throughput(resolved, card, count, sharding).tokens_per_s


def _seed_hours(gpu: str) -> float:
    tokens = SEED["dataset_tokens"] * SEED["epochs"]
    return tokens / _speed(gpu, **SEED) / 3600 * (1 + OVERHEAD_FRACTION)


def test_every_chip_family_has_a_reference_card_with_a_power_figure() -> None:
    for gpu in all_gpus():
        assert gpu.chip_family in POWER_REFERENCE_CARD, gpu.key
    for key, _ in POWER_REFERENCE_CARD.values():
        reference = gpu_by_key(key)
        assert reference is not None and reference.tdp_w, key
        assert sustained_clock_fraction(reference) == pytest.approx(1.0)


def test_low_power_cards_cannot_hold_their_datasheet_clock() -> None:
    assert sustained_clock_fraction(resolve_gpu("T4")) < 0.5
    assert sustained_clock_fraction(resolve_gpu("L4")) < 0.5
    # The L40S's 362 TFLOPS at 350 W lands inside the 181–362 range argued for it.
    l40s = resolve_gpu("L40S")
    assert 181 < l40s.bf16_tflops * sustained_clock_fraction(l40s) < 362
    for card in ("4090", "3090", "H100 SXM", "A100 80GB", "B200"):
        assert sustained_clock_fraction(resolve_gpu(card)) == 1.0


@pytest.mark.parametrize("slow", ["T4", "L4"])
@pytest.mark.parametrize(
    "job",
    [
        SEED,
        {"model": "llama 3 8b", "method": "lora", "seq_len": 512, "micro_batch": 1},
        {"model": "phi-3 mini", "method": "lora", "seq_len": 2048},
    ],
)
def test_power_and_bandwidth_limited_cards_are_slower_than_a_3090(slow: str, job: dict) -> None:
    assert _speed(slow, **job) < _speed("3090", **job)


def test_less_bandwidth_hurts_small_micro_batches_most() -> None:
    card = resolve_gpu("4090")
    narrow = replace(card, bandwidth_gbs=card.bandwidth_gbs / 4)

    def slowdown(**fields: object) -> float:
        resolved = resolve(JobSpec(model="llama 3 8b", method="lora", **fields))
        work = job_work(resolved)
        return tokens_per_s_on(work, card, 1, None) / tokens_per_s_on(work, narrow, 1, None)

    small = slowdown(seq_len=256, micro_batch=1)
    large = slowdown(seq_len=4096, micro_batch=4)
    assert large > 1.0
    assert small > large


def test_seed_example_is_within_a_factor_of_two_of_the_guide() -> None:
    assert 17 / 2 < _seed_hours("4090") < 17 * 2
    assert 2.8 / 2 < _seed_hours("H100 SXM") < 2.8 * 2
    assert _seed_hours("T4") > _seed_hours("3090") > _seed_hours("4090") > _seed_hours("H100")


def test_adapters_move_less_between_gpus_than_full_fine_tuning() -> None:
    h100 = resolve_gpu("h100 sxm")
    full = scaling_efficiency(h100, 8, Sharding.fsdp, trains_weights=True)
    lora = scaling_efficiency(h100, 8, Sharding.fsdp, trains_weights=False)
    replicated = scaling_efficiency(h100, 8, Sharding.ddp, trains_weights=False)
    assert full < lora < replicated <= 1.0
    # The default keeps the sharded full fine-tune's meaning.
    assert scaling_efficiency(h100, 8, Sharding.fsdp) == full

    def kept(method: str) -> float:
        job = JobSpec(model="llama 3 8b", method=method, seq_len=2048, micro_batch=4, grad_accum=8)
        resolved = resolve(job)
        work = job_work(resolved)
        eight = tokens_per_s_on(work, h100, 8, Sharding.fsdp)
        return eight / (8 * tokens_per_s_on(work, h100, 1, None))

    assert kept("lora") > kept("full")
