"""Per-GPU share of each memory component under a sharding strategy."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from planner.catalog.models import ModelArch, linear_params_per_layer
from planner.memory import components as comp
from planner.memory.profiles import ZERO3_SUB_GROUP_ELEMENTS
from planner.spec import Method, Sharding


@dataclass(frozen=True, slots=True)
class Components:
    """Bytes by component (the keys of MemoryBreakdown, minus overhead).

    The peak is either mid-backward (activations and logits alive) or inside the optimizer step
    (`step_scratch` alive instead); the breakdown charges the step's excess to the optimizer.
    """

    weights: float
    adapter: float
    gradients: float
    optimizer: float
    activations: float
    logits: float
    step_scratch: float = 0.0

    @property
    def step_excess(self) -> float:
        """What the optimizer step allocates beyond the activations and logits it replaces."""
        return max(0.0, self.step_scratch - self.activations - self.logits)

    @property
    def allocated(self) -> float:
        """Peak allocated: the state that lives all step plus the larger of the backward
        transients (activations + logits) and the step's scratch."""
        return (
            self.weights
            + self.adapter
            + self.gradients
            + self.optimizer
            + self.step_excess
            + self.activations
            + self.logits
        )


def per_gpu(
    arch: ModelArch, job: comp.Job, job_total: Components, num_gpus: int, cpu_offload: bool
) -> Components:
    """What the busiest GPU holds when `job_total` (the whole job on one device) is spread over
    `num_gpus` GPUs by `job.sharding`. On one GPU, DeepSpeed and FSDP still allocate their
    buckets and gathered copies (FSDP's NO_SHARD still casts each unit to 16 bits).

    ddp: everything replicated, plus DDP's flat gradient buckets (a second copy of the grads:
    gradient_as_bucket_view is off in DDP, Accelerate and HF Trainer).
    zero2: gradients and optimizer state (with DeepSpeed's fp32 master) sharded, weights
    replicated, plus the reduce bucket.
    fsdp / zero3: weights, gradients and optimizer state sharded, plus what is gathered
    (`comp.fsdp_gathered_bytes`, `comp.zero3_gathered_bytes`); ZeRO-3's fp32 gradients at the
    step exist one sub-group at a time.
    device_map: a naive pipeline (`pipeline_stage`).
    cpu_offload: optimizer state in host RAM; ZeRO-Offload (zero2) also the gradient
    partitions; with fsdp/zero3 the parameters and gradients too, so the GPU keeps only what
    is gathered and the activations.
    """
    n = num_gpus
    c = job_total
    sharding = job.sharding
    if sharding is Sharding.device_map and n > 1:
        share = pipeline_stage(arch, job, c, n)
    elif sharding in (Sharding.none, Sharding.device_map):
        share = c
    elif sharding is Sharding.ddp:
        share = c if n == 1 else replace(c, gradients=2 * c.gradients)
    elif sharding is Sharding.zero2:
        share = replace(
            c,
            gradients=c.gradients / n + comp.zero2_bucket_bytes(job),
            optimizer=c.optimizer / n,
            step_scratch=c.step_scratch / n,
        )
    else:
        share = _fully_sharded(arch, job, c, n)
    if sharding is Sharding.zero3 and job.deepspeed:
        share = replace(share, step_scratch=min(share.step_scratch, ZERO3_SUB_GROUP_ELEMENTS * 4.0))
    if not cpu_offload:
        return share
    if sharding in (Sharding.fsdp, Sharding.zero3):
        gathered_weights, gathered_gradients = _gathered(arch, job)
        return replace(
            share,
            weights=gathered_weights,
            adapter=0.0,
            gradients=gathered_gradients,
            optimizer=0.0,
            step_scratch=0.0,
        )
    if sharding is Sharding.zero2:
        share = replace(share, gradients=comp.zero2_bucket_bytes(job))
    return replace(share, optimizer=0.0, step_scratch=0.0)


def _gathered(arch: ModelArch, job: comp.Job) -> tuple[float, float]:
    if job.sharding is Sharding.zero3:
        return comp.zero3_gathered_bytes(arch, job)
    return comp.fsdp_gathered_bytes(arch, job)


def _fully_sharded(arch: ModelArch, job: comp.Job, c: Components, n: int) -> Components:
    """FSDP FULL_SHARD / ZeRO-3: weights, adapter, gradients and optimizer state / n, plus
    what a rank holds gathered; every rank dequantises, so those buffers are not divided."""
    gathered_weights, gathered_gradients = _gathered(arch, job)
    dequant = comp.dequant_buffer_bytes(arch, job)
    return Components(
        weights=(c.weights - dequant) / n + gathered_weights,
        adapter=c.adapter / n,
        gradients=c.gradients / n + gathered_gradients,
        optimizer=c.optimizer / n,
        activations=c.activations,
        logits=c.logits,
        step_scratch=c.step_scratch / n,
    )


def pipeline_stage(arch: ModelArch, job: comp.Job, c: Components, n: int) -> Components:
    """The busiest GPU of device_map="auto" (a naive pipeline: GPUs run one after another).

    Layers are split evenly (ceil(L/n) on the fullest GPU), each GPU holding their weights,
    training state and activations; one end also holds an embedding matrix (input embedding
    first, lm_head last; tied, both on the first) and the GPU with the lm_head computes the
    logits. QLoRA's dequantisation buffers appear on every GPU. With checkpointing the
    recomputed layer's tensors are on whichever GPU runs it: counted in full.
    """
    layers = math.ceil(arch.num_layers / n)
    shared = comp.shared_weight_bytes(arch, job)
    dequant = comp.dequant_buffer_bytes(arch, job)
    layer_weights = max(0.0, c.weights - shared - dequant) / arch.num_layers
    edge = shared if arch.tie_embeddings else shared / 2
    if job.method is Method.full:
        one_matrix = arch.vocab_size * arch.hidden_size
        stage_params = layers * linear_params_per_layer(arch) + one_matrix
        trained_fraction = min(1.0, stage_params / arch.total_params)
    else:
        trained_fraction = layers / arch.num_layers
    return Components(
        weights=layers * layer_weights + edge + dequant,
        adapter=c.adapter * trained_fraction,
        gradients=c.gradients * trained_fraction,
        optimizer=c.optimizer * trained_fraction,
        activations=comp.activation_bytes(arch, job, layers),
        logits=c.logits,
        step_scratch=c.step_scratch * trained_fraction,
    )
