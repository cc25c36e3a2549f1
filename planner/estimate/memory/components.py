"""The memory model's components, one pure function each, in bytes for the whole job on one device.

`Job` gathers the resolved JobSpec fields the components read, so each function states exactly
what it depends on. Sharding across GPUs is applied afterwards (planner.estimate.memory.placement).
"""

from __future__ import annotations

from dataclasses import dataclass

from planner.catalog.models import (
    ModelArch,
    embedding_params,
    frozen_tower_params,
    largest_linear,
    linear_params,
    quantisable_linear_params,
    small_params,
)
from planner.estimate.memory.profiles import (
    ALLOCATOR_SLACK_PACKED,
    ALLOCATOR_SLACK_VARIABLE_LENGTH,
    EAGER_ATTENTION_BYTES_PER_SCORE,
    FSDP_UNITS_IN_FLIGHT,
    FSDP_UNSHARDED_GRADIENT_UNITS,
    RECOMPUTED_LAYERS,
    ZERO2_REDUCE_BUCKET_ELEMENTS,
    ZERO3_PREFETCH_BUCKET_PER_HIDDEN_SQUARED,
    ZERO3_REDUCE_BUCKET_PER_HIDDEN_SQUARED,
    FrameworkProfile,
)
from planner.estimate.memory.profiles import (
    HF as HF_PROFILE,
)
from planner.estimate.memory.profiles import (
    TORCHTUNE as TORCHTUNE_PROFILE,
)
from planner.spec import LossKernel, Method, Optimizer, Precision, Quant, Rollout, Sharding


@dataclass(frozen=True, slots=True)
class Job:
    """The resolved JobSpec fields the components read
    (planner.estimate.memory.estimate.component_job)."""

    method: Method
    quant: Quant | None
    precision: Precision
    optimizer: Optimizer
    lora_rank: int
    lora_targets: tuple[str, ...]
    seq_len: int
    micro_batch: int
    gradient_checkpointing: bool
    flash_attention: bool
    optimizer_in_backward: bool
    profile: FrameworkProfile
    sharding: Sharding = Sharding.none
    # Saved activations wait in host RAM (activation offloading; Unsloth's checkpoints).
    offload_activations: bool = False
    # The MLP runs tiled along the sequence (ALST's TiledMLP: `tiled_mlp_bytes`).
    tiled_mlp: bool = False
    # Gradients are freed after every optimizer step and each step sees one micro-batch, so
    # they build up inside backward while its activations are freed (`gradient_ramp_bytes`).
    gradients_freed_each_step: bool = False
    # Preference and RL fine-tuning (planner.post_training); the defaults are plain SFT.
    # Sequences per micro-batch row: 2 for chosen + rejected.
    sequences_per_row: int = 1
    # Tokens per sequence whose logits are materialised (GRPO/RLOO/PPO: the completion only,
    # TRL's logits_to_keep); 0 = all of them.
    logits_len: int = 0
    reference_copy: bool = False
    # An offline preference loss: log-probs from the model's own logits (`logits_bytes`).
    preference_loss: bool = False
    critic: bool = False
    reward_arch: ModelArch | None = None
    rollout: Rollout | None = None
    # Tokens of every sequence one generation round holds at once on this GPU (prompt +
    # completion × sequences per round).
    generation_tokens: int = 0
    # The rollout engine reads the trainer's weights instead of a copy (Unsloth's vLLM).
    rollout_shares_weights: bool = False
    # A colocated engine's tensor-parallel size: each GPU holds 1/TP of its weights.
    rollout_tensor_parallel: int = 1
    # Architecture switches (planner.model_switches).
    expert_parallel: int = 1
    loss_kernel: LossKernel | None = None
    # Fused 3-D MoE experts held quantised (linearised or quantize_moe_experts) / adapted by LoRA
    # (PEFT target_parameters); planner.model_switches decides both from the stack.
    experts_quantized: bool = False
    experts_adapted: bool = False
    # The quantised fused experts are dequantised a whole layer at a time (`dequant_buffer_bytes`).
    experts_dequantised_per_layer: bool = False
    # The fused 16-bit experts are trained by indexing them per expert (`indexed_expert_bytes`).
    experts_indexed: bool = False
    # Sharded by PyTorch's FSDP2 (fully_shard) rather than FSDP1 (placement.loading_floor_bytes).
    fsdp2: bool = False
    train_vision_tower: bool = False
    images_per_micro_batch: float = 0.0

    @property
    def deepspeed(self) -> bool:
        """DeepSpeed ZeRO trains 16-bit parameters and gradients and keeps the fp32 master
        weights inside its optimizer partitions, in bf16 and bf16-mixed alike (its engine casts
        the module to bf16; ZeRO paper: 2Ψ + 2Ψ + KΨ with K = 12 for mixed-precision Adam)."""
        return (
            self.sharding in (Sharding.zero2, Sharding.zero3)
            and self.precision is not Precision.fp32
        )

    @property
    def sharded_params(self) -> bool:
        """FSDP full sharding and ZeRO-3 gather each unit's parameters in the compute dtype."""
        return self.sharding in (Sharding.fsdp, Sharding.zero3)

    @property
    def compute_bytes(self) -> float:
        """Bytes of a weight, activation or gradient as the matmuls use it."""
        return 4.0 if self.precision is Precision.fp32 else 2.0

    @property
    def tokens(self) -> int:
        return self.seq_len * self.micro_batch * self.sequences_per_row

    @property
    def logits_tokens(self) -> int:
        return (self.logits_len or self.seq_len) * self.micro_batch * self.sequences_per_row

    @property
    def mixed(self) -> bool:
        return self.precision in (Precision.bf16_mixed, Precision.fp16_mixed)


# Bytes per quantised linear weight: 4-bit codes + one fp32 absmax per 64-weight block (NF4), or
# with the absmax itself quantised to 8 bits plus an fp32 constant per 256 blocks (double
# quant, Dettmers et al. 2023); LLM.int8 keeps one fp32 scale per row (≈ 1 B); GPTQ int4 stores
# an fp16 scale and a 4-bit zero point per group of 128.
NF4_BYTES = 0.5 + 4 / 64
NF4_DOUBLE_QUANT_BYTES = 0.5 + 1 / 64 + 4 / (64 * 256)
INT8_BYTES = 1.0 + 4 / 4096
GPTQ_INT4_BYTES = 0.5 + 2.5 / 128
# OCP Microscaling MXFP4: 4-bit E2M1 values with one 8-bit E8M0 scale per 32 (architectures-2026
# §4.1, [uncertain: block size from the OCP MX spec]); FP8 E4M3 with an fp32 scale per 128×128
# block (DeepSeek-V3's and Qwen3's FP8 checkpoints).
MXFP4_BYTES = 0.5 + 1 / 32
FP8_BYTES = 1.0 + 4 / (128 * 128)
_QUANT_BYTES = {
    Quant.int8: INT8_BYTES,
    Quant.int4: GPTQ_INT4_BYTES,
    Quant.mxfp4: MXFP4_BYTES,
    Quant.fp8: FP8_BYTES,
}


