"""MoE, vision-language and kernel physics: memory follows total parameters, time follows active
ones at an MoE matmul rate of its own; expert parallelism, multi-node options, images, the vision
tower, the loss kernel and FP8."""

from __future__ import annotations

import pytest

from planner.catalog.gpus import gpu_by_key
from planner.catalog.models import get_model
from planner.estimate.memory import estimate_memory
from planner.estimate.throughput import (
    all_to_all_bytes_per_token,
    eager_ops_per_expert,
    expert_loop_seconds_per_token,
    expert_matmul_share,
    job_work,
    tokens_per_s_on,
)
from planner.parsing import parse
from planner.planner import make_plan
from planner.resolve.defaults import resolve
from planner.spec import JobSpec, Sharding

H100 = "h100-sxm"
GIB = 2**30


def _job(**fields: object):
    return resolve(JobSpec.model_validate({"method": "lora", "seq_len": 2048, **fields}))


def _tokens_per_s(job, gpu: str = H100, count: int = 1) -> float:
    card = gpu_by_key(gpu)
    assert card is not None
    return tokens_per_s_on(job_work(job), card, count, job.sharding)


def test_qwen3_30b_a3b_trains_several_times_faster_than_dense_qwen3_32b() -> None:
    # LitGPT runs its own MoE block, not transformers' eager per-expert loop.
    moe = _job(model="qwen3-30b-a3b", framework="litgpt")
    dense = _job(model="qwen3-32b", framework="litgpt")
    assert _tokens_per_s(moe) >= 3 * _tokens_per_s(dense)
    # Memory follows the 30.5B total: every expert's bf16 weights are resident.
    assert estimate_memory(moe).required_gib >= moe.arch.total_params * 2 / GIB


def test_llama_4_scout_qlora_needs_more_than_50_gib() -> None:
    plan = make_plan(parse("Llama 4 Scout qlora 2k ctx").spec)
    assert plan.memory.required_gib > 50
    assert plan.model.active_params_b == pytest.approx(17.2, abs=0.2)


def test_fused_experts_stay_unquantised_under_qlora_and_unfused_ones_are_quantised() -> None:
    qwen = estimate_memory(_job(model="qwen3-30b-a3b", method="qlora")).breakdown_gib.weights
    assert qwen >= get_model("qwen3-30b-a3b").routed_expert_params * 2 / GIB
    mixtral = estimate_memory(_job(model="mixtral-8x7b", method="qlora")).breakdown_gib.weights
    assert mixtral < get_model("mixtral-8x7b").total_params * 0.7 / GIB


def test_lora_on_unfused_experts_adapts_every_expert() -> None:
    attention = _job(model="mixtral-8x7b", lora_targets=["q", "k", "v", "o"])
    everything = _job(model="mixtral-8x7b")
    ratio = estimate_memory(everything).breakdown_gib.adapter
    assert ratio > 10 * estimate_memory(attention).breakdown_gib.adapter


def test_small_experts_run_their_matmuls_below_the_dense_rate() -> None:
    fine = _job(model="qwen3-30b-a3b")  # 2048 tokens × 8 / 128 experts = 128 per expert
    coarse = _job(model="mixtral-8x7b", seq_len=8192)  # 8192 × 2 / 8 = 2,048 per expert
    assert expert_matmul_share(fine) == pytest.approx(0.5)
    assert expert_matmul_share(coarse) > 0.9


