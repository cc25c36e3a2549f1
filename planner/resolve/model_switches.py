"""The switches a model's architecture brings: expert parallelism for MoE, the vision tower and
images for vision-language bases, the loss kernel, FP8 — decided for a job with what was assumed
said plainly (README "Models")."""

from __future__ import annotations

from dataclasses import dataclass

from planner.catalog.models import ModelArch
from planner.catalog.stacks import method_fact, stack, stack_family_fact
from planner.estimate.memory.profiles import PROFILES
from planner.messages import MODEL_SWITCHES, STACKS
from planner.spec import Framework, JobSpec, LossKernel, Method, Precision

LOSS_KERNEL_WORDS = {kernel: STACKS(f"loss.{kernel.value}") for kernel in LossKernel}


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
    experts_dequantised_per_layer: bool = False
    experts_indexed: bool = False

    def fields(self) -> dict[str, object]:
        return {
            "expert_parallel": self.expert_parallel,
            "loss_kernel": self.loss_kernel,
            "experts_quantized": self.experts_quantized,
            "experts_dequantised_per_layer": self.experts_dequantised_per_layer,
            "experts_indexed": self.experts_indexed,
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
    # The stack's loader dequantises a whole layer's experts when it runs (StackFact).
    dequantised_per_layer: bool = False


def decide_experts(
    spec: JobSpec, arch: ModelArch, framework: Framework, version: str | None, prequantised: bool
) -> Experts:
    """Fused experts held quantised: as the job says, else when the checkpoint is pre-quantised
    (its experts are stored 4-bit) or the stack's loader quantises them for this family at this
    release (planner/data/stack-*.json `moe_experts`). Adapted: as the job says, else as the
    stack's `experts_adapted` fact for this family at this release."""
    stack_why = _stack_adapts_experts(spec, arch, framework, version)
    adapted = bool(spec.experts_adapted) or stack_why is not None
    if not arch.fused_experts or spec.method is not Method.qlora:
        why = stack_why or MODEL_SWITCHES("experts.as_stated")
        return Experts(False, adapted and arch.fused_experts, "", why)
    adapted_why = stack_why or MODEL_SWITCHES("experts.adapted_as_stated")
    if spec.experts_quantized is not None:
        return Experts(
            spec.experts_quantized, adapted, MODEL_SWITCHES("experts.as_stated"), adapted_why
        )
    if prequantised:
        return Experts(True, adapted, MODEL_SWITCHES("experts.prequantised"), adapted_why)
    fact = stack_family_fact(framework, "moe_experts", version, arch.family)
    if fact is not None and fact.quantized:
        why = fact.said or f"{stack(framework).name}'s loader does ({fact.source})"
        return Experts(True, adapted, why, adapted_why, fact.dequantised_per_layer)
    return Experts(False, adapted, "", adapted_why)


def _stack_adapts_experts(
    spec: JobSpec, arch: ModelArch, framework: Framework, version: str | None
) -> str | None:
    """Why LoRA trains the experts when the job does not say: the stack's release loads this
    family's experts as nn.Linear modules that target_modules reaches (a stack fact
    `experts_adapted` naming the family, value true); None otherwise."""
    if spec.experts_adapted is not None:
        return None
    fact = stack_family_fact(framework, "experts_adapted", version, arch.family)
    if fact is None or fact.value is not True or not fact.families:
        return None
    return fact.said or f"{stack(framework).name} ({fact.source})"


def _moe(
    spec: JobSpec,
    arch: ModelArch,
    num_gpus: int,
    framework: Framework,
    version: str | None,
    experts: Experts,
    said: list[str],
    warned: list[str],
) -> int:
    """Say how a MoE is planned; the expert-parallel size (1 unless asked and possible)."""
    if not arch.is_moe:
        if spec.expert_parallel and spec.expert_parallel > 1:
            warned.append(MODEL_SWITCHES("ep.not_moe", model=arch.name))
        return 1
    said.append(
        MODEL_SWITCHES(
            "moe",
            experts=arch.num_experts,
            total_b=arch.params_b,
            active_b=arch.active_params / 1e9,
            top=arch.experts_per_token,
        )
    )
    if spec.method is not Method.full and arch.fused_experts:
        qlora = ""
        if spec.method is Method.qlora and not experts.quantized:
            fp32 = PROFILES[framework].kbit_embeddings_fp32
            qlora = MODEL_SWITCHES("fused.unquantised_fp32" if fp32 else "fused.unquantised")
        elif spec.method is Method.qlora:
            qlora = MODEL_SWITCHES("fused.quantised", why=experts.quantized_why)
        adapted = (
            MODEL_SWITCHES("fused.adapted", why=experts.adapted_why)
            if experts.adapted
            else MODEL_SWITCHES("fused.not_adapted")
        )
        said.append(MODEL_SWITCHES("fused", adapted=adapted, qlora=qlora))
    elif spec.method is not Method.full:
        said.append(MODEL_SWITCHES("linear_experts"))
    wanted = spec.expert_parallel or 1
    if wanted > 1 and (num_gpus % wanted or wanted > (arch.num_experts or 1)):
        # Planned without EP, so what follows (the expert loop's price) is said all the same.
        warned.append(
            MODEL_SWITCHES("ep.invalid", wanted=wanted, gpus=num_gpus, experts=arch.num_experts)
        )
        wanted = 1
    elif wanted > 1:
        each = arch.num_experts // wanted
        said.append(MODEL_SWITCHES("ep", wanted=wanted, each=each, experts=arch.num_experts))
    elif num_gpus > 1:
        said.append(MODEL_SWITCHES("ep.none"))
    if wanted == 1 and _runs_expert_loop(spec, framework, version):
        said.append(MODEL_SWITCHES("expert_loop", stack=stack(framework).name))
    if arch.family in ("gpt-oss", "gpt_oss") and not experts.quantized:
        said.append(MODEL_SWITCHES("gpt_oss_bf16"))
    return wanted


def _runs_expert_loop(spec: JobSpec, framework: Framework, version: str | None) -> bool:
    """Whether the stack's MoE blocks are transformers' eager per-expert loop for this method
    (stack fact `moe_expert_loop`; planner/estimate/throughput.py prices it)."""
    fact = method_fact(framework, "moe_expert_loop", version, spec.method.value)
    return fact is not None and bool(fact.value)


def _vision(
    spec: JobSpec, arch: ModelArch, said: list[str], warned: list[str]
) -> tuple[bool, float]:
    if not arch.vision_params:
        if spec.train_vision_tower or spec.images_per_sample:
            warned.append(MODEL_SWITCHES("vision.none", model=arch.name))
        return False, 0.0
    train = bool(spec.train_vision_tower)
    images = spec.images_per_sample or 0.0
    tower = "vision.trained" if train else "vision.frozen"
    said.append(MODEL_SWITCHES(tower, size_b=arch.vision_params / 1e9))
    if images and arch.image_tokens:
        said.append(MODEL_SWITCHES("images.tokens", images=images, tokens=arch.image_tokens))
    elif images:
        said.append(MODEL_SWITCHES("images.cross_attention", images=images))
    else:
        said.append(MODEL_SWITCHES("images.none"))
    return train, images


def _experts_indexed(
    arch: ModelArch, framework: Framework, version: str | None, experts: Experts
) -> bool:
    """The stack trains this family's fused 16-bit experts through transformers' indexed
    per-expert loop (stack fact `moe_indexed_experts`; comp.indexed_expert_bytes)."""
    if not arch.fused_experts or experts.quantized:
        return False
    fact = stack_family_fact(framework, "moe_indexed_experts", version, arch.family)
    return fact is not None and fact.value is True and fact.families is not None


def resolve_model_switches(
    spec: JobSpec,
    arch: ModelArch,
    num_gpus: int,
    said: list[str],
    warned: list[str],
    framework: Framework = Framework.hf,
    experts: Experts | None = None,
    version: str | None = None,
) -> ModelSwitches:
    """The model's switches (MoE, vision, loss kernel, FP8) at the stack's resolved `version`
    (the release the job is planned at: catalog.stacks.resolve_version)."""
    experts = experts or Experts(False, False)
    expert_parallel = _moe(spec, arch, num_gpus, framework, version, experts, said, warned)
    train, images = _vision(spec, arch, said, warned)
    if spec.loss_kernel is not None:
        said.append(STACKS("loss.stated", kernel=LOSS_KERNEL_WORDS[spec.loss_kernel]))
    if spec.precision is Precision.fp8:
        said.append(MODEL_SWITCHES("fp8"))
    return ModelSwitches(
        expert_parallel=expert_parallel,
        loss_kernel=spec.loss_kernel,
        experts_quantized=experts.quantized,
        experts_adapted=experts.adapted,
        experts_dequantised_per_layer=experts.dequantised_per_layer,
        experts_indexed=_experts_indexed(arch, framework, version, experts),
        train_vision_tower=train,
        images_per_sample=images,
        image_tokens=round(images * arch.image_tokens),
    )
