"""Defaults, assumptions, warnings and validation errors of planner.resolve.defaults / make_plan."""

from __future__ import annotations

import pytest

from planner.errors import PlanningError
from planner.planner import make_plan, parse_spec
from planner.resolve.defaults import resolve
from planner.spec import (
    Framework,
    JobSpec,
    LoraTarget,
    Method,
    Optimizer,
    Precision,
    Quant,
    Sharding,
)


def test_every_default_is_filled_and_stated() -> None:
    resolved = resolve(JobSpec(method=Method.qlora, params_b=13))
    spec = resolved
    assert spec.model == "meta-llama/Llama-2-13b-hf"
    assert spec.quant is Quant.nf4
    assert spec.precision is Precision.bf16
    assert spec.optimizer is Optimizer.adamw
    assert spec.lora_rank == 16
    assert spec.lora_targets == "all-linear"
    assert spec.seq_len == 2048
    assert spec.micro_batch == 1
    assert spec.gradient_checkpointing is True
    assert spec.flash_attention is True
    assert spec.num_gpus == 1
    assert spec.sharding is Sharding.none
    said = " ".join(resolved.assumptions)
    for fact in ("Llama-2-13B", "NF4", "AdamW", "rank 16", "2,048", "checkpointing"):
        assert fact in said


def test_what_the_user_said_is_kept() -> None:
    spec = resolve(JobSpec(method=Method.lora, model="mistral 7b", seq_len=8192, micro_batch=4))
    assert (spec.seq_len, spec.micro_batch) == (8192, 4)


def test_multi_gpu_full_fine_tuning_defaults_to_fsdp() -> None:
    spec = resolve(JobSpec(method=Method.full, params_b=8, num_gpus=4))
    assert spec.sharding is Sharding.fsdp


def test_a_sequence_longer_than_the_context_warns() -> None:
    resolved = resolve(JobSpec(method=Method.lora, model="llama 2 7b", seq_len=16_384))
    assert any("context" in w for w in resolved.warnings)


def test_quant_with_full_fine_tuning_warns_and_is_dropped() -> None:
    resolved = resolve(JobSpec(method=Method.full, params_b=7, quant=Quant.nf4))
    assert resolved.quant is None
    assert any("quant" in w for w in resolved.warnings)


@pytest.mark.parametrize(
    ("patch", "field"),
    [
        ({"micro_batch": 0}, "micro_batch"),
        ({"seq_len": -1}, "seq_len"),
        ({"optimizer": "lion"}, "optimizer"),
        ({"method": "dreambooth"}, "method"),
        ({"num_gpus": 0}, "num_gpus"),
    ],
)
def test_nonsense_is_an_error_naming_the_field(patch: dict, field: str) -> None:
    with pytest.raises(PlanningError) as caught:
        parse_spec({"method": "lora", "params_b": 7, **patch})
    assert caught.value.field == field
    assert field in str(caught.value)


def test_a_missing_method_names_method() -> None:
    with pytest.raises(PlanningError) as caught:
        parse_spec({"model": "llama 3 8b"})
    assert caught.value.field == "method"


def test_make_plan_reports_the_model_and_a_consistent_breakdown() -> None:
    plan = make_plan(JobSpec(method=Method.qlora, params_b=13, seq_len=4096))
    memory = plan.memory
    parts = memory.breakdown_gib.model_dump()
    assert plan.model.key == "llama-2-13b"
    assert sum(parts.values()) == pytest.approx(memory.required_gib, abs=0.01)
    assert memory.range_gib[0] < memory.required_gib < memory.range_gib[1]


def test_qlora_70b_fits_a_single_80gb_card_and_full_does_not() -> None:
    qlora = make_plan(JobSpec(method=Method.qlora, model="llama 3 70b", seq_len=2048))
    full = make_plan(JobSpec(method=Method.full, model="llama 3 70b", seq_len=2048))
    assert qlora.memory.required_gib < 75 < full.memory.required_gib