def quantised_bytes_per_weight(quant: Quant, double_quant: bool) -> float:
    """Bytes per quantised linear weight, block constants included (the constants above)."""
    if quant is Quant.nf4:
        return NF4_DOUBLE_QUANT_BYTES if double_quant else NF4_BYTES
    return _QUANT_BYTES[quant]


def base_weight_bytes_per_param(job: Job) -> float:
    """Bytes per 16-bit-able parameter as the model is held: fp32 when the precision is fp32;
    under DeepSpeed 2 (the fp32 master is optimizer state); in mixed precision the fp32 master
    (4), or under FSDP the fp32 shard (its 16-bit copies are the gathered units); else 2. The
    16-bit copies autocast makes live only while backward needs them (`autocast_copy_bytes`:
    shadow trace llama-3.2-1b.full.sft.s512.b1.gc.adamw.bf16-mixed peaks in the optimizer step
    with 4 B per weight). A LoRA/QLoRA job's frozen base stays 16-bit in mixed precision unless
    the stack keeps it fp32 (`mixed_keeps_frozen_fp32`)."""
    if job.precision is Precision.fp32:
        return 4.0
    if job.method is not Method.full and not job.profile.mixed_keeps_frozen_fp32:
        return 2.0
    if job.deepspeed or not job.mixed:
        return 2.0
    return 4.0


def kbit_upcasts_shared_weights(job: Job) -> bool:
    """PEFT's prepare_model_for_kbit_training upcasts embeddings/lm_head/norms of a
    bitsandbytes model to fp32; TRL skips it for sharded QLoRA (FSDP/ZeRO-3, where the
    quantised weights are stored as bf16 to be sharded)."""
    return (
        job.profile.kbit_embeddings_fp32
        and job.quant in (Quant.nf4, Quant.int8)
        and not job.sharded_params
    )


def kbit_unquantised_bytes(job: Job) -> float:
    """Bytes per weight a bitsandbytes base leaves unquantised (embeddings, norms, fused 3-D
    experts): 4 where k-bit preparation upcasts them (`kbit_upcasts_shared_weights`), else 2."""
    return 4.0 if kbit_upcasts_shared_weights(job) else 2.0


def shared_weight_bytes(arch: ModelArch, job: Job) -> float:
    """Embeddings, an untied lm_head, norms, routers and a vision tower as held: never
    quantised."""
    if job.method is not Method.qlora or job.quant is None:
        per = base_weight_bytes_per_param(job)
    else:
        per = kbit_unquantised_bytes(job)
    return (embedding_params(arch) + small_params(arch)) * per


def dequant_buffer_bytes(arch: ModelArch, job: Job) -> float:
    """The 16-bit copy of the largest quantised linear that dequantisation materialises for
    each matmul (forward and backward: two), and where the stack dequantises a whole layer's
    quantised 3-D experts at once (`experts_dequantised_per_layer`: a parametrised tensor,
    dequantised on access and cached for the experts module's forward) that layer's experts in
    16 bits, which the expert matmuls save for backward: one MoE layer's with checkpointing (the
    recomputed one), every MoE layer's without."""
    if job.method is not Method.qlora or job.quant is None:
        return 0.0
    buffers = 2 * 2.0 * largest_linear(arch, quantised_only=True)
    if job.experts_dequantised_per_layer and arch.moe_layers:
        layers = 1 if job.gradient_checkpointing else arch.moe_layers
        buffers += layers * 2.0 * arch.routed_expert_params / arch.moe_layers
    return buffers


def weights_bytes(arch: ModelArch, job: Job) -> float:
    """Model weights.

    full / lora: every parameter at `base_weight_bytes_per_param`.
    qlora: the decoder's nn.Linear layers quantised (`quantised_bytes_per_weight`, plus the
    profile's nf4_extra_bytes_per_weight for NF4) + fused 3-D expert tensors, which
    bitsandbytes does not replace (architectures-2026.md §2.7), held like the other unquantised
    weights (fp32 where PEFT's k-bit preparation upcasts them, else 16-bit) + embeddings,
    lm_head, norms and towers (`shared_weight_bytes`) + the dequantisation buffers
    (`dequant_buffer_bytes`).
    """
    if job.method is not Method.qlora or job.quant is None:
        return arch.total_params * base_weight_bytes_per_param(job)
    quantised = quantisable_linear_params(arch)
    if job.experts_quantized:
        quantised = linear_params(arch)
    fused = linear_params(arch) - quantised
    per_weight = quantised_bytes_per_weight(job.quant, job.profile.double_quant)
    if job.quant is Quant.nf4:
        per_weight += job.profile.nf4_extra_bytes_per_weight
    return (
        quantised * per_weight
        + fused * kbit_unquantised_bytes(job)
        + shared_weight_bytes(arch, job)
        + dequant_buffer_bytes(arch, job)
    )


def adapter_params(
    arch: ModelArch, rank: int, targets: tuple[str, ...], experts_adapted: bool = False
) -> int:
    """LoRA parameters: rank·(in + out) per targeted matrix, with the model's real shapes
    (narrow k/v under GQA, three MLP matrices when gated, one adapter per nn.Linear expert).
    Fused 3-D expert parameters get none: PEFT's target_modules cannot wrap an nn.Parameter
    (transformers #36518), so LoRA there adapts attention and the dense/shared MLPs; with
    target_parameters (PEFT ≥ 0.17, `experts_adapted`) each expert gets its own pair
    (architectures-2026.md §2.7)."""
    return sum(
        rank * (g.in_features + g.out_features) * g.count
        for g in arch.linears
        if g.target in targets and (experts_adapted or not g.fused)
    )


def trainable_params(arch: ModelArch, job: Job) -> int:
    """Parameters the optimizer steps: all of them for full fine-tuning, else the adapters; a
    vision tower only when it is trained (then whole, as LLaMA-Factory's freeze_vision_tower
    false trains it beside the LoRA adapters); towers a config does not shape never."""
    tower = arch.vision_params if job.train_vision_tower else 0
    if job.method is Method.full:
        return arch.total_params - frozen_tower_params(arch) + tower
    return adapter_params(arch, job.lora_rank, job.lora_targets, job.experts_adapted) + tower


def routed_trainable_params(arch: ModelArch, job: Job) -> int:
    """The trained parameters that live in routed experts (what expert parallelism splits):
    the experts themselves for full fine-tuning, their adapters for LoRA (none when fused)."""
    if not arch.is_moe:
        return 0
    if job.method is Method.full:
        return arch.routed_expert_params
    return sum(
        job.lora_rank * (g.in_features + g.out_features) * g.count
        for g in arch.linears
        if g.routed and (job.experts_adapted or not g.fused) and g.target in job.lora_targets
    )


