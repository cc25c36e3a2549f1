"""Sum the components into a MemoryEstimate (allocated, reserved, required and the range a
user should plan with, `range_bytes`)."""

from __future__ import annotations

import math
from dataclasses import replace
from functools import lru_cache
from typing import TYPE_CHECKING, NamedTuple

from planner.catalog.models import ModelArch
from planner.catalog.stacks import stack_fact
from planner.estimate.memory import components as comp
from planner.estimate.memory.host import host_ram_bytes
from planner.estimate.memory.placement import Components, loading_floor_bytes, per_gpu
from planner.estimate.memory.profiles import (
    CUDA_CONTEXT_GIB,
    GIB,
    NCCL_BUFFERS_GIB,
    PROFILES,
)
from planner.job.resolved import lora_target_names
from planner.plan import MemoryBreakdown, MemoryEstimate
from planner.spec import (
    PREFERENCE_OBJECTIVES,
    Framework,
    Method,
    Objective,
    Precision,
    Rollout,
    Sharding,
)

if TYPE_CHECKING:  # annotations only
    from planner.job.resolved import ResolvedJob
    from planner.spec import JobSpec


# The range a user should plan with (range_bytes' docstring says how it is calibrated).
BELOW_ALLOCATED_LOG = 0.12
ABOVE_REQUIRED_LOG = 0.26
UNSTATED_INPUT_LOG = 0.05
UNPACKED_CAP_LOG = 0.05
GENERIC_SHAPE_LOG = math.log(2.0)
# Inputs that move a peak by tens of percent when guessed wrong.
WEIGHTY_INPUTS = ("framework", "gradient_checkpointing", "micro_batch")


def unstated_inputs(raw: JobSpec) -> int:
    """How many of WEIGHTY_INPUTS the user left to the defaults."""
    return sum(getattr(raw, name) is None for name in WEIGHTY_INPUTS)


def range_bytes(
    raw: JobSpec, allocated: float, required: float, paged_share: float, generic: bool = False
) -> tuple[float, float]:
    """(low, high) bytes of the measured peak's 90 % interval for the job as the user said it
    (`generic`: the model is planned from a generic shape of its stated size).

    A calibrated 90 % interval for the measured peak, however the peak is read (torch's
    max_memory_allocated, max_memory_reserved, or nvidia-smi):

        low  = peak allocated × exp(−(BELOW_ALLOCATED_LOG + widening_low))
        high = required (≈ nvidia-smi) × exp(ABOVE_REQUIRED_LOG + widening_high)
               + paged optimizer state

    The two constants are the ones for which the range holds the measured peak of 90 % of the
    rows of shared/data/vram_dev.jsonl (bench/accuracy.py prints the coverage; 2026-12-01: 90 %
    of 82 rows), rows whose stack and flags are stated. Where the job leaves an input unstated
    the range widens, a stated prior rather than a fit (the dev rows state nearly everything):
    each unstated input that moves the peak by tens of percent (the stack, gradient
    checkpointing, the micro-batch) widens both sides by UNSTATED_INPUT_LOG; unpacked data,
    whose `seq_len` is only a cap on lengths that vary, widens the low side by UNPACKED_CAP_LOG
    (most batches are shorter than the cap). A model planned from a generic shape (its size
    stated, its config unknown) widens both sides by GENERIC_SHAPE_LOG: the shape guesses the
    vocabulary and widths, and the catalog's vocabularies run from 32k to 262k around the
    generic 128,256 (×2 either way), which moves small models' embeddings and logits most.
    """
    widening = UNSTATED_INPUT_LOG * unstated_inputs(raw) + (GENERIC_SHAPE_LOG if generic else 0.0)
    low_log = BELOW_ALLOCATED_LOG + widening + (0.0 if raw.packing else UNPACKED_CAP_LOG)
    high_log = ABOVE_REQUIRED_LOG + widening
    return allocated * math.exp(-low_log), required * math.exp(high_log) + paged_share


