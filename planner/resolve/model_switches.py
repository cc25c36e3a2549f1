"""The switches a model's architecture brings: expert parallelism for MoE, the vision tower and
images for vision-language bases, the loss kernel, FP8 — decided for a job with what was assumed
said plainly (README "Models")."""

from __future__ import annotations

from dataclasses import dataclass

from planner.catalog.models import ModelArch
from planner.catalog.stacks import stack, stack_family_fact
from planner.estimate.memory.profiles import PROFILES
from planner.spec import Framework, JobSpec, LossKernel, Method, Precision

LOSS_KERNEL_WORDS = {
    LossKernel.hf: "stock HF loss (full [tokens × vocabulary] logits, fp32 log-softmax)",
    LossKernel.chunked: "chunked cross-entropy (bf16 logits, fp32 upcast one of 8 chunks at once)",
    LossKernel.liger: "Liger fused linear cross-entropy (no [tokens × vocabulary] logits)",
    LossKernel.cce: "Cut Cross-Entropy (only the correct-token logit and a log-sum-exp per token)",
}


@dataclass(frozen=True, slots=True)
class ModelSwitches:
    """ResolvedJob's architecture switches. `image_tokens` is what the images of one sample add
    to the sequence (already inside the resolved seq_len)."""

    expert_parallel: int
    loss_kernel: LossKernel | None
    experts_quantized: bool
    experts_adapted: bool
    train_vision_tower: bool
    images_per_sample: float
    image_tokens: int

    def fields(self) -> dict[str, object]:
        return {
            "expert_parallel": self.expert_parallel,
            "loss_kernel": self.loss_kernel,
            "experts_quantized": self.experts_quantized,
            "experts_adapted": self.experts_adapted,
            "train_vision_tower": self.train_vision_tower,
            "images_per_sample": self.images_per_sample,
            "image_tokens": self.image_tokens,
        }


@dataclass(frozen=True, slots=True)
class Experts:
    """How a job holds and trains fused MoE experts, and why (said in the assumptions)."""

    quantized: bool
    adapted: bool
    quantized_why: str = ""
    adapted_why: str = ""


def decide_experts(
    spec: JobSpec, arch: ModelArch, framework: Framework, version: str | None, prequantised: bool
) -> Experts:
    """Fused experts held quantised: as the job says, else when the checkpoint is pre-quantised
    (its experts are stored 4-bit) or the stack's loader quantises them for this family at this
    release (planner/data/stack-*.json `moe_experts`). Adapted: only when the job says so."""
    if not arch.fused_experts or spec.method is not Method.qlora:
        return Experts(False, bool(spec.experts_adapted) and arch.fused_experts, "", "as stated")
    adapted = bool(spec.experts_adapted)
    adapted_why = "as stated: PEFT ≥ 0.17 target_parameters"
    if spec.experts_quantized is not None:
        return Experts(spec.experts_quantized, adapted, "as stated", adapted_why)
    if prequantised:
        return Experts(True, adapted, "the checkpoint is pre-quantised", adapted_why)
    fact = stack_family_fact(framework, "moe_experts", version, arch.family)
    if fact is not None and fact.quantized:
        why = fact.said or f"{stack(framework).name}'s loader does ({fact.source})"
        return Experts(True, adapted, why, adapted_why)
    return Experts(False, adapted, "", adapted_why)