def routed_weight_bytes(arch: ModelArch, job: Job) -> float:
    """The routed experts' weights as held (a part of `weights_bytes`)."""
    if not arch.is_moe:
        return 0.0
    if job.method is not Method.qlora or job.quant is None:
        return arch.routed_expert_params * base_weight_bytes_per_param(job)
    if arch.fused_experts and not job.experts_quantized:
        return arch.routed_expert_params * kbit_unquantised_bytes(job)
    return arch.routed_expert_params * quantised_bytes_per_weight(
        job.quant, job.profile.double_quant
    )


def trainable_bytes_per_param(job: Job) -> float:
    """Storage of a trained parameter and of its gradient: 16-bit under DeepSpeed (adapters
    too: its engine casts the whole module); fp32 in mixed precision and fp32; else 16-bit for
    full fine-tuning and the framework's adapter dtype for LoRA."""
    if job.deepspeed:
        return 2.0
    if job.mixed or job.precision is Precision.fp32:
        return 4.0
    return 2.0 if job.method is Method.full else float(job.profile.adapter_bytes)


def optimizer_state_dtype_bytes(job: Job) -> float:
    """Optimizer moments live in the dtype of the parameters they step: DeepSpeed's fp32
    master partitions, else the trained parameters' storage."""
    return 4.0 if job.deepspeed else trainable_bytes_per_param(job)


def adapter_bytes(arch: ModelArch, job: Job) -> float:
    """LoRA weights (zero for full fine-tuning, whose trained weights are the model)."""
    if job.method is Method.full:
        return 0.0
    return trainable_params(arch, job) * trainable_bytes_per_param(job)


def gradient_bytes(arch: ModelArch, job: Job) -> float:
    """Gradients of the trained parameters in their storage dtype. With the optimizer step
    fused into backward only the largest single gradient (the V×h embedding) exists at once."""
    if job.optimizer_in_backward and job.method is Method.full:
        return arch.vocab_size * arch.hidden_size * trainable_bytes_per_param(job)
    return trainable_params(arch, job) * trainable_bytes_per_param(job)


# bitsandbytes' 8-bit Adam: two 1-byte moments, each with an fp32 absmax per 2,048-element block.
ADAM_8BIT_STATE_BYTES = 2.0 + 2 * 4 / 2048
# Adafactor's factored fp32 row/column second moments, per parameter of a transformer-sized
# matrix (no first moment).
ADAFACTOR_STATE_BYTES = 0.02


def optimizer_state_bytes_per_param(job: Job) -> float:
    """AdamW: two moments in the trained dtype (fp32 → 8 B, bf16 → 4 B); 8-bit Adam: two 8-bit
    moments + block constants (≈ 2 B); paged optimizers live in CUDA managed memory that spills
    to host RAM, outside torch's allocator (0 B counted); SGD: one momentum buffer; Adafactor:
    factored fp32 row/column second moments, no first moment (≈ 0.02 B for transformer-sized
    matrices). DeepSpeed adds its fp32 master copy (4 B): AdamW 12 B, the ZeRO paper's K."""
    state = optimizer_state_dtype_bytes(job)
    master = 4.0 if job.deepspeed else 0.0
    match job.optimizer:
        case Optimizer.adamw:
            return master + 2 * state
        case Optimizer.adamw_8bit:
            return master + ADAM_8BIT_STATE_BYTES
        case Optimizer.paged_adamw | Optimizer.paged_adamw_8bit:
            return master
        case Optimizer.sgd:
            return master + state
        case Optimizer.adafactor:
            return master + ADAFACTOR_STATE_BYTES


def optimizer_bytes(arch: ModelArch, job: Job) -> float:
    """Optimizer state for the trained parameters."""
    return trainable_params(arch, job) * optimizer_state_bytes_per_param(job)


def optimizer_step_scratch_bytes(arch: ModelArch, job: Job) -> float:
    """Scratch PyTorch's multi-tensor (foreach) AdamW allocates inside step(): sqrt(v) for every
    parameter, one state-sized buffer, while all gradients are still alive. SGD's momentum
    update works in place and bitsandbytes' 8-bit/paged kernels are fused (no scratch).
    DeepSpeed's fused optimizers need none, but it converts the 16-bit gradient partition to
    fp32 before stepping (ZeRO-3 one sub-group at a time: placement caps it)."""
    if job.deepspeed:
        return trainable_params(arch, job) * 4.0
    if job.optimizer is not Optimizer.adamw or job.profile.fused_adamw:
        return 0.0
    return trainable_params(arch, job) * trainable_bytes_per_param(job)


def lm_head_in_one_matmul(job: Job) -> bool:
    """The logits come from one LM-head matmul over every token (transformers' models), not per
    chunk: torchtune's models apply the output projection chunk by chunk for its chunked loss,
    whose gradients accumulate in place."""
    chunked = job.loss_kernel is LossKernel.chunked or job.profile is TORCHTUNE_PROFILE
    return not chunked and not job.profile.loss_chunk_tokens


def gradient_ramp_bytes(arch: ModelArch, job: Job) -> tuple[float, float, float]:
    """(ramp, first, tail): how the gradients overlap backward's transients when they are
    freed after every step and each step sees one micro-batch (`gradients_freed_each_step`).

    Backward runs from the loss to the embeddings: a layer's weight gradients are made as its
    saved activations are freed, so the live bytes move from activations + logits to
    gradients. With layer gradients g and saved activations a per layer, backward at layer k
    holds k·g + (L − k)·a: linear in k, so its peak is at an end. At the start: every
    activation and the logits, with only the output projection's gradient (`first`, V × h,
    full fine-tuning); at the end: every gradient (`ramp`) with one layer's saved or
    recomputed tensors (`tail`). With gradient accumulation, DDP buckets or DeepSpeed's
    partitions the gradients persist through backward instead: (0, 0, 0).
    """
    if not job.gradients_freed_each_step:
        return 0.0, 0.0, 0.0
    ramp = gradient_bytes(arch, job)
    first = 0.0
    tail = layer_activation_bytes_per_token(arch, job) * job.tokens
    if job.method is Method.full:
        matrix = arch.vocab_size * arch.hidden_size * trainable_bytes_per_param(job)
        first = min(ramp, matrix)
        if arch.tie_embeddings and lm_head_in_one_matmul(job):
            # The LM head's gradient of a tied matrix waits in autograd's input buffer until the
            # embedding's arrives at the end, and the two are summed out of place: three V×h
            # tensors at once (shadow trace llama-3.2-1b.full.sft.s2048.b1.gc.sgd.bf16-mixed
            # peaks at that aten.add).
            tail += 2 * matrix
    return ramp, first, tail


def paged_optimizer_bytes(arch: ModelArch, job: Job) -> float:
    """What a paged optimizer holds in managed memory (for the upper end of the range)."""
    if job.optimizer is Optimizer.paged_adamw:
        return trainable_params(arch, job) * 2 * optimizer_state_dtype_bytes(job)
    if job.optimizer is Optimizer.paged_adamw_8bit:
        return trainable_params(arch, job) * 2.0
    return 0.0