# Layouts whose gradients are plain tensors set to None after every step (PyTorch ≥ 2.0's
# zero_grad default, HF Trainer's model.zero_grad(), torchtune's zero_grad(set_to_none=True));
# FSDP's sharded gradients and a naive pipeline's (one process) too. DDP's buckets and
# DeepSpeed's gradient partitions are allocated once and persist.
GRADIENTS_FREED_SHARDINGS = (Sharding.none, Sharding.fsdp, Sharding.device_map)


def component_job(job: ResolvedJob, num_gpus: int, sharding: Sharding) -> comp.Job:
    """The fields the components read, from a resolved job laid out on `num_gpus` GPUs by
    `sharding`. A bf16 full fine-tune under FSDP in a stack that upcasts trained parameters (HF
    Trainer via Accelerate) is mixed precision: fp32 shards, bf16 gathers; under FSDP2 a stack
    that shards the loaded dtype (axolotl: `fsdp2_keeps_param_dtype`) keeps bf16 shards."""
    profile = PROFILES[job.framework]
    fsdp2 = sharding is Sharding.fsdp and job.fsdp_version == 2
    # FP8 training keeps bf16 weights, gradients and optimizer state (only GEMMs run in FP8).
    precision = Precision.bf16 if job.precision is Precision.fp8 else job.precision
    if (
        sharding is Sharding.fsdp
        and profile.fsdp_upcasts_trainable_fp32
        and not (fsdp2 and profile.fsdp2_keeps_param_dtype)
        and job.method is Method.full
        and precision is Precision.bf16
    ):
        precision = Precision.bf16_mixed
    return comp.Job(
        method=job.method,
        quant=job.quant,
        precision=precision,
        optimizer=job.optimizer,
        lora_rank=job.lora_rank or 0,
        lora_targets=lora_target_names(job.lora_targets),
        **_rows(job),
        gradient_checkpointing=job.gradient_checkpointing,
        flash_attention=job.flash_attention,
        # One process steps the optimizer in backward: one GPU, or a naive pipeline's GPUs.
        optimizer_in_backward=profile.optimizer_in_backward_single_gpu
        and (num_gpus == 1 or sharding is Sharding.device_map)
        and job.optimizer is profile.optimizer_in_backward_with,
        gradients_freed_each_step=micro_batches_per_step(job, num_gpus) == 1
        and sharding in GRADIENTS_FREED_SHARDINGS,
        profile=profile,
        sharding=sharding,
        offload_activations=job.activation_offloading,
        tiled_mlp=job.tiled_mlp,
        fsdp2=fsdp2,
        **_post_training_fields(job, num_gpus),
        **_switch_fields(job),
    )


