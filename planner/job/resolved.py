"""The job types: what the user said (planner.spec.JobSpec, the public JSON), a patch of its
fields, and the job with every choice decided (ResolvedJob), which estimate, market and plan read.

Only planner.resolve makes a ResolvedJob; the types live here, below every stage that reads them,
so that no lower module imports the resolver for its types.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from planner.spec import (
    ALL_LINEAR,
    Framework,
    JobSpec,
    LoraTarget,
    LossKernel,
    MeasuredMetric,
    Method,
    Objective,
    Optimizer,
    Precision,
    Pricing,
    Quant,
    Rollout,
    Sharding,
)

if TYPE_CHECKING:
    from planner.catalog.models import ModelArch

# A change to a job: JobSpec fields by name, enum members or their JSON values (a suggestion's
# what-if, a follow-up in a thread); planner.resolve.defaults.changed applies one.
Patch = Mapping[str, object]


def lora_target_names(
    targets: tuple[LoraTarget, ...] | list[LoraTarget] | Literal["all-linear"] | None,
) -> tuple[str, ...]:
    """The linear layers LoRA adapts, by name: the targets decided for a job (a JobSpec's or a
    ResolvedJob's); unset means every one (PEFT's "all-linear")."""
    if targets is None or targets == ALL_LINEAR:
        return tuple(target.value for target in LoraTarget)
    return tuple(target.value for target in targets)


@dataclass(frozen=True, slots=True, kw_only=True)
class PostTrainingFields:
    """The post-training fields of a ResolvedJob, which inherits them: None where the
    objective has none (no generations for DPO, no rollout GPUs without a vLLM server)."""

    objective: Objective
    reference_model: bool
    num_generations: int | None
    prompt_len: int | None
    completion_len: int | None
    rollout: Rollout | None
    rollout_memory_fraction: float | None
    rollout_gpus: int | None
    # A colocated engine's tensor-parallel size and whether it sleeps through the update.
    rollout_tensor_parallel: int | None
    rollout_sleep: bool | None
    reward_model: str | None
    # The reward model's architecture (None: rule-based rewards, nothing on the GPU).
    reward_arch: ModelArch | None
    dataset_prompts: float | None
    # Completions the job generates per round, when the user's stack says (None: TRL's round).
    generation_batch: int | None


@dataclass(frozen=True, slots=True, kw_only=True)
class ResolvedJob(PostTrainingFields):
    """A job with every choice decided: what memory, time, options, suggestions and
    after_training read. Only `resolve` makes one; nothing downstream falls back to a default.

    `raw` is what the user said: a change (a suggestion, a follow-up) patches `raw` and resolves
    again, so every default is chosen afresh for the changed job. Fields that are None here mean
    "does not apply" (no quantisation for LoRA, no LoRA rank for a full fine-tune, no card named),
    never "not decided yet". The preference and RL fields come from PostTrainingFields.
    """

    raw: JobSpec
    arch: ModelArch
    # The architecture the caller supplied (a config.json) rather than the catalog's: kept so
    # that a re-resolved change plans the same model.
    given_arch: ModelArch | None
    model: str
    params_b: float
    method: Method
    quant: Quant | None
    precision: Precision
    optimizer: Optimizer
    lora_rank: int | None
    lora_alpha: float | None
    lora_targets: tuple[LoraTarget, ...] | Literal["all-linear"] | None
    seq_len: int
    micro_batch: int
    grad_accum: int
    gradient_checkpointing: bool
    flash_attention: bool
    packing: bool
    num_gpus: int
    sharding: Sharding
    cpu_offload: bool
    activation_offloading: bool
    tiled_mlp: bool
    fsdp_version: int  # 2: PyTorch's fully_shard (planner.resolve.defaults._fsdp_version)
    framework: Framework
    framework_version: str | None  # None: a stack whose release number is not recorded
    gpu: str | None
    gpu_vram_gb: float | None
    dataset_tokens: float | None  # trained tokens, a VLM's image tokens included
    mean_sample_len: int | None  # text tokens a sample averages; None: samples fill seq_len
    epochs: float
    tokens_per_s: float | None
    measured_peak_gib: float | None
    measured_metric: MeasuredMetric | None
    # measured ÷ estimated peak (planner.anchor): 1.0 without a report.
    memory_scale: float
    budget_usd: float | None
    deadline_hours: float | None
    # Architecture switches (planner.resolve.model_switches): MoE expert parallelism, VLM images.
    expert_parallel: int
    context_parallel: int  # 1: each GPU holds whole sequences
    loss_kernel: LossKernel | None  # None: the framework's own loss
    experts_quantized: bool  # fused MoE experts held quantised (QLoRA)
    experts_adapted: bool  # LoRA on fused MoE experts (target_parameters)
    # The stack dequantises a whole layer's quantised experts when it runs (axolotl).
    experts_dequantised_per_layer: bool = False
    # The stack trains the fused 16-bit experts by indexing them per expert (transformers' gpt-oss).
    experts_indexed: bool = False
    train_vision_tower: bool
    images_per_sample: float
    image_tokens: int  # what one sample's images add; inside seq_len
    pricing: Pricing
    assumptions: tuple[str, ...]
    warnings: tuple[str, ...]

    @property
    def reference_copy(self) -> bool:
        """A frozen second copy of the model is resident: a reference for full fine-tuning
        (PEFT's reference is the same base with the adapters switched off)."""
        return self.reference_model and self.method is Method.full

    @property
    def needs_anchoring(self) -> bool:
        """A reported peak whose scale is not decided yet (planner.anchor; a what-if keeps the
        scale it carries)."""
        reported = self.measured_peak_gib is not None or self.measured_metric == "oom"
        return reported and self.raw.memory_scale is None

    def to_spec(self) -> JobSpec:
        """The job as planned, as the public JobSpec JSON (Plan.spec): every default filled."""
        targets = self.lora_targets
        return self.raw.model_copy(
            update={
                **{name: getattr(self, name) for name in _DECIDED_FIELDS},
                "lora_targets": list(targets) if isinstance(targets, tuple) else targets,
                "memory_scale": self.memory_scale if self.memory_scale != 1.0 else None,
            }
        )


# The ResolvedJob fields that are JobSpec fields (all but the bookkeeping ones).
_DECIDED_FIELDS = tuple(
    name for name in ResolvedJob.__dataclass_fields__ if name in JobSpec.model_fields
)