# CUDA's fused dropout (native_dropout) keeps a bool mask: 1 byte per element. Shadow trace
# llama-3.2-1b.lora-r16-all-linear.*: every adapted linear keeps its own mask and its own
# compute-dtype dropped-out copy (PEFT gives each LoRA layer its own dropout).
LORA_DROPOUT_MASK_BYTES = 1.0
# FlashAttention and SDPA's flash kernels keep an fp32 log-sum-exp per head and query token
# beside q, k, v and the output (shadow traces: aten._scaled_dot_product_flash_attention_for_cpu).
ATTENTION_LSE_BYTES_PER_HEAD = 4.0


def saves_linear_input(job: Job, target: str) -> bool:
    """Whether backward keeps a linear layer's input: to form the weight gradient (full
    fine-tuning), for the LoRA A matrix on it, or because bitsandbytes' 4/8-bit matmul keeps its
    input (`ctx.tensors = (A, B)`) even for a frozen weight. A frozen 16-bit (or GPTQ) linear
    needs only its weight."""
    if job.method is Method.full or target in job.lora_targets:
        return True
    return job.method is Method.qlora and job.quant in (Quant.nf4, Quant.int8)


def autocast_over_fp32(job: Job) -> bool:
    """The weights are held in fp32 and autocast casts each matmul's operands to 16 bits (a full
    fine-tune's fp32 master weights in bf16/fp16-mixed; LitGPT's frozen fp32 base); not under
    FSDP, whose mixed precision gathers 16-bit units and casts the inputs."""
    return (
        job.mixed and job.sharding is not Sharding.fsdp and base_weight_bytes_per_param(job) == 4.0
    )


def autocast_copy_bytes(arch: ModelArch, job: Job) -> float:
    """The 16-bit copies autocast makes of fp32 matmul weights (the decoder's linears and the LM
    head), which backward keeps until it has used them: all of them without checkpointing."""
    if not autocast_over_fp32(job):
        return 0.0
    return 2.0 * (linear_params(arch) + arch.vocab_size * arch.hidden_size)


def autocast_cache_bytes(arch: ModelArch, job: Job) -> float:
    """Autocast caches the 16-bit copy of every trained fp32 weight it casts until the forward
    (and the loss) leave its region; with checkpointing nothing else keeps them, without it
    backward does anyway (`saved_activation_bytes` counts them)."""
    return autocast_copy_bytes(arch, job) if job.gradient_checkpointing else 0.0


# What of the logits' bytes per entry the forward holds when the loss is computed: transformers'
# loss keeps the 16-bit logits, their fp32 upcast and the fp32 log-softmax (2 + 4 + 4 of the 12 B
# backward's start holds; shadow trace qwen2.5-0.5b.full.sft.s2048.b1.gc.sgd.bf16-mixed).
LOGITS_FORWARD_SHARE = 10.0 / 12.0


def residual_bytes(job: Job) -> float:
    """Bytes per element of the residual stream (each layer's input): fp32 when the weights are
    (fp32 training, or autocast over fp32 weights, where the embedding output and every residual
    add stay fp32: shadow trace qwen2.5-0.5b.full.*.bf16-mixed), or where PEFT's k-bit
    preparation has upcast the embeddings and norms (`kbit_fp32_residual`); else the compute
    dtype."""
    return 4.0 if autocast_over_fp32(job) or kbit_fp32_residual(job) else job.compute_bytes


def kbit_fp32_residual(job: Job) -> bool:
    """A bitsandbytes QLoRA whose embeddings and norms PEFT's prepare_model_for_kbit_training
    upcast to fp32 (`kbit_upcasts_shared_weights`) carries its residual stream in fp32: the
    embedding's output is fp32, each RMSNorm returns `weight * x` in the fp32 weight's dtype, and
    bitsandbytes' Linear4bit casts its input to the compute dtype and its output back to the
    input's (`.to(inp_dtype)`, bitsandbytes nn/modules.py), so every residual add stays fp32 and
    each checkpointed layer input takes 4 bytes per element. Measured: fms-acceleration's
    Mistral-7B bnb QLoRA at 8 × 4,096 tokens peaks at 34.5 GiB allocated where its GPTQ twin
    (no k-bit upcast) scales to ≈ 27; Llama-2-70B bnb QLoRA at 4 × 4,096 runs out of 80 GB where
    GPTQ peaks at 62.5 GiB. GPTQ/AWQ bases are left as loaded (PEFT skips them)."""
    return kbit_upcasts_shared_weights(job) and job.method is Method.qlora


def eager_norm_extra_bytes(job: Job) -> float:
    """Per hidden unit, what an eager RMSNorm/LayerNorm keeps besides its fp32 input when its
    weight is trained: the normalised input in the residual dtype, for the weight's gradient
    (`weight * hidden.to(input_dtype)`; shadow trace llama-3.2-1b.full.*). Frozen weights (LoRA)
    need none; fused norm kernels (profiles keeping a 16-bit input) recompute it."""
    eager = job.profile.norm_input_bytes_per_hidden >= 4.0
    return residual_bytes(job) if eager and job.method is Method.full else 0.0


def _linear_input_bytes(job: Job, group: tuple[str, ...], width: int, kept: bool) -> float:
    """What backward keeps of the input shared by the linears in `group` (per token).

    LoRA with dropout: each adapted linear its own bool mask and compute-dtype dropped-out copy
    (the LoRA A matmul's input); the frozen base keeps nothing of its input unless bitsandbytes'
    matmul does. Otherwise one compute-dtype copy where any linear needs it (`saves_linear_input`),
    or one per linear where autocast casts an fp32 input for each matmul on its own (shadow trace
    llama-3.2-1b.full.*.bf16-mixed: q, k and v each keep a bf16 copy of the norm's output).
    `kept`: the input is saved anyway (the attention output, kept by the attention kernel).
    """
    c = job.compute_bytes
    adapted = [t for t in group if job.method is not Method.full and t in job.lora_targets]
    if adapted and job.profile.lora_dropout:
        total = len(adapted) * (LORA_DROPOUT_MASK_BYTES + c) * width
        bnb_keeps_input = job.method is Method.qlora and job.quant in (Quant.nf4, Quant.int8)
        return total + (c * width if bnb_keeps_input and not kept else 0.0)
    if kept or not any(saves_linear_input(job, t) for t in group):
        return 0.0
    fp32_input = autocast_over_fp32(job) and group != ("down",) and group != ("o",)
    return (len(group) if fp32_input else 1) * c * width


