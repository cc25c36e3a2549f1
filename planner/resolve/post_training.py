"""Preference and RL fine-tuning: what each objective keeps on the GPU and how it counts its data,
decided once in `resolve` (planner.resolve.defaults) and stated as assumptions.

Defaults are TRL's at HEAD (shared/docs/post-training.md §1.1, §5), which LLaMA-Factory, Unsloth
and axolotl run underneath:
- DPO/KTO build a frozen reference (a second copy for full fine-tuning; with PEFT the same base
  with the adapters switched off); ORPO, SimPO and CPO are reference-free; GRPO's beta = 0 (since
  v0.19) means no reference, RLOO's beta = 0.05 means one; PPO keeps a reference, a trained value
  model and a reward model.
- Preference sequences are prompt + response up to max_length = 1024; GRPO/RLOO completions up to
  max_completion_length = 512 (1.10; 256 through 1.9), prompts taken as verl's max_prompt_length
  512 when not said (TRL no longer caps them).
- num_generations: GRPO 8, RLOO 2, PPO 1 (one rollout per prompt, OpenRLHF's n_samples 1).
- Rollout: HF generate (use_vllm=False); vLLM colocate reserves gpu_memory_utilization = 0.3 of
  each card (TRL ≥ 0.18), a `trl vllm-serve` server 0.9 of its own cards.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields

from planner.catalog.models import ModelArch, resolve_model
from planner.errors import PlanningError
from planner.job.resolved import PostTrainingFields
from planner.messages import POST_TRAINING
from planner.spec import (
    ONLINE_OBJECTIVES,
    PREFERENCE_OBJECTIVES,
    JobSpec,
    Objective,
    Rollout,
)

DEFAULT_PREFERENCE_SEQ_LEN = 1024
DEFAULT_PROMPT_LEN = 512
DEFAULT_COMPLETION_LEN = 512
DEFAULT_GENERATIONS = {Objective.grpo: 8, Objective.rloo: 2, Objective.ppo: 1}
REFERENCE_FREE = frozenset({Objective.orpo, Objective.simpo, Objective.cpo})
# Whether the method builds a reference when nothing is said (TRL: DPO/KTO always; GRPO beta 0.0;
# RLOO beta 0.05; PPO always).
REFERENCE_BY_DEFAULT = {
    Objective.dpo: True,
    Objective.kto: True,
    Objective.grpo: False,
    Objective.rloo: True,
    Objective.ppo: True,
}
COLOCATE_MEMORY_FRACTION = 0.3
SERVER_MEMORY_FRACTION = 0.9
DEFAULT_ROLLOUT_GPUS = 1
GENERATION_BATCH_PER_GPU = 8
# Fields that only online methods read.
_ONLINE_ONLY = (
    "num_generations",
    "generation_batch",
    "rollout",
    "rollout_memory_fraction",
    "rollout_gpus",
    "rollout_tensor_parallel",
    "rollout_sleep",
)


@dataclass(frozen=True, slots=True, kw_only=True)
class PostTraining(PostTrainingFields):
    """The fields as resolved, and the sequence length they decide when the user gave prompt
    and completion lengths instead."""

    seq_len: int | None

    def fields(self) -> dict[str, object]:
        """The ResolvedJob fields (all but seq_len, which resolve decides with the rest)."""
        return {f.name: getattr(self, f.name) for f in fields(PostTrainingFields)}

    @property
    def online(self) -> bool:
        return self.objective in ONLINE_OBJECTIVES

    @property
    def rows_per_example(self) -> int:
        """Sequences one example puts through the policy: chosen + rejected for preference
        methods, num_generations completions for online ones."""
        if self.objective in PREFERENCE_OBJECTIVES:
            return 2
        return self.num_generations or 1

    @property
    def micro_batch_unit(self) -> str:
        """What one micro-batch row is: the suffix of its assumption's message id
        (planner/messages.py DEFAULTS "micro_batch", ".completion", ".pair")."""
        if self.online:
            return ".completion"
        if self.objective in PREFERENCE_OBJECTIVES:
            return ".pair"
        return ""

    def grad_accum_for(self, micro_batch: int, num_gpus: int, said: list[str]) -> int:
        """Online methods generate once per optimizer step (TRL's steps_per_generation defaults
        to gradient_accumulation_steps): a round of TRL's default generation batch per GPU
        (per_device_train_batch_size 8), and at least one prompt's whole group
        (generation_batch_size must divide by num_generations). Others accumulate nothing."""
        if not self.online or self.num_generations is None:
            return 1
        per_gpu = max(GENERATION_BATCH_PER_GPU, math.ceil(self.num_generations / num_gpus))
        accum = max(1, math.ceil(per_gpu / micro_batch))
        if accum > 1:
            completions = accum * micro_batch * num_gpus
            said.append(
                POST_TRAINING(
                    "generation_batch",
                    accum=accum,
                    completions=completions,
                    generations=self.num_generations,
                )
            )
        return accum

    def dataset_tokens(self, spec: JobSpec, seq_len: int, said: list[str]) -> float | None:
        """Trained tokens: what the user said, else prompts × sequences per example × length."""
        if spec.dataset_tokens is not None or self.dataset_prompts is None:
            return spec.dataset_tokens
        rows = self.rows_per_example
        tokens = self.dataset_prompts * rows * seq_len
        what = {True: "online", False: "offline"}[self.online]
        values = {"prompts": self.dataset_prompts, "rows": rows, "seq_len": seq_len}
        said.append(POST_TRAINING(f"trained_tokens.{what}", mtokens=tokens / 1e6, **values))
        return tokens


def resolve_post_training(
    spec: JobSpec, arch: ModelArch, peft: bool, said: list[str], warned: list[str]
) -> PostTraining:
    """The objective's fields with every default decided (module docstring); what the user set
    that the objective cannot use is dropped with a warning."""
    objective = spec.objective or Objective.sft
    online = objective in ONLINE_OBJECTIVES
    if not online:
        given = [name for name in _ONLINE_ONLY if getattr(spec, name) is not None]
        if given:
            name = objective.value.upper()
            warned.append(POST_TRAINING("online_only", fields=", ".join(given), objective=name))
    reference = _reference(spec, objective, peft, said, warned)
    prompt_len, completion_len, seq_len = _lengths(spec, objective, said)
    generations = rollout = fraction = rollout_gpus = tensor_parallel = sleep = None
    if online:
        generations = spec.num_generations or DEFAULT_GENERATIONS[objective]
        if spec.num_generations is None:
            name = objective.value.upper()
            said.append(POST_TRAINING("generations", count=generations, objective=name))
        rollout, fraction, rollout_gpus = _rollout(spec, said)
        if rollout is Rollout.vllm_colocate:
            tensor_parallel, sleep = _colocated_engine(spec, said)
    given = [n for n in ("rollout_tensor_parallel", "rollout_sleep") if getattr(spec, n)]
    if online and rollout is not Rollout.vllm_colocate and given:
        warned.append(POST_TRAINING("colocated_only", fields=", ".join(given)))
    reward_model, reward_arch = _reward(spec, objective, arch, said)
    return PostTraining(
        objective=objective,
        reference_model=reference,
        num_generations=generations,
        prompt_len=prompt_len,
        completion_len=completion_len,
        rollout=rollout,
        rollout_memory_fraction=fraction,
        rollout_gpus=rollout_gpus,
        rollout_tensor_parallel=tensor_parallel,
        rollout_sleep=sleep,
        reward_model=reward_model,
        reward_arch=reward_arch,
        dataset_prompts=spec.dataset_prompts,
        generation_batch=spec.generation_batch if online else None,
        seq_len=seq_len,
    )


def _reference(
    spec: JobSpec, objective: Objective, peft: bool, said: list[str], warned: list[str]
) -> bool:
    name = objective.value.upper()
    if objective is Objective.sft:
        if spec.reference_model:
            warned.append(POST_TRAINING("reference.sft"))
        return False
    if objective in REFERENCE_FREE:
        if spec.reference_model:
            warned.append(POST_TRAINING("reference.not_needed", name=name))
        said.append(POST_TRAINING("reference.free", name=name))
        return False
    reference = spec.reference_model
    if reference is None:
        reference = REFERENCE_BY_DEFAULT[objective]
        if objective is Objective.grpo:
            said.append(POST_TRAINING("reference.grpo"))
        elif objective is Objective.rloo:
            said.append(POST_TRAINING("reference.rloo"))
    if not reference:
        if objective in (Objective.dpo, Objective.kto):
            said.append(POST_TRAINING("reference.precomputed", name=name))
        return False
    if peft:
        said.append(POST_TRAINING("reference.adapters_off", name=name))
    else:
        said.append(POST_TRAINING("reference.copy", name=name))
    return True


def _lengths(
    spec: JobSpec, objective: Objective, said: list[str]
) -> tuple[int | None, int | None, int | None]:
    """(prompt_len, completion_len, seq_len): seq_len stays the longest sequence, prompt +
    completion; None where the objective does not split them and the user did not."""
    prompt, completion = spec.prompt_len, spec.completion_len
    if objective not in ONLINE_OBJECTIVES:
        if prompt is not None and completion is not None and spec.seq_len is None:
            return prompt, completion, prompt + completion
        if objective in PREFERENCE_OBJECTIVES and spec.seq_len is None:
            length = (prompt or 0) + (completion or 0) or DEFAULT_PREFERENCE_SEQ_LEN
            if prompt is None or completion is None:
                length = max(length, DEFAULT_PREFERENCE_SEQ_LEN)
            said.append(POST_TRAINING("length.preference", tokens=length))
            return prompt, completion, length
        return prompt, completion, None
    seq_len = spec.seq_len
    if completion is None:
        if seq_len is not None and prompt is not None and seq_len > prompt:
            completion = seq_len - prompt
        elif seq_len is not None and prompt is None:
            completion = max(1, seq_len // 2)
        else:
            completion = DEFAULT_COMPLETION_LEN
        said.append(POST_TRAINING("length.completion", tokens=completion))
    if prompt is None:
        prompt = max(1, seq_len - completion) if seq_len and seq_len > completion else None
        prompt = prompt or DEFAULT_PROMPT_LEN
        said.append(POST_TRAINING("length.prompt", tokens=prompt))
    return prompt, completion, max(seq_len or 0, prompt + completion)


def _rollout(spec: JobSpec, said: list[str]) -> tuple[Rollout, float | None, int | None]:
    rollout = spec.rollout
    if rollout is None and spec.rollout_gpus is not None:
        rollout = Rollout.vllm_server
    elif rollout is None and (
        spec.rollout_memory_fraction is not None
        or spec.rollout_tensor_parallel is not None
        or spec.rollout_sleep is not None
    ):
        rollout = Rollout.vllm_colocate  # what only a colocated engine has
    if rollout is None:
        said.append(POST_TRAINING("rollout.hf"))
        return Rollout.hf, None, None
    if rollout is Rollout.hf:
        return rollout, None, None
    fraction = spec.rollout_memory_fraction
    if rollout is Rollout.vllm_colocate:
        if fraction is None:
            fraction = COLOCATE_MEMORY_FRACTION
            said.append(POST_TRAINING("rollout.colocate", fraction=fraction))
        return rollout, fraction, None
    if fraction is None:
        fraction = SERVER_MEMORY_FRACTION
    gpus = spec.rollout_gpus or DEFAULT_ROLLOUT_GPUS
    said.append(POST_TRAINING("rollout.server", gpus=gpus, fraction=fraction))
    return rollout, fraction, gpus


def _colocated_engine(spec: JobSpec, said: list[str]) -> tuple[int, bool]:
    """A colocated engine's tensor-parallel size (TRL's vllm_tensor_parallel_size = 1) and
    whether it sleeps through the update (TRL's vllm_enable_sleep_mode = False, OpenRLHF's
    --vllm.enable_sleep off; verl frees it: free_cache_engine). A group of TP GPUs runs one
    engine, so TP cannot exceed the GPUs."""
    gpus = spec.num_gpus or 1
    tensor_parallel = spec.rollout_tensor_parallel or 1
    if tensor_parallel > gpus or gpus % tensor_parallel:
        raise PlanningError(
            POST_TRAINING("engine.tp_invalid", tp=tensor_parallel, gpus=gpus),
            field="rollout_tensor_parallel",
        )
    if tensor_parallel > 1:
        said.append(POST_TRAINING("engine.tensor_parallel", tp=tensor_parallel))
    sleep = bool(spec.rollout_sleep)
    if spec.rollout_sleep is None:
        said.append(POST_TRAINING("engine.awake"))
    elif sleep:
        said.append(POST_TRAINING("engine.sleeps"))
    return tensor_parallel, sleep


def _reward(
    spec: JobSpec, objective: Objective, arch: ModelArch, said: list[str]
) -> tuple[str | None, ModelArch | None]:
    if spec.reward_model:
        try:
            found, _ = resolve_model(spec.reward_model, None)
        except PlanningError as unknown:
            raise PlanningError(f"reward model: {unknown.message}", field="reward_model") from None
        said.append(POST_TRAINING("reward.frozen", name=found.name, size_b=found.params_b))
        return spec.reward_model, found
    if objective is Objective.ppo:
        said.append(POST_TRAINING("reward.ppo", name=arch.name))
        return arch.name, arch
    if objective in ONLINE_OBJECTIVES:
        said.append(POST_TRAINING("reward.rules"))
    return None, None
