"""MoE as the stacks train and serve it: experts quantised or not, adapted or not, per stack."""

from __future__ import annotations

import pytest

from planner.planner import make_plan
from planner.spec import JobSpec

GIB_16GB_CARD = 16e9 / 2**30


def _plan(**fields: object):
    return make_plan(JobSpec.model_validate({"method": "qlora", **fields}))


def test_gpt_oss_20b_qlora_with_unsloth_fits_a_16gb_card() -> None:
    """Unsloth's gpt-oss-20b notebook trains on a 16 GB T4 (reserved peak ≈ 13 GiB)."""
    plan = _plan(model="gpt-oss-20b", framework="unsloth", seq_len=1024)
    assert plan.memory.required_gib < GIB_16GB_CARD
    assert plan.spec.experts_quantized is True


def test_gpt_oss_120b_qlora_with_unsloth_fits_one_80gb_card() -> None:
    plan = _plan(model="gpt-oss-120b", framework="unsloth", seq_len=2048)
    assert plan.memory.required_gib < 79.0


def test_same_job_on_hf_keeps_fused_experts_16bit() -> None:
    """bitsandbytes does not quantise fused 3-D expert tensors (stacks-2026.md)."""
    hf = _plan(model="gpt-oss-20b", framework="hf", seq_len=1024)
    assert hf.spec.experts_quantized is False
    stated = _plan(model="gpt-oss-20b", framework="hf", seq_len=1024, experts_quantized=True)
    assert stated.memory.required_gib < hf.memory.required_gib / 2


def test_llama4_scout_qlora_with_axolotl_is_near_its_published_peak() -> None:
    """axolotl's Scout QLoRA example on one H100: 64.5 GB (60.07 GiB)."""
    plan = _plan(model="llama 4 scout", framework="axolotl", seq_len=4096)
    assert abs(plan.memory.peak_reserved_gib - 60.07) / 60.07 <= 0.25


def test_adapting_experts_adds_their_adapters() -> None:
    off = _plan(model="qwen3 30b a3b", framework="hf")
    on = _plan(model="qwen3 30b a3b", framework="hf", experts_adapted=True)
    assert on.memory.breakdown_gib.adapter > 10 * off.memory.breakdown_gib.adapter


def test_serving_gpt_oss_20b_in_4bit_fits_16_gib() -> None:
    after = _plan(model="gpt-oss-20b").after_training
    assert after is not None
    assert after.serve_4bit_gib <= 16.0
    assert after.serve_mxfp4_gib is not None and after.serve_mxfp4_gib <= 16.0
    assert after.serve_4bit_gib < after.serve_fp8_gib < after.serve_bf16_gib


def test_prequantised_id_sets_the_quantisation() -> None:
    plan = make_plan(JobSpec(model="unsloth/Qwen3-14B-bnb-4bit", method="lora"))
    assert plan.spec.method == "qlora" and plan.spec.quant == "nf4"
    assert plan.memory.breakdown_gib.weights < 14.0


def test_models_list_cites_followable_sources_and_published_contexts() -> None:
    from planner.catalog.model_table import model_rows

    rows = model_rows()
    assert not [r.key for r in rows if "search" in r.source or "not disclosed" in r.source]
    nemo = next(r for r in rows if r.key == "mistral-nemo-base-2407")
    assert nemo.max_context == 131_072  # 128k published; config.json says 1,024,000


def test_new_2026_families_are_planned_with_their_shapes() -> None:
    next_80b = make_plan(JobSpec(model="Qwen3-Next-80B-A3B", method="lora"))
    assert next_80b.model.active_params_b is not None and next_80b.model.active_params_b < 5
    glm = make_plan(JobSpec(model="glm 4.6", method="lora", num_gpus=8, gpu="h100"))
    assert glm.model.params_b > 300


def test_unknown_model_with_a_stated_size_is_planned_generic_and_said() -> None:
    plan = make_plan(JobSpec(model="my custom llama-style model", params_b=9, method="lora"))
    assert plan.model.params_b == pytest.approx(9, rel=0.05)
    assert any("not in the catalog" in a for a in plan.assumptions)
    moe = make_plan(JobSpec(model="acme-40B-A4B", params_b=40, method="lora"))
    assert moe.model.active_params_b == pytest.approx(4, rel=0.2)


@pytest.mark.parametrize(
    ("text", "card"),
    [("llama 3.1 8b lora on my macbook pro 64gb", "Mac"), ("qwen 7b qlora on M3 Max 64GB", "M3")],
)
def test_apple_silicon_is_answered_plainly_not_planned_as_a_cuda_card(text: str, card: str) -> None:
    from planner.parsing.assemble import parse

    fields = parse(text).fields
    plan = make_plan(JobSpec.model_validate(fields))
    assert plan.requested is None
    said = [w for w in plan.warnings if "is not a CUDA card" in w]
    assert len(said) == 1 and card in said[0] and "MLX" in said[0]


