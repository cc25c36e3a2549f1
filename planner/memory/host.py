"""Host (CPU) RAM a job needs on its node: one figure, `MemoryEstimate.host_ram_gib`.

    host RAM = processes × per-process RSS
             + for a sharded full fine-tune, the whole 16-bit model gathered on rank 0's host to
               save a checkpoint (FSDP's FULL_STATE_DICT with offload_to_cpu, ZeRO-3's
               gather_16bit_weights_on_model_save); loading reads safetensors through the page
               cache, not the process's memory
             + offloaded trained state (DeepSpeed's estimator: 16 B per trained parameter with
               the optimizer offloaded, 18 B with the parameters too, × its 1.5 buffer factor;
               shared/docs/post-training.md §4)
             + a paged optimizer's state when it spills (CUDA managed memory)
             + checkpoints a stack offloads to host RAM (Unsloth: every layer's input, pinned)
    then, for online RL, 5 % headroom under Ray's kill line (0.95 of node memory).

Per-process RSS: a training process (Python, torch, CUDA libraries, dataloader) ≈ 6 GiB
[uncertain]; a process that also runs a rollout engine ≈ 11 GiB, what verl#224 measured per
rollout worker (8 × ~11 GB on a 96 GB host that ran out). A node holds up to 8 GPUs.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from planner.memory import components as comp
from planner.memory.profiles import GIB
from planner.spec import ONLINE_OBJECTIVES, Method, Sharding

if TYPE_CHECKING:
    from planner.defaults import ResolvedJob

TRAINING_PROCESS_GIB = 6.0
ROLLOUT_PROCESS_GIB = 11.0
GPUS_PER_NODE = 8
OFFLOADED_OPTIMIZER_BYTES_PER_PARAM = 16.0
OFFLOADED_PARAMS_AND_OPTIMIZER_BYTES_PER_PARAM = 18.0
DEEPSPEED_BUFFER_FACTOR = 1.5
RAY_HEADROOM = 1 / 0.95
# Sizes hosts are rented in (GB): the advice names the first that holds the job.
HOST_RAM_SIZES_GB = (64, 128, 256, 512, 1024, 2048, 4096)
# Below this a rented host of any GPU class has the RAM; above it, say what to rent.
HOST_RAM_ADVICE_FROM_GIB = 64.0


def host_ram_bytes(
    job: ResolvedJob, component_job: comp.Job, num_gpus: int, paged_per_gpu: float
) -> float:
    """The busiest node's host RAM (module docstring); `paged_per_gpu` is one GPU's paged
    optimizer state."""
    arch = job.arch
    gpus = min(num_gpus, GPUS_PER_NODE)
    nodes = math.ceil(num_gpus / GPUS_PER_NODE)
    online = job.objective in ONLINE_OBJECTIVES
    per_process = ROLLOUT_PROCESS_GIB if online else TRAINING_PROCESS_GIB
    total = gpus * per_process * GIB
    sharded_params = job.sharding in (Sharding.fsdp, Sharding.zero3)
    if sharded_params and job.method is Method.full:
        total += arch.total_params * 2.0
    trained = comp.trainable_params(arch, component_job)
    if job.cpu_offload:
        per_param = (
            OFFLOADED_PARAMS_AND_OPTIMIZER_BYTES_PER_PARAM
            if sharded_params
            else OFFLOADED_OPTIMIZER_BYTES_PER_PARAM
        )
        total += trained * per_param * DEEPSPEED_BUFFER_FACTOR / nodes
    total += paged_per_gpu * gpus
    if component_job.profile.offloads_checkpoints and job.gradient_checkpointing:
        checkpoints = arch.num_layers * 2.0 * arch.hidden_size * component_job.tokens
        total += gpus * checkpoints
    return total * (RAY_HEADROOM if online else 1.0)


def host_ram_advice(host_ram_gib: float) -> str | None:
    """What to rent when the job needs more host RAM than any GPU host comes with."""
    if host_ram_gib <= HOST_RAM_ADVICE_FROM_GIB:
        return None
    needed_gb = host_ram_gib * GIB / 1e9
    size = next((gb for gb in HOST_RAM_SIZES_GB if gb >= needed_gb), None)
    rent = f"rent a host with ≥ {size:,} GB RAM" if size else "spread it over more nodes"
    return f"needs ≈ {host_ram_gib:,.0f} GiB of host RAM: {rent}"
