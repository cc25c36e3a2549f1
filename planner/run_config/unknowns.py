"""What the plan does not know (the dataset, where the run writes, the learning rate): the
placeholders each file leaves, the TODO lines README.txt lists, and the learning rate of the
recipe the plan follows, written as a value that runs and marked TODO."""

from __future__ import annotations

from planner.run_config.job import RunJob
from planner.spec import ONLINE_OBJECTIVES

DATASET_TODO = "TODO/your-dataset"
NOT_PLANNED = "TODO: not in the plan"
RECIPE_RATE = "TODO: not in the plan; the recipe's rate"
# Learning rates of the recipes the plan follows: TRL's LoRA examples 2e-4, full fine-tuning
# 2e-5 (trl/scripts/sft.py docstring); online methods 1e-6 (GRPOConfig's default).
LORA_LEARNING_RATE = 2e-4
FULL_LEARNING_RATE = 2e-5
ONLINE_LEARNING_RATE = 1e-6


def learning_rate(job: RunJob) -> float:
    if job.spec.objective in ONLINE_OBJECTIVES:
        return ONLINE_LEARNING_RATE
    return LORA_LEARNING_RATE if job.peft else FULL_LEARNING_RATE


def todos(where: str, dataset: str, output: str, job: RunJob) -> list[str]:
    """README.txt's TODO lines for a file: `dataset` says which key and what it wants."""
    return [
        f"{where} {dataset}",
        f"{where} output_dir ({output})",
        f"{where} learning_rate: {learning_rate(job):g} is the recipe's, not the plan's",
    ]


def reward_todo(where: str, key: str, job: RunJob, functions: str) -> list[str]:
    """README.txt's TODO for the rewards: the reward model to name when the plan's is not in the
    catalog, else (no reward model: rule-based) the reward functions to write."""
    model = job.reward_model_id
    if model is None:
        return [f"{where} {key}: your reward functions ({functions})"]
    if model.startswith("TODO"):
        return [f"{where}: the reward model's Hub id or path ({model})"]
    return []
