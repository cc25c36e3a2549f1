"""What preference and RL fine-tuning add to the cost of one trained token (planner.throughput).

A trained token is one the policy's training step processes: for preference methods each of the
chosen and rejected sequences; for GRPO/RLOO/PPO every generated completion with its prompt, so a
dataset of D prompts trains D × num_generations × (prompt + completion) tokens. Per trained token
(shared/docs/post-training.md §3.3; N = the policy's active block parameters):

- the training step: as SFT (6N, 4N for adapters, +2N with checkpointing, attention, logits);
  PPO trains policy and critic `PPO_EPOCHS` times over each rollout batch (TRL num_ppo_epochs,
  LLaMA-Factory ppo_epochs);
- no-grad forwards of a policy-sized model (2N + attention + logits each): DPO/KTO's reference
  (once per epoch; precomputed log-probs run it once over the dataset, so 1/epochs), the
  old-policy log-probs of online methods (always with vLLM: TRL's importance-sampling correction
  is on by default; PPO always, for its rollout log-probs), their reference (beta ≠ 0), PPO's
  value forward during the rollout;
- a reward model's forward (2 N_rm) over every completion, when one is named;
- generation: prefill and decode compute (2N per token) plus decode's memory traffic, the
  bandwidth-bound part. Each decode step reads every weight once and the KV cache of the round's
  sequences (which average prompt + completion/2 tokens), for `completion_len` steps (the longest
  completion gates the round). Per trained token that is
      C × (W + S × (P + C/2) × kv) / (S × (P + C)),
  with S sequences per generation round per GPU. Decode reaches `DECODE_BANDWIDTH_FRACTION` of
  the datasheet bandwidth, expressed as extra bytes at the trainer's ACHIEVED_BANDWIDTH_FRACTION;
- weight sync to a separate vLLM server: the 16-bit model pushed over NCCL after every
  optimizer step (LoRA merged first), at `WEIGHT_SYNC_GBS`.
Generation and training run one after the other (TRL's synchronous loop), so their times add.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from planner.catalog.models import linear_params
from planner.memory.components import kv_bytes_per_token, reward_model_params
from planner.spec import ONLINE_OBJECTIVES, Objective, Rollout

if TYPE_CHECKING:
    from planner.defaults import ResolvedJob

PPO_EPOCHS = 4
# [uncertain] docs/post-training.md §3.1 gives η ≈ 0.5–0.8 for decode's share of the datasheet
# bandwidth with a serving engine (vLLM: paged KV cache, CUDA graphs). HF generate pads the batch,
# launches every kernel from Python per token and has no CUDA graphs: taken as half of that.
DECODE_BANDWIDTH_FRACTION = {
    Rollout.vllm_colocate: 0.6,
    Rollout.vllm_server: 0.6,
    Rollout.hf: 0.3,
}
# NCCL weight push from trainer to a vLLM server: PCIe-class bandwidth between processes on
# different GPUs (TRL's vllm_group_port communicator) [uncertain: NVLink is faster].
WEIGHT_SYNC_GBS = 25.0
GENERATION_BYTES_PER_PARAM = 2.0


def training_passes(job: ResolvedJob) -> float:
    """Training steps per trained token: PPO's epochs over policy and critic, else 1."""
    return 2.0 * PPO_EPOCHS if job.objective is Objective.ppo else 1.0


def extra_forwards(job: ResolvedJob) -> float:
    """No-grad forwards of a policy-sized model per trained token (module docstring)."""
    objective = job.objective
    if objective is Objective.sft:
        return 0.0
    if objective not in ONLINE_OBJECTIVES:
        if objective in (Objective.dpo, Objective.kto) and not job.reference_model:
            return 1.0 / job.epochs  # precomputed once over the dataset
        return 1.0 if job.reference_model else 0.0
    old_policy = objective is Objective.ppo or job.rollout is not Rollout.hf
    value = objective is Objective.ppo
    return float(old_policy) + float(job.reference_model) + float(value)


def reward_flops_per_token(job: ResolvedJob) -> float:
    """A frozen reward model's forward over every scored token."""
    if job.reward_arch is None or job.objective not in ONLINE_OBJECTIVES:
        return 0.0
    return 2.0 * reward_model_params(job.reward_arch)


def generation_flops_per_token(job: ResolvedJob, block_params: int) -> float:
    """Prefill and decode compute: one forward's 2N per token of every sequence."""
    if job.objective not in ONLINE_OBJECTIVES:
        return 0.0
    return 2.0 * block_params


def sequences_per_round(job: ResolvedJob) -> int:
    """Completions one GPU generates per round: the job's stated generation batch over its GPUs
    (TRL's generation_batch_size; NeMo RL's num_prompts_per_step × num_generations_per_prompt;
    a vLLM engine decodes the whole round together by continuous batching), else TRL's default
    round per process (per_device_train_batch_size × steps_per_generation, which defaults to
    grad accumulation)."""
    if job.generation_batch is not None:
        return max(1, -(-job.generation_batch // job.num_gpus))
    return job.micro_batch * job.grad_accum


def decode_bytes_per_token(job: ResolvedJob, achieved_fraction: float) -> float:
    """Decode's memory traffic per trained token, scaled to the trainer's achieved bandwidth
    (module docstring)."""
    if job.objective not in ONLINE_OBJECTIVES or job.completion_len is None:
        return 0.0
    arch = job.arch
    prompt, completion = job.prompt_len or 0, job.completion_len
    sequences = sequences_per_round(job)
    weights = (
        linear_params(arch, active_only=True) + arch.hidden_size * arch.vocab_size
    ) * GENERATION_BYTES_PER_PARAM
    kv = sequences * (prompt + completion / 2) * kv_bytes_per_token(arch)
    per_round = completion * (weights + kv)
    efficiency = achieved_fraction / DECODE_BANDWIDTH_FRACTION[job.rollout]
    return per_round / (sequences * (prompt + completion)) * efficiency


def weight_sync_seconds_per_token(job: ResolvedJob) -> float:
    """Pushing the 16-bit model to a vLLM server once per optimizer step, per trained token of
    one GPU's share of the step."""
    if job.rollout is not Rollout.vllm_server:
        return 0.0
    seconds = job.arch.total_params * GENERATION_BYTES_PER_PARAM / (WEIGHT_SYNC_GBS * 1e9)
    return seconds / (sequences_per_round(job) * job.seq_len)
