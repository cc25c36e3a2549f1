"""The throughput model: FLOPs by method, utilisation, dequantisation, scaling, calibration."""

from __future__ import annotations

import importlib.util
import statistics
import sys
from pathlib import Path

import pytest

from planner.catalog.gpus import resolve_gpu
from planner.catalog.models import ModelArch
from planner.estimate.throughput import (
    active_block_params,
    estimate_throughput,
    flops_per_token,
    scaling_efficiency,
)
from planner.job.resolved import ResolvedJob
from planner.resolve.defaults import resolve
from planner.spec import JobSpec, Sharding

ROOT = Path(__file__).resolve().parents[1]


def _resolved(**fields: object) -> tuple[ResolvedJob, ModelArch]:
    resolved = resolve(JobSpec(**fields))
    return resolved, resolved.arch


def _tokens_per_s(gpu: str, count: int = 1, sharding: Sharding | None = None, **fields) -> float:
    return estimate_throughput(
        _resolved(**fields)[0], resolve_gpu(gpu), count, sharding
    ).tokens_per_s


def test_full_costs_six_n_and_adapters_four_n_per_token() -> None:
    full, arch = _resolved(model="llama 3 8b", method="full", gradient_checkpointing=False)
    lora, _ = _resolved(model="llama 3 8b", method="lora", gradient_checkpointing=False)
    n = active_block_params(arch)
    # The remainder is attention and logits: under a fifth at 2k context with a 128k vocabulary.
    assert 6 * n < flops_per_token(full) < 1.2 * 6 * n
    assert 4 * n < flops_per_token(lora) < 1.2 * 4 * n
    assert flops_per_token(full) > flops_per_token(lora)


def test_checkpointing_adds_one_forward() -> None:
    off, arch = _resolved(model="llama 3 8b", method="lora", gradient_checkpointing=False)
    on, _ = _resolved(model="llama 3 8b", method="lora", gradient_checkpointing=True)
    extra = flops_per_token(on) - flops_per_token(off)
    # Two N for the blocks, plus the attention scores' forward once more.
    assert extra == pytest.approx(2 * active_block_params(arch), rel=0.1)


def test_long_context_costs_more_per_token() -> None:
    short, _ = _resolved(model="llama 3 8b", method="lora", seq_len=2048)
    long, _ = _resolved(model="llama 3 8b", method="lora", seq_len=32768)
    assert flops_per_token(long) > 1.3 * flops_per_token(short)


def test_moe_pays_for_the_experts_a_token_visits() -> None:
    moe, arch = _resolved(model="mixtral 8x7b", method="lora")
    assert active_block_params(arch) < 0.35 * arch.total_params
    assert flops_per_token(moe) < 0.4 * 6 * arch.total_params


def test_faster_cards_are_faster() -> None:
    job = {"model": "13B", "method": "qlora", "seq_len": 4096}
    order = ["rtx3090", "rtx4090", "a100-80g-sxm", "h100-sxm", "b200"]
    speeds = [_tokens_per_s(gpu, **job) for gpu in order]
    assert speeds == sorted(speeds)


def test_qlora_dequantisation_hurts_small_micro_batches_most() -> None:
    job = {"model": "llama 3 8b", "seq_len": 512, "micro_batch": 1}
    lora = _tokens_per_s("rtx4090", method="lora", **job)
    qlora = _tokens_per_s("rtx4090", method="qlora", **job)
    assert qlora < lora
    big = {"model": "llama 3 8b", "seq_len": 4096, "micro_batch": 4}
    big_lora = _tokens_per_s("rtx4090", method="lora", **big)
    big_qlora = _tokens_per_s("rtx4090", method="qlora", **big)
    assert big_qlora / big_lora > qlora / lora


def test_nvlink_scales_better_than_consumer_pcie() -> None:
    h100, rtx = resolve_gpu("h100 sxm"), resolve_gpu("4090")
    assert scaling_efficiency(h100, 1, Sharding.none) == 1.0
    assert 0.8 < scaling_efficiency(h100, 8, Sharding.fsdp) < 1.0
    assert scaling_efficiency(rtx, 8, Sharding.fsdp) < scaling_efficiency(h100, 8, Sharding.fsdp)
    job = {"model": "llama 3 8b", "method": "lora"}
    one = _tokens_per_s("h100 sxm", **job)
    eight = _tokens_per_s("h100 sxm", 8, Sharding.fsdp, **job)
    assert 6 * one < eight < 8 * one


def test_a_naive_layer_split_runs_one_gpu_at_a_time() -> None:
    job = {"model": "llama 3 8b", "method": "lora"}
    one = _tokens_per_s("a100", **job)
    assert _tokens_per_s("a100", 4, Sharding.device_map, **job) == pytest.approx(one)


def test_cpu_offload_slows_full_fine_tuning() -> None:
    job = {"model": "llama 3 8b", "method": "full"}
    assert _tokens_per_s("a100", cpu_offload=True, **job) < _tokens_per_s("a100", **job)


def test_amd_cards_get_a_lower_utilisation() -> None:
    spec, _ = _resolved(model="llama 3 8b", method="lora")
    mi300x = estimate_throughput(spec, resolve_gpu("mi300x"), 1, None)
    h100 = estimate_throughput(spec, resolve_gpu("h100 sxm"), 1, None)
    assert mi300x.utilisation < h100.utilisation


def _bench_module():
    spec = importlib.util.spec_from_file_location("bench_throughput", ROOT / "bench/throughput.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def test_median_error_on_measured_dev_rows_is_within_one_and_a_half() -> None:
    bench = _bench_module()
    rows = bench.load_rows()
    assert len(rows) >= 15
    errors = [
        bench.error_factor(bench.predicted_tokens_per_s(row), row.measured_tokens_per_s)
        for row in rows
    ]
    flat = [
        bench.error_factor(bench.flat_rule_tokens_per_s(row), row.measured_tokens_per_s)
        for row in rows
    ]
    assert statistics.median(errors) <= 1.5
    assert statistics.median(errors) < statistics.median(flat)
