"""Multi-GPU memory: published model-state formulas, layouts and invariants across GPU counts."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from planner.catalog.models import all_models
from planner.estimate.memory import component_job, estimate_memory
from planner.estimate.memory import components as comp
from planner.estimate.memory.profiles import GIB
from planner.job.resolved import ResolvedJob
from planner.plan import MemoryEstimate
from planner.resolve.defaults import changed, resolve
from planner.spec import Framework, JobSpec, Method, Sharding

MODELS = [m.key for m in all_models() if m.params_b >= 0.1]


def _estimate(**job: object) -> tuple[MemoryEstimate, ResolvedJob]:
    resolved = resolve(JobSpec.model_validate(job))
    return estimate_memory(resolved), resolved


def _model_states_gib(memory: MemoryEstimate) -> float:
    b = memory.breakdown_gib
    return b.weights + b.adapter + b.gradients + b.optimizer


def _psi(model: str) -> float:
    return resolve(JobSpec(method=Method.full, model=model)).arch.total_params


def _gathered_gib(model: str, sharding: Sharding, **job: object) -> float:
    resolved = resolve(JobSpec.model_validate({"model": model, "method": "full", **job}))
    work = component_job(resolved, 64, sharding)
    if sharding is Sharding.zero2:
        return comp.zero2_bucket_bytes(work) / GIB
    return sum(comp.zero3_gathered_bytes(resolved.arch, work)) / GIB


# Rajbhandari et al. 2020, "ZeRO: Memory Optimizations Toward Training Trillion Parameter
# Models", Fig. 1: mixed-precision Adam holds 2Ψ (fp16 params) + 2Ψ (grads) + KΨ (fp32 master,
# momentum, variance; K = 12) per GPU; ZeRO-2 shards the last two (2Ψ + 14Ψ/N_d), ZeRO-3 all
# three (16Ψ/N_d): 7.5B on 64 GPUs is 120 GB → 16.6 GB → 1.9 GB. DeepSpeed keeps the fp32
# master whether the job says bf16 or bf16-mixed.
@pytest.mark.parametrize("precision", ["bf16", "bf16-mixed"])
@pytest.mark.parametrize(
    ("sharding", "bytes_per_param"),
    [(Sharding.zero2, lambda n: 2 + 14 / n), (Sharding.zero3, lambda n: 16 / n)],
)
def test_zero_model_states_follow_the_zero_paper(
    precision: str, sharding: Sharding, bytes_per_param: object
) -> None:
    gpus = 64
    job = {"precision": precision, "optimizer": "adamw", "seq_len": 2048}
    memory, _ = _estimate(
        model="llama-2-7b", method="full", num_gpus=gpus, sharding=sharding.value, **job
    )
    buffers = _gathered_gib("llama-2-7b", sharding, **job)
    expected = bytes_per_param(gpus) * _psi("llama-2-7b") / GIB  # type: ignore[operator]
    assert _model_states_gib(memory) - buffers == pytest.approx(expected, rel=0.01)
    # the ZeRO paper's headline: 16 B/param shrinks ~8x (ZeRO-2) and ~64x (ZeRO-3) on 64 GPUs
    assert memory.breakdown_gib.optimizer == pytest.approx(
        12 * _psi("llama-2-7b") / gpus / GIB, rel=0.01
    )


def test_zero_offload_trains_13b_on_one_32gb_v100() -> None:
    """Ren et al. 2021, "ZeRO-Offload: Democratizing Billion-Scale Model Training": a 13B model
    trains on a single 32 GB V100 with the optimizer, master weights and gradients in host
    RAM; without offload its 16 B/param cannot."""
    job = {"model": "llama-2-13b", "method": "full", "sharding": "zero2", "seq_len": 512}
    offloaded, _ = _estimate(**job, cpu_offload=True, optimizer="adamw")
    on_gpu, _ = _estimate(**job, cpu_offload=False, optimizer="adamw")
    v100_usable_gib = 31.7
    assert offloaded.required_gib < v100_usable_gib < on_gpu.required_gib
    assert offloaded.breakdown_gib.optimizer == 0.0
    assert offloaded.breakdown_gib.weights == pytest.approx(2 * _psi("llama-2-13b") / GIB, rel=0.01)


def test_hf_fsdp_full_fine_tune_holds_fp32_shards_torchtune_bf16() -> None:
    """Accelerate (≥ 0.30) upcasts trained flat parameters to fp32 under FSDP mixed precision
    ("following DeepSpeed's strategy"): 4 + 4 + 8 B/param sharded. torchtune's FSDP2 recipes
    train pure bf16: 2 + 2 + 4. (Accumulating, so the peak is mid-backward with the
    gradients alive, not the optimizer step whose scratch the breakdown would show.)"""
    gpus = 8
    common = {
        "model": "llama-3.1-8b",
        "method": "full",
        "num_gpus": gpus,
        "optimizer": "adamw",
        "grad_accum": 4,
        "seq_len": 4096,
    }
    hf, _ = _estimate(**common, framework="hf")
    torchtune, _ = _estimate(**common, framework="torchtune", cpu_offload=False)
    psi = _psi("llama-3.1-8b")
    assert hf.breakdown_gib.optimizer == pytest.approx(8 * psi / gpus / GIB, rel=0.02)
    assert torchtune.breakdown_gib.optimizer == pytest.approx(4 * psi / gpus / GIB, rel=0.02)
    assert hf.required_gib > torchtune.required_gib


def test_answerai_fsdp_qlora_fits_70b_on_two_24gb_cards_with_cpu_offload() -> None:
    """answer.ai, "You can now train a 70b language model at home" (2024-03): Llama-2-70B QLoRA
    with FSDP and CPU offload on two 24 GB gaming cards (quantised weights stored as bf16 so
    FSDP can shard them)."""
    memory, _ = _estimate(
        model="llama-2-70b",
        method="qlora",
        num_gpus=2,
        sharding="fsdp",
        cpu_offload=True,
        seq_len=2048,
        lora_rank=64,
    )
    rtx_3090_usable_gib = 23.5
    assert memory.required_gib < rtx_3090_usable_gib
    single, _ = _estimate(model="llama-2-70b", method="qlora", seq_len=2048, lora_rank=64)
    assert single.required_gib > rtx_3090_usable_gib


def test_device_map_busiest_gpu_holds_its_layers_one_embedding_and_the_logits() -> None:
    job = {"model": "llama-2-13b", "method": "lora", "seq_len": 2048}
    single, _ = _estimate(**job)
    split, _ = _estimate(**job, num_gpus=2, sharding="device_map")
    assert single.breakdown_gib.weights / 2 <= split.breakdown_gib.weights
    assert split.breakdown_gib.weights < 0.6 * single.breakdown_gib.weights
    assert split.breakdown_gib.logits == single.breakdown_gib.logits
    assert split.required_gib < single.required_gib


def test_multi_gpu_torchtune_and_litgpt_default_to_fsdp_for_lora() -> None:
    for framework in (Framework.torchtune, Framework.litgpt):
        spec = resolve(JobSpec(method=Method.lora, params_b=8, num_gpus=4, framework=framework))
        assert spec.sharding is Sharding.fsdp
    hf = resolve(JobSpec(method=Method.lora, params_b=8, num_gpus=4))
    assert hf.sharding is Sharding.ddp


def test_deepspeed_and_fsdp_precision_are_stated() -> None:
    zero = resolve(JobSpec(method=Method.full, params_b=8, num_gpus=8, sharding=Sharding.zero3))
    assert any("fp32 master" in a for a in zero.assumptions)
    fsdp = resolve(JobSpec(method=Method.full, params_b=8, num_gpus=8))
    assert any("fp32 shards" in a for a in fsdp.assumptions)


jobs = st.fixed_dictionaries(
    {
        "model": st.sampled_from(MODELS),
        "method": st.sampled_from(list(Method)),
        "seq_len": st.integers(min_value=64, max_value=32_768),
        "micro_batch": st.integers(min_value=1, max_value=8),
        "framework": st.sampled_from(list(Framework)),
        "optimizer": st.sampled_from(["adamw", "adamw_8bit", "paged_adamw_8bit", "sgd"]),
        "precision": st.sampled_from(["bf16", "bf16-mixed", "fp32"]),
        "gradient_checkpointing": st.booleans(),
        "cpu_offload": st.booleans(),
    }
)


def _required(job: dict, gpus: int, sharding: str) -> float:
    return _estimate(**job, num_gpus=gpus, sharding=sharding)[0].required_gib


@settings(max_examples=150, deadline=None)
@given(
    jobs,
    st.sampled_from(["zero2", "zero3", "fsdp", "device_map"]),
    st.integers(min_value=2, max_value=512),
)
def test_sharding_over_more_gpus_never_raises_the_per_gpu_figure(
    job: dict, sharding: str, gpus: int
) -> None:
    assert _required(job, gpus + 1, sharding) <= _required(job, gpus, sharding)
    assert _required(job, gpus * 2, sharding) <= _required(job, gpus, sharding)


@settings(max_examples=100, deadline=None)
@given(jobs, st.integers(min_value=2, max_value=64))
def test_ddp_never_needs_less_than_one_gpu_and_device_map_never_more(job: dict, gpus: int) -> None:
    alone = _required(job, 1, "none")
    assert _required(job, gpus, "ddp") >= alone
    assert _required(job, gpus, "device_map") <= alone


@pytest.mark.parametrize("sharding", list(Sharding))
@pytest.mark.parametrize("method", list(Method))
@pytest.mark.parametrize("offload", [False, True])
def test_extreme_jobs_get_finite_positive_estimates(
    sharding: Sharding, method: Method, offload: bool
) -> None:
    memory, _ = _estimate(
        params_b=1000,
        method=method,
        seq_len=1_048_576,
        micro_batch=64,
        num_gpus=1024,
        sharding=sharding,
        cpu_offload=offload,
        flash_attention=False,
    )
    figures = [
        memory.peak_allocated_gib,
        memory.peak_reserved_gib,
        memory.required_gib,
        *memory.range_gib,
        *memory.breakdown_gib.model_dump().values(),
    ]
    assert all(math.isfinite(x) and x >= 0 for x in figures)
    assert 0 < memory.peak_allocated_gib <= memory.peak_reserved_gib < memory.required_gib


def test_an_unstated_layout_is_ddp_only_where_a_whole_copy_fits_the_card() -> None:
    """LoRA on several GPUs defaults to DDP, but where a whole copy per GPU does not fit the named
    card the job is planned with FSDP (what a user would run, and what the market's other
    multi-GPU rows plan), and the assumption says why; a named layout is kept."""
    fits = resolve(JobSpec(model="llama 3 8b", method=Method.lora, num_gpus=2, gpu="a100 80gb"))
    assert fits.sharding is Sharding.ddp
    big = {"model": "qwen2.5 72b", "method": "lora", "num_gpus": 8, "gpu": "h100"}
    job = resolve(JobSpec.model_validate(big))
    assert job.sharding is Sharding.fsdp
    ddp = resolve(JobSpec.model_validate({**big, "sharding": "ddp"}))
    ddp_gib = estimate_memory(ddp).required_gib
    assert ddp_gib > 80 > estimate_memory(job).required_gib
    (why,) = [a for a in job.assumptions if "FSDP" in a]
    assert f"{ddp_gib:,.1f} GiB" in why and "DDP" in why
    assert changed(job, {"num_gpus": 2}).sharding is Sharding.fsdp  # still no whole copy on 80 GB
    assert resolve(JobSpec.model_validate({**big, "gpu": None})).sharding is Sharding.ddp
