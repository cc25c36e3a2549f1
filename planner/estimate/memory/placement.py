"""Per-GPU share of each memory component under a sharding strategy."""

from __future__ import annotations

import math
from dataclasses import dataclass, fields, replace

from planner.catalog.models import ModelArch, linear_params
from planner.estimate.memory import components as comp
from planner.estimate.memory.profiles import ZERO3_SUB_GROUP_ELEMENTS
from planner.spec import Method, Sharding


@dataclass(frozen=True, slots=True)
class Components:
    """Bytes by component (the keys of MemoryBreakdown, minus overhead).

    The peak is mid-backward (activations and logits alive), inside the optimizer step
    (`step_scratch` alive instead) or in generation. Where gradients are freed every step they
    build up inside backward as the activations are freed (`comp.gradient_ramp_bytes`):
    `gradient_ramp` is the part of `gradients` that does, `first_gradient` what of it exists
    when backward starts, `backward_tail` the activations still alive when it ends.
    """

    weights: float
    adapter: float
    gradients: float
    optimizer: float
    activations: float
    logits: float
    step_scratch: float = 0.0
    # Preference and RL fine-tuning: the other models resident all step, and the rollout engine
    # (vLLM's minimum when colocated); HF generate's transient KV cache is `generation_scratch`,
    # a third phase that peaks apart from backward and the optimizer step.
    reference: float = 0.0
    value: float = 0.0
    reward: float = 0.0
    rollout: float = 0.0
    generation_scratch: float = 0.0
    gradient_ramp: float = 0.0
    first_gradient: float = 0.0
    backward_tail: float = 0.0
    # The part of `activations` backward's current layer holds (comp.layer_in_flight_bytes): it
    # starts after the logits are freed, so backward's start holds the larger of the two.
    layer_in_flight: float = 0.0
    # The part of `activations` the final norm and the LM head keep for backward
    # (comp.head_activation_bytes): freed before the last layer's backward starts, so it is alive
    # with the logits and never with the layer in flight.
    head_activations: float = 0.0
    # Autocast's cache of 16-bit weight copies at the end of the forward, beyond what the
    # activations already count (comp.autocast_cache_bytes), and the logits' forward part.
    autocast_cache: float = 0.0

    def scaled(self, factor: float) -> Components:
        """Every component × `factor` (a user's measured peak over our estimate), except that
        weights are never scaled below their bytes: the parameters are counted exactly, so a
        lower measured peak says less about them than about the rest."""
        return Components(
            *(
                getattr(self, f.name) * (max(factor, 1.0) if f.name == "weights" else factor)
                for f in fields(self)
            )
        )

    @property
    def _first_made(self) -> float:
        return min(self.first_gradient, self.gradient_ramp)

    @property
    def logits_overlap(self) -> float:
        """What of the logits (with the head's saved tensors) and what comes after them (the
        layer in flight, the LM head's gradient) is never alive together: the loss's backward
        peaks at _log_softmax_backward_data before either exists (shadow traces,
        llama-3.2-1b.full.*), and the final norm's backward frees its input before the last
        layer is recomputed."""
        return min(self.logits + self.head_activations, self.layer_in_flight + self._first_made)

    @property
    def _backward_start(self) -> float:
        return self.activations + self.logits - self.logits_overlap + self._first_made

    @property
    def _backward_end(self) -> float:
        return self.gradient_ramp + self.backward_tail if self.gradient_ramp else 0.0

    @property
    def _step(self) -> float:
        return self.gradient_ramp + self.step_scratch

    @property
    def _forward_end(self) -> float:
        """The loss computed, autocast's cache not yet freed (only above backward's start where
        there is such a cache: shadow trace qwen2.5-0.5b.full.sft.s2048.b1.gc.sgd.bf16-mixed
        peaks at nll_loss_forward)."""
        if not self.autocast_cache:
            return 0.0
        saved = self.activations - self.layer_in_flight
        return saved + self.autocast_cache + self.logits * comp.LOGITS_FORWARD_SHARE

    @property
    def transient(self) -> float:
        """The largest of the per-step transients: the end of the forward, backward's start,
        backward's end (with the ramped gradients) and the optimizer step (with its scratch)."""
        return max(self._forward_end, self._backward_start, self._backward_end, self._step)

    @property
    def generation_excess(self) -> float:
        """What generation allocates beyond the larger of backward's and the step's transients."""
        return max(0.0, self.generation_scratch - self.transient)

    def at_peak(self) -> tuple[float, float, float, float]:
        """(gradients, optimizer, activations, logits) as the peak holds them, summing with the
        rest to `allocated`. Without a gradient ramp: all of them, the step's excess over
        backward charged to the optimizer. With one: at backward's start the gradients made so
        far; at its end every gradient and the tail; in the step every gradient and the
        optimizer's scratch, the activations and logits freed."""
        persistent = self.gradients - self.gradient_ramp
        # What is never alive beside the logits (`logits_overlap`) comes off the LM head's
        # gradient first, then off the layer in flight.
        from_gradients = min(self.logits_overlap, self._first_made)
        activations = self.activations - (self.logits_overlap - from_gradients)
        if self._forward_end and self.transient == self._forward_end:
            forward_logits = self.logits * comp.LOGITS_FORWARD_SHARE
            saved = self.transient - forward_logits
            return persistent, self.optimizer, saved, forward_logits
        if not self.gradient_ramp:
            excess = max(0.0, self.step_scratch - activations - self.logits)
            return self.gradients, self.optimizer + excess, activations, self.logits
        if self.transient == self._backward_start:
            made = persistent + self._first_made - from_gradients
            return made, self.optimizer, activations, self.logits
        if self.transient == self._backward_end:
            return self.gradients, self.optimizer, self.backward_tail, 0.0
        return self.gradients, self.optimizer + self.step_scratch, 0.0, 0.0

    def generating_phase(self, gradients_kept: bool) -> Components:
        """The components while a colocated engine generates, between optimizer steps: the
        state that lives across steps (weights, adapter, optimizer state, the other models) and
        the engine's minimum; backward's tensors are gone. Gradients that are plain tensors are
        None after the step (torch's zero_grad(set_to_none=True), verl's and TRL's default), so
        only buffers allocated once (`gradients_kept`: DDP's buckets, DeepSpeed's partitions)
        stay, less what builds up inside backward."""
        return replace(
            self,
            gradients=self.gradients - self.gradient_ramp if gradients_kept else 0.0,
            activations=0.0,
            logits=0.0,
            step_scratch=0.0,
            generation_scratch=0.0,
            gradient_ramp=0.0,
            first_gradient=0.0,
            backward_tail=0.0,
            layer_in_flight=0.0,
            head_activations=0.0,
            autocast_cache=0.0,
        )

    def asleep_in_update(self) -> Components:
        """The components through the update while the engine sleeps (vLLM sleep mode level 1,
        verl's free_cache_engine): its weights wait in host RAM and its KV cache is freed, but
        its CUDA graphs cannot be offloaded and stay (verl's perf tuning guide)."""
        return replace(self, rollout=min(self.rollout, comp.VLLM_GRAPHS_AND_WORKSPACE_BYTES))

    @property
    def allocated(self) -> float:
        """Peak allocated: the state that lives all step (the gradients that persist through
        backward among it) plus the largest of the per-step transients and generation's
        scratch."""
        return (
            self.weights
            + self.adapter
            + self.gradients
            - self.gradient_ramp
            + self.optimizer
            + self.transient
            + self.reference
            + self.value
            + self.reward
            + self.rollout
            + self.generation_excess
        )