@pytest.mark.parametrize(
    ("name", "gib"),
    [("RTX 3060 12GB", 12.0), ("3080", 10.0), ("3080 ti", 12.0), ("2080 ti", 11.0)],
)
def test_late_consumer_cards_are_known(name: str, gib: float) -> None:
    from planner.catalog.gpus import read_gpu

    match = read_gpu(name)
    assert match is not None and match.gpu.usable_gib == gib and match.gpu.source


@pytest.mark.parametrize(
    ("question", "published"),
    [
        # Unsloth's long-context table (QLoRA, Llama 3.1 8B on 24 GB; Llama 3.3 70B on 80 GB).
        ("max context for llama 3.1 8b qlora with unsloth on a 4090?", 78_475),
        ("max context for llama 3.3 70b qlora with unsloth on an 80gb card?", 89_389),
    ],
)
def test_unsloth_max_context_is_near_its_table_and_never_far_above(
    question: str, published: int
) -> None:
    from planner.market.solve import solve
    from planner.parsing.assemble import parse

    result = parse(question)
    assert result.spec is not None and result.asked == "seq_len"
    _, answer = solve(result.spec, "seq_len")
    assert answer.value is not None
    assert 0.85 * published <= answer.value <= 1.15 * published


def test_vision_tokens_cost_time_as_text_does_and_the_tower_adds_flops() -> None:
    from planner.estimate.throughput import vision_flops_per_token

    images = make_plan(
        JobSpec(
            model="qwen2.5 vl 7b",
            method="lora",
            images_per_sample=2,
            dataset_tokens=25.6e6,
            mean_sample_len=512,
            gpu="h100",
        )
    )
    text = make_plan(
        JobSpec(model="qwen2.5 vl 7b", method="lora", dataset_tokens=25.6e6, gpu="h100")
    )
    assert images.requested is not None and text.requested is not None
    assert images.requested.hours > 5 * text.requested.hours
    assert any("images add" in a for a in images.assumptions)
    from planner.resolve.defaults import resolve

    job = resolve(JobSpec(model="qwen2.5 vl 7b", method="lora", images_per_sample=2))
    assert vision_flops_per_token(job) > 0


def test_mean_sample_len_sets_time_not_the_peak() -> None:
    capped = JobSpec(model="llama 3.1 8b", method="lora", seq_len=8192, dataset_tokens=1e8)
    short = capped.model_copy(update={"mean_sample_len": 600})
    a, b = make_plan(capped), make_plan(short)
    assert a.memory.required_gib == b.memory.required_gib
    assert any("samples average ~600 tokens" in s for s in b.assumptions)


def test_a_padding_free_stack_peaks_at_real_tokens_when_the_mean_is_known() -> None:
    job = {"model": "qwen2.5 7b", "method": "lora", "seq_len": 4096, "micro_batch": 8}
    capped = make_plan(JobSpec.model_validate({**job, "framework": "verl"}))
    real = make_plan(JobSpec.model_validate({**job, "framework": "verl", "mean_sample_len": 400}))
    padded = make_plan(JobSpec.model_validate({**job, "framework": "trl", "mean_sample_len": 400}))
    assert real.memory.required_gib < capped.memory.required_gib / 1.5
    assert (
        padded.memory.required_gib
        == make_plan(JobSpec.model_validate({**job, "framework": "trl"})).memory.required_gib
    )
    assert any("drops padding" in a for a in real.assumptions)


def test_a_generic_shape_widens_the_range_both_ways() -> None:
    known = make_plan(JobSpec(model="llama 3.1 8b", method="lora"))
    guessed = make_plan(JobSpec(model="acme-chat-8b", params_b=8.03, method="lora"))
    known_low, known_high = known.memory.range_gib
    low, high = guessed.memory.range_gib
    assert high / guessed.memory.required_gib > 1.8 * known_high / known.memory.required_gib
    assert low / guessed.memory.peak_allocated_gib < known_low / known.memory.peak_allocated_gib


def test_a_derivative_checkpoint_is_planned_with_its_base_architecture() -> None:
    plan = make_plan(
        JobSpec(model="someuser/Meta-Llama-3.1-8B-Instruct-finetuned-v2", method="lora")
    )
    assert plan.model.name == "Llama-3.1-8B"
    assert any("read as a checkpoint of Llama-3.1-8B" in a for a in plan.assumptions)