def _rows(job: ResolvedJob) -> dict[str, int]:
    """The micro-batch as the GPU holds it. Context parallelism splits every sequence over its
    group (DeepSpeed Ulysses shards the sequence outside attention and the heads inside it:
    1/CP either way). A padding-free stack (verl's use_remove_padding) concatenates a
    micro-batch's real tokens into one row: with a known mean sample length the longest batch
    is taken as one sample at the cap and the rest at the mean, never more than padded rows."""
    seq_len, micro_batch = job.seq_len, job.micro_batch
    packing = stack_fact(job.framework, "packing", job.framework_version)
    if (
        job.mean_sample_len is not None
        and micro_batch > 1
        and job.objective is Objective.sft
        and packing is not None
        and packing.padding_free
    ):
        sample = job.mean_sample_len + job.image_tokens
        seq_len, micro_batch = min(seq_len * micro_batch, seq_len + (micro_batch - 1) * sample), 1
    return {"seq_len": -(-seq_len // job.context_parallel), "micro_batch": micro_batch}


def micro_batches_per_step(job: ResolvedJob, num_gpus: int) -> int:
    """Micro-batches each optimizer step accumulates: the job's own figure when it says one (or
    its method sets one), else enough to make the stack recipe's global batch: a micro-batch
    larger than LitGPT's 16 // GPUs would fail its assertion, so a user who asks for one has
    raised the global batch with it, and the memory never falls as the micro-batch grows."""
    global_batch = PROFILES[job.framework].recipe_global_batch
    if job.raw.grad_accum is not None or job.grad_accum > 1 or global_batch is None:
        return job.grad_accum
    return max(1, math.ceil(global_batch / (num_gpus * job.micro_batch)))


def _switch_fields(job: ResolvedJob) -> dict[str, object]:
    """comp.Job's architecture switches; none when all are off, so the cache key of a job
    without them is unchanged."""
    fields: dict[str, object] = {}
    if job.expert_parallel > 1:
        fields["expert_parallel"] = job.expert_parallel
    if job.loss_kernel is not None:
        fields["loss_kernel"] = job.loss_kernel
    if job.experts_quantized:
        fields["experts_quantized"] = True
    if job.experts_dequantised_per_layer:
        fields["experts_dequantised_per_layer"] = True
    if job.experts_indexed:
        fields["experts_indexed"] = True
    if job.experts_adapted:
        fields["experts_adapted"] = True
    if job.train_vision_tower:
        fields["train_vision_tower"] = True
        fields["images_per_micro_batch"] = job.images_per_sample * job.micro_batch
    return fields


def _post_training_fields(job: ResolvedJob, num_gpus: int) -> dict[str, object]:
    """comp.Job's post-training fields; none for SFT, so an SFT job's cache key is unchanged."""
    if job.objective is Objective.sft:
        return {}
    online = job.completion_len is not None and job.num_generations is not None
    sequences_per_round = job.micro_batch * job.grad_accum
    # GRPO and RLOO ask the model for the completion's logits only (logits_to_keep); TRL's PPO
    # runs the plain forward over query + response and slices the logits afterwards.
    keeps_completion_logits = job.objective in (Objective.grpo, Objective.rloo)
    return {
        # A packed row of seq_len tokens holds whole pairs, chosen and rejected inside the one
        # length (ms-swift's packed DPO scripts: pairs packed into max_length rows); unpacked,
        # each pair is two padded rows ([2B, T], TRL's concatenated forward).
        "sequences_per_row": (
            2 if job.objective in PREFERENCE_OBJECTIVES and not job.packing else 1
        ),
        "logits_len": job.completion_len if online and keeps_completion_logits else 0,
        "reference_copy": job.reference_copy,
        "preference_loss": job.objective in PREFERENCE_OBJECTIVES,
        "critic": job.objective is Objective.ppo,
        "reward_arch": job.reward_arch,
        "rollout": job.rollout,
        "generation_tokens": sequences_per_round * job.seq_len if online else 0,
        "rollout_shares_weights": job.framework is Framework.unsloth,
        # An engine cannot span more GPUs than the layout has (the market tries fewer).
        "rollout_tensor_parallel": math.gcd(job.rollout_tensor_parallel or 1, num_gpus),
    }


@lru_cache(maxsize=4096)
def _job_components(arch: ModelArch, job: comp.Job) -> tuple[Components, float]:
    ramp, first, tail = comp.gradient_ramp_bytes(arch, job)
    total = Components(
        weights=comp.weights_bytes(arch, job),
        adapter=comp.adapter_bytes(arch, job),
        gradients=comp.gradient_bytes(arch, job),
        optimizer=comp.optimizer_bytes(arch, job),
        activations=comp.activation_bytes(arch, job),
        logits=comp.logits_bytes(arch, job),
        step_scratch=comp.optimizer_step_scratch_bytes(arch, job),
        reference=comp.reference_bytes(arch, job),
        reward=comp.reward_bytes(job),
        rollout=comp.rollout_bytes(arch, job),
        generation_scratch=comp.generation_scratch_bytes(arch, job),
        gradient_ramp=ramp,
        first_gradient=first,
        backward_tail=tail,
        layer_in_flight=comp.layer_in_flight_bytes(arch, job),
        head_activations=comp.head_activation_bytes(arch, job),
        autocast_cache=comp.autocast_cache_bytes(arch, job),
    )
    return total, comp.paged_optimizer_bytes(arch, job)


# One lookup per estimate (hashing the arch and job is a good part of an estimate's cost).
@lru_cache(maxsize=8192)
def _share(
    arch: ModelArch, job: comp.Job, num_gpus: int, cpu_offload: bool
) -> tuple[Components, float]:
    """The busiest GPU's components, and the whole job's paged optimizer bytes."""
    total, paged = _job_components(arch, job)
    return per_gpu(arch, job, total, num_gpus, cpu_offload), paged


class Peak(NamedTuple):
    """One GPU's peak, in bytes: what estimate_memory reports, before rounding. `generating` is
    what a colocated engine that sleeps through the update peaks at while it generates (the
    trainer's resident state + its minimum), allocated and reserved alike (0: no such phase)."""

    share: Components
    allocated: float
    reserved: float
    required: float
    paged_share: float
    generating: float = 0.0


def peak_bytes(
    job: ResolvedJob, num_gpus: int, sharding: Sharding, card_gib: float | None = None
) -> Peak:
    """allocated = weights + adapter + gradients + optimizer + the larger of activations + logits
        (mid-backward) and the optimizer step's scratch;
    reserved = allocated + the allocator's slack on the per-step tensors (activations, logits),
        larger when batches vary in length (no packing, or packed rows that close below the
        cap: comp.allocator_slack_fraction), and never below what loading left in the pool
        (`loading_floor_bytes`: FSDP2 sharding a QLoRA model loaded whole on every GPU);
    required (≈ nvidia-smi) = reserved + CUDA context (+ NCCL buffers when GPUs talk).
    On a card of `card_gib` a loss that sizes itself from free memory takes its share of it
    (`_card_sized_loss`). A job re-anchored on a user's measured peak has every component × its
    memory_scale.
    """
    talks = num_gpus > 1 and sharding not in (Sharding.none, Sharding.device_map)
    context = (CUDA_CONTEXT_GIB + (NCCL_BUFFERS_GIB if talks else 0.0)) * GIB
    cjob = component_job(job, num_gpus, sharding)
    share, paged = _share(job.arch, cjob, num_gpus, job.cpu_offload)
    # The allocator's slack is kept on the per-step tensors (activations and the fixed chunk's
    # logits); a loss grown into the card's free memory adds to them only as far as it is alive
    # at backward's start, for it never is beside the layer in flight.
    slack_logits = share.logits
    if card_gib is not None:
        share = _card_sized_loss(job.arch, cjob, share, card_gib * GIB - context)
    if job.memory_scale != 1.0:  # re-anchored on a measured peak (planner.anchor)
        share, paged = share.scaled(job.memory_scale), paged * job.memory_scale
        slack_logits *= job.memory_scale
    slack = comp.allocator_slack_fraction(job.packing, cjob.profile)
    update, generating = share, 0.0
    if job.rollout_sleep:
        kept = sharding not in GRADIENTS_FREED_SHARDINGS
        update, generating = share.asleep_in_update(), share.generating_phase(kept).allocated
    allocated = max(update.allocated, generating)
    per_step = update.activations + max(slack_logits, update.logits - update.logits_overlap)
    loading = loading_floor_bytes(job.arch, cjob, num_gpus)
    reserved = max(update.allocated + slack * per_step, generating, loading)
    splits_state = sharding not in (Sharding.none, Sharding.ddp)
    paged_share = paged / num_gpus if splits_state else paged
    return Peak(share, allocated, reserved, reserved + context, paged_share, generating)


def _card_sized_loss(
    arch: ModelArch, job: comp.Job, share: Components, pool_bytes: float
) -> Components:
    """`share` with the loss region a free-memory-sized loss picks on a card whose memory past
    the CUDA context is `pool_bytes` (comp.card_sized_loss_bytes): it measures what is free at
    the first forward, when the weights, the adapters and the forward's saved activations are
    resident and the gradients and optimizer state not yet allocated."""
    saved = share.activations - share.layer_in_flight
    free = pool_bytes - share.weights - share.adapter - saved
    loss = comp.card_sized_loss_bytes(arch, job, free)
    return share if loss is None else replace(share, logits=loss)


def required_gib(job: ResolvedJob, num_gpus: int, sharding: Sharding) -> float:
    """estimate_memory(...).required_gib without the rest of the estimate: the market compares
    this figure for several GPU counts per job and shows nothing else of those estimates.
    A colocated vLLM pool is not in it (it depends on the card: `rollout_pool_excess_gib`)."""
    return round(peak_bytes(job, num_gpus, sharding).required / GIB, 3)


def host_ram_gib(job: ResolvedJob, num_gpus: int, sharding: Sharding) -> float:
    """estimate_memory(...).host_ram_gib alone: the market checks an offloading job's host RAM
    at each layout against what one node of the card offers."""
    peak = peak_bytes(job, num_gpus, sharding)
    host = host_ram_bytes(job, component_job(job, num_gpus, sharding), num_gpus, peak.paged_share)
    return round(host.total_bytes / GIB, 1)


class RolloutPhase(NamedTuple):
    """What a colocated vLLM engine adds on each GPU, in GiB: its minimum (comp.rollout_bytes)
    and, when it sleeps through the update, the generating phase's required figure (the
    trainer's resident state + that minimum + the CUDA context; 0 when it stays awake)."""

    minimum_gib: float
    generating_required_gib: float = 0.0


def rollout_phase(job: ResolvedJob, num_gpus: int, sharding: Sharding) -> RolloutPhase:
    peak = peak_bytes(job, num_gpus, sharding)
    if not peak.generating:
        return RolloutPhase(peak.share.rollout / GIB)
    context = peak.required - peak.reserved
    return RolloutPhase(peak.share.rollout / GIB, (peak.generating + context) / GIB)


def rollout_pool_excess_gib(fraction: float | None, minimum_gib: float, card_gib: float) -> float:
    """What vLLM reserves beyond its minimum on a card of `card_gib`: gpu_memory_utilization is a
    share of the card's total memory (vLLM ≥ 0.7), whatever the batch needs; a pool smaller
    than the minimum cannot start, so the minimum stands."""
    if not fraction:
        return 0.0
    return max(0.0, fraction * card_gib - minimum_gib)


def required_on_card_gib(
    required_gib: float, phase: RolloutPhase, fraction: float | None, card_gib: float
) -> float:
    """Per-GPU memory on a card of `card_gib` with vLLM colocated: its pool is a share of the
    card. Awake, the pool's excess over the minimum is held through the update too; asleep,
    only while generating, next to the trainer's resident state."""
    excess = rollout_pool_excess_gib(fraction, phase.minimum_gib, card_gib)
    if phase.generating_required_gib:
        return max(required_gib, phase.generating_required_gib + excess)
    return required_gib + excess


def reserved_on_card(allocated: float, reserved: float, pool_limit: float) -> float:
    """The caching allocator's pool on a card whose memory past the CUDA context (and NCCL's
    buffers) is `pool_limit`: when cudaMalloc fails, PyTorch frees its cached unused blocks and
    retries before it raises an out-of-memory error (CUDACachingAllocator's
    release_cached_blocks), so max_memory_reserved never passes the card, however much slack
    the same job keeps on a larger one; it cannot fall below the live tensors. `required_gib`
    keeps the uncapped pool: the verdicts stay conservative, since a pool run at the card's
    edge frees and re-allocates every step and fragmentation can still end it."""
    return min(reserved, max(allocated, pool_limit))


def estimate_memory(
    job: ResolvedJob,
    num_gpus: int | None = None,
    sharding: Sharding | None = None,
    card_gib: float | None = None,
) -> MemoryEstimate:
    """Per-GPU memory of `job` on `num_gpus` GPUs sharded by `sharding` (default: the job's own
    layout; the sums are peak_bytes'), with the range a user should plan with. On a card of
    `card_gib` a colocated vLLM engine's pool is its gpu_memory_utilization share of the card,
    and the reserved pool is capped by what the card holds (`reserved_on_card`)."""
    count, layout = num_gpus or job.num_gpus, sharding or job.sharding
    cjob = component_job(job, count, layout)
    peak = peak_bytes(job, count, layout)
    # On the card, a loss sized from its free memory grows into it (`_card_sized_loss`): the
    # peaks there show it, while what the card must hold (required, the breakdown) does not.
    on_card = peak
    if card_gib is not None and comp.sizes_loss_from_free_memory(cjob):
        on_card = peak_bytes(job, count, layout, card_gib)
    grown = on_card.allocated - peak.allocated, on_card.reserved - peak.reserved
    share = peak.share
    host = host_ram_bytes(job, cjob, count, peak.paged_share)
    pool = 0.0
    if card_gib is not None and job.rollout is Rollout.vllm_colocate:
        fraction = job.rollout_memory_fraction
        pool = rollout_pool_excess_gib(fraction, share.rollout / GIB, card_gib) * GIB
    allocated, required, reserved = peak.allocated, peak.required, peak.reserved
    if not peak.generating:
        allocated, required, reserved = allocated + pool, required + pool, reserved + pool
    elif peak.generating + pool >= peak.reserved:  # asleep, and generating is the peak
        share, grown = share.generating_phase(layout not in GRADIENTS_FREED_SHARDINGS), (0.0, 0.0)
        allocated = reserved = peak.generating + pool
        required = reserved + (peak.required - peak.reserved)
    else:  # asleep, and the update is the peak: the pool exists only while generating
        share, pool = share.asleep_in_update(), 0.0
    generic = job.arch.family == "generic"
    context = required - reserved
    low, high = range_bytes(job.raw, allocated, required, peak.paged_share, generic)
    held = allocated  # what the breakdown sums to, with the overhead, into `required`
    allocated, reserved = allocated + grown[0], reserved + grown[1]
    if card_gib is not None:
        high = max(
            high, range_bytes(job.raw, allocated, reserved + context, peak.paged_share, generic)[1]
        )
        reserved = reserved_on_card(allocated, reserved, card_gib * GIB - context)
    gradients, optimizer, activations, logits = share.at_peak()
    return MemoryEstimate(
        num_gpus=num_gpus or job.num_gpus,
        sharding=(sharding or job.sharding).value,
        peak_allocated_gib=round(allocated / GIB, 3),
        peak_reserved_gib=round(reserved / GIB, 3),
        required_gib=round(required / GIB, 3),
        range_gib=(round(low / GIB, 2), round(high / GIB, 2)),
        host_ram_gib=round(host.total_bytes / GIB, 1),
        host_ram_loading_gib=round(host.loading_bytes / GIB, 1),
        breakdown_gib=MemoryBreakdown(
            weights=round(share.weights / GIB, 3),
            adapter=round(share.adapter / GIB, 3),
            gradients=round(gradients / GIB, 3),
            optimizer=round(optimizer / GIB, 3),
            activations=round(activations / GIB, 3),
            logits=round(logits / GIB, 3),
            overhead=round((required - held) / GIB, 3),
            reference=round(share.reference / GIB, 3),
            value=round(share.value / GIB, 3),
            reward=round(share.reward / GIB, 3),
            rollout=round((share.rollout + pool + share.generation_excess) / GIB, 3),
        ),
    )