def per_gpu(
    arch: ModelArch, job: comp.Job, job_total: Components, num_gpus: int, cpu_offload: bool
) -> Components:
    """The busiest GPU's share of the policy (`policy_share`) and of the other models.

    Frozen models (reference, reward) are sharded 1:1 with the policy under FSDP/ZeRO-3 (TRL
    prepares them with the same plugin; LLaMA-Factory's maintainer: "只能 1:1"), each rank
    holding its shard and one gathered layer; under DDP/ZeRO-2 each rank holds a whole copy
    (TRL prepares a ZeRO-2 reference as stage 0). The critic is trained like the policy, so it
    takes the policy's own per-GPU state (`critic_share`). The rollout engine and generation's
    KV cache belong to each GPU's process: not divided.
    """
    share = policy_share(arch, job, job_total, num_gpus, cpu_offload)
    return replace(
        share,
        reference=_frozen_share(arch, job, job_total.reference, num_gpus),
        reward=_frozen_share(job.reward_arch or arch, job, job_total.reward, num_gpus),
        value=critic_share(arch, job, share) if job.critic else 0.0,
        rollout=job_total.rollout,
        generation_scratch=job_total.generation_scratch,
    )


def _frozen_share(arch: ModelArch, job: comp.Job, total: float, n: int) -> float:
    if total == 0.0 or job.sharding not in (Sharding.fsdp, Sharding.zero3) or n == 1:
        return total
    return total / n + arch.largest_layer_params * comp.frozen_bytes_per_param(job)


