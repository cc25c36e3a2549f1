"""The memory model's components, one pure function each, in bytes for the whole job on one device.

`Job` gathers the resolved JobSpec fields the components read, so each function states exactly
what it depends on. Sharding across GPUs is applied afterwards (planner.memory.placement).
"""

from __future__ import annotations

from dataclasses import dataclass

from planner.catalog.models import (
    ModelArch,
    embedding_params,
    linear_params_per_layer,
    linear_shapes,
    small_params,
)
from planner.memory.profiles import (
    EAGER_ATTENTION_BYTES_PER_SCORE,
    RECOMPUTED_LAYERS,
    FrameworkProfile,
)
from planner.spec import Method, Optimizer, Precision, Quant


@dataclass(frozen=True, slots=True)
class Job:
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

    @property
    def tokens(self) -> int:
        return self.seq_len * self.micro_batch

    @property
    def mixed(self) -> bool:
        return self.precision in (Precision.bf16_mixed, Precision.fp16_mixed)

    @property
    def activation_scale(self) -> float:
        """fp32 training stores 4-byte activations; every other precision computes in 16 bits."""
        return 2.0 if self.precision is Precision.fp32 else 1.0


# Bytes per quantised linear weight: 4-bit codes + one fp32 absmax per 64-weight block (NF4), or
# with the absmax itself quantised to 8 bits plus an fp32 constant per 256 blocks (double
# quant, Dettmers et al. 2023); LLM.int8 keeps one fp32 scale per row (≈ 1 B); GPTQ int4 stores
# an fp16 scale and a 4-bit zero point per group of 128.
NF4_BYTES = 0.5 + 4 / 64
NF4_DOUBLE_QUANT_BYTES = 0.5 + 1 / 64 + 4 / (64 * 256)
INT8_BYTES = 1.0 + 4 / 4096
GPTQ_INT4_BYTES = 0.5 + 2.5 / 128


def quantised_bytes_per_weight(quant: Quant, double_quant: bool) -> float:
    if quant is Quant.nf4:
        return NF4_DOUBLE_QUANT_BYTES if double_quant else NF4_BYTES
    return INT8_BYTES if quant is Quant.int8 else GPTQ_INT4_BYTES


def base_weight_bytes_per_param(job: Job) -> float:
    """Bytes per 16-bit-able parameter as the model is held: fp32 when the precision is fp32;
    fp32 master + the 16-bit copy autocast saves for backward in mixed precision (4 + 2);
    else 2."""
    if job.precision is Precision.fp32:
        return 4.0
    return 6.0 if job.mixed else 2.0


def weights_bytes(arch: ModelArch, job: Job) -> float:
    """Model weights.

    full / lora: every parameter at `base_weight_bytes_per_param`.
    qlora: the decoder's linear layers quantised (`quantised_bytes_per_weight`, plus the
    profile's nf4_extra_bytes_per_weight for NF4); embeddings, lm_head and norms stay 16-bit,
    or fp32 where PEFT's k-bit preparation upcasts them (bitsandbytes nf4/int8 under HF); and
    the 16-bit copy of the largest linear that dequantisation materialises for each matmul
    (forward and backward: two).
    """
    total = arch.total_params
    if job.method is not Method.qlora or job.quant is None:
        return total * base_weight_bytes_per_param(job)
    linear = arch.num_layers * linear_params_per_layer(arch)
    upcast = job.profile.kbit_embeddings_fp32 and job.quant in (Quant.nf4, Quant.int8)
    other_bytes = (total - linear) * (4.0 if upcast else 2.0)
    largest = max(i * o for i, o, _ in linear_shapes(arch).values())
    dequant_buffers = 2 * 2.0 * largest
    per_weight = quantised_bytes_per_weight(job.quant, job.profile.double_quant)
    if job.quant is Quant.nf4:
        per_weight += job.profile.nf4_extra_bytes_per_weight
    return linear * per_weight + other_bytes + dequant_buffers


