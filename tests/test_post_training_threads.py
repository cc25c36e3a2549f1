"""Preference and RL jobs read from chat and re-planned by follow-ups in a thread (issue #16)."""

from __future__ import annotations

import pytest

from bot.conversation import Conversation
from bot.threads import ThreadKey
from planner.parsing import parse

EXAMPLE = (
    "qwen2.5 7b GRPO lora, 8 generations per prompt, 1k prompt, 2k completion, 2000 prompts, "
    "on one H100 with vllm colocate"
)


def _key() -> ThreadKey:
    return ThreadKey(platform="test", workspace="w", channel="c", thread="rl")


def test_the_issue_example_is_read_field_by_field() -> None:
    result = parse(EXAMPLE)
    assert result.fields == {
        "model": "qwen2.5 7b",
        "params_b": 7,
        "objective": "grpo",
        "method": "lora",
        "num_generations": 8,
        "prompt_len": 1024,
        "completion_len": 2048,
        "dataset_prompts": 2000,
        "gpu": "H100",
        "num_gpus": 1,
        "rollout": "vllm-colocate",
    }
    assert result.unread == []


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("llama 3 8b dpo lora", {"objective": "dpo"}),
        ("8b direct preference optimization, full", {"objective": "dpo"}),
        ("qwen2.5 7b 偏好优化 全参", {"objective": "dpo", "method": "full"}),
        ("7b kto lora", {"objective": "kto"}),
        ("mistral 7b orpo", {"objective": "orpo"}),
        ("llama 3 8b SimPO full", {"objective": "simpo"}),
        ("7b cpo", {"objective": "cpo"}),
        ("RL with verifiable rewards on qwen2.5 1.5b", {"objective": "grpo"}),
        ("qwen 7b rlvr, G=16", {"objective": "grpo", "num_generations": 16}),
        ("qwen 7b 强化学习 lora", {"objective": "grpo"}),
        ("7b rloo, 4 samples per prompt", {"objective": "rloo", "num_generations": 4}),
        ("ppo 8b with a 7b reward model", {"objective": "ppo", "reward_model": "7B"}),
        ("7b rlhf", {"objective": "ppo"}),
        ("grpo 7b num_generations=16", {"num_generations": 16}),
        ("grpo 7b, 8 completions per prompt", {"num_generations": 8}),
        ("grpo 7b group size 12", {"num_generations": 12}),
        (
            "grpo 7b, generation_batch_size 512, 8 generations per prompt",
            {"generation_batch": 512, "num_generations": 8},
        ),
        ("grpo 7b on 16 h100, 2048 rollouts per step", {"generation_batch": 2048, "num_gpus": 16}),
        ("grpo 7b 每步 2048 条 rollout", {"generation_batch": 2048}),
        (
            "grpo 7b max_prompt_length 512 max_completion_length=4096",
            {"prompt_len": 512, "completion_len": 4096},
        ),
        ("grpo 7b, 2048-token completions", {"completion_len": 2048}),
        ("grpo 7b response length 1k", {"completion_len": 1024}),
        ("grpo 7b with vllm server", {"rollout": "vllm-server", "rollout_gpus": 1}),
        (
            "grpo 7b, vllm on 2 separate gpus",
            {"rollout": "vllm-server", "rollout_gpus": 2},
        ),
        ("grpo 7b use_vllm=false", {"rollout": "hf"}),
        ("grpo 7b vllm colocate gpu_memory_utilization 0.5", {"rollout_memory_fraction": 0.5}),
        (
            "grpo 72b on 8xh100 with vllm tp 8 and sleep mode",
            {"rollout_tensor_parallel": 8, "rollout_sleep": True},
        ),
        (
            "grpo 7b, vllm colocate, tensor_parallel_size=2, no sleep mode",
            {"rollout_tensor_parallel": 2, "rollout_sleep": False},
        ),
        ("grpo 7b vllm free_cache_engine", {"rollout_sleep": True}),
        ("grpo 7b tensor parallel 4 for the rollout", {"rollout_tensor_parallel": 4}),
        ("grpo qwen 7b 用 vllm 睡眠模式", {"rollout_sleep": True}),
        (
            "grpo 7b, reward model Skywork/Skywork-Reward-Llama-3.1-8B",
            {"reward_model": "Skywork/Skywork-Reward-Llama-3.1-8B"},
        ),
        ("dpo 8b full without the reference model", {"reference_model": False}),
        ("dpo 8b full, precompute ref log probs", {"reference_model": False}),
        ("grpo 7b beta=0.04", {"reference_model": True}),
        ("grpo 7b, 500 steps of 64 prompts", {"dataset_prompts": 32000}),
        ("grpo 7b, 2k prompts", {"dataset_prompts": 2000}),
        ("dpo 7b lora, 20k pairs of 1k tokens", {"dataset_prompts": 20000, "seq_len": 1024}),
    ],
)
def test_spellings(text: str, expected: dict[str, object]) -> None:
    fields = parse(text).fields
    assert {name: fields.get(name) for name in expected} == expected


