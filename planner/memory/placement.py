"""Per-GPU share of each memory component under a sharding strategy."""

from __future__ import annotations

from dataclasses import dataclass, replace

from planner.spec import Sharding


@dataclass(frozen=True, slots=True)
class Components:
    """Bytes by component (the keys of MemoryBreakdown, minus overhead).

    The peak is either mid-backward (activations and logits alive) or inside the optimizer step
    (`step_scratch` alive instead); `peak_optimizer` charges the step's excess to the optimizer.
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
        return max(0.0, self.step_scratch - self.activations - self.logits)

    @property
    def allocated(self) -> float:
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
    job_total: Components,
    num_gpus: int,
    sharding: Sharding,
    cpu_offload: bool,
    gathered_layers_bytes: float,
    root_bytes: float,
) -> Components:
    """What one GPU holds.

    ddp: everything replicated, plus DDP's flat gradient buckets (a second copy of the grads).
    zero2: gradients and optimizer state sharded; weights replicated.
    fsdp / zero3: weights, gradients and optimizer state sharded; the current and prefetched
    layer are gathered (`gathered_layers_bytes`) and the root unit (embeddings, lm_head, norms:
    `root_bytes`) stays gathered from forward to backward.
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
        share = replace(
            c, gradients=c.gradients / n, optimizer=c.optimizer / n, step_scratch=c.step_scratch / n
        )
    elif sharding is Sharding.device_map:
        share = Components(
            weights=c.weights / n,
            adapter=c.adapter / n,
            gradients=c.gradients / n,
            optimizer=c.optimizer / n,
            activations=c.activations / n,
            logits=c.logits,
            step_scratch=c.step_scratch / n,
        )
    else:  # fsdp, zero3
        share = Components(
            weights=(c.weights - root_bytes) / n + root_bytes + gathered_layers_bytes,
            adapter=c.adapter / n,
            gradients=c.gradients / n,
            optimizer=c.optimizer / n,
            activations=c.activations,
            logits=c.logits,
            step_scratch=c.step_scratch / n,
        )
    if not cpu_offload:
        return share
    if sharding in (Sharding.fsdp, Sharding.zero3) and n > 1:
        return replace(
            share,
            weights=root_bytes + gathered_layers_bytes,
            adapter=0.0,
            gradients=0.0,
            optimizer=0.0,
            step_scratch=0.0,
        )
    return replace(share, optimizer=0.0, step_scratch=0.0)