def adapter_params(arch: ModelArch, rank: int, targets: tuple[str, ...]) -> int:
    """LoRA parameters: rank·(in + out) per targeted matrix, with the model's real shapes
    (narrow k/v under GQA, three MLP matrices when gated, one adapter per MoE expert)."""
    shapes = linear_shapes(arch)
    per_layer = sum(rank * (i + o) * n for t, (i, o, n) in shapes.items() if t in targets)
    return arch.num_layers * per_layer


def trainable_params(arch: ModelArch, job: Job) -> int:
    if job.method is Method.full:
        return arch.total_params
    return adapter_params(arch, job.lora_rank, job.lora_targets)


def trainable_bytes_per_param(job: Job) -> float:
    """Storage of a trained parameter and of its gradient: fp32 in mixed precision and fp32;
    else 16-bit for full fine-tuning and the framework's adapter dtype for LoRA."""
    if job.mixed or job.precision is Precision.fp32:
        return 4.0
    return 2.0 if job.method is Method.full else float(job.profile.adapter_bytes)


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


def optimizer_state_bytes_per_param(job: Job) -> float:
    """AdamW: two moments in the trained dtype (fp32 → 8 B, bf16 → 4 B); 8-bit Adam: two 8-bit
    moments + block constants (≈ 2 B); paged optimizers live in CUDA managed memory that spills
    to host RAM, outside torch's allocator (0 B counted); SGD: one momentum buffer; Adafactor:
    factored fp32 row/column second moments, no first moment (≈ 0.02 B for transformer-sized
    matrices)."""
    state = trainable_bytes_per_param(job)
    match job.optimizer:
        case Optimizer.adamw:
            return 2 * state
        case Optimizer.adamw_8bit:
            return 2.0 + 2 * 4 / 2048
        case Optimizer.paged_adamw | Optimizer.paged_adamw_8bit:
            return 0.0
        case Optimizer.sgd:
            return state
        case Optimizer.adafactor:
            return 0.02


def optimizer_bytes(arch: ModelArch, job: Job) -> float:
    """Optimizer state for the trained parameters."""
    return trainable_params(arch, job) * optimizer_state_bytes_per_param(job)


def optimizer_step_scratch_bytes(arch: ModelArch, job: Job) -> float:
    """Scratch PyTorch's multi-tensor (foreach) AdamW allocates inside step(): sqrt(v) for every
    parameter, one state-sized buffer, while all gradients are still alive. SGD's momentum
    update works in place and bitsandbytes' 8-bit/paged kernels are fused (no scratch)."""
    if job.optimizer is not Optimizer.adamw:
        return 0.0
    return trainable_params(arch, job) * trainable_bytes_per_param(job)


def paged_optimizer_bytes(arch: ModelArch, job: Job) -> float:
    """What a paged optimizer holds in managed memory (for the upper end of the range)."""
    if job.optimizer is Optimizer.paged_adamw:
        return trainable_params(arch, job) * 2 * trainable_bytes_per_param(job)
    if job.optimizer is Optimizer.paged_adamw_8bit:
        return trainable_params(arch, job) * 2.0
    return 0.0


# A dropped-out copy of an adapted input (16-bit) plus the dropout's boolean mask.
LORA_DROPOUT_BYTES_PER_ELEMENT = 3.0


def saves_linear_input(job: Job, target: str) -> bool:
    """Whether backward keeps a linear layer's input: to form the weight gradient (full
    fine-tuning), for the LoRA A matrix on it, or because bitsandbytes' 4/8-bit matmul keeps its
    input (`ctx.tensors = (A, B)`) even for a frozen weight. A frozen 16-bit (or GPTQ) linear
    needs only its weight."""
    if job.method is Method.full or target in job.lora_targets:
        return True
    return job.method is Method.qlora and job.quant in (Quant.nf4, Quant.int8)