# The norms of a decoder layer where the modeling code has more than a pre-norm before attention
# and one before the MLP: (norms over the hidden size, whether q and k are normalised too).
# Gemma 2/3 add post-norms after attention and the MLP; Qwen3 and Gemma 3 normalise q and k per
# head, OLMo 2/3 over their full width with post-norms in place of pre-norms (transformers'
# modeling_*.py; shadow traces gemma-3-1b.lora-*.nogc: 4 × h + q + k fp32 inputs per layer).
NORM_LAYOUTS: dict[str, tuple[int, bool]] = {
    "gemma2": (4, False),
    "gemma3": (4, True),
    "gemma3_text": (4, True),
    "qwen3": (2, True),
    "qwen3_moe": (2, True),
    "olmo2": (2, True),
    "olmo3": (2, True),
}


def layer_activation_bytes_per_token(arch: ModelArch, job: Job) -> float:
    """What one decoder layer saves for backward per token.

    Each norm's input (fp32 upcast in eager PyTorch norms, 16-bit when fused; plus the
    normalised input when the norm weight trains, `eager_norm_extra_bytes`); q, k, v (GQA widths,
    after the rotary embedding), the attention output and its log-sum-exp (FlashAttention/SDPA
    keep them for backward); the MLP's gate and up outputs and the activation output (a fused
    kernel recomputes the activation), or a plain MLP's pre-activation
    (`mlp_intermediate_bytes_per_token`; none when the MLP runs tiled: `tiled_mlp_bytes`); and
    the linears' inputs as `_linear_input_bytes` counts them (LoRA dropout copies included).
    Tensors are in the compute dtype. An MoE token passes through experts_per_token experts.
    Without FlashAttention/SDPA the s×s scores are materialised (Korthikanti et al. 2022: 5
    bytes per head per query·key pair).
    """
    h = arch.hidden_size
    q_out = arch.num_heads * arch.head_dim
    kv_out = arch.num_kv_heads * arch.head_dim
    c = job.compute_bytes
    hidden_norms, qk_norms = NORM_LAYOUTS.get(arch.family, (2, False))
    normed = hidden_norms * h + (q_out + kv_out if qk_norms else 0)
    norm = (job.profile.norm_input_bytes_per_hidden + eager_norm_extra_bytes(job)) * normed
    attention = c * (2 * q_out + 2 * kv_out) + ATTENTION_LSE_BYTES_PER_HEAD * arch.num_heads
    feeds: tuple[str, ...] = ("gate", "up") if arch.mlp == "gated" else ("up",)
    inputs = (
        _linear_input_bytes(job, ("q", "k", "v"), h, kept=False)
        + _linear_input_bytes(job, ("o",), q_out, kept=True)
        + _linear_input_bytes(job, feeds, h, kept=False)
    )
    scores = 0.0
    if not job.flash_attention:
        scores = EAGER_ATTENTION_BYTES_PER_SCORE * arch.num_heads * job.seq_len
    # A tiled MLP saves only its input (counted in `inputs`): its intermediates exist one tile at
    # a time while backward recomputes them (`tiled_mlp_bytes`).
    mlp = 0.0 if job.tiled_mlp else mlp_intermediate_bytes_per_token(arch, job)
    return norm + attention + mlp + inputs + scores


def mlp_intermediate_bytes_per_token(arch: ModelArch, job: Job) -> float:
    """What a decoder layer's MLP saves per token at its intermediate width (of an MoE, the
    experts a token passes through): a gated MLP's gate and up outputs and the activation
    output (`FrameworkProfile.gated_mlp_saved_tensors`), a plain one's pre-activation, and the
    down projection's input as `_linear_input_bytes` counts it."""
    width = arch.token_mlp_width
    saved = job.profile.gated_mlp_saved_tensors if arch.mlp == "gated" else 1
    return job.compute_bytes * saved * width + _linear_input_bytes(
        job, ("down",), width, kept=False
    )


def tiled_mlp_bytes(arch: ModelArch, job: Job) -> float:
    """The MLP intermediates of one tile, when the MLP runs tiled along the sequence (ALST's
    TiledMLP, Bekman et al. 2025, arXiv:2506.13996 §3.2; ArcticTraining `tiled_mlp_compute`,
    DeepSpeed's TiledMLP): a custom autograd function saves only the MLP's input and runs forward
    and backward over ceil(tokens / hidden_size) shards, so one shard of ≈ hidden_size tokens
    holds its intermediates at a time: mlp_intermediate_bytes_per_token × min(tokens, h).
    What a stack's recompute holds beside them (`recomputed_mlp_gradient_bytes`, calibrated on
    Unsloth's untiled context table) is left as it is: whether its tiling also shrinks that is
    not documented [uncertain]."""
    if not job.tiled_mlp:
        return 0.0
    tile_tokens = min(job.tokens, arch.hidden_size)
    return mlp_intermediate_bytes_per_token(arch, job) * tile_tokens


def head_activation_bytes_per_token(job: Job, hidden_size: int) -> float:
    """What the final norm keeps for backward per token: its input (fp32 upcast), and when it
    trains the normalised input and the LM head's input (shadow traces: the activations left
    at the start of backward beside the checkpoints)."""
    extra = eager_norm_extra_bytes(job)
    lm_head_input = job.compute_bytes if job.method is Method.full else 0.0
    return (job.profile.norm_input_bytes_per_hidden + extra + lm_head_input) * hidden_size


def head_activation_bytes(arch: ModelArch, job: Job) -> float:
    """What the final norm and the LM head keep for backward over the micro-batch
    (`head_activation_bytes_per_token`): alive beside the logits, and freed by the final norm's
    backward before the last decoder layer's backward (or recompute) begins."""
    return head_activation_bytes_per_token(job, arch.hidden_size) * job.tokens


# Bytes one image patch saves per trained vision-tower layer (architectures-2026.md §7: 10–16 B
# per patch-layer and hidden unit, a stated prior [U]).
VISION_BYTES_PER_PATCH_LAYER_HIDDEN = 14.0


def vision_activation_bytes(arch: ModelArch, job: Job) -> float:
    """A trained vision tower's saved activations: images × patches × hidden × layers × 14 B
    (checkpointed: one 16-bit input per layer and one layer in full). A frozen tower runs
    before any trained module, so nothing of it is kept for backward."""
    if not job.train_vision_tower or not job.images_per_micro_batch:
        return 0.0
    patches = job.images_per_micro_batch * arch.vision_patches
    per_layer = patches * arch.vision_hidden * VISION_BYTES_PER_PATCH_LAYER_HIDDEN
    if job.gradient_checkpointing:
        return arch.vision_layers * patches * arch.vision_hidden * 2.0 + per_layer
    return arch.vision_layers * per_layer


def activation_bytes(arch: ModelArch, job: Job, num_layers: int | None = None) -> float:
    """Activations of one micro-batch in backward, on a device running `num_layers` of the
    decoder's layers (all of them unless a pipeline splits the model): what is saved when
    backward starts (`saved_activation_bytes`) and the layer in flight (`layer_in_flight_bytes`),
    which the logits do not outlive (placement.Components takes the larger of the two)."""
    return saved_activation_bytes(arch, job, num_layers) + layer_in_flight_bytes(arch, job)


