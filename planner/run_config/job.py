"""What a run config reads of a Plan: the job as planned, the card it runs on, and why each value.

A config realises the plan it came from: every value below is the plan's (Plan.spec holds the job
with every default decided), and `why` says which assumption of the plan it realises. A plan whose
job does not fit its card gets no config (ConfigRefused says why).
"""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass
from functools import cache

from planner.data_files import DATA_DIR
from planner.errors import PlanningError
from planner.job.resolved import lora_target_names
from planner.messages import NAMES
from planner.plan import Option, Plan
from planner.spec import (
    ALL_LINEAR,
    JobSpec,
    LoraTarget,
    Method,
    Optimizer,
    Precision,
    Pricing,
    Sharding,
)

SKYPILOT_ACCELERATORS_CSV = DATA_DIR / "skypilot_accelerators.csv"
# Hugging Face organisations whose model repos are gated (the Hub asks each user to accept the
# model's licence before a download; a token of an account that accepted it must be sent). From
# the organisations' model cards: Llama (Meta's community licence form), Gemma (Google's terms
# acknowledgement), Mistral's repos (contact-sharing agreement since 2024-07).
GATED_ORGANISATIONS = frozenset({"meta-llama", "google", "mistralai"})
HF_TOKEN = "HF_TOKEN"  # the variable huggingface_hub reads the token from
# The projection modules PEFT's target_modules names for each LoraTarget (the Llama/Qwen/Mistral
# names that transformers' modelling code gives the linear layers).
MODULE_NAMES = {
    LoraTarget.q: "q_proj",
    LoraTarget.k: "k_proj",
    LoraTarget.v: "v_proj",
    LoraTarget.o: "o_proj",
    LoraTarget.gate: "gate_proj",
    LoraTarget.up: "up_proj",
    LoraTarget.down: "down_proj",
}
# transformers' OptimizerNames (training_args.py, transformers 5.25.0) for each optimizer the plan
# models: what TRL, axolotl and LLaMA-Factory pass to `optim`.
HF_OPTIM = {
    Optimizer.adamw: "adamw_torch",
    Optimizer.adamw_8bit: "adamw_bnb_8bit",
    Optimizer.paged_adamw: "paged_adamw_32bit",
    Optimizer.paged_adamw_8bit: "paged_adamw_8bit",
    Optimizer.sgd: "sgd",
    Optimizer.adafactor: "adafactor",
}


class ConfigRefused(PlanningError):
    """No config for this plan and stack: the job does not fit its card, or the stack cannot run
    it. `nearest` names a stack that can, where there is one."""

    def __init__(self, message: str, *, field: str = "stack", nearest: str | None = None) -> None:
        super().__init__(message, field=field)
        self.nearest = nearest


@dataclass(frozen=True, slots=True)
class Card:
    """The card × count the config runs on, as SkyPilot names it."""

    key: str
    name: str
    count: int
    skypilot: str  # SkyPilot's accelerator name, e.g. "RTX4090"
    named: bool  # False: no card was named and the plan's cheapest fitting run was taken
    verdict: str
    required_gib: float
    usable_gib: float

    @property
    def accelerators(self) -> str:
        return f"{self.skypilot}:{self.count}"


