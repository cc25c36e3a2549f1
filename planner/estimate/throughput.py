"""Training throughput: trained tokens per second for a job on N cards of one kind.

Per GPU, time per token is a sum over kernel kinds, each at its own ceiling (a roofline summed
over kernels, since matmuls and elementwise kernels run one after the other):

    FLOPs per token ÷ (dense peak × sustained-clock fraction × utilisation)   matmuls
  + bytes per token ÷ (bandwidth × ACHIEVED_BANDWIDTH_FRACTION)              memory-bound work
  + CPU-offload time + weight sync to a vLLM server
  + host time of transformers' eager expert loop (expert_loop_seconds_per_token)
  + all-to-all time the matmuls do not hide (visible_all_to_all_seconds_per_token),

then × N GPUs × a scaling efficiency. Pure arithmetic, no I/O: planning every card takes well
under a millisecond.

FLOPs per trained token (N = active linear parameters of the transformer blocks, so MoE counts
only the experts a token visits; h = hidden size, V = vocabulary, L = layers, s = sequence):
- full fine-tune 6·N (2N forward, 2N activation gradients, 2N weight gradients);
- LoRA/QLoRA 4·N: frozen weights get no weight gradients (adapter FLOPs are < 1 % and ignored);
- gradient checkpointing +2·N: one more forward of every block;
- attention scores 6·L·h·s (forward 2·L·h·s: QKᵀ and PV over the s/2 keys a causal query sees
  on average, which FlashAttention's causal kernels skip to; backward twice that; +2·L·h·s with
  checkpointing; architectures-2026.md §3.1), which matters from a few thousand tokens on;
- logits: the lm_head matmul, 6·h·V for full fine-tuning, 4·h·V when it is frozen.

Sustained clock (power ceiling). A datasheet peak assumes the boost clock; a card whose board
power cannot feed its tensor cores at that clock runs slower. Energy per dense FLOP is a property
of the chip family (process node and design), so each family has a reference card known to hold
its clocks under matmul load, and a card sustains min(1, TDP ÷ (peak × the reference's watts per
TFLOPS)) of its peak (clock, hence FLOP rate, taken as proportional to the power it may draw).
GeForce cards run BF16 with FP32 accumulate at half the tensor rate they are built for, so their
reference is the full (FP16-accumulate) rate: an RTX 4090 holds its clocks at 330 TFLOPS within
450 W, i.e. 1.36 W per TFLOPS on Ada. That caps an L4 (72 W for 121 TFLOPS) at 0.44 of its peak,
an L40S (350 W, 362) at 0.71 (inside the 181–362 "honest" range argued for it), an RTX 6000 Ada
at 0.61, and a T4 (70 W, 65 TFLOPS; V100 SXM2 reference, same 12 nm node) at 0.45 — why a T4
trains at a fraction of a 3090's speed despite a similar datasheet peak. Cards without a TDP in
the catalog are not capped.

Memory-bound work, bytes moved per trained token (2-byte elements in mixed precision):
- elementwise kernels (norms, residual adds, RoPE, SwiGLU, flash-attention I/O): about
  30·h + 5·I elements read or written per layer per forward (I = MLP width a token visits),
  twice that in backward, once more with checkpointing;
- the loss: logits upcast to fp32, softmax and its gradient, ~24 bytes per vocabulary entry;
- weights: every weight read once per pass (forward, backward, recompute) per micro-batch,
  which is what makes micro-batch 1 at short context slow on low-bandwidth cards; of an MoE's
  routed experts, those the micro-batch touches on this GPU (touched_expert_share);
- QLoRA dequantisation: each pass reads the 4-bit weights (0.5 B/param), writes a 2-byte copy
  and reads it again (≈ 4.5 B/param) — this replaces the plain weight read (fused experts the
  stack leaves 16-bit are read plain);
- full fine-tuning's optimizer step: AdamW reads and writes fp32 master weights, m and v and
  reads the gradient (~32 B per parameter), once per optimizer step, for the share of the
  parameters this GPU updates (sharded across GPUs, as in the planner's multi-GPU rows).
Kernels reach about ACHIEVED_BANDWIDTH_FRACTION of the datasheet bandwidth.

Utilisation = UTILISATION[method] × the job's kernel mix × CARD_CLASS_FACTOR[class] ×
MATMUL_SHARE_VS_A100[family] is the share of the sustained peak the matmuls reach. The method
figure is a dense GEMM's; the kernel mix (kernel_mix_factor) slows the FLOPs that do not run as
large dense GEMMs: attention scores (FlashAttention, ATTENTION_KERNEL_RATE) and routed experts
(expert_matmul_share). The method and class figures are fitted on the 18 dev rows of
shared/data/vram_dev.jsonl that carry a measured `throughput_tokens_per_s`, resolved with the
planner's own defaults (bench/throughput.py refits and prints it). A row's implied utilisation
is the method figure that reproduces it exactly once the memory-bound time is taken out: FLOPs
per token ÷ (matmul time per token × sustained peak × kernel mix). The method figures are the
medians over the 14 rows on A100s (HBM, datacenter): full 0.81 (6 rows; near the A100's best
measured matmul rate, as it should be once elementwise time is counted separately), LoRA 0.65
(4: adapter matmuls, dropout and casts are not counted as work), QLoRA 0.57 (4). A class factor
is the geometric mean, over (source, card) groups so that near-duplicate rows count once, of
each group's median implied/method ratio: consumer 1.03 (one RTX 4090 group), workstation 0.82
(one L40S group). The RTX A6000 row is left out of the fit: its 4,699 tokens/s for an 8B LoRA
would need 140 % of the card's peak, so it cannot be a one-card figure as labelled. The fit is
on A100s, so chip families whose best measured matmul (ml-engineering's MAMF table) is a smaller
share of their peak get that ratio, a stated prior rather than a fit: Hopper 0.93 (H100 SXM
~80 % against the A100's ~86 %), AMD Instinct 0.65 (MI300X 51 %, MI325X 60 %). Fit quality
(median error factor, worst rows) is printed by bench/throughput.py and tabled in README.md
("Accuracy"); docs/accuracy.md has the 2025–26 speed rows.

HF Trainer's `train_tokens_per_second` is per device (fms-acceleration rows), torchtune's figure is
for the whole job: a 70B full fine-tune at 1,568 tokens/s per A100 would exceed the A100's peak.

CPU offload (full fine-tuning): the optimizer step runs on the CPU once per optimizer step, paying
the PCIe round trip of gradients and weights plus CPU Adam's rate (constants below).

Multi-GPU: each doubling of the GPU count loses a share of per-GPU throughput to communication
that overlaps imperfectly with compute. A ZeRO-3/FSDP full fine-tune moves three weight-sized
volumes per step (all-gather in forward and backward, reduce-scatter of gradients) and keeps
SCALING_PER_DOUBLING of its speed per doubling: 0.95 over NVLink/NVSwitch/Infinity Fabric, 0.88
over PCIe on datacenter and workstation cards, 0.80 on consumer cards (no P2P: collectives go
through host memory). Other layouts lose in proportion to the volume they move: DDP/ZeRO-2 full
fine-tuning two volumes (all-reduce of gradients), sharded adapters two (the frozen weights are
still gathered), replicated adapters almost none (taken as none); under expert parallelism
only the share of the weights still gathered across ranks (gathered_weight_share). Against
the dev set: the torchtune 8×A100 LoRA row is predicted as well as the single-A100 torchtune
LoRA row (×0.91 and ×0.90 of measured), so its modelled 0.90 (0.967 per doubling) holds; the
70B full row cannot be separated from its CPU offload; fms-acceleration's 2×A100 LoRA row
keeps 0.89 of its single-GPU rate (with half the micro-batch), below the model's 0.97.
`device_map` (naive pipeline) runs one GPU at a time: N cards give one card's throughput.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, NamedTuple

from planner.catalog.gpus import FP8_CHIP_FAMILIES, GpuSpec, gpu_by_key
from planner.catalog.models import ModelArch, linear_params
from planner.catalog.stacks import method_fact
from planner.estimate.memory.components import (
    kv_bytes_per_token,
    quantised_bytes_per_weight,
    reward_model_params,
)
from planner.job.resolved import lora_target_names
from planner.spec import (
    ONLINE_OBJECTIVES,
    Method,
    Objective,
    Precision,
    Quant,
    Rollout,
    Sharding,
)

if TYPE_CHECKING:
    from planner.job.resolved import ResolvedJob

UTILISATION: dict[Method, float] = {Method.full: 0.81, Method.lora: 0.65, Method.qlora: 0.57}
CARD_CLASS_FACTOR = {"datacenter": 1.0, "workstation": 0.82, "consumer": 1.03}
# CDNA4 (MI355X) has no measured matmul share yet: taken as CDNA3's, the same ROCm stack.
MATMUL_SHARE_VS_A100 = {"hopper": 0.93, "cdna2": 0.65, "cdna3": 0.65, "cdna4": 0.65}
SCALING_PER_DOUBLING = {"nvlink": 0.95, "pcie": 0.88, "consumer": 0.80}
# Past one node of GPUS_PER_NODE each doubling crosses InfiniBand/RoCE (400 Gb/s per GPU, about
# a tenth of NVLink's bandwidth): a stated prior between NVLink's and consumer PCIe's figures.
INTER_NODE_SCALING_PER_DOUBLING = 0.85
# Weight-sized volumes moved per step, relative to a sharded full fine-tune's three.
SHARDED = frozenset({Sharding.fsdp, Sharding.zero3})
FULL_SHARDED_VOLUMES = 3
# TF32 tensor cores run at half the BF16 rate on Ampere/Hopper.
FP32_RATE_FACTOR = 0.5

# Per chip family: the card that holds its boost clock under sustained matmul load, and how much
# faster its tensor cores run than its catalog figure (2 on GeForce: FP16 accumulate is full rate).
POWER_REFERENCE_CARD: dict[str, tuple[str, float]] = {
    "volta": ("v100-16g-sxm2", 1.0),
    "turing": ("v100-16g-sxm2", 1.0),  # the same 12 nm node; the T4 is Turing's only catalog card
    "ampere-ga100": ("a100-80g-pcie", 1.0),  # NVIDIA rates its 300 W PCIe card at SXM clocks
    "ampere-ga10x": ("rtx-a6000", 1.0),
    "ada": ("rtx4090", 2.0),
    "hopper": ("h100-pcie", 1.0),  # its datasheet clock is already the one 350 W sustains
    "blackwell-gb20x": ("rtx5090", 2.0),
    "blackwell-gb100": ("b200", 1.0),
    "cdna2": ("mi250x", 1.0),
    "cdna3": ("mi300x", 1.0),
    "cdna4": ("mi355x", 1.0),  # its only catalog card: liquid-cooled at 1,400 W
}

BYTES_PER_ELEMENT = {Precision.fp32: 4.0}
MIXED_PRECISION_BYTES = 2.0
ELEMENTWISE_ELEMENTS_PER_HIDDEN = 30
ELEMENTWISE_ELEMENTS_PER_INTERMEDIATE = 5
BACKWARD_TRAFFIC_FACTOR = 2
LOSS_BYTES_PER_VOCAB_ENTRY = 24
OPTIMIZER_STEP_BYTES_PER_PARAM = 32
ACHIEVED_BANDWIDTH_FRACTION = 0.8
DEQUANT_BYTES_PER_PARAM = {
    Quant.nf4: 4.5,
    Quant.int4: 4.5,
    Quant.int8: 5.0,
    # Same read-then-write-16-bit pattern: 0.53 B read (MXFP4), 1 B read (FP8), 2 B written twice.
    Quant.mxfp4: 4.5,
    Quant.fp8: 5.0,
}
# CPU offload of a full fine-tune's optimizer: bf16 gradients out and bf16 weights back over PCIe
# (~25 GB/s effective on PCIe 4.0 x16), and DeepSpeed's CPU Adam at ~2e9 parameters/s.
HOST_LINK_GBS = 25.0
OFFLOAD_BYTES_PER_PARAM = 4
CPU_ADAM_PARAMS_PER_S = 2e9


@dataclass(frozen=True, slots=True)
class Throughput:
    tokens_per_s: float  # the whole job, all GPUs together
    flops_per_token: float
    utilisation: float  # of the card's datasheet peak: method × class × sustained clock
    scaling_efficiency: float


class JobWork(NamedTuple):
    """The card-independent cost of one trained token, computed once per job (and per changed
    job a suggestion plans: a NamedTuple is made in a fifth of a frozen dataclass's time)."""

    flops_per_token: float
    method_utilisation: float
    dequant_bytes_per_token: float
    offload_seconds_per_token_one_gpu: float
    # Memory-bound traffic: what every GPU moves per token, and the optimizer step's share that
    # is divided among the GPUs that shard it.
    memory_bytes_per_token: float = 0.0
    optimizer_bytes_per_token_one_gpu: float = 0.0
    trains_weights: bool = True
    # Pushing weights to a separate vLLM server, per trained token of one GPU.
    sync_seconds_per_token: float = 0.0
    # Host time the GPU waits on: transformers' eager per-expert loop (expert_loop_seconds).
    host_seconds_per_token: float = 0.0
    # FP8 matmuls' speed-up on cards that have them (1 when the job is not FP8).
    fp8_speedup: float = 1.0
    # Expert and context parallelism: bytes each GPU sends and receives per token in
    # all-to-all, and the part of them that is EP's dispatch and combine (which overlaps).
    all_to_all_bytes_per_token: float = 0.0
    expert_parallel: int = 1
    expert_all_to_all_bytes_per_token: float = 0.0
    # Share of the weights a sharded layout gathers and reduces per GPU (gathered_weight_share).
    gathered_share: float = 1.0


@cache
def active_block_params(arch: ModelArch) -> int:
    """Weights of the transformer blocks' linears a token passes through (MoE: routed experts)."""
    return linear_params(arch, active_only=True)


@cache
def non_routed_linear_params(arch: ModelArch) -> int:
    """Block linears outside the routed experts (attention, dense and shared MLPs): every
    token's pass reads them whole."""
    return linear_params(arch) - arch.routed_expert_params


@cache
def routed_active_params(arch: ModelArch) -> int:
    """The part of active_block_params in routed experts (top-k of each MoE layer)."""
    if not arch.is_moe:
        return 0
    return arch.routed_expert_params * (arch.experts_per_token or 1) // (arch.num_experts or 1)


# Attention-score FLOPs of one forward per layer per token, in units of width × sequence: QKᵀ
# and PV, 2 FLOPs per multiply-add each, over the S/2 keys a causal query sees on average
# (architectures-2026.md §3.1: forward = 2·(S/2)·n_h·(d_qk + d_v); FlashAttention-2,
# arXiv:2307.08691 §3.1, skips the masked blocks, and its benchmarks count causal FLOPs as half).
ATTENTION_FORWARD_FACTOR = 2

# Attention types whose score matrix spans the whole sequence; sliding/chunked layers see a
# window, Gated DeltaNet (linear) layers none (O(S·d²), inside the 6·N term).
_FULL_SPAN = ("full", "nope", "mla", "cross")


@cache
def attention_span_layers(arch: ModelArch, seq_len: int) -> float:
    """Σ over layers of the keys a query sees, in units of the sequence (architectures-2026.md
    §3.1: S_eff = S for full causal attention, ≈ 2·W for a window W ≪ S)."""
    window = arch.attention_window or seq_len
    windowed = min(1.0, 2 * window / seq_len)
    span = 0.0
    for layer in arch.layer_types or ("full+dense",) * arch.num_layers:
        kind = layer.split("+")[0]
        span += 1.0 if kind in _FULL_SPAN else (0.0 if kind == "linear" else windowed)
    return span


def _block_pass_factor(job: ResolvedJob) -> int:
    """FLOPs per block weight per token: 6 (full) or 4 (frozen weights), +2 for recompute."""
    return (6 if job.method == Method.full else 4) + (2 if job.gradient_checkpointing else 0)


def flops_per_token(job: ResolvedJob) -> float:
    """FLOPs per trained token: the training step, and for preference and RL jobs their other
    forwards, reward model and generation (post-training, below)."""
    step = training_step_flops_per_token(job)
    if job.objective is Objective.sft:
        return step
    return (
        step * training_passes(job)
        + extra_forwards(job) * forward_flops_per_token(job)
        + generation_flops_per_token(job, active_block_params(job.arch))
        + reward_flops_per_token(job)
    )


def forward_flops_per_token(job: ResolvedJob) -> float:
    """One no-grad forward of the policy: blocks, attention scores and the lm_head."""
    arch = job.arch
    return float(
        2 * active_block_params(arch)
        + forward_attention_flops_per_token(job)
        + 2 * arch.hidden_size * arch.vocab_size
    )


def _attention_score_flops(arch: ModelArch, seq_len: int, passes: int) -> float:
    """Attention-score FLOPs per token of `passes` forwards' worth over sequences of `seq_len`
    (ATTENTION_FORWARD_FACTOR per layer, width and key a query sees)."""
    span = attention_span_layers(arch, seq_len)
    return passes * ATTENTION_FORWARD_FACTOR * span * arch.num_heads * arch.head_dim * seq_len


def forward_attention_flops_per_token(job: ResolvedJob) -> float:
    """Attention scores of one no-grad forward over the whole sequence."""
    return _attention_score_flops(job.arch, job.seq_len, 1)


def step_attention_flops_per_token(job: ResolvedJob) -> float:
    """Attention scores of the training step: forward, backward (twice a forward) and any
    recompute, over the tokens a sample really has."""
    passes = 3 + (1 if job.gradient_checkpointing else 0)
    return _attention_score_flops(job.arch, sample_len(job), passes)


def attention_flops_per_token(job: ResolvedJob) -> float:
    """The part of flops_per_token that is attention scores (run by FlashAttention, not GEMMs)."""
    step = step_attention_flops_per_token(job)
    if job.objective is Objective.sft:
        return step
    forwards = extra_forwards(job) * forward_attention_flops_per_token(job)
    return step * training_passes(job) + forwards


def sample_len(job: ResolvedJob) -> int:
    """Tokens a sample really has (its mean text length plus its image tokens): what attention
    spans and a micro-batch holds, for time; the peak stays at seq_len, the cap."""
    if job.mean_sample_len is None:
        return job.seq_len
    return min(job.seq_len, job.mean_sample_len + job.image_tokens)


def vision_flops_per_token(job: ResolvedJob) -> float:
    """The vision tower's FLOPs per trained token: 2 per tower weight per patch forward, 6 when
    the tower is trained, over the sample's images, spread over the sample's tokens
    (architectures-2026.md §7)."""
    arch = job.arch
    if not job.images_per_sample or not arch.vision_params or not arch.vision_patches:
        return 0.0
    per_patch = (6 if job.train_vision_tower else 2) * arch.vision_params
    patches = job.images_per_sample * arch.vision_patches
    return per_patch * patches / sample_len(job)


def training_step_flops_per_token(job: ResolvedJob) -> float:
    """Training FLOPs per trained token (forward, backward and any recompute, the vision
    tower's included)."""
    arch = job.arch
    pass_factor = 6 if job.method == Method.full else 4
    blocks = _block_pass_factor(job) * active_block_params(arch)
    attention = step_attention_flops_per_token(job)
    logits = pass_factor * arch.hidden_size * arch.vocab_size
    return float(blocks + attention + logits + vision_flops_per_token(job))


# Routed experts' matmuls are many small GEMMs, each over the ≈ T·k/E tokens routed to one
# expert of a micro-batch of T tokens (architectures-2026.md §2.6: small per-expert GEMMs, the
# permute/unpermute around them and load imbalance are why MoE MFU is low). A GEMM over m tokens
# is taken to run at m / (m + MOE_HALF_RATE_TOKENS) of the dense rate: at 128 tokens half of
# it (Qwen3-30B-A3B at 2k tokens: 2048·8/128 = 128 per expert), near all of it past a few
# thousand (Mixtral-8x7B at 8k tokens: 2,048 per expert, 0.94). A stated prior [U], set so the
# dev set's one MoE throughput row (Mixtral-8x7B QLoRA on 2×A100, fms-acceleration) stays
# within 25 %; Megatron-Bridge's pre-training MFUs (12–24 % of peak for Qwen3/GPT-OSS MoE
# against 75 % dense) also carry all-to-all, counted here apart
# (visible_all_to_all_seconds_per_token).
MOE_HALF_RATE_TOKENS = 128.0


def expert_matmul_share(job: ResolvedJob) -> float:
    """The routed experts' GEMM rate relative to a dense GEMM's (MOE_HALF_RATE_TOKENS)."""
    arch = job.arch
    tokens_per_expert = (
        _tokens_per_micro_batch(job) * (arch.experts_per_token or 1) / (arch.num_experts or 1)
    )
    return tokens_per_expert / (tokens_per_expert + MOE_HALF_RATE_TOKENS)


# FlashAttention's attention kernels run below the GEMM rate: FlashAttention-2 forward +
# backward, causal, head dim 128, reaches ~190–200 TFLOP/s on an A100 (arXiv:2307.08691,
# Fig. 6 at 2k–16k tokens; ~62 % of 312) where cuBLAS GEMMs reach ~86 % (ml-engineering MAMF
# table): 0.72 of the matmul rate.
ATTENTION_KERNEL_RATE = 0.72


def kernel_mix_factor(job: ResolvedJob, total: float) -> float:
    """The job's matmul rate relative to a dense GEMM's: the FLOPs-weighted harmonic mean of
    the dense rate (projections, shared experts, head), ATTENTION_KERNEL_RATE (attention
    scores) and expert_matmul_share (routed experts). `total`: the job's flops_per_token."""
    attention = attention_flops_per_token(job)
    routed = routed_active_params(job.arch)
    expert = _block_pass_factor(job) * routed if routed else 0.0
    share = expert_matmul_share(job) if routed else 1.0
    seconds = total - expert - attention + expert / share + attention / ATTENTION_KERNEL_RATE
    return total / seconds


# FP8 GEMM speed-ups (architectures-2026.md §4.2: torchao 1.25× at 8B to 1.5× at 405B for
# large dense pre-training; gains need large GEMMs): large dense full fine-tunes 1.3, smaller
# dense 1.15, MoE experts and LoRA's frozen base 1.05; QLoRA's 4-bit base is dequantised to
# bf16 for its matmuls, so none.
FP8_SPEEDUP_LARGE_DENSE = 1.3
FP8_SPEEDUP_DENSE = 1.15
FP8_SPEEDUP_SMALL_GEMMS = 1.05
FP8_LARGE_FROM_PARAMS_B = 30.0


def fp8_speedup(job: ResolvedJob) -> float:
    if job.precision is not Precision.fp8 or job.method is Method.qlora:
        return 1.0
    if job.arch.is_moe or job.method is Method.lora:
        return FP8_SPEEDUP_SMALL_GEMMS
    if job.arch.params_b >= FP8_LARGE_FROM_PARAMS_B:
        return FP8_SPEEDUP_LARGE_DENSE
    return FP8_SPEEDUP_DENSE


def all_to_all_bytes_per_token(job: ResolvedJob) -> float:
    """Bytes each GPU sends and receives per token in all-to-all: EP's and CP's together."""
    return expert_all_to_all_bytes_per_token(job) + context_all_to_all_bytes_per_token(job)


def _exchanges(job: ResolvedJob) -> int:
    """All-to-all exchanges per layer per token: forward and backward, each way (6 with a
    recomputed forward)."""
    return 6 if job.gradient_checkpointing else 4


def expert_all_to_all_bytes_per_token(job: ResolvedJob) -> float:
    """EP's dispatch and combine (architectures-2026.md §2.6): 4·k·h·b·(EP−1)/EP per MoE layer
    per token over forward and backward (6 with a recomputed forward), k copies of the hidden
    state to the ranks holding its experts. Once the EP group spans nodes, what crosses the
    slower inter-node link is one copy per remote node the token's experts sit on, which the
    receiving node fans out over NVLink (DeepSeek-V3 report, arXiv:2412.19437 §3.2.2: "IB
    first, then NVLink forwarding"; DeepEP's internode kernels): for k experts spread evenly
    over n nodes, n·(1 − (1 − 1/n)^k) nodes are hit, (n − 1)/n of them remote."""
    arch, ep = job.arch, job.expert_parallel
    if ep <= 1 or not arch.moe_layers:
        return 0.0
    element = BYTES_PER_ELEMENT.get(job.precision, MIXED_PRECISION_BYTES)
    k = arch.experts_per_token or 1
    copies = k * (ep - 1) / ep
    if ep > GPUS_PER_NODE:
        nodes = ep / GPUS_PER_NODE
        copies = nodes * (1 - (1 - 1 / nodes) ** k) * (nodes - 1) / nodes
    return _exchanges(job) * copies * arch.hidden_size * element * arch.moe_layers


def context_all_to_all_bytes_per_token(job: ResolvedJob) -> float:
    """Context parallelism's (DeepSpeed Ulysses, arXiv:2309.14509): q, k, v in and the attention
    output back, 4 all-to-alls of h·b·(CP−1)/CP per layer per pass over forward and backward.
    Attention waits for them, so they do not overlap the matmuls."""
    arch, cp = job.arch, job.context_parallel
    if cp <= 1:
        return 0.0
    element = BYTES_PER_ELEMENT.get(job.precision, MIXED_PRECISION_BYTES)
    passes = _exchanges(job) // 2
    return passes * 4 * arch.hidden_size * element * arch.num_layers * (cp - 1) / cp


def _activation_passes(job: ResolvedJob) -> int:
    """Forwards' worth of per-token work in a training step: the forward, backward
    (BACKWARD_TRAFFIC_FACTOR forwards) and the recompute."""
    return 1 + BACKWARD_TRAFFIC_FACTOR + (1 if job.gradient_checkpointing else 0)


def _weight_passes(job: ResolvedJob) -> int:
    """Passes over the weights per micro-batch: forward, backward, and the recompute."""
    return 3 if job.gradient_checkpointing else 2


def _tokens_per_micro_batch(job: ResolvedJob) -> int:
    return sample_len(job) * job.micro_batch


@cache
def touched_expert_share(arch: ModelArch, routed_tokens: int) -> float:
    """Expected share of a MoE layer's routed experts that `routed_tokens` token visits touch:
    1 − (1 − k/E)^T for T tokens each picking k of E experts (HF and Megatron routing is
    dropless, architectures-2026.md §2.5; routing taken as balanced). A micro-batch of a few
    hundred tokens touches nearly every expert, so its passes read (and QLoRA dequantises)
    every expert's weights, not only the k a token uses; one decode token touches k."""
    if not arch.is_moe or not arch.num_experts:
        return 1.0
    return 1.0 - (1.0 - (arch.experts_per_token or 1) / arch.num_experts) ** routed_tokens


def _local_routed_params(job: ResolvedJob) -> float:
    """Routed-expert weights one GPU's passes read per micro-batch: the experts its EP rank
    holds (E/EP, architectures-2026.md §2.6) that the tokens routed to them touch (each rank
    receives tokens from all EP ranks, so EP × its micro-batch's tokens)."""
    arch, ep = job.arch, max(1, job.expert_parallel)
    if not arch.is_moe:
        return 0.0
    routed_tokens = _tokens_per_micro_batch(job) * ep
    return arch.routed_expert_params * touched_expert_share(arch, routed_tokens) / ep


def _routed_held_quantised(job: ResolvedJob) -> bool:
    """Whether a QLoRA job's routed experts are held 4-bit: nn.Linear experts always, fused
    3-D experts only when the stack quantises them (stacks-2026.md, "experts quantized")."""
    return job.experts_quantized or not job.arch.fused_experts


def dequant_bytes_per_token(job: ResolvedJob) -> float:
    """Bytes moved to unpack the 4-bit weights, once per pass per micro-batch, per token: every
    quantised block linear, and of the routed experts those this GPU's micro-batch touches."""
    arch = job.arch
    if job.method != Method.qlora:
        return 0.0
    bytes_per_param = DEQUANT_BYTES_PER_PARAM[job.quant]
    quantised = float(non_routed_linear_params(arch))
    if _routed_held_quantised(job):
        quantised += _local_routed_params(job)
    return _weight_passes(job) * bytes_per_param * quantised / _tokens_per_micro_batch(job)


def activation_bytes_per_token(job: ResolvedJob) -> float:
    """Elementwise kernels' and the loss's memory traffic per token (see module docstring)."""
    arch = job.arch
    element_bytes = BYTES_PER_ELEMENT.get(job.precision, MIXED_PRECISION_BYTES)
    mlp_width = arch.token_mlp_width
    forward_elements = (
        ELEMENTWISE_ELEMENTS_PER_HIDDEN * arch.hidden_size
        + ELEMENTWISE_ELEMENTS_PER_INTERMEDIATE * mlp_width
    )
    layers = arch.num_layers * forward_elements * element_bytes * _activation_passes(job)
    return layers + LOSS_BYTES_PER_VOCAB_ENTRY * arch.vocab_size


def weight_read_bytes_per_token(job: ResolvedJob) -> float:
    """16-bit weights streamed once per pass per micro-batch: every block linear, the lm_head
    and the routed experts this GPU's micro-batch touches (_local_routed_params). QLoRA's
    quantised weights are in the dequant term; fused experts it leaves 16-bit are read here."""
    arch = job.arch
    element_bytes = BYTES_PER_ELEMENT.get(job.precision, MIXED_PRECISION_BYTES)
    routed = _local_routed_params(job)
    if job.method == Method.qlora:
        weights = 0.0 if _routed_held_quantised(job) else routed
    else:
        weights = non_routed_linear_params(arch) + routed + arch.hidden_size * arch.vocab_size
    return _weight_passes(job) * weights * element_bytes / _tokens_per_micro_batch(job)


def gathered_weight_share(job: ResolvedJob) -> float:
    """Share of the weights a sharded layout all-gathers and reduce-scatters per GPU: all of
    them, except under expert parallelism, where each rank keeps its E/EP experts local and
    FSDP shards them only over the ranks that hold the same experts (architectures-2026.md
    §2.6: torchtitan/NeMo AutoModel combine EP for the experts with FSDP for the rest)."""
    arch, ep = job.arch, job.expert_parallel
    if ep <= 1 or not arch.is_moe or not arch.total_params:
        return 1.0
    local = arch.total_params - arch.routed_expert_params * (1 - 1 / ep)
    return local / arch.total_params


def _tokens_per_optimizer_step(job: ResolvedJob) -> int:
    return _tokens_per_micro_batch(job) * job.grad_accum


def optimizer_bytes_per_token(job: ResolvedJob) -> float:
    """AdamW's state traffic on one GPU holding every weight; adapters' is negligible."""
    arch = job.arch
    if job.method != Method.full or job.cpu_offload:
        return 0.0
    return OPTIMIZER_STEP_BYTES_PER_PARAM * arch.total_params / _tokens_per_optimizer_step(job)


def offload_seconds_per_token(job: ResolvedJob, count: int) -> float:
    """What CPU offload costs per token. A LoRA/QLoRA job has next to no optimizer state, so
    what it offloads is its frozen parameters (FSDP's CPUOffload, ZeRO-3's offload_param): each
    GPU's shard comes over PCIe for every pass over the weights. A full fine-tune steps its
    optimizer on the CPU once per optimizer step (gradients out, weights back, CPU Adam).
    Reads no placement field (the market reuses a job's work across layouts)."""
    arch = job.arch
    if not job.cpu_offload:
        return 0.0
    params_per_gpu = arch.total_params / count
    seconds = 0.0
    if job.method != Method.full:
        fetch_s = params_per_gpu * _held_bytes_per_param(job) / (HOST_LINK_GBS * 1e9)
        seconds += _weight_passes(job) * fetch_s / _tokens_per_micro_batch(job)
    if job.method == Method.full:
        transfer_s = params_per_gpu * OFFLOAD_BYTES_PER_PARAM / (HOST_LINK_GBS * 1e9)
        step_s = transfer_s + params_per_gpu / CPU_ADAM_PARAMS_PER_S
        seconds += step_s / _tokens_per_optimizer_step(job)
    return seconds


def _held_bytes_per_param(job: ResolvedJob) -> float:
    """Bytes per parameter an offloaded shard is sent to the GPU in: the quantised base's for
    QLoRA (≈ 0.5), else 16-bit."""
    if job.method == Method.qlora and job.quant is not None:
        return quantised_bytes_per_weight(job.quant, double_quant=True)
    return 2.0


def memory_bytes_per_token(job: ResolvedJob) -> float:
    """Memory-bound traffic of every GPU per trained token: the training step's elementwise,
    loss and weight traffic, and for preference and RL jobs their other forwards' share of it
    and generation's decode traffic (post-training, below)."""
    activations, weights = activation_bytes_per_token(job), weight_read_bytes_per_token(job)
    step = activations + weights
    if job.objective is Objective.sft:
        return step
    forward = activations / _activation_passes(job) + weights / _weight_passes(job)
    return (
        step * training_passes(job)
        + extra_forwards(job) * forward
        + decode_bytes_per_token(job, ACHIEVED_BANDWIDTH_FRACTION)
    )


def stack_moe_rate(job: ResolvedJob) -> float:
    """The stack's MoE training rate relative to the Megatron-class one the MoE constants
    describe (planner/data/stack-*.json `moe_training_rate`): transformers' eager expert loops
    under DeepSpeed/FSDP for a full fine-tune without expert parallelism; 1 elsewhere."""
    if not job.arch.is_moe or job.expert_parallel > 1:
        return 1.0
    fact = method_fact(job.framework, "moe_training_rate", job.framework_version, job.method.value)
    if fact is None:
        return 1.0
    return float(fact.value)


# transformers' eager MoE forward visits each expert that got tokens in a Python loop
# (architectures-2026.md §2.5): torch.where over the routing mask (a device-to-host sync, so
# the GPU cannot run ahead of the host), index the tokens, gate, up, activation, product,
# down, index and apply the routing weight, cast, index_add_: ~12 eager ops per expert per
# forward, twice that in backward. Each eager op costs ~10 µs of host time (Python, the
# dispatcher and the CUDA launch; PyTorch's CUDA Graphs post, pytorch.org/blog/accelerating-
# pytorch-with-cuda-graphs, 2021: launch overheads of microseconds per kernel that graphs
# remove; H. He, "Making Deep Learning Go Brrrr", horace.io/brrr_intro.html, on overhead).
# The tiny per-expert GEMMs finish sooner, so the loop runs at the host's pace [uncertain:
# per-op cost depends on the host CPU and on hooks such as checkpointing's]. An expert linear
# LoRA wraps adds PEFT's dropout, A, B, scale and add (peft/tuners/lora/layer.py
# Linear.forward: 5 ops); a 4-bit one bitsandbytes' dequantize before its matmul (1 op).
EAGER_OPS_PER_EXPERT_FORWARD = 12
LORA_OPS_PER_LINEAR = 5
DEQUANT_OPS_PER_LINEAR = 1
EAGER_OP_S = 10e-6


def eager_ops_per_expert(job: ResolvedJob) -> int:
    """Eager ops of one expert's forward in transformers' loop, with its adapters and 4-bit
    weights (adapted and quantised as memory plans them). A stack that dequantises a whole
    layer's experts when the layer runs (`experts_dequantised_per_layer`: axolotl's
    parametrised 3-D experts, cached for the module's forward) adds no op per expert."""
    dequantised = (
        job.method is Method.qlora
        and _routed_held_quantised(job)
        and not job.experts_dequantised_per_layer
    )
    return _eager_ops(job.arch, job.lora_targets, job.experts_adapted, dequantised)


@cache
def _eager_ops(
    arch: ModelArch,
    lora_targets: tuple[str, ...] | str | None,
    experts_adapted: bool,
    dequantised: bool,
) -> int:
    ops = EAGER_OPS_PER_EXPERT_FORWARD
    targets = lora_target_names(lora_targets)
    for group in arch.linears:
        if not group.routed:
            continue
        if group.target in targets and (experts_adapted or not group.fused):
            ops += LORA_OPS_PER_LINEAR
        if dequantised:
            ops += DEQUANT_OPS_PER_LINEAR
    return ops


def expert_loop_seconds_per_token(job: ResolvedJob) -> float:
    """Host time of the eager expert loop per trained token, for stacks whose MoE models run
    transformers' loop (stack fact `moe_expert_loop`) without expert parallelism: every MoE
    layer visits the experts its micro-batch touches, in every forward (the recompute too)
    and backward (two forwards' worth of ops), and in the other forwards of preference and RL
    jobs. A fixed cost per micro-batch, so it weighs most on fast cards and short batches."""
    arch = job.arch
    if not arch.is_moe or job.expert_parallel > 1 or not arch.num_experts:
        return 0.0
    fact = method_fact(job.framework, "moe_expert_loop", job.framework_version, job.method.value)
    if fact is None or not fact.value:
        return 0.0
    tokens = _tokens_per_micro_batch(job)
    passes = _activation_passes(job) * training_passes(job) + extra_forwards(job)
    experts = arch.num_experts * touched_expert_share(arch, tokens)
    visits = arch.moe_layers * experts * passes
    return visits * eager_ops_per_expert(job) * EAGER_OP_S / tokens


def job_work(job: ResolvedJob) -> JobWork:
    flops = flops_per_token(job)
    method_utilisation = (
        UTILISATION[job.method] * kernel_mix_factor(job, flops) * stack_moe_rate(job)
    )
    if job.precision == Precision.fp32:
        method_utilisation *= FP32_RATE_FACTOR
    return JobWork(
        flops_per_token=flops,
        method_utilisation=method_utilisation,
        dequant_bytes_per_token=dequant_bytes_per_token(job),
        offload_seconds_per_token_one_gpu=offload_seconds_per_token(job, 1),
        memory_bytes_per_token=memory_bytes_per_token(job),
        optimizer_bytes_per_token_one_gpu=optimizer_bytes_per_token(job),
        trains_weights=job.method == Method.full,
        sync_seconds_per_token=weight_sync_seconds_per_token(job),
        host_seconds_per_token=expert_loop_seconds_per_token(job),
        fp8_speedup=fp8_speedup(job),
        all_to_all_bytes_per_token=all_to_all_bytes_per_token(job),
        expert_all_to_all_bytes_per_token=expert_all_to_all_bytes_per_token(job),
        expert_parallel=max(job.expert_parallel, job.context_parallel),
        gathered_share=gathered_weight_share(job),
    )


@cache
def _watts_per_tflops(chip_family: str) -> float | None:
    reference = POWER_REFERENCE_CARD.get(chip_family)
    if reference is None:
        return None
    card = gpu_by_key(reference[0])
    if card is None or card.tdp_w is None:
        return None
    return card.tdp_w / (card.bf16_tflops * reference[1])


def sustained_clock_fraction(gpu: GpuSpec) -> float:
    """Share of the datasheet peak the card's board power sustains under matmul load."""
    watts_per_tflops = _watts_per_tflops(gpu.chip_family)
    if watts_per_tflops is None or gpu.tdp_w is None:
        return 1.0
    return min(1.0, gpu.tdp_w / (gpu.bf16_tflops * watts_per_tflops))


def card_matmul_factor(gpu: GpuSpec) -> float:
    """The card's share of the A100-fitted method utilisation: its class and chip family."""
    return CARD_CLASS_FACTOR[gpu.card_class] * MATMUL_SHARE_VS_A100.get(gpu.chip_family, 1.0)


def scaling_link(gpu: GpuSpec) -> str:
    """Which SCALING_PER_DOUBLING figure the card's collectives get."""
    return "consumer" if gpu.card_class == "consumer" else gpu.link


class CardSpeed(NamedTuple):
    """A card's job-independent figures, from the functions above, derived once per card."""

    peak_flops_per_s: float  # datasheet dense peak
    matmul_factor: float  # card_matmul_factor
    clock_fraction: float  # sustained_clock_fraction
    achieved_bytes_per_s: float  # datasheet bandwidth × ACHIEVED_BANDWIDTH_FRACTION
    link: str  # scaling_link
    fp8: bool = False  # FP8 tensor cores a training stack uses (FP8_CHIP_FAMILIES)


# By id of the card, holding the card so that its id cannot be reused by another.
_card_speeds: dict[int, tuple[GpuSpec, CardSpeed]] = {}


def card_speed(gpu: GpuSpec) -> CardSpeed:
    """The card's CardSpeed; a plan asks for ~50 cards' speeds, so each is derived once."""
    known = _card_speeds.get(id(gpu))
    if known is not None and known[0] is gpu:
        return known[1]
    speed = CardSpeed(
        peak_flops_per_s=gpu.bf16_tflops * 1e12,
        matmul_factor=card_matmul_factor(gpu),
        clock_fraction=sustained_clock_fraction(gpu),
        achieved_bytes_per_s=gpu.bandwidth_gbs * 1e9 * ACHIEVED_BANDWIDTH_FRACTION,
        link=scaling_link(gpu),
        fp8=gpu.chip_family in FP8_CHIP_FAMILIES,
    )
    _card_speeds[id(gpu)] = (gpu, speed)
    return speed


def utilisation_on(work: JobWork, speed: CardSpeed) -> float:
    """Fraction of the card's datasheet peak the matmuls sustain (see module docstring)."""
    fp8 = work.fp8_speedup if speed.fp8 else 1.0
    return work.method_utilisation * fp8 * speed.matmul_factor * speed.clock_fraction


def scaling_efficiency(
    gpu: GpuSpec,
    count: int,
    sharding: Sharding | None,
    *,
    trains_weights: bool = True,
    gathered_share: float = 1.0,
) -> float:
    """Share of `count` × one card's throughput a multi-GPU run keeps."""
    return _scaling_over(card_speed(gpu).link, count, sharding, trains_weights, gathered_share)


# A handful of (link, count, layout) combinations recur in every plan.
@cache
def _scaling_over(
    link: str,
    count: int,
    sharding: Sharding | None,
    trains_weights: bool,
    gathered_share: float = 1.0,
) -> float:
    if count <= 1:
        return 1.0
    if sharding == Sharding.device_map:
        return 1.0 / count
    sharded = sharding in SHARDED
    volumes = ((2 if sharded else 0) + (1 if sharded else 2) * trains_weights) * gathered_share

    def kept_per_doubling(figure: float) -> float:
        return 1.0 - (1.0 - figure) * volumes / FULL_SHARDED_VOLUMES

    in_node = min(count, GPUS_PER_NODE)
    efficiency = kept_per_doubling(SCALING_PER_DOUBLING[link]) ** math.log2(in_node)
    if count > GPUS_PER_NODE:
        nodes = count / GPUS_PER_NODE
        efficiency *= kept_per_doubling(INTER_NODE_SCALING_PER_DOUBLING) ** math.log2(nodes)
    return efficiency


def matmul_rate(speed: CardSpeed) -> float:
    """FLOP/s the card's matmuls sustain per unit of method utilisation: a job's matmul time per
    token is its FLOPs ÷ (this × the method's utilisation), as compute_seconds_per_token says."""
    return speed.peak_flops_per_s * speed.matmul_factor * speed.clock_fraction


def compute_seconds_per_token(work: JobWork, speed: CardSpeed) -> float:
    """Per-GPU time of the matmuls."""
    return work.flops_per_token / (speed.peak_flops_per_s * utilisation_on(work, speed))


def memory_seconds_per_token(work: JobWork, gpu: GpuSpec, count: int) -> float:
    """Per-GPU time of the memory-bound kernels (elementwise, loss, weights, optimizer)."""
    return bandwidth_seconds_per_token(work, card_speed(gpu), count)


def bandwidth_seconds_per_token(work: JobWork, speed: CardSpeed, count: int) -> float:
    """memory_seconds_per_token for a card whose CardSpeed the caller holds."""
    moved_bytes = (
        work.memory_bytes_per_token
        + work.dequant_bytes_per_token
        + work.optimizer_bytes_per_token_one_gpu / count
    )
    return moved_bytes / speed.achieved_bytes_per_s


# Effective all-to-all bandwidth per GPU, GB/s: NVLink/NVSwitch (H100: 450 GB/s each way,
# all-to-all reaching under half of it), PCIe 4.0/5.0 through the host, consumer cards without
# P2P, and between nodes (400 Gb/s InfiniBand/RoCE per GPU at ~80 %).
ALL_TO_ALL_GBS = {"nvlink": 200.0, "pcie": 16.0, "consumer": 8.0}
INTER_NODE_GBS = 40.0
GPUS_PER_NODE = 8


def visible_all_to_all_seconds_per_token(
    work: JobWork, speed: CardSpeed, count: int, compute_s: float
) -> float:
    """The all-to-all time that adds to a step: CP's in full (attention waits for it); EP's
    only where it exceeds the matmul time `compute_s` it overlaps. Every stack that offers
    expert parallelism overlaps dispatch and combine with computation: DeepSeek-V3 technical
    report (arXiv:2412.19437) §3.2.1, all-to-all "fully overlapped" by DualPipe; DeepEP
    (github.com/deepseek-ai/DeepEP README: hook-based communication-computation overlap that
    holds no SMs), used by NeMo AutoModel's MoE rows ("TE + DeepEP", performance-summary.mdx);
    Megatron-Core's --overlap-moe-expert-parallel-comm (MoE README, "EP A2A overlap")."""
    if not work.all_to_all_bytes_per_token:
        return 0.0
    expert = work.expert_all_to_all_bytes_per_token
    context_s = _all_to_all_seconds(work.all_to_all_bytes_per_token - expert, work, speed, count)
    expert_s = _all_to_all_seconds(expert, work, speed, count)
    return context_s + max(0.0, expert_s - compute_s)


def _all_to_all_seconds(moved_bytes: float, work: JobWork, speed: CardSpeed, count: int) -> float:
    """All-to-all time per token on one GPU: `moved_bytes` over the link the larger group spans
    (between nodes once it is larger than one node of GPUS_PER_NODE)."""
    if not moved_bytes:
        return 0.0
    inter_node = min(count, work.expert_parallel) > GPUS_PER_NODE
    bandwidth = INTER_NODE_GBS if inter_node else ALL_TO_ALL_GBS[speed.link]
    return moved_bytes / (bandwidth * 1e9)


def tokens_per_s_on(work: JobWork, gpu: GpuSpec, count: int, sharding: Sharding | None) -> float:
    """Trained tokens per second for the whole job on `count` × `gpu`."""
    return tokens_per_s_at(work, card_speed(gpu), count, sharding)


def tokens_per_s_at(
    work: JobWork, speed: CardSpeed, count: int, sharding: Sharding | None
) -> float:
    """tokens_per_s_on for a card whose CardSpeed the caller holds (the market's cards).

    One GPU's time per token is its matmuls, its memory-bound kernels, its share of any CPU
    offload, weight sync, the eager expert loop's host time and the all-to-all the matmuls do
    not hide; the GPUs together keep `efficiency` of `count` × one GPU's rate.
    """
    # Most rows are one GPU, which keeps all of its rate: no scaling lookup for them.
    efficiency = (
        _scaling_over(speed.link, count, sharding, work.trains_weights, work.gathered_share)
        if count > 1
        else 1.0
    )
    compute_s = compute_seconds_per_token(work, speed)
    per_gpu_seconds_per_token = (
        compute_s
        + bandwidth_seconds_per_token(work, speed, count)
        + work.offload_seconds_per_token_one_gpu / count
        + work.sync_seconds_per_token
        + work.host_seconds_per_token
        + visible_all_to_all_seconds_per_token(work, speed, count, compute_s)
    )
    return count * efficiency / per_gpu_seconds_per_token


def estimate_throughput(
    job: ResolvedJob, gpu: GpuSpec, count: int, sharding: Sharding | None
) -> Throughput:
    """Trained tokens per second for the whole job on `count` × `gpu`, with its ingredients."""
    work = job_work(job)
    return Throughput(
        tokens_per_s=tokens_per_s_on(work, gpu, count, sharding),
        flops_per_token=work.flops_per_token,
        utilisation=utilisation_on(work, card_speed(gpu)),
        scaling_efficiency=scaling_efficiency(
            gpu,
            count,
            sharding,
            trains_weights=work.trains_weights,
            gathered_share=work.gathered_share,
        ),
    )


# What preference and RL fine-tuning add to the cost of one trained token.
#
# A trained token is one the policy's training step processes: for preference methods each of the
# chosen and rejected sequences; for GRPO/RLOO/PPO every generated completion with its prompt, so a
# dataset of D prompts trains D × num_generations × (prompt + completion) tokens. Per trained token
# (shared/docs/post-training.md §3.3; N = the policy's active block parameters):
#
# - the training step: as SFT (6N, 4N for adapters, +2N with checkpointing, attention, logits);
#   PPO trains policy and critic `PPO_EPOCHS` times over each rollout batch (TRL num_ppo_epochs,
#   LLaMA-Factory ppo_epochs);
# - no-grad forwards of a policy-sized model (2N + attention + logits each): DPO/KTO's reference
#   (once per epoch; precomputed log-probs run it once over the dataset, so 1/epochs), the
#   old-policy log-probs of online methods (always with vLLM: TRL's importance-sampling correction
#   is on by default; PPO always, for its rollout log-probs), their reference (beta ≠ 0), PPO's
#   value forward during the rollout;
# - a reward model's forward (2 N_rm) over every completion, when one is named;
# - generation: prefill and decode compute (2N per token) plus decode's memory traffic, the
#   bandwidth-bound part. Each decode step reads every weight once and the KV cache of the round's
#   sequences (which average prompt + completion/2 tokens), for `completion_len` steps (the longest
#   completion gates the round). Per trained token that is
#       C × (W + S × (P + C/2) × kv) / (S × (P + C)),
#   with S sequences per generation round per GPU. Decode reaches `DECODE_BANDWIDTH_FRACTION` of
#   the datasheet bandwidth, expressed as extra bytes at the trainer's ACHIEVED_BANDWIDTH_FRACTION;
# - weight sync to a separate vLLM server: the 16-bit model pushed over NCCL after every
#   optimizer step (LoRA merged first), at `WEIGHT_SYNC_GBS`.
# Generation and training run one after the other (TRL's synchronous loop), so their times add.

PPO_EPOCHS = 4
# [uncertain] docs/post-training.md §3.1 gives η ≈ 0.5–0.8 for decode's share of the datasheet
# bandwidth with a serving engine (vLLM: paged KV cache, CUDA graphs). HF generate pads the batch,
# launches every kernel from Python per token and has no CUDA graphs: taken as half of that.
DECODE_BANDWIDTH_FRACTION = {
    Rollout.vllm_colocate: 0.6,
    Rollout.vllm_server: 0.6,
    Rollout.hf: 0.3,
}
# NCCL weight push from trainer to a vLLM server: PCIe-class bandwidth between processes on
# different GPUs (TRL's vllm_group_port communicator) [uncertain: NVLink is faster].
WEIGHT_SYNC_GBS = 25.0
GENERATION_BYTES_PER_PARAM = 2.0


def training_passes(job: ResolvedJob) -> float:
    """Training steps per trained token: PPO's epochs over policy and critic, else 1."""
    return 2.0 * PPO_EPOCHS if job.objective is Objective.ppo else 1.0


def extra_forwards(job: ResolvedJob) -> float:
    """No-grad forwards of a policy-sized model per trained token (module docstring)."""
    objective = job.objective
    if objective is Objective.sft:
        return 0.0
    if objective not in ONLINE_OBJECTIVES:
        if objective in (Objective.dpo, Objective.kto) and not job.reference_model:
            return 1.0 / job.epochs  # precomputed once over the dataset
        return 1.0 if job.reference_model else 0.0
    old_policy = objective is Objective.ppo or job.rollout is not Rollout.hf
    value = objective is Objective.ppo
    return float(old_policy) + float(job.reference_model) + float(value)


def reward_flops_per_token(job: ResolvedJob) -> float:
    """A frozen reward model's forward over every scored token."""
    if job.reward_arch is None or job.objective not in ONLINE_OBJECTIVES:
        return 0.0
    return 2.0 * reward_model_params(job.reward_arch)


def generation_flops_per_token(job: ResolvedJob, block_params: int) -> float:
    """Prefill and decode compute: one forward's 2N per token of every sequence."""
    if job.objective not in ONLINE_OBJECTIVES:
        return 0.0
    return 2.0 * block_params


def sequences_per_round(job: ResolvedJob) -> int:
    """Completions one GPU generates per round: the job's stated generation batch over its GPUs
    (TRL's generation_batch_size; NeMo RL's num_prompts_per_step × num_generations_per_prompt;
    a vLLM engine decodes the whole round together by continuous batching), else TRL's default
    round per process (per_device_train_batch_size × steps_per_generation, which defaults to
    grad accumulation)."""
    if job.generation_batch is not None:
        return max(1, -(-job.generation_batch // job.num_gpus))
    return job.micro_batch * job.grad_accum


def decode_bytes_per_token(job: ResolvedJob, achieved_fraction: float) -> float:
    """Decode's memory traffic per trained token, scaled to the trainer's achieved bandwidth
    (module docstring)."""
    if job.objective not in ONLINE_OBJECTIVES or job.completion_len is None:
        return 0.0
    arch = job.arch
    prompt, completion = job.prompt_len or 0, job.completion_len
    sequences = sequences_per_round(job)
    # A decode step reads every expert the round's tokens touch: all of them once the round
    # holds more than a few E/k sequences (touched_expert_share).
    routed = arch.routed_expert_params * touched_expert_share(arch, sequences)
    block = non_routed_linear_params(arch) + routed
    weights = (block + arch.hidden_size * arch.vocab_size) * GENERATION_BYTES_PER_PARAM
    kv = sequences * (prompt + completion / 2) * kv_bytes_per_token(arch)
    per_round = completion * (weights + kv)
    efficiency = achieved_fraction / DECODE_BANDWIDTH_FRACTION[job.rollout]
    return per_round / (sequences * (prompt + completion)) * efficiency


def weight_sync_seconds_per_token(job: ResolvedJob) -> float:
    """Pushing the 16-bit model to a vLLM server once per optimizer step, per trained token of
    one GPU's share of the step."""
    if job.rollout is not Rollout.vllm_server:
        return 0.0
    seconds = job.arch.total_params * GENERATION_BYTES_PER_PARAM / (WEIGHT_SYNC_GBS * 1e9)
    return seconds / (sequences_per_round(job) * job.seq_len)
