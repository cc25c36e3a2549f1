"""Preference and RL fine-tuning hold what the trainers really keep on the GPU (issue #16)."""

from __future__ import annotations

import pytest

from planner import make_plan
from planner.catalog.models import resolve_model
from planner.errors import PlanningError
from planner.estimate.memory import component_job, estimate_memory
from planner.estimate.memory import components as comp
from planner.estimate.memory.profiles import GIB
from planner.resolve.defaults import resolve
from planner.spec import JobSpec, Sharding

MODELS = ["qwen2.5 0.5b", "llama 3 8b", "qwen2.5 7b", "mistral 7b"]
# Same base, same layout: (num_gpus, sharding); for each, the job is planned at one length.
LAYOUTS = [(1, "none"), (4, "fsdp"), (8, "zero3"), (2, "zero2")]


def _memory(model: str, method: str, objective: str, layout=(1, "none"), **fields):
    num_gpus, sharding = layout
    spec = JobSpec(
        model=model,
        method=method,
        objective=objective,
        seq_len=fields.pop("seq_len", 2048),
        num_gpus=num_gpus,
        sharding=sharding,
        **fields,
    )
    return estimate_memory(resolve(spec))


def _weights_copy_gib(model: str) -> float:
    arch, _ = resolve_model(model, None)
    return arch.total_params * 2 / GIB


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("model", MODELS)
def test_full_dpo_needs_more_than_full_sft_and_orpo_less_than_dpo(model, layout) -> None:
    sft = _memory(model, "full", "sft", layout)
    dpo = _memory(model, "full", "dpo", layout)
    orpo = _memory(model, "full", "orpo", layout)
    assert dpo.required_gib > sft.required_gib
    assert dpo.breakdown_gib.reference > 0  # the frozen copy
    # chosen + rejected: twice the rows through the policy; TRL's DPOTrainer keeps the 16-bit
    # logits, each row's log-softmax and the logits' gradient (no fp32 copy)
    num_gpus, sharding = layout
    job = resolve(JobSpec(model=model, method="full", objective="dpo", seq_len=2048))
    logits = comp.logits_bytes(job.arch, component_job(job, num_gpus, Sharding(sharding)))
    assert logits == pytest.approx(2 * 2048 * job.arch.vocab_size * 3 * 2, rel=0.01)
    assert orpo.required_gib < dpo.required_gib
    assert orpo.breakdown_gib.reference == 0


@pytest.mark.parametrize("model", MODELS)
def test_the_reference_is_sharded_with_the_policy(model) -> None:
    one = _memory(model, "full", "dpo").breakdown_gib.reference
    eight = _memory(model, "full", "dpo", (8, "zero3")).breakdown_gib.reference
    replicated = _memory(model, "full", "dpo", (2, "zero2")).breakdown_gib.reference
    assert one == pytest.approx(_weights_copy_gib(model), rel=0.01)
    assert eight < one / 4
    assert replicated == one


@pytest.mark.parametrize("model", MODELS)
@pytest.mark.parametrize("method", ["lora", "qlora"])
def test_dpo_with_peft_needs_more_than_sft_but_far_less_than_a_second_copy(model, method) -> None:
    sft = _memory(model, method, "sft")
    dpo = _memory(model, method, "dpo")
    assert dpo.breakdown_gib.reference == 0  # the base with adapters off is the reference
    assert dpo.required_gib > sft.required_gib
    assert dpo.required_gib - sft.required_gib < 0.5 * _weights_copy_gib(model) + 4.0


def test_precomputed_reference_log_probs_drop_the_copy() -> None:
    kept = _memory("llama 3 8b", "full", "dpo")
    precomputed = _memory("llama 3 8b", "full", "dpo", reference_model=False)
    assert precomputed.breakdown_gib.reference == 0
    assert kept.required_gib - precomputed.required_gib == pytest.approx(
        kept.breakdown_gib.reference, abs=0.05
    )


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("model", MODELS[1:])
@pytest.mark.parametrize("method", ["full", "lora"])
def test_ppo_needs_more_than_dpo(model, method, layout) -> None:
    dpo = _memory(model, method, "dpo", layout)
    ppo = _memory(model, method, "ppo", layout)
    assert ppo.required_gib > dpo.required_gib
    assert ppo.breakdown_gib.value > 0
    assert ppo.breakdown_gib.reward > 0