@dataclass(frozen=True, slots=True)
class RunJob:
    """The plan's job, ready to be written in any stack's words."""

    spec: JobSpec  # every field decided (Plan.spec)
    plan: Plan
    hf_id: str | None
    card: Card

    @property
    def name(self) -> str:
        return self.plan.model.name

    @property
    def model_id(self) -> str:
        """The Hugging Face id, or a TODO when the model came from a supplied config.json."""
        return self.hf_id or f"TODO-hf-id-of-{self.plan.model.key}"

    @property
    def gated(self) -> bool:
        return (self.hf_id or "").split("/", 1)[0] in GATED_ORGANISATIONS

    @property
    def reward_model_id(self) -> str | None:
        """The reward model's Hugging Face id where the plan names one the catalog knows, a TODO
        naming it otherwise (PPO's default is a model of the policy's size, not a reward model);
        None for rule-based rewards."""
        named = self.spec.reward_model
        if not named:
            return None
        from planner.catalog.models import resolve_model

        try:
            found, _ = resolve_model(named, None)
        except PlanningError:
            found = None
        if found is None or found.hf_id is None or found.key == self.plan.model.key:
            return "TODO-reward-model-like-" + re.sub(r"[^\w.-]+", "-", named)
        return found.hf_id

    @property
    def peft(self) -> bool:
        return self.spec.method is not Method.full

    @property
    def quantised(self) -> bool:
        return self.spec.method is Method.qlora

    @property
    def multi_gpu(self) -> bool:
        return self.card.count > 1

    @property
    def sharding(self) -> Sharding:
        return self.spec.sharding or Sharding.none

    @property
    def zero_stage(self) -> int | None:
        return {Sharding.zero2: 2, Sharding.zero3: 3}.get(self.sharding)

    @property
    def bf16(self) -> bool:
        return self.spec.precision in (Precision.bf16, Precision.bf16_mixed, Precision.fp8)

    @property
    def fp16(self) -> bool:
        return self.spec.precision is Precision.fp16_mixed

    @property
    def dtype(self) -> str:
        """The dtype the base weights are loaded in."""
        if self.spec.precision is Precision.fp32:
            return "float32"
        return "float16" if self.fp16 else "bfloat16"

    @property
    def target_modules(self) -> list[str] | str:
        """PEFT's target_modules: "all-linear", or the projection names."""
        targets = self.spec.lora_targets
        if targets is None or targets == ALL_LINEAR:
            return ALL_LINEAR
        return self.module_names

    @property
    def module_names(self) -> list[str]:
        """The projection names LoRA adapts, "all-linear" spelled out."""
        return [
            MODULE_NAMES[LoraTarget(name)] for name in lora_target_names(self.spec.lora_targets)
        ]

    @property
    def optim(self) -> str:
        return HF_OPTIM[self.spec.optimizer or Optimizer.adamw]

    @property
    def spot(self) -> bool:
        return self.spec.pricing is Pricing.spot

    @property
    def attn_implementation(self) -> str:
        """SDPA where the plan has no s×s score matrix (the same memory as FlashAttention-2,
        without its install), eager where it keeps one."""
        return "sdpa" if self.spec.flash_attention else "eager"

    @property
    def global_batch(self) -> int:
        return (self.spec.micro_batch or 1) * (self.spec.grad_accum or 1) * self.card.count

    def why(self, field: str) -> str:
        """The plan's assumption a value realises, in a few words (a comment beside it)."""
        return _WHY[field](self)


def _per_gpu(job: RunJob) -> str:
    return f"{job.card.required_gib:.1f} GiB per GPU on the {job.card.name}"