def test_transformers_eager_expert_loop_costs_host_time_per_micro_batch() -> None:
    hf = _job(model="qwen3-30b-a3b")
    litgpt = _job(model="qwen3-30b-a3b", framework="litgpt")
    assert expert_loop_seconds_per_token(litgpt) == 0
    assert expert_loop_seconds_per_token(hf) > 0
    assert any("experts one by one" in line for line in hf.assumptions)
    assert not any("experts one by one" in line for line in litgpt.assumptions)
    # A fixed cost per micro-batch: more tokens per micro-batch share it.
    longer = _job(model="qwen3-30b-a3b", micro_batch=4)
    assert expert_loop_seconds_per_token(longer) < expert_loop_seconds_per_token(hf) / 3
    assert _tokens_per_s(hf) < _tokens_per_s(litgpt) / 2
    # Expert parallelism runs grouped GEMMs; full fine-tuning's loop is in moe_training_rate.
    split = _job(model="qwen3-30b-a3b", num_gpus=8, sharding="ddp", expert_parallel=8)
    full = _job(model="qwen3-30b-a3b", method="full", num_gpus=8, sharding="fsdp")
    assert expert_loop_seconds_per_token(split) == expert_loop_seconds_per_token(full) == 0
    assert not any("experts one by one" in line for line in split.assumptions + full.assumptions)
    # LoRA on nn.Linear experts adds PEFT's ops to every expert's visit.
    attention = _job(model="mixtral-8x7b", lora_targets=["q", "k", "v", "o"])
    everything = _job(model="mixtral-8x7b")
    assert eager_ops_per_expert(everything) > eager_ops_per_expert(attention)


def test_expert_parallelism_splits_the_experts_and_pays_all_to_all() -> None:
    plain = _job(model="qwen3-30b-a3b", num_gpus=8, sharding="ddp", framework="litgpt")
    split = _job(
        model="qwen3-30b-a3b", num_gpus=8, sharding="ddp", expert_parallel=8, framework="litgpt"
    )
    assert estimate_memory(split).required_gib < 0.4 * estimate_memory(plain).required_gib
    assert all_to_all_bytes_per_token(plain) == 0
    assert all_to_all_bytes_per_token(split) > 0
    # Over PCIe the all-to-all outlasts the matmuls it overlaps and costs time; over NVLink it
    # hides behind them, and each GPU streams only its eighth of the experts, so EP is faster.
    assert _tokens_per_s(split, "l40s", count=8) < _tokens_per_s(plain, "l40s", count=8)
    assert _tokens_per_s(split, count=8) > _tokens_per_s(plain, count=8)
    assert any("expert parallelism 8" in line for line in split.assumptions)


def test_expert_parallel_that_does_not_divide_the_gpus_is_refused_with_a_warning() -> None:
    job = _job(model="qwen3-30b-a3b", num_gpus=4, expert_parallel=3)
    assert job.expert_parallel == 1
    assert any("expert_parallel 3" in line for line in job.warnings)


def test_expert_parallel_on_a_dense_model_is_ignored_with_a_warning() -> None:
    job = _job(model="llama-3.1-8b", num_gpus=8, expert_parallel=8)
    assert job.expert_parallel == 1 and job.warnings


def test_models_no_node_holds_get_options_on_several_nodes() -> None:
    plan = make_plan(parse("Kimi K2 lora 2k ctx").spec)
    counts = {option.count for option in plan.options if option.verdict != "no"}
    assert counts and min(counts) > 8
    small = make_plan(parse("llama 3 8b lora").spec)
    assert max(option.count for option in small.options) <= 8


def test_images_add_their_tokens_to_the_sequence() -> None:
    text = _job(model="qwen2.5-vl-7b-instruct")
    images = _job(model="qwen2.5-vl-7b-instruct", images_per_sample=2)
    assert images.seq_len == text.seq_len + 2 * images.arch.image_tokens
    assert estimate_memory(images).required_gib > estimate_memory(text).required_gib
    gemma = _job(model="gemma-3-4b", images_per_sample=1)
    assert gemma.image_tokens == 258  # 256 soft tokens + begin/end markers


def test_a_trained_vision_tower_costs_more_than_a_frozen_one() -> None:
    frozen = _job(model="qwen2.5-vl-7b-instruct", images_per_sample=1)
    trained = _job(model="qwen2.5-vl-7b-instruct", images_per_sample=1, train_vision_tower=True)
    assert estimate_memory(trained).required_gib > estimate_memory(frozen).required_gib
    assert any("frozen" in line for line in frozen.assumptions)


def test_a_full_fine_tune_leaves_a_frozen_tower_out_of_the_optimizer() -> None:
    arch = get_model("qwen2.5-vl-7b-instruct")
    frozen = estimate_memory(_job(model=arch.key, method="full"))
    trained = estimate_memory(_job(model=arch.key, method="full", train_vision_tower=True))
    extra_gib = trained.breakdown_gib.optimizer - frozen.breakdown_gib.optimizer
    # bf16 AdamW: two 2-byte moments per tower parameter (and foreach AdamW's step scratch).
    assert extra_gib >= arch.vision_params * 4 / GIB * 0.95


