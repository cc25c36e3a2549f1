"""README.txt: the commands in order, what is left to fill in, and what the stack cannot say."""

from __future__ import annotations

from planner.run_config.job import HF_TOKEN, RunJob
from planner.run_config.result import StackFiles
from planner.run_config.skypilot import CLUSTER, launch_command


def commands(job: RunJob) -> list[str]:
    """The commands in the order they are run."""
    ordered = [
        'pip install "skypilot[CLOUD]"   # CLOUD: runpod, lambda, vast, aws, gcp, …',
        "sky check",
    ]
    if job.gated:
        ordered.append(f"export {HF_TOKEN}=hf_...   # a token whose account accepted the licence")
    return [*ordered, launch_command(job), f"sky logs {CLUSTER}", f"sky down {CLUSTER}"]


def readme_text(job: RunJob, stack: str, label: str, stack_files: StackFiles) -> str:
    """README.txt for `stack` (its display `label`)."""
    card = job.card
    lines = [
        f"gpuplan run config: {job.plan.model.name}, {job.spec.method.value}, in {label}",
        f"Plan: {job.card.required_gib:,.1f} GiB per GPU on {card.count}× {card.name} "
        f"({card.usable_gib:,.1f} GiB usable): {card.verdict}.",
    ]
    if not card.named:
        lines.append("No card was named: the plan's cheapest run was taken.")
    lines += ["", "Files:"]
    lines += [f"  {name}" for name in stack_files.files]
    lines += ["  sky.yaml", "  README.txt", "", "1. Fill in the TODOs:"]
    lines += [f"   - {todo}" for todo in stack_files.todos]
    lines += ["", "2. Launch it with SkyPilot, from this folder:"]
    lines += [f"   {command}" for command in commands(job)]
    lines += ["", "   Or on a machine that has the card, in this folder:"]
    lines += [f"   {line}" for line in stack_files.install.splitlines()]
    lines += [f"   {line}" for line in stack_files.launch.splitlines()]
    if job.gated:
        lines += [
            "",
            f"{job.hf_id} is gated: accept its licence on the Hub, then give the job {HF_TOKEN}",
            "(sky.yaml names it as a secret; never write the value in a file).",
        ]
    lines += ["", f"Not expressed in {stack} (planned, but the files cannot say it):"]
    lines += [f"  - {item}" for item in stack_files.unexpressed] or ["  (nothing)"]
    lines += ["", "The plan's assumptions, which these files realise:"]
    lines += [f"  - {assumption}" for assumption in job.plan.assumptions]
    return "\n".join(lines) + "\n"