def test_words_that_only_look_like_rl_fields_are_left_alone() -> None:
    assert "num_generations" not in parse("mistral7b full 4xa100 80g 2 epochs").fields
    assert "dataset_prompts" not in parse("I have 3 prompts for llama 2 7b").fields
    assert "objective" not in parse("llama 3 8b qlora 4k ctx").fields


def test_a_comparison_of_objectives() -> None:
    result = parse("dpo vs orpo for llama 3 8b full")
    assert result.fields["objective"] == "dpo"
    assert [alt.objective.value for alt in result.alternatives] == ["orpo"]


def test_follow_ups_re_plan_the_thread_job() -> None:
    conversation = Conversation(limit_rate=False)
    first = conversation.respond(_key(), EXAMPLE)
    assert first.plan is not None and first.plan.spec.num_generations == 8
    assert "GRPO, G=8" in first.reply.title
    hours_at_8 = first.plan.requested.hours

    more = conversation.respond(_key(), "what if G=16?")
    assert more.changes["num_generations"] == (8, 16)
    assert more.plan.spec.dataset_tokens == 2 * first.plan.spec.dataset_tokens
    assert more.plan.requested.hours > hours_at_8

    server = conversation.respond(_key(), "with vLLM on a separate GPU")
    assert server.plan.spec.rollout.value == "vllm-server"
    assert server.plan.spec.rollout_gpus == 1
    assert server.plan.memory.breakdown_gib.rollout == 0
    assert server.plan.requested.rollout_gpus == 1
    assert server.plan.requested.required_gib < more.plan.requested.required_gib

    dpo = conversation.respond(_key(), "DPO instead, full fine-tuning")
    assert dpo.plan.spec.objective.value == "dpo"
    assert dpo.plan.memory.breakdown_gib.reference > 0

    no_reference = conversation.respond(_key(), "without the reference model")
    assert no_reference.changes["reference_model"] == (True, False)
    assert no_reference.plan.memory.breakdown_gib.reference == 0
    assert no_reference.plan.memory.required_gib < dpo.plan.memory.required_gib


def test_the_colocated_engines_switches_are_what_ifs_that_keep_the_rollout() -> None:
    conversation = Conversation(limit_rate=False)
    first = conversation.respond(
        _key(), "GRPO qwen2.5 72b lora on 8x h100, vllm colocate gpu_memory_utilization 0.5"
    )
    assert first.plan is not None and first.plan.requested.verdict == "no"
    wider = conversation.respond(_key(), "what if vllm tp 8?")
    assert wider.changes["rollout_tensor_parallel"] == (1, 8)
    assert wider.plan.spec.rollout.value == "vllm-colocate"
    assert wider.plan.spec.rollout_memory_fraction == 0.5
    assert wider.plan.requested.verdict != "no"
    asleep = conversation.respond(_key(), "and with sleep mode?")
    # only a colocated engine has the switches, so they imply one in a new question too
    other = ThreadKey(platform="test", workspace="w", channel="c", thread="rl-2")
    alone = conversation.respond(other, "GRPO qwen2.5 7b on an h100 with vllm tp 1")
    assert alone.plan.spec.rollout.value == "vllm-colocate"
    assert asleep.changes["rollout_sleep"] == (False, True)
    assert asleep.plan.memory.host_ram_gib > wider.plan.memory.host_ram_gib