def critic_share(arch: ModelArch, job: comp.Job, share: Components) -> float:
    """PPO's value model (GAE, TRL's and OpenRLHF's default): a model of the policy's size
    trained the same way (weights, adapter, gradients, optimizer state as this GPU holds the
    policy's), with its own activations (TRL's PolicyAndValueWrapper runs both in one forward)
    but no vocabulary logits. Gathered FSDP/ZeRO-3 units are transient and reused, and TRL
    prepares the PolicyAndValueWrapper as one DeepSpeed engine, so ZeRO-2's reduce bucket is
    one per GPU: neither is counted twice. LLaMA-Factory's value head on the policy is far
    smaller: this is the separate critic of TRL, OpenRLHF and verl."""
    state = share.weights + share.adapter + share.gradients + share.optimizer
    if job.sharding in (Sharding.fsdp, Sharding.zero3):
        state -= sum(_gathered(arch, job))
    elif job.sharding is Sharding.zero2:
        state -= comp.zero2_bucket_bytes(job)
    return max(0.0, state) + share.activations


def policy_share(
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
    sharding = job.sharding
    c = job_total
    if sharding not in (Sharding.fsdp, Sharding.zero3):
        c = expert_parallel_split(arch, job, job_total)
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
            gradient_ramp=0.0,
            first_gradient=0.0,
        )
    if sharding is Sharding.zero2:
        share = replace(share, gradients=comp.zero2_bucket_bytes(job))
    return replace(share, optimizer=0.0, step_scratch=0.0)


def loading_floor_bytes(arch: ModelArch, job: comp.Job, num_gpus: int) -> float:
    """What a rank holds while FSDP2 shards a QLoRA model its stack loaded whole onto every GPU
    (`FrameworkProfile.fsdp2_qlora_loads_whole_model`): the whole quantised model as loaded
    (`comp.weights_bytes`, less the dequantisation buffers that exist only in a matmul) and its
    1/n shard beside it (torch 2.13 _fsdp_param.py `_init_sharded_param` copies each shard into
    a new_zeros tensor). The caching allocator keeps those blocks for training to reuse, so the
    reserved pool does not fall below this figure; 0 where nothing is loaded whole."""
    if not (
        job.fsdp2
        and job.method is Method.qlora
        and job.profile.fsdp2_qlora_loads_whole_model
        and num_gpus > 1
    ):
        return 0.0
    whole = comp.weights_bytes(arch, job) - comp.dequant_buffer_bytes(arch, job)
    return whole * (1 + 1 / num_gpus)


def expert_parallel_split(arch: ModelArch, job: comp.Job, c: Components) -> Components:
    """Expert parallelism: each rank of an EP group holds 1/EP of every MoE layer's routed
    experts, with their gradients and optimizer state (architectures-2026.md §2.6); the rest
    of the model is laid out as the sharding says. Under FSDP/ZeRO-3 the experts are already
    sharded: there EP shrinks the gathered layer instead (`comp.layer_unit_bytes`)."""
    ep = job.expert_parallel
    if ep <= 1 or not arch.is_moe:
        return c
    cut = 1 - 1 / ep
    trainable = comp.trainable_params(arch, job)
    trained_cut = cut * comp.routed_trainable_params(arch, job) / trainable if trainable else 0.0
    return replace(
        c,
        weights=c.weights - comp.routed_weight_bytes(arch, job) * cut,
        adapter=c.adapter * (1 - trained_cut),
        gradients=c.gradients * (1 - trained_cut),
        optimizer=c.optimizer * (1 - trained_cut),
        step_scratch=c.step_scratch * (1 - trained_cut),
    )


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
        gradient_ramp=c.gradient_ramp / n,
        first_gradient=c.first_gradient / n,
        backward_tail=c.backward_tail,
        layer_in_flight=c.layer_in_flight,
        head_activations=c.head_activations,
        autocast_cache=c.autocast_cache,
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
        stage_params = linear_params(arch) * layers // arch.num_layers + one_matrix
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
        gradient_ramp=c.gradient_ramp * trained_fraction,
        first_gradient=min(c.first_gradient, c.gradient_ramp * trained_fraction),
        backward_tail=c.backward_tail,
        layer_in_flight=c.layer_in_flight,
        head_activations=c.head_activations,
        autocast_cache=c.autocast_cache,
    )
