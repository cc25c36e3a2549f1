"""Run configs that realise a plan: the files a stack reads (TRL, axolotl, LLaMA-Factory, ms-swift,
Unsloth, torchtune) with the plan's values, a SkyPilot task and a README. Pure: no I/O.

`build_run_config(plan, stack)` is the one entry point; the `gpuplan config` command writes its
files and the chat attaches them.
"""

from __future__ import annotations

import importlib

from planner.plan import Plan
from planner.run_config.job import ConfigRefused, run_job, skypilot_accelerator
from planner.run_config.readme import commands, readme_text
from planner.run_config.result import RunConfig, StackFiles
from planner.run_config.skypilot import launch_command, sky_yaml
from planner.run_config.stacks import check_objective, stack_named, stack_names
from planner.spec import Objective

__all__ = ["ConfigRefused", "RunConfig", "build_run_config", "stack_names"]


def build_run_config(plan: Plan, stack: str | None = None) -> RunConfig:
    """The files that realise `plan` in `stack` (a JobSpec framework value or "trl"; default: the
    plan's own framework). Raises ConfigRefused when the job does not fit its card, or the stack
    cannot train its objective (naming the nearest stack that can)."""
    chosen = stack_named(stack or (plan.spec.framework or "hf"))
    check_objective(chosen, plan.spec.objective or Objective.sft)
    job = run_job(plan)
    module = importlib.import_module(f"planner.run_config.{chosen.module}")
    parts: StackFiles = module.stack_files(job)
    if skypilot_accelerator(job.card.key) is None:
        parts.unexpressed.append(
            f"SkyPilot's name for the {job.card.name}: none known, so sky.yaml asks for "
            f"{job.card.accelerators!r}; check `sky show-gpus` and correct it"
        )
    files = {
        **parts.files,
        "sky.yaml": sky_yaml(job, chosen.name, parts),
        "README.txt": readme_text(job, chosen.name, chosen.label, parts),
    }
    return RunConfig(
        stack=chosen.name,
        files=files,
        unexpressed=tuple(parts.unexpressed),
        todos=tuple(parts.todos),
        accelerators=job.card.accelerators,
        commands=tuple(commands(job)),
        launch=launch_command(job),
    )
