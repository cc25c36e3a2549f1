"""After training: what the result weighs and what it takes to serve it.

- adapter: rank r on a linear (in, out) adds r·(in + out) parameters, saved in 16 bits, counted
  with the model's real shapes (GQA-narrow k/v, three SwiGLU matrices, every MoE expert);
- merged model: every parameter in 16 bits (a QLoRA adapter is merged into the 16-bit base);
- serving: the weights (16-bit, or 4-bit NF4 at ~4.5 bits per linear weight with embeddings and
  norms kept in 16 bits) + one sequence's KV cache at the training context + the CUDA context.
"""

from __future__ import annotations

from planner.catalog.models import ModelArch, linear_shapes
from planner.plan import AfterTraining
from planner.spec import ALL_LINEAR, JobSpec, LoraTarget, Method

GIB = float(2**30)
BYTES_16BIT = 2
NF4_BYTES_PER_WEIGHT = 4.5 / 8
SERVING_CONTEXT_GIB = 0.6
MARKETPLACE_CHECKPOINT_HOURS = 8.0
_ALL_TARGETS = tuple(target.value for target in LoraTarget)


def adapter_params(spec: JobSpec, arch: ModelArch) -> int:
    targets = spec.lora_targets
    names = _ALL_TARGETS if targets in (None, ALL_LINEAR) else [t.value for t in targets]
    shapes = linear_shapes(arch)
    per_layer = sum(
        (shapes[name][0] + shapes[name][1]) * shapes[name][2] for name in names if name in shapes
    )
    return (spec.lora_rank or 16) * per_layer * arch.num_layers


def kv_cache_bytes(arch: ModelArch, tokens: int) -> float:
    return 2 * arch.num_layers * arch.num_kv_heads * arch.head_dim * BYTES_16BIT * tokens


def after_training(spec: JobSpec, arch: ModelArch, run_hours: float | None) -> AfterTraining:
    """Sizes of what the run produces and the memory to serve it; `run_hours` drives the
    checkpointing advice."""
    linear = arch.num_layers * sum(i * o * n for i, o, n in linear_shapes(arch).values())
    other = arch.total_params - linear
    kv_and_context = kv_cache_bytes(arch, spec.seq_len or 2048) + SERVING_CONTEXT_GIB * GIB
    merged_bytes = arch.total_params * BYTES_16BIT
    four_bit_bytes = linear * NF4_BYTES_PER_WEIGHT + other * BYTES_16BIT
    notes = []
    adapter_mb = None
    if spec.method != Method.full:
        adapter_mb = round(adapter_params(spec, arch) * BYTES_16BIT / 1e6, 1)
        notes.append(
            f"The LoRA adapter is about {adapter_mb:,.0f} MB; serve it on the base model or merge "
            "it for a standalone model."
        )
    if spec.method == Method.qlora:
        notes.append(
            "A QLoRA adapter is usually merged into the 16-bit base (load the base in bf16, merge, "
            "save), not into the 4-bit weights; quantise the merged model afterwards if needed."
        )
    if run_hours is not None and run_hours > MARKETPLACE_CHECKPOINT_HOURS:
        notes.append(
            f"This run takes about {run_hours:.0f} h: marketplace hosts can be reclaimed or fail, "
            "so save checkpoints regularly to storage you control (object storage or the Hub), "
            "not only the instance disk."
        )
    return AfterTraining(
        adapter_mb=adapter_mb,
        merged_model_gib=round(merged_bytes / GIB, 2),
        serve_bf16_gib=round((merged_bytes + kv_and_context) / GIB, 2),
        serve_4bit_gib=round((four_bit_bytes + kv_and_context) / GIB, 2),
        notes=notes,
    )
