"""make_plan's JSON is unchanged by speed work: 20 varied jobs against their snapshots.

tests/data/plan_snapshots.json pins the planner's numbers, so a deliberate change to the
catalogs, the memory model or the throughput model changes them too. Regenerate them from the
committed code with `.venv/bin/python -m tests.test_perf_plan_snapshots` and review the diff.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from planner import make_plan
from planner.spec import JobSpec

SNAPSHOTS = Path(__file__).resolve().parent / "data" / "plan_snapshots.json"

# Each exercises a different branch of the market: fits or not, named or generic or unknown card,
# multi-GPU, budgets and deadlines, a measured speed, CPU offload, device_map, fp32, MoE.
JOBS: dict[str, dict[str, object]] = {
    "seed-13b-qlora": {
        "model": "13B",
        "method": "qlora",
        "seq_len": 4096,
        "dataset_tokens": 20e6,
        "epochs": 3,
    },
    "70b-qlora-48gb": {"params_b": 70, "method": "qlora", "gpu_vram_gb": 48},
    "8b-lora-2x3090": {
        "model": "llama 3 8b",
        "method": "lora",
        "seq_len": 8192,
        "num_gpus": 2,
        "gpu": "3090",
    },
    "7b-full-4090": {"params_b": 7, "method": "full", "gpu": "4090"},
    "mistral-full-a100": {
        "model": "mistral 7b",
        "method": "full",
        "seq_len": 2048,
        "micro_batch": 4,
        "gpu": "A100 80GB",
        "dataset_tokens": 50e6,
    },
    "qwen32b-8xh100-zero3": {
        "model": "qwen2.5-32b",
        "method": "lora",
        "lora_rank": 64,
        "lora_targets": "all-linear",
        "seq_len": 4096,
        "num_gpus": 8,
        "gpu": "H100",
        "sharding": "zero3",
        "dataset_tokens": 1e9,
        "epochs": 2,
    },
    "mixtral-qlora-h100": {
        "model": "mixtral 8x7b",
        "method": "qlora",
        "seq_len": 4096,
        "gpu": "h100",
    },
    "70b-full-fsdp-budget": {
        "model": "llama 3.1 70b",
        "method": "full",
        "seq_len": 8192,
        "sharding": "fsdp",
        "num_gpus": 8,
        "gpu": "H100",
        "budget_usd": 2000,
        "dataset_tokens": 100e6,
    },
    "phi3-t4": {"model": "phi-3 mini", "method": "lora", "seq_len": 512, "gpu": "T4"},
    "gemma-16k-4090": {
        "model": "gemma 2 9b",
        "method": "qlora",
        "framework": "unsloth",
        "seq_len": 16384,
        "gpu": "4090",
        "dataset_tokens": 5e6,
    },
    "deadline-only": {
        "params_b": 8,
        "method": "lora",
        "dataset_tokens": 2e8,
        "epochs": 2,
        "deadline_hours": 6,
    },
    "budget-and-deadline-unmet": {
        "params_b": 70,
        "method": "lora",
        "dataset_tokens": 5e9,
        "budget_usd": 50,
        "deadline_hours": 2,
    },
    "measured-speed": {
        "params_b": 8,
        "method": "qlora",
        "gpu": "A100 40GB",
        "tokens_per_s": 3000,
        "dataset_tokens": 1e8,
    },
    "measured-speed-no-card": {
        "params_b": 8,
        "method": "qlora",
        "tokens_per_s": 3000,
        "dataset_tokens": 1e8,
    },
    "unknown-card": {"params_b": 13, "method": "lora", "gpu": "Voodoo 5 6000"},
    "full-cpu-offload-checkpointing": {
        "params_b": 13,
        "method": "full",
        "cpu_offload": True,
        "gradient_checkpointing": True,
        "optimizer": "adamw",
        "dataset_tokens": 3e7,
        "gpu": "L40S",
    },
    "device-map-2-gpus": {
        "params_b": 34,
        "method": "lora",
        "num_gpus": 2,
        "sharding": "device_map",
        "gpu": "A6000",
        "dataset_tokens": 1e7,
    },
    "fp32-small": {"params_b": 1, "method": "full", "precision": "fp32", "dataset_tokens": 1e7},
    "405b-full-nothing-fits": {"params_b": 405, "method": "full", "seq_len": 8192},
    "tight-24gb-checkpointing-off": {
        "params_b": 8,
        "method": "qlora",
        "gradient_checkpointing": False,
        "gpu": "4090",
        "micro_batch": 8,
        "seq_len": 4096,
        "dataset_tokens": 3e7,
    },
}


def plan_json(job: dict[str, object]) -> str:
    return make_plan(JobSpec.model_validate(job)).model_dump_json()


def current_snapshots() -> dict[str, object]:
    return {name: json.loads(plan_json(job)) for name, job in JOBS.items()}


@pytest.fixture(scope="module")
def snapshots() -> dict[str, object]:
    return json.loads(SNAPSHOTS.read_text(encoding="utf-8"))


def test_every_job_has_a_snapshot(snapshots) -> None:
    assert sorted(snapshots) == sorted(JOBS)


@pytest.mark.parametrize("name", sorted(JOBS))
def test_plan_json_matches_snapshot(name: str, snapshots) -> None:
    # Parsed back, floats compare exactly: a value that rounds differently shows up.
    assert json.loads(plan_json(JOBS[name])) == snapshots[name]


if __name__ == "__main__":
    text = json.dumps(current_snapshots(), indent=1, ensure_ascii=False)
    SNAPSHOTS.write_text(text + "\n", encoding="utf-8")
    print(f"wrote {len(JOBS)} plans to {SNAPSHOTS}")