def saved_activation_bytes(arch: ModelArch, job: Job, num_layers: int | None = None) -> float:
    """What the forward leaves for backward: without checkpointing every layer's saved tensors;
    with it, each layer's input (`_checkpoint_bytes`); and the final norm's and LM head's
    (`head_activation_bytes`). Offloaded activations (`offloaded_activation_bytes`)
    wait in host RAM: the checkpoints, or without checkpointing all but the layers in flight."""
    layers = arch.num_layers if num_layers is None else num_layers
    head = head_activation_bytes(arch, job)
    tower = vision_activation_bytes(arch, job)
    if not job.gradient_checkpointing:
        on_gpu = min(layers, OFFLOADED_LAYERS_IN_FLIGHT) if job.offload_activations else layers
        per_layer = layer_activation_bytes_per_token(arch, job) * job.tokens
        copies = autocast_copy_bytes(arch, job) * layers / arch.num_layers
        return on_gpu * per_layer + head + tower + copies
    checkpoints = 0.0 if job.offload_activations else _checkpoint_bytes(arch, job, layers)
    return checkpoints + head + tower


def layer_in_flight_bytes(arch: ModelArch, job: Job) -> float:
    """The layer backward is working on: with checkpointing its recomputed saved tensors (and,
    where the stack holds them, its MLP's gradients: `recomputed_mlp_gradient_bytes`), without
    the gradients of its activations (about one layer's worth either way). It starts only after
    the LM head's backward has freed the logits (shadow traces peak at
    _log_softmax_backward_data with the checkpoints and no recomputed layer alive)."""
    per_layer = layer_activation_bytes_per_token(arch, job) * job.tokens
    tile = tiled_mlp_bytes(arch, job) + indexed_expert_bytes(arch, job)
    if not job.gradient_checkpointing:
        return per_layer + tile
    return RECOMPUTED_LAYERS * per_layer + tile + recomputed_mlp_gradient_bytes(arch, job)


def indexed_expert_bytes(arch: ModelArch, job: Job) -> float:
    """What training fused 3-D experts by indexing them costs (`experts_indexed`: transformers
    4.55 GptOssExperts.forward in training mode loops over the experts hit and multiplies by
    `self.gate_up_proj[expert_idx]` and `self.down_proj[expert_idx]`; a tensor index copies the
    slice, and each matmul saves its copy for the input's gradient): a whole MoE layer's experts
    as held, for the recomputed layer with checkpointing (every MoE layer without). When the
    experts train, the index's backward (index_backward: zeros_like + index_put) builds a
    zero gradient of the whole 3-D tensor for each expert, one at a time beside the accumulating
    gradient: gate_up_proj, 2/3 of a gated layer's expert weights."""
    if not job.experts_indexed or not arch.moe_layers:
        return 0.0
    layer = routed_weight_bytes(arch, job) / arch.moe_layers / job.expert_parallel
    saved = layer * (1 if job.gradient_checkpointing else arch.moe_layers)
    full_size_gradient = layer * 2 / 3 if job.method is Method.full else 0.0
    return saved + full_size_gradient


def recomputed_mlp_gradient_bytes(arch: ModelArch, job: Job) -> float:
    """The gradients of the recomputed layer's MLP intermediates (d gate and d up of a gated
    MLP, d up of a plain one: the compute dtype, the MLP's width per token) that the stack holds
    beside the layer's saved tensors (`FrameworkProfile.recompute_holds_mlp_gradients`)."""
    if not job.profile.recompute_holds_mlp_gradients:
        return 0.0
    width = arch.token_mlp_width * (2 if arch.mlp == "gated" else 1)
    return width * job.compute_bytes * job.tokens


# torchtune's OffloadActivations (which TRL's activation_offloading wraps) keeps the tensors of
# the layer in backward and prefetches the next one's back from host RAM.
OFFLOADED_LAYERS_IN_FLIGHT = 2


def _checkpoint_bytes(arch: ModelArch, job: Job, layers: int) -> float:
    """One input per checkpointed layer, in the residual stream's dtype (fp32 under autocast
    over fp32 weights: shadow trace *.full.*.gc.*.bf16-mixed)."""
    return layers * residual_bytes(job) * arch.hidden_size * job.tokens


def offloaded_activation_bytes(arch: ModelArch, job: Job) -> float:
    """What activation offloading keeps in host RAM per GPU: the checkpoints, or without
    checkpointing every layer's saved tensors but those in flight (pinned buffers)."""
    if not job.offload_activations:
        return 0.0
    if job.gradient_checkpointing:
        return _checkpoint_bytes(arch, job, arch.num_layers)
    waiting = max(0, arch.num_layers - OFFLOADED_LAYERS_IN_FLIGHT)
    return waiting * layer_activation_bytes_per_token(arch, job) * job.tokens


def logits_bytes(arch: ModelArch, job: Job) -> float:
    """Logits and loss: tokens × vocabulary × the framework's bytes per entry; a fused/chunked
    loss (Unsloth) only ever holds one chunk of tokens' logits. Preference methods hold both
    chosen and rejected rows' (TRL concatenates them: [2B, T, V]); online methods only the
    completion's (logits_to_keep); an offline preference loss in a stack on TRL's trainers
    holds `preference_logits_bytes_per_entry` per entry. The reference's no-grad forward
    produces its own logits before the policy's and frees them once its log-probs are taken:
    not at the peak."""
    tokens = job.logits_tokens
    if job.loss_kernel is not None:
        return loss_kernel_bytes(arch, job, tokens)
    if job.preference_loss and job.profile.trl_preference_log_probs:
        return tokens * arch.vocab_size * preference_logits_bytes_per_entry(job)
    if job.profile.loss_chunk_tokens:
        tokens = min(tokens, job.profile.loss_chunk_tokens)
    return tokens * arch.vocab_size * job.profile.logits_bytes_per_entry


def preference_logits_bytes_per_entry(job: Job) -> float:
    """Bytes per token × vocabulary entry of TRL's preference losses (post-training.md §2.1):
    the policy's logits in the compute dtype (no labels are passed, so transformers does not
    upcast them) and their gradient, and in 16 bits each row's log-softmax, which
    selective_log_softmax (trl/trainer/utils.py, TRL ≥ 0.14) takes one row at a time and
    autograd keeps for backward (log_softmax's backward reads its output); in fp32 it takes a
    gather and a per-row logsumexp instead, which keep nothing new. An NLL term (ORPO, CPO,
    DPO's rpo_alpha) reuses the same logits."""
    tensors = 2 if job.compute_bytes == 4.0 else 3
    return tensors * job.compute_bytes


# Unsloth's fused cross-entropy (unsloth_zoo fused_losses/cross_entropy_loss.py, 2025.11 to
# 2026.4: _get_chunk_multiplier) reads torch.cuda.mem_get_info once, at the first forward, and
# budgets half the free memory for one chunk's fp32 logits.
FUSED_CE_FREE_FRACTION = 0.5