_WHY = {
    "model": lambda job: f"plan: {job.name}",
    "seq_len": lambda job: f"plan: {job.spec.seq_len:,} tokens per sequence ({_per_gpu(job)})",
    "micro_batch": lambda job: (
        f"plan: micro-batch {job.spec.micro_batch} per GPU ({_per_gpu(job)})"
    ),
    "grad_accum": lambda job: (
        f"plan: gradient accumulation {job.spec.grad_accum} (micro-batches per optimizer step)"
    ),
    "checkpointing": lambda job: (
        "plan: gradient checkpointing " + ("on" if job.spec.gradient_checkpointing else "off")
    ),
    "precision": lambda job: f"plan: {job.spec.precision.value if job.spec.precision else 'bf16'}",
    "optimizer": lambda job: f"plan: {job.spec.optimizer.value if job.spec.optimizer else 'adamw'}",
    "method": lambda job: f"plan: {job.spec.method.value}",
    "lora_rank": lambda job: f"plan: LoRA rank {job.spec.lora_rank}",
    "lora_alpha": lambda job: f"plan: LoRA alpha {job.spec.lora_alpha:g}",
    "lora_targets": lambda job: (
        "plan: LoRA on " + ", ".join(lora_target_names(job.spec.lora_targets))
    ),
    "quant": lambda job: (
        f"plan: 4-bit {job.spec.quant.value if job.spec.quant else 'nf4'} "
        "base weights (bitsandbytes, double quantisation)"
    ),
    "attention": lambda job: (
        "plan: "
        + ("no s×s score matrix (SDPA/FlashAttention)" if job.spec.flash_attention else "eager")
    ),
    "packing": lambda job: "plan: sequence packing " + ("on" if job.spec.packing else "off"),
    "epochs": lambda job: (
        f"plan: {job.spec.epochs:g} epoch" + ("" if job.spec.epochs == 1 else "s")
    ),
    "gpus": lambda job: f"plan: {job.card.count} GPUs ({job.sharding.value})",
    "sharding": lambda job: f"plan: {job.sharding.value} on {job.card.count} GPUs",
    "offload": lambda job: "plan: CPU offload " + ("on" if job.spec.cpu_offload else "off"),
    "activation_offloading": lambda job: (
        "plan: activation offloading " + ("on" if job.spec.activation_offloading else "off")
    ),
    "objective": lambda job: f"plan: {job.spec.objective.value if job.spec.objective else 'sft'}",
    "reference": lambda job: (
        "plan: "
        + ("a frozen reference model" if job.spec.reference_model else "no reference model")
    ),
    "generations": lambda job: f"plan: {job.spec.num_generations} completions per prompt",
    "completion_len": lambda job: f"plan: completions up to {job.spec.completion_len:,} tokens",
    "reward": lambda job: f"plan: a frozen reward model ({job.spec.reward_model}) scores rollouts",
    "rollout": lambda job: (
        "plan: generation with " + (job.spec.rollout.value if job.spec.rollout else "hf")
    ),
    "rollout_fraction": lambda job: (
        f"plan: vLLM holds {job.spec.rollout_memory_fraction:g} of each card"
    ),
    "rollout_tp": lambda job: f"plan: vLLM tensor parallel {job.spec.rollout_tensor_parallel}",
    "rollout_sleep": lambda job: "plan: vLLM sleeps through the update",
    "loss_kernel": lambda job: (
        f"plan: {job.spec.loss_kernel.value if job.spec.loss_kernel else ''} loss kernel"
    ),
    "card": lambda job: (
        f"plan: {job.card.count}× {job.card.name}"
        + ("" if job.card.named else " (the plan's cheapest run: no card was named)")
    ),
    "spot": lambda job: "the job accepts interruptions (spot)" if job.spot else "on-demand",
}


def run_job(plan: Plan) -> RunJob:
    """The plan's job and its card; ConfigRefused when the job does not fit."""
    option = _card_option(plan)
    if option.verdict == "no":
        raise ConfigRefused(_misfit(plan, option), field="gpu")
    return RunJob(
        spec=plan.spec, plan=plan, hf_id=plan.model.hf_id, card=_card(option, plan.requested)
    )


def _card_option(plan: Plan) -> Option:
    if plan.requested is not None:
        return plan.requested
    count = plan.spec.num_gpus or 1
    fitting = [o for o in plan.options if o.count == count and o.verdict != "no"]
    priced = [o for o in fitting if o.cost_usd is not None]
    if priced:
        return min(priced, key=lambda o: o.cost_usd or 0.0)
    if fitting:
        return fitting[0]
    raise ConfigRefused(
        f"no card in the catalog holds this job on {count} GPU(s) "
        f"({plan.memory.required_gib:,.1f} GiB per GPU): name a card and a GPU count",
        field="gpu",
    )


def _misfit(plan: Plan, option: Option) -> str:
    fix = next((s.change for s in plan.suggestions if s.fits_as_asked), None)
    return NAMES(
        "config.misfit",
        count=option.count,
        gpu=option.gpu_name,
        usable=option.usable_gib,
        need=option.required_gib,
        fix=NAMES("config.misfit_fix", fix=fix) if fix else "",
    )


def _card(option: Option, requested: Option | None) -> Card:
    return Card(
        key=option.gpu,
        name=option.gpu_name,
        count=option.count,
        skypilot=skypilot_accelerator(option.gpu) or option.gpu,
        named=requested is not None,
        verdict=option.verdict,
        required_gib=option.required_gib,
        usable_gib=option.usable_gib,
    )


@cache
def _skypilot_names() -> dict[str, str]:
    with SKYPILOT_ACCELERATORS_CSV.open(encoding="utf-8") as handle:
        return {row["key"]: row["skypilot"] for row in csv.DictReader(handle) if row["skypilot"]}


def skypilot_accelerator(card_key: str) -> str | None:
    """SkyPilot's accelerator name for a catalog card; None where SkyPilot lists none."""
    return _skypilot_names().get(card_key)
