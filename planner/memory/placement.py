"""Per-GPU share of each memory component under a sharding strategy."""

from __future__ import annotations

from dataclasses import dataclass, replace

from planner.spec import Sharding


@dataclass(frozen=True, slots=True)
class Components:
    """Bytes by component (the keys of MemoryBreakdown, minus overhead)."""

    weights: float
    adapter: float
    gradients: float
    optimizer: float
    activations: float
    logits: float

    @property
    def allocated(self) -> float:
        return (
            self.weights
            + self.adapter
            + self.gradients
            + self.optimizer
            + self.activations
            + self.logits
        )


def per_gpu(
    job_total: Components,
    num_gpus: int,
    sharding: Sharding,
    cpu_offload: bool,
    gathered_bytes: float,
) -> Components:
    """What one GPU holds.

    ddp: everything replicated, plus DDP's flat gradient buckets (a second copy of the grads).
    zero2: gradients and optimizer state sharded; weights replicated.
    fsdp / zero3: weights, gradients and optimizer state sharded, plus `gathered_bytes` (the
    units FSDP gathers: the current and prefetched layer, and the root's embeddings/lm_head).
    device_map: layers split across GPUs run one after another: weights, training state and
    activations split; the last GPU also computes the logits.
    cpu_offload: optimizer state in host RAM (and, when sharded, the parameters and
    gradients too: only the gathered units and activations stay on the GPU).
    """
    n = num_gpus
    c = job_total
    if n == 1 or sharding is Sharding.none:
        share = c
    elif sharding is Sharding.ddp:
        share = replace(c, gradients=2 * c.gradients)
    elif sharding is Sharding.zero2:
        share = replace(c, gradients=c.gradients / n, optimizer=c.optimizer / n)
    elif sharding is Sharding.device_map:
        share = Components(
            weights=c.weights / n,
            adapter=c.adapter / n,
            gradients=c.gradients / n,
            optimizer=c.optimizer / n,
            activations=c.activations / n,
            logits=c.logits,
        )
    else:  # fsdp, zero3
        share = Components(
            weights=c.weights / n + gathered_bytes,
            adapter=c.adapter / n,
            gradients=c.gradients / n,
            optimizer=c.optimizer / n,
            activations=c.activations,
            logits=c.logits,
        )
    if not cpu_offload:
        return share
    if sharding in (Sharding.fsdp, Sharding.zero3) and n > 1:
        return replace(share, weights=gathered_bytes, adapter=0.0, gradients=0.0, optimizer=0.0)
    return replace(share, optimizer=0.0)