def sizes_loss_from_free_memory(job: Job) -> bool:
    """The stack's own fused loss runs (no `loss_kernel` named) and it sizes its chunks from the
    memory free on the card (`FrameworkProfile.loss_sized_by_free_memory`)."""
    return job.profile.loss_sized_by_free_memory and job.loss_kernel is None


def card_sized_loss_bytes(arch: ModelArch, job: Job, free_bytes: float) -> float | None:
    """The loss region of a fused loss that sizes its chunks from the memory it finds free
    (`FrameworkProfile.loss_sized_by_free_memory`), on a card with `free_bytes` free at the
    first forward; None for every other loss (`logits_bytes` stands).

    Unsloth's get_chunk_size: with F = tokens · V · 4 B (fp32 logits) and target = ½ · free,
    chunks = max(round(F / target / 4) · 4, 1), and the loss holds F / chunks, the profile's fp32
    bytes per entry over one chunk. So the loss grows into the card: the whole fp32 logits in one
    chunk while they fit in the free memory, else a chunk of about half of it. It never decides
    whether a job fits (it shrinks to what is free), but it is what max_memory_reserved shows
    on the card: Unsloth's notebooks on A100/L4/T4 peak 2–14 GiB above their load.
    """
    if not sizes_loss_from_free_memory(job):
        return None
    full = job.logits_tokens * arch.vocab_size * job.profile.logits_bytes_per_entry
    target = FUSED_CE_FREE_FRACTION * free_bytes
    if target <= 0:
        return logits_bytes(arch, job)
    chunks = max(round(full / target / 4) * 4, 1)
    return full / chunks


# torchtune's chunked cross-entropy run eagerly outside torchtune: the 16-bit logits, every
# chunk's fp32 log-softmax (cross_entropy saves it for backward) and one chunk's fp32 upcast of
# eight: 2 + 4 + 4/8 bytes per token × vocabulary entry at the end of the forward (shadow traces
# *.chunked, e.g. qwen2.5-0.5b.lora-r16-all-linear.sft.s4096.b2.gc.adamw.bf16-mixed.chunked).
EAGER_CHUNKED_CE_BYTES_PER_ENTRY = 2.0 + 4.0 + 4.0 / 8

# Cut Cross-Entropy keeps only the correct token's logit and a log-sum-exp per token (fp32).
CCE_BYTES_PER_TOKEN = 8.0


def loss_kernel_bytes(arch: ModelArch, job: Job, tokens: int) -> float:
    """The loss region of the kernel the job names.

    hf: tokens · V · the HF profile's bytes per entry. chunked: in torchtune, tokens · V ·
    torchtune's measured figure (its CEWithChunkedOutputLoss is the chunked kernel; the profile
    says how its figure was set); in other stacks the same loss as written, in eager PyTorch
    (`EAGER_CHUNKED_CE_BYTES_PER_ENTRY`).
    liger (fused linear cross-entropy): logits exist one chunk of ≈ tokens·h/V tokens at a time,
    about one fp32 hidden state per token (tokens · h · 4), plus the lm_head weight's gradient
    accumulated in the compute dtype (V · h). cce: tokens · 8 B (Wijmans et al. 2024: Gemma 2
    2B's loss memory 24 GB → 1 MB).
    """
    match job.loss_kernel:
        case LossKernel.hf:
            return tokens * arch.vocab_size * HF_PROFILE.logits_bytes_per_entry
        case LossKernel.chunked if job.profile is TORCHTUNE_PROFILE:
            return tokens * arch.vocab_size * TORCHTUNE_PROFILE.logits_bytes_per_entry
        case LossKernel.chunked:
            return tokens * arch.vocab_size * EAGER_CHUNKED_CE_BYTES_PER_ENTRY
        case LossKernel.liger:
            return tokens * arch.hidden_size * 4.0 + arch.vocab_size * arch.hidden_size * (
                job.compute_bytes
            )
        case _:
            return tokens * CCE_BYTES_PER_TOKEN


def allocator_slack_fraction(packing: bool, profile: FrameworkProfile) -> float:
    """The caching allocator's pool above the per-step tensors (activations and logits), as a
    fraction of them: ALLOCATOR_SLACK_PACKED where every step has the same shapes, which is
    packing only where the stack pads each packed row to the cap
    (`FrameworkProfile.packed_rows_one_length`: axolotl sets pad_to_sequence_len with
    sample packing "to prevent memory leaks"); else ALLOCATOR_SLACK_VARIABLE_LENGTH, as for
    padded batches of varying length (packed rows that close below the cap vary as much).
    """
    if packing and profile.packed_rows_one_length:
        return ALLOCATOR_SLACK_PACKED
    return ALLOCATOR_SLACK_VARIABLE_LENGTH


def layer_unit_bytes(arch: ModelArch, job: Job) -> float:
    """One decoder layer's weights as FSDP/ZeRO-3 gather them: quantised storage for QLoRA,
    else the compute dtype (FSDP's MixedPrecision param_dtype; DeepSpeed's 16-bit params)."""
    linear = arch.largest_layer_params
    if job.expert_parallel > 1 and arch.moe_layers:
        # Each EP rank gathers only its 1/EP of the layer's routed experts.
        routed = arch.routed_expert_params / arch.moe_layers
        linear -= routed * (1 - 1 / job.expert_parallel)
    if job.method is Method.qlora and job.quant is not None:
        return linear * quantised_bytes_per_weight(job.quant, job.profile.double_quant)
    return linear * job.compute_bytes


def fsdp_gathered_bytes(arch: ModelArch, job: Job) -> tuple[float, float]:
    """(weights, gradients) an FSDP rank holds unsharded at the peak of backward.

    Weights: QLoRA's dequantisation buffers; the current and prefetched layer units
    (FSDP_UNITS_IN_FLIGHT; every layer where the stack gathers the full model); the root unit,
    which FSDP does not reshard between forward and backward: embeddings, lm_head and norms,
    or only the norms and one V×h matrix at a time where the embeddings are units of their
    own. Gradients (full fine-tuning): the unsharded gradient of the unit in backward, before its
    reduce-scatter; frozen LoRA base units get none (PEFT's auto-wrap policy puts adapters in
    units of their own).
    """
    if job.profile.fsdp_gathers_full_model:
        units = arch.num_layers * layer_unit_bytes(arch, job)
    else:
        units = FSDP_UNITS_IN_FLIGHT * layer_unit_bytes(arch, job)
    one_matrix = arch.vocab_size * arch.hidden_size
    if job.profile.fsdp_shards_embeddings_separately:
        root_params = one_matrix + small_params(arch)
    else:
        root_params = embedding_params(arch) + small_params(arch)
    root = min(root_params * job.compute_bytes, shared_weight_bytes(arch, job))
    weights = dequant_buffer_bytes(arch, job) + units + root
    gradients = 0.0
    # A stack that gathers the whole model does so to save a checkpoint, outside backward.
    if job.method is Method.full and not job.profile.fsdp_gathers_full_model:
        gradients = FSDP_UNSHARDED_GRADIENT_UNITS * arch.largest_layer_params * job.compute_bytes
    return weights, gradients


