"""Training throughput: trained tokens per second for a job on N cards of one kind.

time per token = FLOPs per token ÷ (dense BF16 peak × utilisation) + QLoRA dequantisation time,
then × N GPUs × a scaling efficiency. Pure arithmetic, no I/O: planning every card takes well
under a millisecond.

FLOPs per trained token (N = active linear parameters of the transformer blocks, so MoE counts
only the experts a token visits; h = hidden size, V = vocabulary, L = layers, s = sequence):
- full fine-tune 6·N (2N forward, 2N activation gradients, 2N weight gradients);
- LoRA/QLoRA 4·N: frozen weights get no weight gradients (adapter FLOPs are < 1 % and ignored);
- gradient checkpointing +2·N: one more forward of every block;
- attention scores 12·L·h·s (forward 4·L·h·s, backward twice that; +4·L·h·s with checkpointing),
  which matters from a few thousand tokens of context on;
- logits: the lm_head matmul, 6·h·V for full fine-tuning, 4·h·V when it is frozen.

Utilisation = UTILISATION[method] × CARD_CLASS_FACTOR[class] (× VENDOR_FACTOR for AMD), fitted on
the 18 dev rows of shared/data/vram_dev.jsonl that carry a measured `throughput_tokens_per_s`,
resolved with the planner's own defaults (bench/throughput.py refits and prints it). Each row's
implied utilisation is its measured tokens/s × FLOPs per token ÷ (peak × GPUs × scaling
efficiency), after taking out the modelled dequantisation time. The method figures are the
medians over the 14 rows on HBM datacenter cards (A100): full 0.68 (6 rows), LoRA 0.59 (4),
QLoRA 0.53 (4). A class factor is the geometric mean, over (source, card) groups so that
near-duplicate rows count once, of each group's median implied/method ratio: consumer 0.93 (one
RTX 4090 group), workstation 1.06 (an L40S group at ×0.43 and an RTX A6000 group at ×2.6: the
weakest part of the fit). AMD Instinct cards get 0.65, a stated prior rather than a fit:
ml-engineering's best measured matmul is 51–60 % of peak on MI300X/MI325X against ~80 % on H100.
The fit's median error factor is ×1.08 on the dev rows, against ×2.49 for a flat 25 %
utilisation (table in docs/readme/B.md).

HF Trainer's `train_tokens_per_second` is per device (fms-acceleration rows), torchtune's figure is
for the whole job: a 70B full fine-tune at 1,568 tokens/s per A100 would exceed the A100's peak.

CPU offload (full fine-tuning): the optimizer step runs on the CPU once per optimizer step, paying
the PCIe round trip of gradients and weights plus CPU Adam's rate (constants below).

QLoRA dequantisation: each pass over the frozen 4-bit weights reads 0.5 B/param, writes a 2-byte
copy and reads it again (≈ 4.5 B/param), bandwidth-bound, once per forward, backward and recompute
per micro-batch. It matters for short sequences and small micro-batches.

Multi-GPU: each doubling of the GPU count keeps SCALING_PER_DOUBLING of per-GPU throughput:
0.95 over NVLink/NVSwitch/Infinity Fabric, 0.88 over PCIe on datacenter and workstation cards,
0.80 on consumer cards (no P2P: FSDP/ZeRO-3 gathers go through host memory). fms-acceleration's
2×A100 LoRA row keeps 0.89 of its single-GPU rate (with half the micro-batch). `device_map`
(naive pipeline) runs one GPU at a time: N cards give one card's throughput.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cache

from planner.catalog.gpus import GpuSpec
from planner.catalog.models import ModelArch, linear_params_per_layer
from planner.spec import JobSpec, Method, Precision, Quant, Sharding

UTILISATION: dict[Method, float] = {Method.full: 0.68, Method.lora: 0.59, Method.qlora: 0.53}
CARD_CLASS_FACTOR = {"datacenter": 1.0, "workstation": 1.06, "consumer": 0.93}
VENDOR_FACTOR = {"AMD": 0.65}
SCALING_PER_DOUBLING = {"nvlink": 0.95, "pcie": 0.88, "consumer": 0.80}
# TF32 tensor cores run at half the BF16 rate on Ampere/Hopper.
FP32_RATE_FACTOR = 0.5
DEQUANT_BYTES_PER_PARAM = {Quant.nf4: 4.5, Quant.int4: 4.5, Quant.int8: 5.0}
# CPU offload of a full fine-tune's optimizer: bf16 gradients out and bf16 weights back over PCIe
# (~25 GB/s effective on PCIe 4.0 x16), and DeepSpeed's CPU Adam at ~2e9 parameters/s.
HOST_LINK_GBS = 25.0
OFFLOAD_BYTES_PER_PARAM = 4
CPU_ADAM_PARAMS_PER_S = 2e9


@dataclass(frozen=True, slots=True)
class Throughput:
    tokens_per_s: float  # the whole job, all GPUs together
    flops_per_token: float
    utilisation: float
    scaling_efficiency: float


@dataclass(frozen=True, slots=True)
class JobWork:
    """The card-independent cost of one trained token, computed once per job."""

    flops_per_token: float
    method_utilisation: float
    dequant_bytes_per_token: float
    offload_seconds_per_token_one_gpu: float


@cache
def active_block_params(arch: ModelArch) -> int:
    """Weights of the transformer blocks' linears a token passes through (MoE: routed experts)."""
    return arch.num_layers * linear_params_per_layer(arch, active_only=True)


