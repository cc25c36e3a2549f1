"""The stacks gpuplan writes run configs for, keyed by JobSpec `framework` values, and which
objectives each one's command line trains (from each stack's source at the version named)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from planner.messages import NAMES
from planner.run_config.job import ConfigRefused, RunJob
from planner.run_config.result import StackFiles
from planner.spec import Framework, Objective
from planner.words import Listing

Build = Callable[[RunJob], StackFiles]


@dataclass(frozen=True, slots=True)
class Stack:
    name: str
    label: str
    objectives: frozenset[Objective]
    module: str  # the planner.run_config module whose stack_files(job) writes it


def _objectives(names: str) -> frozenset[Objective]:
    return frozenset(Objective(name) for name in names.split())


STACKS: dict[str, Stack] = {
    stack.name: stack
    for stack in (
        # trl/scripts/{sft,dpo,kto,grpo,rloo}.py (TRL 1.16.0); ORPO and CPO/SimPO live in
        # trl.experimental, which the CLI does not run.
        Stack("trl", "TRL CLI", _objectives("sft dpo kto grpo rloo"), "trl"),
        # axolotl 0.19.0 utils/schemas/enums.py RLType: dpo, ipo, kto, orpo, simpo, grpo.
        Stack("axolotl", "axolotl", _objectives("sft dpo kto orpo simpo grpo"), "axolotl"),
        # LLaMA-Factory 0.9.5 hparams/finetuning_args.py: stage sft|rm|ppo|dpo|kto, pref_loss
        # sigmoid|hinge|ipo|kto_pair|orpo|simpo.
        Stack(
            "llama-factory",
            "LLaMA-Factory",
            _objectives("sft dpo kto orpo simpo ppo"),
            "llama_factory",
        ),
        # ms-swift 4.6.0 arguments/rlhf_args.py rlhf_type: dpo|orpo|simpo|kto|cpo|rm|ppo|grpo.
        Stack(
            "ms-swift", "ms-swift", _objectives("sft dpo kto orpo simpo cpo grpo ppo"), "ms_swift"
        ),
        # Unsloth patches TRL's trainers; the script runs SFTTrainer, DPOTrainer or GRPOTrainer.
        Stack("unsloth", "Unsloth", _objectives("sft dpo grpo"), "unsloth"),
        # torchtune 0.6.1's recipes: {full,lora}_finetune_*, lora_dpo_*, full_dpo_distributed.
        Stack("torchtune", "torchtune", _objectives("sft dpo"), "torchtune"),
    )
}
# JobSpec framework values that name a stack written in another's words: the planner's `hf`
# default is HF Trainer + PEFT, which TRL's command line runs.
ALIASES = {"hf": "trl"}
# Stacks the planner models but gpuplan writes no config for, and the nearest it does write.
NEAREST_UNWRITTEN = {"litgpt": "torchtune", "verl": "trl", "openrlhf": "trl"}


def stack_named(name: str) -> Stack:
    """The stack for a `--stack` value or a JobSpec framework; ConfigRefused for others."""
    key = name.strip().lower().replace("_", "-")
    key = ALIASES.get(key, key)
    if key in STACKS:
        return STACKS[key]
    nearest = NEAREST_UNWRITTEN.get(key)
    if nearest is not None:
        raise ConfigRefused(
            NAMES("config.unwritten", name=name, nearest=nearest),
            nearest=nearest,
        )
    raise ConfigRefused(
        NAMES("config.unknown_stack", name=name, stacks=Listing(stack_names(), zh_sep=", "))
    )


def framework_of(stack: Stack) -> str | None:
    """The JobSpec framework value that plans a job on `stack`: its own name where Framework has
    it (TRL's, once Framework gains "trl"), else the alias that runs it (TRL: hf)."""
    values = {framework.value for framework in Framework}
    if stack.name in values:
        return stack.name
    aliases = (alias for alias, name in ALIASES.items() if name == stack.name)
    return next((alias for alias in aliases if alias in values), None)


def stack_names() -> list[str]:
    return [*STACKS, *ALIASES]


def check_objective(stack: Stack, objective: Objective) -> None:
    """ConfigRefused, naming the nearest stack that trains it, when `stack` cannot."""
    if objective in stack.objectives:
        return
    nearest = next((s.name for s in STACKS.values() if objective in s.objectives), None)
    tail = NAMES("config.nearest_objective", nearest=nearest) if nearest else ""
    objective_name = objective.value.upper()
    raise ConfigRefused(
        NAMES("config.no_objective", stack=stack.label, objective=objective_name, tail=tail),
        nearest=nearest,
    )
