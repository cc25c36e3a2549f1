"""FSDP2 (PyTorch's fully_shard) where it spends memory unlike FSDP1, each rule against its
source (planner.estimate.memory.profiles: fsdp2_keeps_param_dtype and
fsdp2_qlora_loads_whole_model)."""

from __future__ import annotations

import pytest

from planner.estimate.memory import component_job, estimate_memory
from planner.estimate.memory import components as comp
from planner.parsing import parse
from planner.plan import MemoryEstimate
from planner.resolve.defaults import resolve
from planner.spec import JobSpec, Sharding

GIB = 2**30
FULL = {
    "model": "meta-llama/Llama-3.1-8B",
    "method": "full",
    "precision": "bf16",
    "optimizer": "adamw",
    "seq_len": 2048,
    "micro_batch": 1,
    "gradient_checkpointing": True,
    "num_gpus": 4,
    "sharding": "fsdp",
}
QLORA = {
    **FULL,
    "model": "meta-llama/Llama-3.1-70B",
    "method": "qlora",
    "quant": "nf4",
    "lora_rank": 16,
    "num_gpus": 2,
}


def _memory(**job: object) -> MemoryEstimate:
    return estimate_memory(resolve(JobSpec.model_validate(job)))


def test_each_stack_says_which_fsdp_it_runs_unless_the_job_does() -> None:
    assert resolve(JobSpec.model_validate({**FULL, "framework": "axolotl"})).fsdp_version == 1
    assert resolve(JobSpec.model_validate({**FULL, "framework": "hf"})).fsdp_version == 1
    assert resolve(JobSpec.model_validate({**FULL, "framework": "torchtune"})).fsdp_version == 2
    stated = {**FULL, "framework": "axolotl", "fsdp_version": 2}
    assert resolve(JobSpec.model_validate(stated)).fsdp_version == 2


def test_fsdp2_is_read_in_its_spellings() -> None:
    for text in ("8b full with axolotl fsdp2 on 4 h100", "8b full, fsdp_version: 2, 4 h100"):
        assert parse(text).fields.get("fsdp_version") == 2, text
    assert "fsdp_version" not in parse("8b lora fsdp on 2 a100").fields
    assert "fsdp_version" not in parse("fsdp 2 gpus llama 8b").fields


def test_axolotl_fsdp2_shards_the_loaded_bf16_weights() -> None:
    """axolotl's own fsdp2_prepare_model upcasts nothing (Accelerate's FSDP1 path and its
    FSDP2 path do): a bf16 full fine-tune keeps bf16 shards and gradients."""
    fsdp1 = _memory(**FULL, framework="axolotl")
    fsdp2 = _memory(**FULL, framework="axolotl", fsdp_version=2)
    hf_fsdp2 = _memory(**FULL, framework="hf", fsdp_version=2)
    job = resolve(JobSpec.model_validate({**FULL, "framework": "axolotl", "fsdp_version": 2}))
    assert component_job(job, 4, Sharding.fsdp).precision.value == "bf16"
    params = job.arch.total_params
    # The weight shard goes from 4 B to 2 B per parameter, and so do the sharded gradients.
    saved = fsdp1.breakdown_gib.weights - fsdp2.breakdown_gib.weights
    assert saved == pytest.approx(params * 2 / 4 / GIB, rel=0.01)
    assert hf_fsdp2.breakdown_gib.weights == pytest.approx(fsdp1.breakdown_gib.weights)


def test_axolotl_qlora_under_fsdp2_reserves_the_whole_model_it_loaded_on_every_gpu() -> None:
    """Every rank loads the whole quantised model (device_map {"": LOCAL_RANK}) and fully_shard
    copies its shard out beside it, so the reserved pool holds both; allocated in training
    does not."""
    fsdp1 = _memory(**QLORA, framework="axolotl")
    fsdp2 = _memory(**QLORA, framework="axolotl", fsdp_version=2)
    job = resolve(JobSpec.model_validate({**QLORA, "framework": "axolotl", "fsdp_version": 2}))
    cjob = component_job(job, 2, Sharding.fsdp)
    whole = comp.weights_bytes(job.arch, cjob) - comp.dequant_buffer_bytes(job.arch, cjob)
    assert fsdp2.peak_reserved_gib == pytest.approx(whole * 1.5 / GIB, rel=0.01)
    assert fsdp2.peak_allocated_gib == pytest.approx(fsdp1.peak_allocated_gib)
    assert fsdp1.peak_reserved_gib < fsdp2.peak_reserved_gib
    # torchtune shards on the meta device and loads shards: no such floor.
    tune = _memory(**QLORA, framework="torchtune")
    assert tune.peak_reserved_gib < whole / GIB
