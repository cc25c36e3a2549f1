"""After training: what the result weighs and what it takes to serve it.

- adapter: rank r on a linear (in, out) adds r·(in + out) parameters, saved in 16 bits, counted
  with the model's real shapes (GQA-narrow k/v, three SwiGLU matrices, every MoE expert);
- merged model: every parameter in 16 bits (a QLoRA adapter is merged into the 16-bit base);
- serving: the weights (16-bit; FP8; or 4-bit at ~4.5 bits per linear weight, MoE experts
  included as GGUF Q4, AWQ and MXFP4 store them, with embeddings and norms kept in 16 bits; or a
  native MXFP4 checkpoint's experts, gpt-oss) + one sequence's KV cache at the training context +
  the CUDA context. OpenAI: "gpt-oss-20b runs in 16 GB" (stacks-2026.md).
"""

from __future__ import annotations

from planner.catalog.architecture import linear_params
from planner.estimate.memory.components import (
    FP8_BYTES,
    MXFP4_BYTES,
    NF4_BYTES,
    adapter_params,
    kv_bytes_per_token,
)
from planner.estimate.memory.profiles import CUDA_CONTEXT_GIB
from planner.job.resolved import ResolvedJob, lora_target_names
from planner.messages import AFTER_TRAINING
from planner.plan import AfterTraining
from planner.spec import Method
from planner.units import GIB

BYTES_16BIT = 2
# Families whose released checkpoints store the routed experts in MXFP4 (transformers' mxfp4
# quantization docs: gpt-oss; attention, router, embeddings and head are not converted).
NATIVE_MXFP4_FAMILIES = frozenset({"gpt-oss", "gpt_oss"})
# Past this many hours a marketplace host is likely enough to be reclaimed that checkpoints must
# leave the instance.
MARKETPLACE_CHECKPOINT_HOURS = 8.0


def after_training(job: ResolvedJob, run_hours: float | None) -> AfterTraining:
    """Sizes of what the run produces and the memory to serve it; `run_hours` drives the
    checkpointing advice."""
    arch = job.arch
    # Every linear, fused 3-D experts included: serving stacks (llama.cpp's GGUF, AWQ, vLLM's
    # MXFP4/FP8 MoE kernels) quantise the experts, which are most of an MoE's weights.
    linear = linear_params(arch)
    other = arch.total_params - linear
    kv_and_context = kv_bytes_per_token(arch) * job.seq_len + CUDA_CONTEXT_GIB * GIB
    merged_bytes = arch.total_params * BYTES_16BIT
    four_bit_bytes = linear * NF4_BYTES + other * BYTES_16BIT
    fp8_bytes = linear * FP8_BYTES + other * BYTES_16BIT
    mxfp4_gib = None
    if arch.family in NATIVE_MXFP4_FAMILIES:
        experts = arch.routed_expert_params
        native = experts * MXFP4_BYTES + (arch.total_params - experts) * BYTES_16BIT
        mxfp4_gib = round((native + kv_and_context) / GIB, 2)
    notes = []
    adapter_mb = None
    if job.method != Method.full and job.lora_rank is not None:
        params = adapter_params(arch, job.lora_rank, lora_target_names(job.lora_targets))
        adapter_mb = round(params * BYTES_16BIT / 1e6, 1)
        notes.append(AFTER_TRAINING("adapter", adapter_mb=adapter_mb))
    if job.method == Method.qlora:
        notes.append(AFTER_TRAINING("qlora_merge"))
    if run_hours is not None and run_hours > MARKETPLACE_CHECKPOINT_HOURS:
        notes.append(AFTER_TRAINING("checkpoints", hours=run_hours))
    return AfterTraining(
        adapter_mb=adapter_mb,
        merged_model_gib=round(merged_bytes / GIB, 2),
        serve_bf16_gib=round((merged_bytes + kv_and_context) / GIB, 2),
        serve_4bit_gib=round((four_bit_bytes + kv_and_context) / GIB, 2),
        serve_fp8_gib=round((fp8_bytes + kv_and_context) / GIB, 2),
        serve_mxfp4_gib=mxfp4_gib,
        notes=notes,
    )