def _moe(
    spec: JobSpec,
    arch: ModelArch,
    num_gpus: int,
    framework: Framework,
    experts: Experts,
    said: list[str],
    warned: list[str],
) -> int:
    """Say how a MoE is planned; the expert-parallel size (1 unless asked and possible)."""
    if not arch.is_moe:
        if spec.expert_parallel and spec.expert_parallel > 1:
            warned.append(f"expert_parallel ignored: {arch.name} is not a mixture of experts")
        return 1
    said.append(
        f"mixture of experts: all {arch.num_experts} experts are resident, so weights, "
        f"gradients and optimizer state follow the {arch.params_b:.1f}B total; FLOPs follow "
        f"the {arch.active_params / 1e9:.1f}B active per token (top-{arch.experts_per_token} "
        "and any shared expert) at a lower matmul efficiency than a dense model's"
    )
    if spec.method is not Method.full and arch.fused_experts:
        qlora = ""
        if spec.method is Method.qlora and not experts.quantized:
            qlora = "; bitsandbytes leaves them unquantised (it replaces only nn.Linear)"
            if PROFILES[framework].kbit_embeddings_fp32:
                qlora += ", and PEFT's k-bit preparation upcasts them to fp32 on one GPU"
        elif spec.method is Method.qlora:
            qlora = f"; held quantised: {experts.quantized_why}"
        adapted = (
            f"LoRA adapts them too ({experts.adapted_why})"
            if experts.adapted
            else "LoRA adapts attention and the dense/shared MLPs (PEFT's target_modules cannot "
            "wrap them)"
        )
        said.append("the experts are fused 3-D tensors in transformers: " + adapted + qlora)
    elif spec.method is not Method.full:
        said.append("LoRA on every expert too (they are nn.Linear modules here)")
    wanted = spec.expert_parallel or 1
    if wanted > 1 and (num_gpus % wanted or wanted > (arch.num_experts or 1)):
        warned.append(
            f"expert_parallel {wanted} must divide the {num_gpus} GPUs and not exceed the "
            f"{arch.num_experts} experts: planned without expert parallelism"
        )
        return 1
    if wanted > 1:
        said.append(
            f"expert parallelism {wanted}: each GPU of an EP group holds "
            f"{arch.num_experts // wanted} of the {arch.num_experts} experts of every MoE layer; "
            "tokens reach their experts by all-to-all"
        )
    elif num_gpus > 1:
        said.append("no expert parallelism (expert_parallel 1)")
    if arch.family in ("gpt-oss", "gpt_oss") and not experts.quantized:
        said.append(
            "gpt-oss's MXFP4 experts are dequantised to bf16 for training (the HF recipe loads "
            "with Mxfp4Config(dequantize=True))"
        )
    return wanted


def _vision(
    spec: JobSpec, arch: ModelArch, said: list[str], warned: list[str]
) -> tuple[bool, float]:
    if not arch.vision_params:
        if spec.train_vision_tower or spec.images_per_sample:
            warned.append(f"{arch.name} has no vision tower: image settings ignored")
        return False, 0.0
    train = bool(spec.train_vision_tower)
    images = spec.images_per_sample or 0.0
    said.append(
        f"vision tower ({arch.vision_params / 1e9:.2f}B) "
        + ("trained" if train else "frozen (say train_vision_tower to train it)")
    )
    if images and arch.image_tokens:
        said.append(
            f"{images:g} image(s) per sample × {arch.image_tokens:,} tokens each added to the "
            "sequence (planned at a 1024×1024 image or one tile where the size varies)"
        )
    elif images:
        said.append(f"{images:g} image(s) per sample through cross-attention (no sequence tokens)")
    else:
        said.append("text-only samples (say 'with N images per sample' to add image tokens)")
    return train, images


def resolve_model_switches(
    spec: JobSpec,
    arch: ModelArch,
    num_gpus: int,
    said: list[str],
    warned: list[str],
    framework: Framework = Framework.hf,
    experts: Experts | None = None,
) -> ModelSwitches:
    experts = experts or Experts(False, False)
    expert_parallel = _moe(spec, arch, num_gpus, framework, experts, said, warned)
    train, images = _vision(spec, arch, said, warned)
    if spec.loss_kernel is not None:
        said.append(f"loss: {LOSS_KERNEL_WORDS[spec.loss_kernel]}")
    if spec.precision is Precision.fp8:
        said.append(
            "FP8 matmuls (Hopper/Blackwell): weights, gradients and optimizer state stay as in "
            "bf16, so memory does not drop; other cards run it at bf16 speed"
        )
    return ModelSwitches(
        expert_parallel=expert_parallel,
        loss_kernel=spec.loss_kernel,
        experts_quantized=experts.quantized,
        experts_adapted=experts.adapted,
        train_vision_tower=train,
        images_per_sample=images,
        image_tokens=round(images * arch.image_tokens),
    )
