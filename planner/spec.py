"""JobSpec: the fine-tuning job a user describes. Its JSON field names are a public interface.

Every field but `method` is optional: the planner fills what is missing the way most people run
(see `planner.resolve.defaults`) and records each choice as a plain-language assumption.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class Method(StrEnum):
    full = "full"
    lora = "lora"
    qlora = "qlora"


class Quant(StrEnum):
    nf4 = "nf4"
    int8 = "int8"
    int4 = "int4"
    # A frozen base held in FP8 (block-scaled, as DeepSeek/Qwen FP8 checkpoints ship) or in
    # MXFP4 (gpt-oss's native expert format: E2M1 values, one 8-bit scale per 32).
    fp8 = "fp8"
    mxfp4 = "mxfp4"


class Precision(StrEnum):
    bf16_mixed = "bf16-mixed"
    bf16 = "bf16"
    fp16_mixed = "fp16-mixed"
    fp32 = "fp32"
    # FP8 matmuls (Transformer Engine / torchao float8) on Hopper and Blackwell: weights,
    # gradients and optimizer states stay as in bf16; only the GEMMs run in FP8.
    fp8 = "fp8"


class Optimizer(StrEnum):
    adamw = "adamw"
    adamw_8bit = "adamw_8bit"
    paged_adamw = "paged_adamw"
    paged_adamw_8bit = "paged_adamw_8bit"
    sgd = "sgd"
    adafactor = "adafactor"


class LoraTarget(StrEnum):
    q = "q"
    k = "k"
    v = "v"
    o = "o"
    gate = "gate"
    up = "up"
    down = "down"


class LossKernel(StrEnum):
    """How the loss is computed over the vocabulary (architectures-2026.md §5.2): stock HF
    logits, torchtune-style chunked upcast, Liger's fused linear cross-entropy, or Apple's Cut
    Cross-Entropy."""

    hf = "hf"
    chunked = "chunked"
    liger = "liger"
    cce = "cce"


class Sharding(StrEnum):
    none = "none"
    ddp = "ddp"
    fsdp = "fsdp"
    zero2 = "zero2"
    zero3 = "zero3"
    device_map = "device_map"


class Framework(StrEnum):
    hf = "hf"
    unsloth = "unsloth"
    torchtune = "torchtune"
    litgpt = "litgpt"
    axolotl = "axolotl"
    llama_factory = "llama-factory"
    ms_swift = "ms-swift"
    # Added in 2026 (README "Stacks"): TRL on its own (its SFT loss and GRPO defaults differ from
    # the HF Trainer + PEFT path), and the RL stacks verl and OpenRLHF.
    trl = "trl"
    verl = "verl"
    openrlhf = "openrlhf"


class Objective(StrEnum):
    """What the job optimises: supervised fine-tuning, an offline preference loss on chosen and
    rejected responses, or online RL that generates its own completions."""

    sft = "sft"
    dpo = "dpo"
    kto = "kto"
    orpo = "orpo"
    simpo = "simpo"
    cpo = "cpo"
    grpo = "grpo"
    rloo = "rloo"
    ppo = "ppo"


# Offline preference methods: each example is two sequences (chosen + rejected; KTO's completion
# + its mismatched KL completion).
PREFERENCE_OBJECTIVES = frozenset(
    {Objective.dpo, Objective.kto, Objective.orpo, Objective.simpo, Objective.cpo}
)
# Online methods: each prompt's completions are generated during training.
ONLINE_OBJECTIVES = frozenset({Objective.grpo, Objective.rloo, Objective.ppo})


class Rollout(StrEnum):
    """Where an online method generates: HF generate inside the trainer, vLLM inside each training
    process (sharing the card), or a vLLM server on GPUs of its own."""

    hf = "hf"
    vllm_colocate = "vllm-colocate"
    vllm_server = "vllm-server"


class Pricing(StrEnum):
    """Which rental price costs use: on-demand unless the job accepts interruptions."""

    on_demand = "on_demand"
    spot = "spot"


ALL_LINEAR: Literal["all-linear"] = "all-linear"


# Upper bounds reject typos and hostile numbers with a message naming the field, not a crash deep in
# the arithmetic; each is far beyond any real job.
MAX_PARAMS_B = 5_000.0
MAX_SEQ_LEN = 10_000_000
MAX_MICRO_BATCH = 65_536
MAX_GPUS = 100_000
MAX_TOKENS = 1e16
MAX_GENERATIONS = 4096


MeasuredMetric = Literal["allocated", "reserved", "nvidia-smi", "unknown", "oom"]


class JobSpec(BaseModel):
    """One fine-tuning job. `None` means "not said": the planner picks and states a default."""

    model_config = ConfigDict(extra="ignore", allow_inf_nan=False, use_enum_values=False)

    model: str | None = Field(None, max_length=200, description="HF id, alias or loose name")
    params_b: float | None = Field(None, gt=0, le=MAX_PARAMS_B, description="parameters, billions")
    method: Method
    quant: Quant | None = None
    precision: Precision | None = None
    optimizer: Optimizer | None = None
    lora_rank: int | None = Field(None, ge=1, le=65_536)
    lora_alpha: float | None = Field(None, gt=0, le=1e6)
    lora_targets: list[LoraTarget] | Literal["all-linear"] | None = None
    seq_len: int | None = Field(None, ge=1, le=MAX_SEQ_LEN)
    micro_batch: int | None = Field(None, ge=1, le=MAX_MICRO_BATCH)
    grad_accum: int | None = Field(None, ge=1, le=1_000_000)
    gradient_checkpointing: bool | None = None
    flash_attention: bool | None = None
    packing: bool | None = None
    num_gpus: int | None = Field(None, ge=1, le=MAX_GPUS)
    sharding: Sharding | None = None
    cpu_offload: bool | None = None
    activation_offloading: bool | None = Field(
        None,
        description="saved activations (the checkpointed layer inputs) kept in host RAM: "
        "torchtune's enable_activation_offloading, TRL's activation_offloading, Unsloth's "
        "default",
    )
    tiled_mlp: bool | None = Field(
        None,
        description="the MLP runs tiled along the sequence, saving only its input (ALST's "
        "TiledMLP: ArcticTraining's tiled_mlp_compute); null = off",
    )
    fsdp_version: int | None = Field(
        None,
        ge=1,
        le=2,
        description="FSDP implementation under sharding fsdp: 1 (FlatParameter FSDP) or 2 "
        "(PyTorch's per-parameter fully_shard; axolotl's fsdp_version: 2); null = the stack's "
        "default",
    )
    framework: Framework | None = None
    framework_version: str | None = Field(
        None,
        max_length=40,
        description='the stack\'s release ("0.19", "2025.11.4"); null = its current release',
    )
    gpu: str | None = Field(None, max_length=200, description="card name, loosely written")
    gpu_vram_gb: float | None = Field(None, gt=0, le=10_000)
    dataset_tokens: float | None = Field(None, ge=0, le=MAX_TOKENS)
    mean_sample_len: int | None = Field(
        None,
        ge=1,
        le=MAX_SEQ_LEN,
        description="text tokens a sample averages ('samples average 600 tokens'): sets time; "
        "the peak stays at seq_len, the truncation cap (the longest batch)",
    )
    epochs: float | None = Field(None, gt=0, le=100_000)
    tokens_per_s: float | None = Field(None, gt=0, le=1e9, description="the user's measured figure")
    budget_usd: float | None = Field(None, ge=0, le=1e9)
    deadline_hours: float | None = Field(None, gt=0, le=1e6)
    # Preference and RL fine-tuning (README "Preference and RL fine-tuning").
    objective: Objective | None = None
    reference_model: bool | None = Field(
        None, description="a frozen reference model on the GPU; null = the method's default"
    )
    num_generations: int | None = Field(
        None, ge=1, le=MAX_GENERATIONS, description="completions per prompt (GRPO's G)"
    )
    prompt_len: int | None = Field(None, ge=1, le=MAX_SEQ_LEN, description="prompt tokens")
    completion_len: int | None = Field(
        None, ge=1, le=MAX_SEQ_LEN, description="completion (response) tokens"
    )
    rollout: Rollout | None = None
    rollout_memory_fraction: float | None = Field(
        None, gt=0, lt=1, description="vLLM's gpu_memory_utilization"
    )
    rollout_gpus: int | None = Field(
        None, ge=1, le=MAX_GPUS, description="GPUs of a separate vLLM server"
    )
    rollout_tensor_parallel: int | None = Field(
        None,
        ge=1,
        le=MAX_GPUS,
        description="tensor_parallel_size of a colocated vLLM engine: each GPU holds 1/TP of it",
    )
    rollout_sleep: bool | None = Field(
        None,
        description="the colocated vLLM engine sleeps through the update (weights to host RAM, "
        "KV cache freed: vLLM sleep mode, verl's free_cache_engine); null = the stack's default",
    )
    reward_model: str | None = Field(
        None, max_length=200, description="name or size of a reward model; null = rule-based"
    )
    dataset_prompts: float | None = Field(
        None, ge=0, le=MAX_TOKENS, description="an RL dataset counted in prompts"
    )
    generation_batch: int | None = Field(
        None,
        ge=1,
        le=MAX_GENERATIONS * MAX_GPUS,
        description="completions the whole job generates per round (prompts × generations: TRL's "
        "generation_batch_size, NeMo RL's num_prompts_per_step × num_generations_per_prompt); "
        "null = TRL's default round",
    )
    # Mixture-of-experts, vision-language bases and kernels (README "Models").
    expert_parallel: int | None = Field(
        None, ge=1, le=MAX_GPUS, description="MoE expert-parallel size (EP); 1 = none"
    )
    context_parallel: int | None = Field(
        None,
        ge=1,
        le=MAX_GPUS,
        description="context/sequence-parallel degree (DeepSpeed Ulysses, ring attention): each "
        "GPU of a group holds 1/CP of every sequence's tokens; 1 = none",
    )
    experts_quantized: bool | None = Field(
        None,
        description="a QLoRA job's MoE experts are held quantised too (Unsloth's linearised "
        "gpt-oss, axolotl's quantize_moe_experts or pre-quantised linearised checkpoints); "
        "null = the stack's default at its release",
    )
    experts_adapted: bool | None = Field(
        None,
        description="LoRA adapts the MoE experts too (PEFT ≥ 0.17 target_parameters, axolotl's "
        "lora_target_parameters); null = no: target_modules cannot wrap fused experts",
    )
    loss_kernel: LossKernel | None = Field(
        None, description="hf | chunked | liger | cce; null = the framework's own loss"
    )
    train_vision_tower: bool | None = Field(
        None, description="train a VLM's vision tower too (default: frozen)"
    )
    images_per_sample: float | None = Field(
        None, ge=0, le=10_000, description="images in each training sample (VLMs)"
    )
    pricing: Pricing | None = Field(
        None, description="on_demand (the default) or spot: the job can be interrupted"
    )
    # A peak the user measured for this job (README "Reports from real runs").
    measured_peak_gib: float | None = Field(
        None, gt=0, le=100_000, description="the user's measured peak per GPU"
    )
    measured_metric: MeasuredMetric | None = Field(
        None, description="how that peak was read; 'oom' = it ran out of memory on its card"
    )
    memory_scale: float | None = Field(
        None,
        gt=0,
        le=100,
        description="measured ÷ estimated peak at the job it was reported for; every estimate "
        "of this job and its what-ifs is scaled by it (null: none, or measured_peak_gib's)",
    )