def flops_per_token(spec: JobSpec, arch: ModelArch) -> float:
    """Training FLOPs per trained token (forward, backward and any recompute)."""
    block_params = active_block_params(arch)
    trains_weights = spec.method == Method.full
    pass_factor = 6 if trains_weights else 4
    recompute = bool(spec.gradient_checkpointing)
    attention_width = arch.num_heads * arch.head_dim
    seq_len = spec.seq_len or 1
    blocks = (pass_factor + (2 if recompute else 0)) * block_params
    attention = (12 + (4 if recompute else 0)) * arch.num_layers * attention_width * seq_len
    logits = pass_factor * arch.hidden_size * arch.vocab_size
    return float(blocks + attention + logits)


def dequant_bytes_per_token(spec: JobSpec, arch: ModelArch) -> float:
    """Bytes moved to unpack the 4-bit weights, once per pass per micro-batch, per token."""
    if spec.method != Method.qlora:
        return 0.0
    bytes_per_param = DEQUANT_BYTES_PER_PARAM[spec.quant or Quant.nf4]
    passes = 3 if spec.gradient_checkpointing else 2
    tokens_per_step = (spec.seq_len or 1) * (spec.micro_batch or 1)
    return passes * bytes_per_param * active_block_params(arch) / tokens_per_step


def offload_seconds_per_token(spec: JobSpec, arch: ModelArch, count: int) -> float:
    """Optimizer step on the CPU, once per optimizer step, for the weights this GPU trains.

    Adapters are a fraction of a percent of the weights, so only full fine-tuning pays.
    """
    if not spec.cpu_offload or spec.method != Method.full:
        return 0.0
    params_per_gpu = arch.total_params / count
    transfer_s = params_per_gpu * OFFLOAD_BYTES_PER_PARAM / (HOST_LINK_GBS * 1e9)
    step_s = transfer_s + params_per_gpu / CPU_ADAM_PARAMS_PER_S
    tokens_per_step = (spec.seq_len or 1) * (spec.micro_batch or 1) * (spec.grad_accum or 1)
    return step_s / tokens_per_step


def job_work(spec: JobSpec, arch: ModelArch) -> JobWork:
    method_utilisation = UTILISATION[spec.method]
    if spec.precision == Precision.fp32:
        method_utilisation *= FP32_RATE_FACTOR
    return JobWork(
        flops_per_token=flops_per_token(spec, arch),
        method_utilisation=method_utilisation,
        dequant_bytes_per_token=dequant_bytes_per_token(spec, arch),
        offload_seconds_per_token_one_gpu=offload_seconds_per_token(spec, arch, 1),
    )


def utilisation_on(work: JobWork, gpu: GpuSpec) -> float:
    """Fraction of the card's dense peak a run of this method sustains (see module docstring)."""
    card_factor = CARD_CLASS_FACTOR[gpu.card_class] * VENDOR_FACTOR.get(gpu.vendor, 1.0)
    return work.method_utilisation * card_factor


def scaling_efficiency(gpu: GpuSpec, count: int, sharding: Sharding | None) -> float:
    """Share of `count` × one card's throughput a multi-GPU run keeps."""
    if count <= 1:
        return 1.0
    if sharding == Sharding.device_map:
        return 1.0 / count
    link = "consumer" if gpu.card_class == "consumer" else gpu.link
    return SCALING_PER_DOUBLING[link] ** math.log2(count)


def per_gpu_seconds_per_token(work: JobWork, gpu: GpuSpec, count: int) -> float:
    return (
        work.flops_per_token / (gpu.bf16_tflops * 1e12 * utilisation_on(work, gpu))
        + work.dequant_bytes_per_token / (gpu.bandwidth_gbs * 1e9)
        + work.offload_seconds_per_token_one_gpu / count
    )


def tokens_per_s_on(work: JobWork, gpu: GpuSpec, count: int, sharding: Sharding | None) -> float:
    """Trained tokens per second for the whole job on `count` × `gpu`."""
    efficiency = scaling_efficiency(gpu, count, sharding)
    return count * efficiency / per_gpu_seconds_per_token(work, gpu, count)


def estimate_throughput(
    spec: JobSpec, arch: ModelArch, gpu: GpuSpec, count: int, sharding: Sharding | None
) -> Throughput:
    """Trained tokens per second for the whole job on `count` × `gpu`, with its ingredients."""
    work = job_work(spec, arch)
    return Throughput(
        tokens_per_s=tokens_per_s_on(work, gpu, count, sharding),
        flops_per_token=work.flops_per_token,
        utilisation=utilisation_on(work, gpu),
        scaling_efficiency=scaling_efficiency(gpu, count, sharding),
    )