def layer_activation_bytes_per_token(arch: ModelArch, job: Job) -> float:
    """What one decoder layer saves for backward per token (16-bit unless fp32 training).

    Always: each norm's input (fp32 upcast in eager PyTorch norms, 16-bit when fused), q, k, v
    (GQA widths) and the attention output (FlashAttention/SDPA keeps them for backward), the
    MLP's gate and up outputs and the activation output (a fused kernel recomputes the
    activation), or a plain MLP's pre-activation. Linear inputs only where backward needs them
    (`saves_linear_input`): the norm outputs feeding q/k/v and gate/up, and the down
    projection's input. With LoRA dropout, a dropped copy and mask of each distinct adapted
    input. An MoE token passes through experts_per_token experts. Without
    FlashAttention/SDPA the s×s scores are materialised (Korthikanti et al. 2022: 5 bytes per
    head per query·key pair).
    """
    h = arch.hidden_size
    q_out = arch.num_heads * arch.head_dim
    kv_out = arch.num_kv_heads * arch.head_dim
    width = arch.expert_width * (arch.experts_per_token or 1)
    norm = job.profile.norm_input_bytes_per_hidden * h
    kept = 0.0  # 16-bit elements per token

    kept += q_out + 2 * kv_out + q_out
    if any(saves_linear_input(job, t) for t in ("q", "k", "v")):
        kept += h
    if arch.mlp == "gated":
        kept += job.profile.gated_mlp_saved_tensors * width
        feeds = ("gate", "up")
    else:
        kept += width
        feeds = ("up",)
    if any(saves_linear_input(job, t) for t in feeds):
        kept += h
    if saves_linear_input(job, "down"):
        kept += width
    dropout = 0.0
    if job.method is not Method.full and job.profile.lora_dropout:
        adapted = [
            width if group == ("down",) else (q_out if group == ("o",) else h)
            for group in (("q", "k", "v"), ("o",), ("gate", "up"), ("down",))
            if any(t in job.lora_targets for t in group)
        ]
        dropout = LORA_DROPOUT_BYTES_PER_ELEMENT * sum(adapted)
    scores = 0.0
    if not job.flash_attention:
        scores = EAGER_ATTENTION_BYTES_PER_SCORE * arch.num_heads * job.seq_len
    return (2 * norm + 2.0 * kept + dropout) * job.activation_scale + scores


def activation_bytes(arch: ModelArch, job: Job) -> float:
    """Activations of one micro-batch at the peak of backward.

    Without checkpointing every layer's saved tensors; with it, each layer keeps only its
    16-bit input (in host RAM when the framework offloads checkpoints) and one layer is
    recomputed at a time. In both cases the layer being back-propagated also holds the
    gradients of its activations (one more layer's worth).
    """
    per_layer = layer_activation_bytes_per_token(arch, job) * job.tokens
    if not job.gradient_checkpointing:
        return (arch.num_layers + 1) * per_layer
    checkpoints = 0.0
    if not job.profile.offloads_checkpoints:
        checkpoints = arch.num_layers * 2.0 * arch.hidden_size * job.tokens * job.activation_scale
    return checkpoints + RECOMPUTED_LAYERS * per_layer


def logits_bytes(arch: ModelArch, job: Job) -> float:
    """Logits and loss: tokens × vocabulary × the framework's bytes per entry; a fused/chunked
    loss (Unsloth) only ever holds one chunk of tokens' logits."""
    tokens = job.tokens
    if job.profile.loss_chunk_tokens:
        tokens = min(tokens, job.profile.loss_chunk_tokens)
    return tokens * arch.vocab_size * job.profile.logits_bytes_per_entry


def weights_at_rest_per_layer_bytes(arch: ModelArch, job: Job) -> float:
    """One decoder layer's weights as stored (what FSDP/ZeRO-3 gathers per layer)."""
    linear = linear_params_per_layer(arch)
    if job.method is Method.qlora and job.quant is not None:
        return linear * quantised_bytes_per_weight(job.quant, job.profile.double_quant)
    return linear * base_weight_bytes_per_param(job)


def unsharded_root_bytes(arch: ModelArch, job: Job) -> float:
    """Embeddings, lm_head and norms: FSDP's root unit, kept gathered from forward to backward."""
    bytes_per = 4.0 if job.precision is Precision.fp32 or job.mixed else 2.0
    return (embedding_params(arch) + small_params(arch)) * bytes_per
