"""Stacks: read from questions (English, Chinese), planned at a release, each default sourced."""

from __future__ import annotations

import json
from importlib import resources

import pytest

from planner.catalog.stacks import holds_for, stack
from planner.parsing.assemble import parse
from planner.resolve.defaults import resolve
from planner.spec import Framework, JobSpec, LossKernel


@pytest.mark.parametrize(
    ("text", "framework", "version"),
    [
        ("qwen2.5 7b grpo with verl on 8xh100", "verl", None),
        ("OpenRLHF ppo llama 3.1 8b", "openrlhf", None),
        ("TRL sft llama 3.1 8b full", "trl", None),
        ("llama 3.1 8b lora with trl 0.19", "trl", "0.19"),
        ("用 LLaMA-Factory 微调 qwen2.5 7b lora", "llama-factory", None),
        ("用verl训练 qwen2.5 7b", "verl", None),
        ("ms-swift qwen3 8b lora", "ms-swift", None),
        ("unsloth==2025.11.4 qwen3 14b qlora", "unsloth", "2025.11.4"),
    ],
)
def test_stack_and_release_read_from_text(text: str, framework: str, version: str | None) -> None:
    fields = parse(text).fields
    assert fields["framework"] == framework
    assert fields.get("framework_version") == version


def test_stack_without_profile_is_said_and_planned_with_the_nearest() -> None:
    result = parse("qwen 7b lora with torchtitan")
    assert result.fields["framework"] == "torchtune"
    assert any("torchtitan has no stack profile" in a for a in result.assumptions)


def _job(**fields: object):
    return resolve(JobSpec.model_validate({"model": "llama 3.1 8b", "method": "lora", **fields}))


def test_unstated_release_is_the_current_one_and_said() -> None:
    job = _job(framework="trl")
    assert job.framework_version == stack(Framework.trl).current_version
    assert any("TRL at its current release" in a for a in job.assumptions)
    assert job.to_spec().framework_version == job.framework_version


def test_unknown_release_is_said_and_planned_with_the_nearest() -> None:
    job = _job(framework="trl", framework_version="9.9")
    assert job.framework_version == stack(Framework.trl).current_version
    assert any("newer than any release profiled" in w for w in job.warnings)


def test_trl_chunked_loss_follows_release_and_method() -> None:
    """chunked_nll is TRL's SFT default since 2026-06 for full fine-tuning only (trl#5846)."""
    assert _job(framework="trl", method="full").loss_kernel is LossKernel.chunked
    assert _job(framework="trl", method="full", framework_version="0.19").loss_kernel is None
    assert _job(framework="trl").loss_kernel is None  # PEFT: not used


def test_unsloth_under_zero3_gets_one_clear_sentence() -> None:
    job = _job(framework="unsloth", sharding="zero3", num_gpus=8)
    said = [w for w in job.warnings if "Unsloth does not run under DeepSpeed ZeRO-3" in w]
    assert len(said) == 1
    assert job.framework is Framework.hf


def test_version_ranges() -> None:
    assert holds_for(">= 1.0", "1.13") and not holds_for(">= 1.0", "0.19")
    assert holds_for("< 0.18", "0.9") and holds_for("all", "0.1")


@pytest.mark.parametrize("framework", list(Framework))
def test_every_stack_has_a_data_file_whose_facts_name_sources(framework: Framework) -> None:
    path = resources.files("planner").joinpath(f"data/stack-{framework.value}.json")
    raw = json.loads(path.read_text(encoding="utf-8"))
    assert raw["stack"] == framework.value
    for name in ("loss_kernel", "moe_experts", "reference", "vllm_memory_fraction", "micro_batch"):
        assert raw["facts"][name], name
    for facts in raw["facts"].values():
        for fact in facts:
            assert fact["source"] and fact["versions"]


@pytest.mark.parametrize(
    ("text", "fields"),
    [
        ("qwen3 30b a3b qlora, quantize_moe_experts: true", {"experts_quantized": True}),
        ("qwen3 30b a3b qlora, experts not quantized", {"experts_quantized": False}),
        ("qwen3 30b a3b qlora 不量化专家", {"experts_quantized": False}),
        ("qwen3 30b a3b lora with lora_target_parameters", {"experts_adapted": True}),
        ("gpt-oss 20b qlora mxfp4", {"quant": "mxfp4"}),
    ],
)
def test_moe_switches_read_from_text(text: str, fields: dict) -> None:
    read = parse(text).fields
    assert {name: read.get(name) for name in fields} == fields


def test_axolotl_moe_qlora_recipes_quantize_fused_experts_and_say_so() -> None:
    job = resolve(JobSpec(model="qwen3 30b a3b", method="qlora", framework="axolotl"))
    assert job.experts_quantized
    assert any("quantize_moe_experts" in a for a in job.assumptions)
    off = resolve(
        JobSpec(model="qwen3 30b a3b", method="qlora", framework="axolotl", experts_quantized=False)
    )
    assert not off.experts_quantized


