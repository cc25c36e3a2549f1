"""sky.yaml: a SkyPilot task (SkyPilot 0.14.1's task schema, sky/utils/schemas.py) that asks any
cloud SkyPilot reaches for the plan's card and count, installs the stack and runs it.

`sky launch -c gpuplan sky.yaml` picks the cheapest cloud and region that has the card; the folder
holding the files is the task's workdir, synced to the machine before setup runs.
"""

from __future__ import annotations

import math

from planner.run_config.emit import Entry, block, yaml_text
from planner.run_config.job import HF_TOKEN, RunJob
from planner.run_config.result import StackFiles
from planner.spec import Method

# Disk: the base weights as downloaded (bf16 safetensors, 2 B/param), the trained result and one
# checkpoint (full fine-tuning: 2 B/param of weights + AdamW's two fp32 moments, 8 B/param;
# LoRA: the adapter, from the plan's after-training estimate), and the environment (CUDA wheels
# of torch and the stack, pip's cache), rounded up to 10 GB.
DOWNLOAD_BYTES_PER_PARAM = 2
FULL_CHECKPOINT_BYTES_PER_PARAM = 2 + 8
ENVIRONMENT_GB = 50
MIN_DISK_GB = 100
CLUSTER = "gpuplan"


def disk_gb(job: RunJob) -> int:
    params_b = job.plan.model.params_b
    if job.spec.method is Method.full:
        trained_gb = params_b * (DOWNLOAD_BYTES_PER_PARAM + FULL_CHECKPOINT_BYTES_PER_PARAM)
    else:
        adapter_mb = job.plan.after_training.adapter_mb if job.plan.after_training else None
        trained_gb = 2 * (adapter_mb or 0.0) / 1000
    needed_gb = params_b * DOWNLOAD_BYTES_PER_PARAM + trained_gb + ENVIRONMENT_GB
    return max(MIN_DISK_GB, 10 * math.ceil(needed_gb / 10))


def task_name(job: RunJob, stack: str) -> str:
    return f"gpuplan-{job.plan.model.key}-{job.spec.method.value}-{stack}".lower()


def sky_yaml(job: RunJob, stack: str, files: StackFiles) -> str:
    why = job.why
    resources = block(
        Entry("accelerators", job.card.accelerators, why("card")),
        Entry("use_spot", job.spot, why("spot")),
        Entry(
            "disk_size",
            disk_gb(job),
            f"GB: {job.plan.model.params_b:g}B weights, checkpoints and the environment",
        ),
    )
    entries = [
        Entry("name", task_name(job, stack)),
        Entry("resources", resources),
        Entry("workdir", ".", "this folder, synced to the machine"),
        Entry("secrets", block(Entry(HF_TOKEN, None, "gated model: sky launch --secret HF_TOKEN")))
        if job.gated
        else None,
        Entry("setup", files.install + "\n"),
        Entry("run", files.launch + "\n"),
    ]
    header = [
        f"SkyPilot task (SkyPilot 0.14.1): {launch_command(job)}",
        f"{job.card.count}× {job.card.name} for {job.plan.model.name} ({stack}).",
    ]
    return yaml_text(entries, header)


def launch_command(job: RunJob) -> str:
    secret = f" --secret {HF_TOKEN}" if job.gated else ""
    return f"sky launch -c {CLUSTER} sky.yaml{secret}"