def test_a_tiny_model_with_a_huge_vocabulary_is_dominated_by_dpos_doubled_logits() -> None:
    # trl#3168: Qwen2.5-0.5B (152k vocabulary) loaded in fp32 (TRL's default for a string id,
    # the thread's root cause): chosen + rejected fp32 logits and their gradient are most of
    # the peak, and loading in bf16 (the fix the reporter confirmed) cuts them by a quarter
    # even though bf16 also keeps each row's log-softmax (3 × 2 B against 2 × 4 B).
    fp32 = _memory("qwen2.5 0.5b", "lora", "dpo", precision="fp32", micro_batch=4)
    bf16 = _memory("qwen2.5 0.5b", "lora", "dpo", precision="bf16", micro_batch=4)
    assert fp32.breakdown_gib.logits > fp32.peak_allocated_gib / 2
    assert bf16.breakdown_gib.logits == pytest.approx(0.75 * fp32.breakdown_gib.logits, rel=0.01)


def test_ppo_critic_is_trained_like_the_policy() -> None:
    ppo = _memory("llama 3 8b", "full", "ppo")
    state = ppo.breakdown_gib
    # weights + gradients + AdamW state of a second model, not a frozen copy
    assert state.value > 2 * state.reference


@pytest.mark.parametrize(
    ("gpu", "usable_gib"), [("h100", None), ("a100 80gb", None), ("l40s", None), ("4090", None)]
)
@pytest.mark.parametrize("model", ["qwen2.5 0.5b", "qwen2.5 1.5b"])
def test_grpo_with_vllm_colocated_shows_its_rollout_pool(model, gpu, usable_gib) -> None:
    plan = make_plan(
        JobSpec(
            model=model,
            method="lora",
            objective="grpo",
            rollout="vllm-colocate",
            gpu=gpu,
        )
    )
    card_gib = plan.requested.usable_gib
    rollout = plan.memory.breakdown_gib.rollout
    # vLLM takes gpu_memory_utilization (0.3 by default) of the card, whatever the batch needs
    assert rollout == pytest.approx(0.3 * card_gib, rel=0.02)
    assert plan.requested.required_gib == pytest.approx(plan.memory.required_gib, abs=0.01)
    # the same job on another card reserves that card's share
    others = {o.gpu: o for o in plan.options if o.count == 1}
    small, big = others["rtx4090"], others["h200-sxm"]
    assert big.required_gib - small.required_gib == pytest.approx(
        0.3 * (big.usable_gib - small.usable_gib), rel=0.05
    )


def test_a_higher_vllm_fraction_reserves_more() -> None:
    def rollout(fraction: float) -> float:
        spec = JobSpec(
            model="qwen2.5 1.5b",
            method="lora",
            objective="grpo",
            rollout_memory_fraction=fraction,
            gpu="h100",
        )
        return make_plan(spec).memory.breakdown_gib.rollout

    assert rollout(0.6) == pytest.approx(2 * rollout(0.3), rel=0.02)


def test_hf_generate_holds_the_kv_cache_of_every_generation() -> None:
    def plan(generations: int):
        spec = JobSpec(
            model="llama 3 8b",
            method="lora",
            objective="grpo",
            num_generations=generations,
            prompt_len=1024,
            completion_len=4096,
        )
        return estimate_memory(resolve(spec))

    # Llama-3-8B keeps 128 KiB per token: 16 × 5,120 tokens = 10 GiB of cache, a phase of its
    # own: the breakdown shows what it adds beyond backward's activations and logits
    sixteen = plan(16).breakdown_gib
    cache_gib = 16 * 5120 * 128 / 2**20
    assert sixteen.rollout == pytest.approx(
        cache_gib - sixteen.activations - sixteen.logits, rel=0.05
    )
    assert plan(16).required_gib > plan(8).required_gib


