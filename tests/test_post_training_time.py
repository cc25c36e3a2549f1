"""Time, cost and host RAM of preference and RL fine-tuning (issue #16)."""

from __future__ import annotations

import pytest

from planner import make_plan
from planner.catalog.gpus import gpu_by_key
from planner.estimate.memory import estimate_memory
from planner.estimate.throughput import estimate_throughput, flops_per_token
from planner.resolve.defaults import resolve
from planner.spec import JobSpec

MODELS = ["qwen2.5 1.5b", "llama 3 8b", "qwen2.5 7b"]
CARDS = ["h100-sxm", "a100-80g-sxm", "l40s", "rtx4090"]
# "qwen2.5 7b GRPO lora, 8 generations per prompt, 1k prompt, 2k completion, 2000 prompts"
ISSUE_EXAMPLE = {
    "model": "qwen2.5 7b",
    "method": "lora",
    "objective": "grpo",
    "num_generations": 8,
    "prompt_len": 1024,
    "completion_len": 2048,
    "dataset_prompts": 2000,
}


def _tokens_per_s(model: str, card: str, **fields) -> float:
    job = resolve(JobSpec(model=model, method=fields.pop("method", "lora"), **fields))
    return estimate_throughput(job, gpu_by_key(card), 1, None).tokens_per_s


@pytest.mark.parametrize("card", CARDS)
@pytest.mark.parametrize("model", MODELS)
@pytest.mark.parametrize("rollout", ["hf", "vllm-colocate", "vllm-server"])
def test_grpo_takes_longer_than_sft_on_as_many_tokens(model, card, rollout) -> None:
    sft = _tokens_per_s(model, card, seq_len=1024)
    grpo = _tokens_per_s(model, card, objective="grpo", seq_len=1024, rollout=rollout)
    assert grpo < sft / 2  # generation dominates (TRL: "the main bottleneck")


@pytest.mark.parametrize("card", CARDS)
@pytest.mark.parametrize("model", MODELS)
def test_dpo_pays_the_reference_forward_and_orpo_does_not(model, card) -> None:
    sft = _tokens_per_s(model, card, method="full", seq_len=1024)
    dpo = _tokens_per_s(model, card, method="full", objective="dpo", seq_len=1024)
    orpo = _tokens_per_s(model, card, method="full", objective="orpo", seq_len=1024)
    assert orpo == pytest.approx(sft)
    # precomputed log-probs run the reference once over the dataset, not once per epoch
    three_epochs = {"method": "full", "objective": "dpo", "seq_len": 1024, "epochs": 3}
    precomputed = _tokens_per_s(model, card, reference_model=False, **three_epochs)
    assert _tokens_per_s(model, card, **three_epochs) < precomputed < sft
    # a forward is about a third of forward + backward (+ recompute): 2N of 8N
    assert 1.1 < sft / dpo < 1.4


def test_ppo_costs_more_per_token_than_grpo() -> None:
    grpo = _tokens_per_s("llama 3 8b", "h100-sxm", objective="grpo", num_generations=1)
    ppo = _tokens_per_s("llama 3 8b", "h100-sxm", objective="ppo")
    assert ppo < 0.7 * grpo  # four epochs over policy and critic, plus their forwards


def test_vllm_generates_faster_than_hf_generate() -> None:
    hf = _tokens_per_s("qwen2.5 7b", "h100-sxm", objective="grpo", rollout="hf")
    vllm = _tokens_per_s("qwen2.5 7b", "h100-sxm", objective="grpo", rollout="vllm-colocate")
    assert vllm > 1.3 * hf


def test_decode_is_bandwidth_bound_so_bigger_rounds_are_cheaper_per_token() -> None:
    small = _tokens_per_s("qwen2.5 7b", "h100-sxm", objective="grpo", rollout="vllm-colocate")
    big = _tokens_per_s(
        "qwen2.5 7b",
        "h100-sxm",
        objective="grpo",
        rollout="vllm-colocate",
        micro_batch=8,
        grad_accum=8,
    )
    assert big > 2 * small  # 64 sequences share each weight read instead of 8


def test_a_stated_generation_batch_sets_the_round_not_the_training_batch() -> None:
    grpo = {"objective": "grpo", "rollout": "vllm-colocate", "num_gpus": 2, "sharding": "fsdp"}
    default = resolve(JobSpec(model="qwen2.5 7b", method="lora", **grpo))
    stated = resolve(JobSpec(model="qwen2.5 7b", method="lora", generation_batch=128, **grpo))
    card = gpu_by_key("h100-sxm")
    assert (stated.micro_batch, stated.grad_accum) == (default.micro_batch, default.grad_accum)
    # 64 completions per GPU share each decode step's weight read instead of TRL's round of 8.
    faster = estimate_throughput(stated, card, 2, stated.sharding).tokens_per_s
    assert faster > 2 * estimate_throughput(default, card, 2, default.sharding).tokens_per_s
    sft = resolve(JobSpec(model="qwen2.5 7b", method="lora", generation_batch=128))
    assert sft.generation_batch is None and any("generation_batch" in w for w in sft.warnings)


def test_longer_completions_cost_more_per_token() -> None:
    short = _tokens_per_s(
        "qwen2.5 7b", "h100-sxm", objective="grpo", prompt_len=256, completion_len=512
    )
    long = _tokens_per_s(
        "qwen2.5 7b", "h100-sxm", objective="grpo", prompt_len=256, completion_len=4096
    )
    assert long < short


def test_rl_dataset_counted_in_prompts() -> None:
    job = resolve(JobSpec(**ISSUE_EXAMPLE))
    assert job.dataset_tokens == 2000 * 8 * 3072
    assert any("2,000 prompts" in said for said in job.assumptions)