def test_axolotl_dequantises_one_layers_experts_at_a_time() -> None:
    """axolotl's quantize_moe_experts parametrises each 3-D expert tensor: the whole layer's
    experts are dequantised when the layer runs and saved for its backward (with checkpointing
    one layer's: Qwen3-Next-80B-A3B's README measures ~47 GiB). A stated quantisation keeps
    bitsandbytes' per-matmul buffers only, and so does Llama 4's linearised checkpoint."""
    job = {"model": "qwen3 30b a3b", "framework": "axolotl", "seq_len": 2048}
    plan = _plan(**job)
    stated = _plan(**job, experts_quantized=True)
    assert plan.spec.experts_quantized is True
    layer_gib = 2 * 128 * 3 * 2048 * 768 / 2**30  # 128 experts of 3 × hidden × 768, 16-bit
    extra = plan.memory.breakdown_gib.weights - stated.memory.breakdown_gib.weights
    assert extra == pytest.approx(layer_gib, rel=0.02)
    without = _plan(**job, gradient_checkpointing=False)
    assert without.memory.breakdown_gib.weights - stated.memory.breakdown_gib.weights > 40 * extra


def test_glm_4_7_flash_qlora_matches_axolotls_expert_quantisation_figures() -> None:
    """axolotl docs/expert_quantization.qmd: GLM-4.7-Flash QLoRA 'drops from ~127GiB to ~23GiB
    reserved memory' with quantize_moe_experts: transformers 5 stores its experts as 3-D
    tensors, which bitsandbytes leaves 16-bit (and PEFT's k-bit preparation upcasts)."""
    hf = _plan(model="GLM-4.7-Flash", framework="hf", seq_len=2048)
    axolotl = _plan(model="GLM-4.7-Flash", framework="axolotl", seq_len=2048)
    assert hf.memory.peak_reserved_gib > 100
    assert axolotl.spec.experts_quantized is True
    assert abs(axolotl.memory.peak_reserved_gib - 23) / 23 <= 0.15


def test_an_expert_parallel_size_that_cannot_be_used_still_says_the_expert_loop() -> None:
    """An EP size that does not divide the GPUs is warned about and planned without EP, so the
    job pays transformers' per-expert loop, and the answer says so as it does without EP."""
    plan = _plan(model="qwen3 30b a3b", method="lora", num_gpus=2, gpu="h100", expert_parallel=3)
    assert any("expert_parallel 3" in w for w in plan.warnings)
    assert any("one by one" in a for a in plan.assumptions)


def test_transformers_gpt_oss_experts_are_indexed_per_expert_but_not_unsloths() -> None:
    """transformers 4.55's GptOssExperts trains by indexing the fused 16-bit experts per expert:
    the recomputed layer's indexed copies are saved for backward (LoRA too), and a full fine-tune
    adds a whole-size zero gradient of gate_up_proj per expert. Unsloth's nn.Linear experts and
    quantised experts do not; nor do other families."""
    from dataclasses import replace

    from planner.estimate.memory import components as comp
    from planner.estimate.memory.estimate import component_job
    from planner.resolve.defaults import resolve
    from planner.spec import Sharding

    def resolved(**fields: object):
        return resolve(JobSpec.model_validate({"model": "gpt-oss-20b", "seq_len": 2048, **fields}))

    for framework in ("hf", "trl", "axolotl", "ms-swift", "llama-factory"):
        assert resolved(method="lora", framework=framework).experts_indexed is True
    assert resolved(method="lora", framework="unsloth").experts_indexed is False
    assert resolved(method="qlora", framework="axolotl").experts_indexed is False
    qwen = {"model": "qwen3 30b a3b", "method": "lora", "framework": "axolotl"}
    assert resolve(JobSpec.model_validate(qwen)).experts_indexed is False

    lora = resolved(method="lora", framework="axolotl")
    layer_bytes = 2.0 * lora.arch.routed_expert_params / lora.arch.moe_layers
    job = component_job(lora, 1, Sharding.none)
    extra = comp.layer_in_flight_bytes(lora.arch, job) - comp.layer_in_flight_bytes(
        lora.arch, replace(job, experts_indexed=False)
    )
    assert extra == pytest.approx(layer_bytes)
    full = resolved(method="full", framework="axolotl")
    job = component_job(full, 1, Sharding.none)
    assert comp.indexed_expert_bytes(full.arch, job) == pytest.approx(layer_bytes * 5 / 3)
    no_checkpoints = replace(job, gradient_checkpointing=False)
    assert comp.indexed_expert_bytes(full.arch, no_checkpoints) == pytest.approx(
        layer_bytes * (full.arch.moe_layers + 2 / 3)
    )