def zero3_gathered_bytes(arch: ModelArch, job: Job) -> tuple[float, float]:
    """(weights, gradients) a ZeRO-3 rank holds unsharded at the peak.

    ZeRO-3 gathers module by module, so the live parameters are the module running (at worst
    the V×h embedding/lm_head, or a whole MoE block, which LLaMA-Factory and HF's MoE recipes
    make a ZeRO-3 leaf with set_z3_leaf_modules) plus the prefetch bucket; parameters under
    the persistence threshold (norms) stay whole; QLoRA's dequantisation buffers. Gradients:
    the reduce bucket, and for full fine-tuning the running module's full gradient before it
    is reduced.
    """
    h_squared = arch.hidden_size**2
    largest = max(arch.vocab_size * arch.hidden_size, largest_linear(arch))
    if arch.num_experts:
        moe_block = arch.routed_expert_params / max(1, arch.moe_layers) / job.expert_parallel
        largest = max(largest, moe_block)
    weights = (
        largest + ZERO3_PREFETCH_BUCKET_PER_HIDDEN_SQUARED * h_squared + arch.other_params
    ) * job.compute_bytes + dequant_buffer_bytes(arch, job)
    gradients = ZERO3_REDUCE_BUCKET_PER_HIDDEN_SQUARED * h_squared * job.compute_bytes
    if job.method is Method.full:
        gradients += largest * job.compute_bytes
    return weights, gradients


def zero2_bucket_bytes(job: Job) -> float:
    """ZeRO-2's contiguous gradient bucket (allocated every backward, whatever the model)."""
    return ZERO2_REDUCE_BUCKET_ELEMENTS * job.compute_bytes


def frozen_bytes_per_param(job: Job) -> float:
    """A frozen model (reference, reward) is loaded in the compute dtype: 16-bit, fp32 when the
    job trains in fp32 (TRL loads string ids in fp32 unless a dtype is given)."""
    return job.compute_bytes


def reference_bytes(arch: ModelArch, job: Job) -> float:
    """A frozen copy of the policy for full fine-tuning's reference (TRL create_reference_model,
    LLaMA-Factory create_ref_model): weights only, no gradients or optimizer state. Zero with
    PEFT (the base with adapters off), reference-free losses and precomputed log-probs."""
    if not job.reference_copy:
        return 0.0
    return arch.total_params * frozen_bytes_per_param(job)


def reward_model_params(reward: ModelArch) -> int:
    """A sequence classifier (AutoModelForSequenceClassification, num_labels=1): the decoder
    with a one-value score head in place of an untied lm_head."""
    lm_head = 0 if reward.tie_embeddings else reward.vocab_size * reward.hidden_size
    return reward.total_params - lm_head + reward.hidden_size


def reward_bytes(job: Job) -> float:
    """A frozen reward model's weights; rule-based rewards put nothing on the GPU. Its forward
    keeps no activations (no_grad) and no vocabulary logits."""
    if job.reward_arch is None:
        return 0.0
    return reward_model_params(job.reward_arch) * frozen_bytes_per_param(job)


def kv_bytes_per_token(arch: ModelArch) -> float:
    """16-bit keys and values of every layer: 2 × layers × kv_heads × head_dim × 2 bytes
    (Llama-3.1-8B: 128 KiB, so 20K tokens ≈ 2.5 GiB, as Unsloth's GRPO table gives)."""
    return 2 * arch.num_layers * arch.num_kv_heads * arch.head_dim * 2.0


def generation_kv_bytes(arch: ModelArch, job: Job) -> float:
    """The KV cache of one generation round: every sequence of the round, prompt + completion."""
    return job.generation_tokens * kv_bytes_per_token(arch)


# vLLM's CUDA graphs (captured for its decode batch sizes; they cannot be offloaded and stay
# resident through the actor update, per verl's perf tuning guide) and its sampler's workspace.
# [uncertain: vLLM logs 0.3-2 GiB of graph memory depending on model and capture sizes.]
VLLM_GRAPHS_AND_WORKSPACE_BYTES = 1.5 * 2**30


def rollout_bytes(arch: ModelArch, job: Job) -> float:
    """What a colocated vLLM engine needs at least on each GPU: its own 16-bit copy of the model
    ÷ its tensor-parallel size TP (TRL merges LoRA and pushes full weights; Unsloth's engine
    reads the trainer's), the KV cache of one generation round, and its CUDA graphs. An engine
    over TP GPUs generates the TP ranks' sequences with each GPU holding 1/TP of the heads, so
    its KV cache per GPU is one rank's round whatever TP is (post-training.md §8, "vLLM TP
    divides W_rollout"). It reserves more, gpu_memory_utilization of the card
    (planner.estimate.memory.estimate applies it per card). Zero for HF generate (transient:
    `generation_scratch_bytes`) and for a separate vLLM server."""
    if job.rollout is not Rollout.vllm_colocate:
        return 0.0
    return (
        rollout_weight_bytes(arch, job)
        + generation_kv_bytes(arch, job)
        + (VLLM_GRAPHS_AND_WORKSPACE_BYTES)
    )


def rollout_weight_bytes(arch: ModelArch, job: Job) -> float:
    """A colocated engine's weights on each GPU: 16-bit ÷ its tensor-parallel size (none when it
    reads the trainer's, Unsloth's vLLM)."""
    if job.rollout is not Rollout.vllm_colocate or job.rollout_shares_weights:
        return 0.0
    return arch.total_params * 2.0 / job.rollout_tensor_parallel


def generation_scratch_bytes(arch: ModelArch, job: Job) -> float:
    """HF generate's transient KV cache of one round (freed before the training step), and under
    ZeRO-3 what is gathered for it (`generation_gathered_bytes`)."""
    if job.rollout is not Rollout.hf:
        return 0.0
    return generation_kv_bytes(arch, job) + generation_gathered_bytes(arch, job)


def generation_gathered_bytes(arch: ModelArch, job: Job) -> float:
    """Under ZeRO-3, every 16-bit parameter of the model TRL unwraps for generation, gathered on
    each GPU at once (ds3_gather_for_generation=True: unwrap_model_for_generation wraps
    deepspeed.zero.GatheredParameters(model.parameters())). PPO unwraps its
    PolicyAndValueWrapper, policy and value model together (trl/trainer/ppo_trainer.py:
    `unwrap_model_for_generation(self.model, ...)` then `unwrapped_model.policy` generates;
    ms-swift's PPO is that trainer), so the critic (a sequence classifier of the policy's shape,
    `reward_model_params`) is gathered beside the policy: policy + value params × 2 B."""
    if job.sharding is not Sharding.zero3:
        return 0.0
    value = reward_model_params(arch) if job.critic else 0
    return (arch.total_params + value) * 2.0