def test_ppo_under_zero3_gathers_the_value_model_with_the_policy_to_generate() -> None:
    """TRL's PPO unwraps its PolicyAndValueWrapper for generation, so under ZeRO-3
    (ds3_gather_for_generation) the 16-bit value model is gathered beside the policy; GRPO
    gathers the policy alone, and nothing is gathered outside ZeRO-3."""
    common = {"model": "llama 3 8b", "method": "full", "seq_len": 2048, "completion_len": 512,
              "rollout": "hf", "num_gpus": 8}  # fmt: skip

    def gathered_gib(objective: str, sharding: str) -> float:
        job = resolve(JobSpec(objective=objective, sharding=sharding, **common))
        parts = component_job(job, 8, Sharding(sharding))
        return comp.generation_gathered_bytes(job.arch, parts) / GIB

    arch, _ = resolve_model("llama 3 8b", None)
    value_gib = comp.reward_model_params(arch) * 2 / GIB
    assert gathered_gib("grpo", "zero3") == pytest.approx(_weights_copy_gib("llama 3 8b"))
    assert gathered_gib("ppo", "zero3") == pytest.approx(
        _weights_copy_gib("llama 3 8b") + value_gib
    )
    assert gathered_gib("ppo", "fsdp") == 0.0


def test_a_separate_vllm_server_leaves_the_trainer_without_a_pool() -> None:
    colocated = _memory("qwen2.5 7b", "lora", "grpo", rollout="vllm-colocate")
    server = _memory("qwen2.5 7b", "lora", "grpo", rollout="vllm-server")
    assert server.breakdown_gib.rollout == 0
    assert colocated.breakdown_gib.rollout > 0


def test_a_reward_model_of_a_given_size_is_on_the_gpu() -> None:
    rule = _memory("qwen2.5 7b", "lora", "grpo")
    scored = _memory("qwen2.5 7b", "lora", "grpo", reward_model="7B")
    assert rule.breakdown_gib.reward == 0
    assert scored.breakdown_gib.reward == pytest.approx(_weights_copy_gib("7B"), rel=0.1)


def test_breakdown_still_sums_to_required() -> None:
    for objective in ("dpo", "ppo", "grpo", "kto"):
        plan = make_plan(
            JobSpec(model="qwen2.5 7b", method="full", objective=objective, gpu="h100")
        )
        parts = plan.memory.breakdown_gib.model_dump()
        assert sum(parts.values()) == pytest.approx(plan.memory.required_gib, abs=0.02)


def test_sft_jobs_plan_exactly_as_before() -> None:
    spec = JobSpec(model="llama 3 8b", method="lora", seq_len=4096)
    said_sft = JobSpec(model="llama 3 8b", method="lora", seq_len=4096, objective="sft")
    assert make_plan(spec).memory == make_plan(said_sft).memory
    breakdown = make_plan(spec).memory.breakdown_gib
    assert (breakdown.reference, breakdown.value, breakdown.reward, breakdown.rollout) == (
        0,
        0,
        0,
        0,
    )


def test_objective_defaults_are_stated() -> None:
    job = resolve(JobSpec(model="qwen2.5 7b", method="lora", objective="grpo"))
    said = " ".join(job.assumptions)
    assert job.num_generations == 8
    assert (job.prompt_len, job.completion_len, job.seq_len) == (512, 512, 1024)
    assert job.reference_model is False and "beta = 0" in said
    assert job.rollout.value == "hf" and "HF generate" in said
    assert job.grad_accum == 8
    dpo = resolve(JobSpec(model="qwen2.5 7b", method="full", objective="dpo"))
    assert dpo.seq_len == 1024 and dpo.reference_copy
    assert "reference" in " ".join(dpo.assumptions)
    rloo = resolve(JobSpec(model="qwen2.5 7b", method="full", objective="rloo"))
    assert rloo.num_generations == 2 and rloo.reference_copy


def test_fields_an_objective_cannot_use_are_dropped_with_a_warning() -> None:
    job = resolve(JobSpec(model="qwen2.5 7b", method="lora", objective="dpo", num_generations=8))
    assert job.num_generations is None
    assert any("num_generations" in warning for warning in job.warnings)
    orpo = resolve(
        JobSpec(model="qwen2.5 7b", method="full", objective="orpo", reference_model=True)
    )
    assert not orpo.reference_model
    assert any("reference" in warning for warning in orpo.warnings)


def _colocated(**fields):
    spec = {
        "model": "qwen2.5 72b",
        "method": "lora",
        "objective": "grpo",
        "rollout": "vllm-colocate",
        "rollout_memory_fraction": 0.5,
        "num_gpus": 8,
        "sharding": "fsdp",
        "gpu": "h100",
        **fields,
    }
    return make_plan(JobSpec.model_validate(spec))