def test_lora_rank_and_targets_follow_each_stacks_own_defaults() -> None:
    """LitGPT finetune/lora.py: r 8 on query/value; torchtune *_lora configs: rank 8 on q, v,
    output_proj and the MLP; PEFT-style stacks: rank 16 on every linear layer."""
    litgpt = resolve(JobSpec(method=Method.lora, params_b=7, framework=Framework.litgpt))
    assert (litgpt.lora_rank, litgpt.lora_targets) == (8, (LoraTarget.q, LoraTarget.v))
    torchtune = resolve(JobSpec(method=Method.lora, params_b=8, framework=Framework.torchtune))
    assert torchtune.lora_rank == 8
    assert LoraTarget.k not in torchtune.lora_targets
    assert any("torchtune's default" in a for a in torchtune.assumptions)
    hf = resolve(JobSpec(method=Method.lora, params_b=8))
    assert (hf.lora_rank, hf.lora_targets) == (16, "all-linear")


def test_mixed_precision_keeps_a_lora_base_16_bit_in_hf_stacks_but_not_in_litgpt() -> None:
    # HF-based stacks load the frozen base in the compute dtype when bf16 is set and PEFT upcasts
    # only the adapters; LitGPT's "bf16-mixed" keeps every parameter in fp32 (its measured rows).
    job = {"model": "llama 3 8b", "method": "lora", "seq_len": 2048}
    plain = make_plan(JobSpec(**job)).memory.breakdown_gib.weights
    hf_mixed = make_plan(JobSpec(**job, precision="bf16-mixed")).memory.breakdown_gib.weights
    litgpt = JobSpec(**job, precision="bf16-mixed", framework="litgpt")
    litgpt_mixed = make_plan(litgpt).memory.breakdown_gib.weights
    assert hf_mixed == pytest.approx(plain)
    # fp32 (4 B) against 16-bit (2 B); autocast's 16-bit copies are activations, not weights.
    assert litgpt_mixed == pytest.approx(2 * plain, rel=0.02)


def test_a_card_before_ampere_trains_in_fp16_mixed_and_says_so() -> None:
    job = resolve(JobSpec(params_b=7, method="lora", gpu="T4"))
    assert job.precision is Precision.fp16_mixed
    assert any("no bf16" in said and "fp16" in said for said in job.assumptions)
    asked_bf16 = resolve(JobSpec(params_b=7, method="lora", gpu="V100", precision="bf16"))
    assert asked_bf16.precision is Precision.bf16
    assert any("no bf16" in warned for warned in asked_bf16.warnings)
    assert resolve(JobSpec(params_b=7, method="lora", gpu="A100")).precision is Precision.bf16


def test_before_ampere_attention_is_sdpa_and_flash_attention_2_is_refused_with_the_same_memory():
    """FlashAttention-2 needs sm80; on a T4 or V100 transformers' SDPA runs PyTorch's
    memory-efficient kernel (sm50+, fp16), which keeps no s×s scores either."""
    t4 = {"model": "mistral 7b", "method": "qlora", "seq_len": 2048, "gpu": "T4"}
    unstated, asked_flash = (
        resolve(parse_spec(t4)),
        resolve(parse_spec(t4 | {"flash_attention": True})),
    )
    assert unstated.flash_attention and asked_flash.flash_attention
    assert any("SDPA memory-efficient" in a and "T4" in a for a in unstated.assumptions)
    assert not any("FlashAttention-2 needs" in w for w in unstated.warnings)
    assert any("FlashAttention-2 needs an Ampere" in w for w in asked_flash.warnings)
    assert (
        make_plan(parse_spec(t4)).memory
        == make_plan(parse_spec(t4 | {"flash_attention": True})).memory
    )
    a100 = resolve(parse_spec(t4 | {"gpu": "A100 80GB", "flash_attention": True}))
    assert not any("FlashAttention-2 needs" in w for w in a100.warnings)
    eager = make_plan(parse_spec(t4 | {"flash_attention": False})).memory
    assert eager.peak_allocated_gib > make_plan(parse_spec(t4)).memory.peak_allocated_gib