def test_rl_stacks_generate_as_they_run_when_the_job_does_not_say() -> None:
    verl = resolve(JobSpec(model="qwen2.5 7b", method="lora", objective="grpo", framework="verl"))
    assert verl.rollout == "vllm-colocate" and verl.rollout_sleep
    assert verl.rollout_memory_fraction == 0.5
    trl = resolve(
        JobSpec(
            model="qwen2.5 7b",
            method="lora",
            objective="grpo",
            framework="trl",
            rollout="vllm-colocate",
        )
    )
    assert trl.rollout_memory_fraction == 0.3
    plain = resolve(JobSpec(model="qwen2.5 7b", method="lora", objective="grpo"))
    assert plain.rollout == "hf"


def test_context_parallel_splits_each_sequence_in_memory_time_and_the_solver() -> None:
    from planner.estimate.memory import estimate_memory
    from planner.estimate.throughput import all_to_all_bytes_per_token
    from planner.market.solve import solve

    base = {"model": "llama 3.1 8b", "method": "full", "seq_len": 131072, "num_gpus": 8}
    plain = resolve(JobSpec.model_validate({**base, "sharding": "zero3"}))
    split = resolve(JobSpec.model_validate({**base, "sharding": "zero3", "context_parallel": 8}))
    assert split.context_parallel == 8
    assert estimate_memory(split).required_gib < estimate_memory(plain).required_gib / 3
    assert all_to_all_bytes_per_token(split) > all_to_all_bytes_per_token(plain) == 0
    spec = JobSpec(model="llama 3.1 8b", method="lora", gpu="h100", num_gpus=8)
    _, alone = solve(spec, "seq_len")
    _, shared = solve(spec.model_copy(update={"context_parallel": 8}), "seq_len")
    assert shared.value is not None and alone.value is not None and shared.value > alone.value
    assert (
        parse("llama 3.1 8b full 128k ctx on 8xh100 with ulysses 8").fields["context_parallel"] == 8
    )
    odd = resolve(JobSpec.model_validate({**base, "num_gpus": 6, "context_parallel": 4}))
    assert odd.context_parallel == 1 and any("must divide" in w for w in odd.warnings)


def test_a_release_that_is_not_a_version_is_said_and_planned_at_the_current_one() -> None:
    job = _job(framework="trl", framework_version="latest")
    assert job.framework_version == stack(Framework.trl).current_version
    assert any("is not a version number" in w for w in job.warnings)


def test_verl_micro_batch_keys_read_per_gpu() -> None:
    text = "verl grpo qwen2.5 7b lora on 8xh100, actor_rollout_ref.actor.ppo_micro_batch_size=64"
    result = parse(text)
    assert result.fields["micro_batch"] == 8 and result.fields["objective"] == "grpo"
    per_gpu = parse("verl grpo qwen2.5 7b lora on 8xh100, ppo_micro_batch_size_per_gpu=4")
    assert per_gpu.fields["micro_batch"] == 4 and per_gpu.fields["num_gpus"] == 8


def test_ms_swift_loss_follows_the_transformers_its_release_requires() -> None:
    """ms-swift 3.1 requires trl ≥ 0.13, hence transformers ≥ 4.46 and its model-level loss;
    an unstated release keeps the loss its published benchmarks ran (releases before 3.1)."""
    from planner.planner import memory_plan

    def logits_gib(**fields: object) -> float:
        job = _job(model="qwen2.5 7b", method="full", framework="ms-swift", **fields)
        return memory_plan(job).memory.breakdown_gib.logits

    unstated = _job(framework="ms-swift")
    assert unstated.loss_kernel is None
    assert any("published benchmarks" in a for a in unstated.assumptions)
    assert _job(framework="ms-swift", framework_version="3.0").loss_kernel is None
    modern = _job(framework="ms-swift", framework_version="3.8")
    assert modern.loss_kernel is LossKernel.hf
    assert any("transformers ≥ 4.46" in a for a in modern.assumptions)
    assert logits_gib(framework_version="3.8") == pytest.approx(logits_gib() * 12 / 28, rel=1e-6)
    # TRL's preference trainers pass no labels: the model's loss never runs.
    dpo = _job(framework="ms-swift", framework_version="3.8", objective="dpo")
    assert dpo.loss_kernel is None


def test_ms_swift_before_4_trains_and_quantises_qwen_moe_experts_as_nn_linear() -> None:
    """ms-swift < 4.0 pins transformers 4, whose Qwen MoE experts are nn.Linear modules."""
    moe = {"model": "qwen3 30b a3b", "framework": "ms-swift"}
    old = resolve(JobSpec.model_validate({**moe, "method": "lora", "framework_version": "3.8"}))
    assert old.experts_adapted
    assert any("nn.Linear" in a for a in old.assumptions)
    new = resolve(JobSpec.model_validate({**moe, "method": "lora", "framework_version": "4.0"}))
    assert not new.experts_adapted
    qlora = {**moe, "method": "qlora", "framework_version": "3.8"}
    assert resolve(JobSpec.model_validate(qlora)).experts_quantized
    stated = resolve(JobSpec.model_validate({**qlora, "experts_adapted": False}))
    assert not stated.experts_adapted