def test_vllm_tensor_parallel_divides_the_engines_weights_per_gpu() -> None:
    """A colocated engine over TP GPUs holds 1/TP of its 16-bit copy on each (post-training.md
    §8): Qwen2.5-72B's 145 GB copy is the whole 8× H100 problem at TP 1 and an eighth at TP 8,
    which is what the TP suggestion says."""
    one, eight = _colocated(), _colocated(rollout_tensor_parallel=8)
    copy_gib = _weights_copy_gib("qwen2.5 72b")
    minimum = one.memory.breakdown_gib.rollout  # above the card's 0.5 share: the minimum stands
    assert minimum > copy_gib and one.requested.verdict == "no"
    assert eight.memory.breakdown_gib.rollout == pytest.approx(0.5 * 79.65, rel=0.02)
    assert eight.requested.verdict != "no"
    # the suggestion is the smallest TP whose 1/TP copy fits the engine's 0.5 share: 145 GB / 2
    # does not, / 4 does
    (suggestion,) = [s for s in one.suggestions if "tensor parallel" in s.change]
    assert suggestion.change.startswith("vLLM tensor parallel 4 ") and "fits" in suggestion.change
    assert copy_gib / 2 > 0.5 * 79.65 > copy_gib / 4
    assert "vLLM tensor parallel 8" in " ".join(eight.assumptions)
    with pytest.raises(PlanningError, match="must divide"):
        _colocated(rollout_tensor_parallel=3)


def test_a_sleeping_engine_peaks_in_one_phase_and_parks_its_weights_in_host_ram() -> None:
    """Asleep (vLLM sleep mode level 1, verl's free_cache_engine) the engine's pool exists only
    while it generates, next to the trainer's resident state; through the update only its CUDA
    graphs stay. The peak is the larger phase, the breakdown that phase, and host RAM holds
    each GPU's share of the engine's weights."""
    awake = _colocated(rollout_tensor_parallel=8, rollout_sleep=False)
    asleep = _colocated(rollout_tensor_parallel=8, rollout_sleep=True)
    memory, parts = asleep.memory, asleep.memory.breakdown_gib
    # generating is the peak here: backward's tensors are gone, the pool is the card's share
    assert (parts.activations, parts.logits) == (0.0, 0.0)
    assert parts.rollout == pytest.approx(0.5 * 79.65, rel=0.02)
    assert memory.required_gib < awake.memory.required_gib
    assert sum(parts.model_dump().values()) == pytest.approx(memory.required_gib, abs=0.02)
    engine_share_gib = _weights_copy_gib("qwen2.5 72b") / 8
    host_gain = memory.host_ram_gib - awake.memory.host_ram_gib
    assert host_gain == pytest.approx(8 * engine_share_gib / 0.95, rel=0.02)
    # a full fine-tune's update (gradients, backward, the AdamW step) outgrows a small pool: the
    # update is the peak, with the engine's graphs only
    full = {"model": "qwen2.5 7b", "method": "full", "rollout_memory_fraction": 0.05}
    small = _colocated(rollout_tensor_parallel=8, rollout_sleep=True, **full)
    assert small.memory.breakdown_gib.gradients > 0
    assert small.memory.breakdown_gib.rollout == pytest.approx(1.5, abs=0.01)
    parts = small.memory.breakdown_gib.model_dump()
    assert sum(parts.values()) == pytest.approx(small.memory.required_gib, abs=0.02)
    assert asleep.requested.required_gib == pytest.approx(memory.required_gib, abs=0.01)


def test_a_packed_preference_row_holds_the_pair_inside_its_length() -> None:
    # Packed: chosen and rejected share one seq_len row; padded: two rows of seq_len each.
    packed = _memory("qwen2.5 7b", "full", "dpo", packing=True, seq_len=4096)
    padded = _memory("qwen2.5 7b", "full", "dpo", packing=False, seq_len=4096)
    sft = _memory("qwen2.5 7b", "full", "sft", packing=True, seq_len=4096)
    assert packed.breakdown_gib.logits == pytest.approx(sft.breakdown_gib.logits)
    assert padded.breakdown_gib.logits == pytest.approx(2 * packed.breakdown_gib.logits)