def test_the_issue_example_is_planned_with_memory_hours_and_cost() -> None:
    plan = make_plan(JobSpec(**ISSUE_EXAMPLE, rollout="vllm-colocate", gpu="h100"))
    requested = plan.requested
    assert requested.verdict == "fits"
    assert plan.memory.breakdown_gib.rollout == pytest.approx(0.3 * requested.usable_gib, rel=0.02)
    # 2,000 rounds of 8 completions, each 2,048 decode steps over 15 GB of weights: hours, not
    # the 0.1 h an SFT reading gave
    assert 4 < requested.hours < 40
    assert requested.cost_usd > 0
    sft = make_plan(
        JobSpec(
            model="qwen2.5 7b", method="lora", seq_len=3072, dataset_tokens=49_152_000, gpu="h100"
        )
    )
    assert requested.hours > 3 * sft.requested.hours


def test_a_vllm_server_is_rented_with_the_trainer() -> None:
    plan = make_plan(
        JobSpec(
            model="qwen2.5 7b",
            method="lora",
            objective="grpo",
            rollout="vllm-server",
            rollout_gpus=2,
            dataset_prompts=1000,
            gpu="h100",
        )
    )
    row = plan.requested
    assert row.rollout_gpus == 2
    assert row.cost_usd == pytest.approx(row.hours * row.usd_per_hour * 3, rel=0.01)


def test_generation_and_the_extra_forwards_add_flops() -> None:
    sft = resolve(JobSpec(model="qwen2.5 7b", method="lora", seq_len=1024))
    grpo = resolve(
        JobSpec(model="qwen2.5 7b", method="lora", objective="grpo", reference_model=True)
    )
    assert flops_per_token(grpo) > 1.5 * flops_per_token(sft)


@pytest.mark.parametrize(
    ("spec", "low_gib", "high_gib"),
    [
        # one process, plus the 16-bit model TRL loads on the CPU before moving it (15 GiB)
        ({"model": "llama 3 8b", "method": "lora"}, 18, 24),
        # DeepSpeed's estimator: 18 B per parameter × 1.5 with params and optimizer offloaded
        (
            {
                "model": "llama 3 70b",
                "method": "full",
                "num_gpus": 8,
                "sharding": "zero3",
                "cpu_offload": True,
            },
            1700,
            2100,
        ),
        # verl#224: 8 rollout workers of ~11 GB ran a 96 GB host out of memory
        (
            {"model": "qwen2.5 7b", "method": "full", "objective": "grpo", "num_gpus": 8},
            96,
            300,
        ),
    ],
)
def test_host_ram(spec, low_gib, high_gib) -> None:
    memory = estimate_memory(resolve(JobSpec(**spec)))
    assert low_gib < memory.host_ram_gib < high_gib


def test_a_job_that_needs_a_big_host_says_what_to_rent() -> None:
    plan = make_plan(
        JobSpec(model="qwen2.5 7b", method="full", objective="grpo", num_gpus=8, gpu="h100")
    )
    assert any("host RAM" in warning and "GB RAM" in warning for warning in plan.warnings)
    small = make_plan(JobSpec(model="llama 3 8b", method="lora", gpu="h100"))
    assert not any("host RAM" in warning for warning in small.warnings)


def _suggested(**spec) -> dict[str, dict[str, object]]:
    plan = make_plan(JobSpec(**spec))
    return {s.change.split(":")[0]: s for s in plan.suggestions}


def test_a_full_dpo_that_does_not_fit_is_told_to_precompute_or_use_lora() -> None:
    shown = _suggested(model="llama 3 8b", method="full", objective="dpo", gpu="h100")
    precompute = next(s for s in shown.values() if s.patch == {"reference_model": False})
    assert precompute.required_gib_after < precompute.required_gib_before
    assert any(s.patch == {"method": "lora"} for s in shown.values())


def test_a_colocated_rollout_that_does_not_fit_is_offered_its_own_card() -> None:
    shown = _suggested(
        model="qwen2.5 7b", method="lora", objective="grpo", rollout="vllm-colocate", gpu="4090"
    )
    server = next(s for s in shown.values() if s.patch.get("rollout") == "vllm-server")
    assert server.patch["rollout_gpus"] == 1
    assert server.required_gib_after < server.required_gib_before


def test_an_oversized_vllm_pool_is_offered_a_smaller_fraction() -> None:
    shown = _suggested(
        model="qwen2.5 1.5b",
        method="full",
        objective="grpo",
        rollout="vllm-colocate",
        rollout_memory_fraction=0.6,
        gpu="l40s",
    )
    lower = next(s for s in shown.values() if "rollout_memory_fraction" in s.patch)
    assert lower.patch["rollout_memory_fraction"] < 0.6
    assert lower.required_gib_after < lower.required_gib_before


def test_long_rollouts_are_offered_fewer_generations_and_shorter_completions() -> None:
    shown = _suggested(
        model="qwen2.5 7b",
        method="lora",
        objective="grpo",
        num_generations=16,
        prompt_len=1024,
        # tight on the card (the traced activations put 8,192 just inside it)
        completion_len=9216,
        dataset_prompts=1000,
        gpu="a100 40gb",
    )
    patches = [s.patch for s in shown.values()]
    assert {"num_generations": 8} in patches
    assert {"completion_len": 4608} in patches
    fewer = next(s for s in shown.values() if s.patch == {"num_generations": 8})
    assert fewer.hours_change_pct < 0  # half the completions to generate and train on