@pytest.mark.parametrize("model", ["gemma-3-4b", "llama-3.1-8b"])
def test_loss_kernels_shrink_the_logits_in_order(model: str) -> None:
    def logits(kernel: str | None) -> float:
        job = _job(model=model, seq_len=8192, loss_kernel=kernel)
        return estimate_memory(job).breakdown_gib.logits

    assert logits("hf") > logits("chunked") > logits("liger") > logits("cce")
    # hf = tokens × V × 12 B: the stock loss region of architectures-2026.md §5.1.
    arch = get_model(model)
    assert logits("hf") == pytest.approx(8192 * arch.vocab_size * 12 / GIB, rel=0.01)


def test_fp8_keeps_memory_and_speeds_up_only_cards_with_fp8() -> None:
    bf16 = _job(model="qwen2.5-32b", method="full", precision="bf16", num_gpus=8)
    fp8 = _job(model="qwen2.5-32b", method="full", precision="fp8", num_gpus=8)
    assert estimate_memory(fp8).required_gib == estimate_memory(bf16).required_gib
    assert _tokens_per_s(fp8, H100, 8) > 1.2 * _tokens_per_s(bf16, H100, 8)
    assert _tokens_per_s(fp8, "a100-80g-sxm", 8) == _tokens_per_s(bf16, "a100-80g-sxm", 8)


def test_moe_assumptions_say_how_it_is_planned() -> None:
    plan = make_plan(parse("Qwen3-30B-A3B qlora").spec)
    said = " ".join(plan.assumptions)
    assert "30.5B total" in said and "active per token" in said
    assert "fused" in said and "unquantised" in said


def test_gpt_oss_says_its_mxfp4_experts_are_dequantised() -> None:
    plan = make_plan(parse("gpt-oss-20b lora").spec)
    assert any("MXFP4" in line for line in plan.assumptions)
    assert plan.memory.breakdown_gib.weights >= get_model("gpt-oss-20b").total_params * 2 / GIB


def test_sharded_moe_gathers_fewer_experts_with_expert_parallelism() -> None:
    plain = _job(model="qwen3-30b-a3b", method="full", num_gpus=8, sharding="fsdp")
    split = _job(
        model="qwen3-30b-a3b", method="full", num_gpus=8, sharding="fsdp", expert_parallel=8
    )
    assert (
        estimate_memory(split, 8, Sharding.fsdp).required_gib
        < estimate_memory(plain, 8, Sharding.fsdp).required_gib
    )


@pytest.mark.parametrize(
    ("text", "fields"),
    [
        ("Qwen2.5-VL-7B lora with 2 images per sample", {"images_per_sample": 2.0}),
        ("qwen3-vl-8b 每条样本2张图 lora", {"images_per_sample": 2.0}),
        ("gemma 3 27b qlora, train the vision tower", {"train_vision_tower": True}),
        ("Qwen3-30B-A3B full on 8xH100 EP=8", {"expert_parallel": 8, "num_gpus": 8}),
        ("llama 3 8b lora with liger, 8k ctx", {"loss_kernel": "liger"}),
        ("mixtral lora with cut cross entropy", {"loss_kernel": "cce"}),
        ("llama 3 8b full fp8 on 8xh100", {"precision": "fp8"}),
    ],
)
def test_the_switches_read_from_free_text(text: str, fields: dict) -> None:
    read = parse(text).fields
    assert {name: read.get(name) for name in fields} == fields


def test_gpt_oss_plans_eager_attention_unless_the_stack_brings_its_own() -> None:
    hf = make_plan(parse("gpt-oss-20b lora 2k ctx").spec)
    assert hf.spec.flash_attention is False
    assert any("eager attention" in line for line in hf.assumptions)
    unsloth = make_plan(parse("gpt-oss-20b lora 2k ctx with unsloth").spec)
    assert unsloth.spec.flash_attention is True
