"""Host (CPU) RAM a job needs on its node: one figure, `MemoryEstimate.host_ram_gib`.

    host RAM = processes × per-process RSS
             + the larger of what loading holds (`loading_bytes`) and, for a sharded full
               fine-tune, the whole 16-bit model gathered on rank 0's host to save a checkpoint
               (FSDP's FULL_STATE_DICT with offload_to_cpu, ZeRO-3's
               gather_16bit_weights_on_model_save)
             + offloaded trained state (DeepSpeed's estimator: 16 B per trained parameter with
               the optimizer offloaded, 18 B with the parameters too, × its 1.5 buffer factor;
               shared/docs/post-training.md §4)
             + a paged optimizer's state when it spills (CUDA managed memory)
             + offloaded activations (activation offloading, Unsloth's default: the
               checkpointed layer inputs, or all but the layers in flight, pinned)
             + a sleeping colocated vLLM engine's weights (sleep mode level 1 keeps them in
               CPU RAM: each GPU's 1/TP of the 16-bit model; vLLM's sleep-mode docs)
    then, for online RL, 5 % headroom under Ray's kill line (0.95 of node memory).

Per-process RSS: a training process (Python, torch, CUDA libraries, dataloader) ≈ 6 GiB
[uncertain]; a process that also runs a rollout engine ≈ 11 GiB, what verl#224 measured per
rollout worker (8 × ~11 GB on a 96 GB host that ran out). A node holds up to 8 GPUs.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, NamedTuple

from planner.catalog.models import largest_linear
from planner.estimate.memory import components as comp
from planner.estimate.memory.profiles import GIB
from planner.messages import CARDS
from planner.spec import ONLINE_OBJECTIVES, Method, Precision, Sharding

if TYPE_CHECKING:
    from planner.job.resolved import ResolvedJob

TRAINING_PROCESS_GIB = 6.0
ROLLOUT_PROCESS_GIB = 11.0
GPUS_PER_NODE = 8
OFFLOADED_OPTIMIZER_BYTES_PER_PARAM = 16.0
OFFLOADED_PARAMS_AND_OPTIMIZER_BYTES_PER_PARAM = 18.0
DEEPSPEED_BUFFER_FACTOR = 1.5
# save_pretrained's default max_shard_size ("5GB"): what a process reads at a time when it
# loads straight onto the GPU.
CHECKPOINT_SHARD_BYTES = 5e9
RAY_HEADROOM = 1 / 0.95
# Sizes hosts are rented in (GB): the advice names the first that holds the job.
HOST_RAM_SIZES_GB = (64, 128, 256, 512, 1024, 2048, 4096)
# Below this a rented host of any GPU class has the RAM; above it, say what to rent.
HOST_RAM_ADVICE_FROM_GIB = 64.0


class HostRam(NamedTuple):
    """The busiest node's host RAM, and the part of it that loading the checkpoints holds
    (0 when saving the gathered checkpoint needs more)."""

    total_bytes: float
    loading_bytes: float


def host_ram_bytes(
    job: ResolvedJob, component_job: comp.Job, num_gpus: int, paged_per_gpu: float
) -> HostRam:
    """The busiest node's host RAM (module docstring); `paged_per_gpu` is one GPU's paged
    optimizer state."""
    arch = job.arch
    gpus = min(num_gpus, GPUS_PER_NODE)
    nodes = math.ceil(num_gpus / GPUS_PER_NODE)
    online = job.objective in ONLINE_OBJECTIVES
    per_process = ROLLOUT_PROCESS_GIB if online else TRAINING_PROCESS_GIB
    total = gpus * per_process * GIB
    sharded_params = job.sharding in (Sharding.fsdp, Sharding.zero3)
    saving = arch.total_params * 2.0 if sharded_params and job.method is Method.full else 0.0
    loading = loading_bytes(job, component_job, gpus)
    total += max(saving, loading)
    trained = comp.trainable_params(arch, component_job)
    if job.cpu_offload:
        per_param = (
            OFFLOADED_PARAMS_AND_OPTIMIZER_BYTES_PER_PARAM
            if sharded_params
            else OFFLOADED_OPTIMIZER_BYTES_PER_PARAM
        )
        total += trained * per_param * DEEPSPEED_BUFFER_FACTOR / nodes
    total += paged_per_gpu * gpus
    total += gpus * comp.offloaded_activation_bytes(arch, component_job)
    if job.rollout_sleep:
        total += gpus * comp.rollout_weight_bytes(arch, component_job)
    headroom = RAY_HEADROOM if online else 1.0
    return HostRam(total * headroom, loading * headroom if loading >= saving else 0.0)


def loading_bytes(job: ResolvedJob, component_job: comp.Job, gpus: int) -> float:
    """Host RAM the node holds while its processes load the checkpoints, before training starts:
    the trained model, a separate reference copy, a PPO critic and a reward model, each in the
    dtype it is loaded in: 16-bit, or fp32 for fp32 training and for weights an fp32-master recipe
    keeps in fp32 (an FSDP stack that upcasts its shards does so on the GPU, after loading).

    - loaded straight onto the GPU (bitsandbytes quantises on the GPU and needs a device_map;
      stacks that pass a device_map; a naive pipeline): one checkpoint shard at a time
      (HF's 5 GB default max_shard_size) per process;
    - ZeRO-3 (HF's zero.Init, made when TrainingArguments come first as TRL, LLaMA-Factory and
      axolotl do): one shard per rank plus the largest layer in fp32 × 1.5 (DeepSpeed's
      estimator, zero_init=1: 4L·g × 1.5, shared/docs/post-training.md §4);
    - FSDP: the whole model on rank 0 only, the other ranks on the meta device
      (cpu_ram_efficient_loading, which the FSDP configs of Accelerate's docs, LLaMA-Factory and
      axolotl set, with sync_module_states broadcasting it);
    - otherwise (one GPU without a device_map: TRL's and HF Trainer's from_pretrained, then
      .to(device); DDP and ZeRO-2, which do not partition at load): every process holds the
      whole model (why free Colab's 12.7 GB of RAM cannot load a 7B in fp16 that way).
    """
    policy = job.arch.total_params
    models = policy * (1 + component_job.reference_copy + component_job.critic)
    if job.reward_arch is not None:
        models += job.reward_arch.total_params
    fp32_weights = job.precision is Precision.fp32 or (
        job.precision in (Precision.bf16_mixed, Precision.fp16_mixed)
        and (job.method is Method.full or component_job.profile.mixed_keeps_frozen_fp32)
    )
    load_bytes_per_param = 4.0 if fp32_weights else 2.0
    whole = models * load_bytes_per_param
    shard = min(whole, CHECKPOINT_SHARD_BYTES)
    if job.sharding is Sharding.zero3:
        fp32_largest_layer = 4.0 * largest_linear(job.arch) * DEEPSPEED_BUFFER_FACTOR
        return gpus * (shard + fp32_largest_layer)
    if job.sharding is Sharding.fsdp:
        return whole
    onto_gpu = (
        job.quant is not None
        or component_job.profile.loads_onto_gpu
        or job.sharding is Sharding.device_map
    )
    return gpus * shard if onto_gpu else gpus * whole


# Host RAM one node of a card class comes with, in GB: an 8-GPU datacenter node as NVIDIA's DGX
# H100/H200 ships it (2 TB, DGX H100 datasheet; DGX A100 1 TB standard, 2 TB option), a
# workstation-card server 512 GB and a consumer-card rental host 256 GB [uncertain: common
# marketplace configurations, no single source].
NODE_HOST_RAM_GB = {"datacenter": 2048, "workstation": 512, "consumer": 256}


def node_host_ram_gib(card_class: str) -> float:
    """The host RAM one node of this card class offers (NODE_HOST_RAM_GB), in GiB."""
    return NODE_HOST_RAM_GB.get(card_class, NODE_HOST_RAM_GB["consumer"]) * 1e9 / GIB


def host_ram_advice(host_ram_gib: float, loading_gib: float = 0.0) -> str | None:
    """What to rent when the job needs more host RAM than any GPU host comes with, and how to
    avoid most of it when most of it is model copies loaded on the CPU."""
    if host_ram_gib <= HOST_RAM_ADVICE_FROM_GIB:
        return None
    needed_gb = host_ram_gib * GIB / 1e9
    size = next((gb for gb in HOST_RAM_SIZES_GB if gb >= needed_gb), None)
    rent = CARDS("host_ram.rent", gb=size) if size else CARDS("host_ram.spread")
    loading = CARDS("host_ram.loading", gib=loading_gib) if loading_gib > host_ram_gib / 2 else ""
    return CARDS("host_ram", gib=host_ram_gib, rent=rent, loading=loading)
