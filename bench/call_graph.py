"""How many planner/ and bot/ modules `make_plan` passes through (issue 33: the figure goes down
as the planner's folders follow the pipeline).

Every function call during make_plan of a set of representative jobs (a QLoRA seed, a card that
does not fit, multi-GPU layouts, a budget and a deadline, a measured speed, MoE, preference and
RL objectives) is seen through sys.setprofile; the module of each called function counts once.
Imports and parsing happen before the count starts, so only the planning itself is counted.

Run: .venv/bin/python bench/call_graph.py [--list]
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from types import FrameType

from planner import make_plan
from planner.spec import JobSpec

COUNTED = ("planner", "bot")
JOBS: tuple[dict[str, object], ...] = (
    {"model": "13B", "method": "qlora", "seq_len": 4096, "dataset_tokens": 20e6, "epochs": 3},
    {"params_b": 70, "method": "qlora", "gpu_vram_gb": 48},
    {"model": "llama 3 8b", "method": "lora", "seq_len": 8192, "num_gpus": 2, "gpu": "3090"},
    {"params_b": 7, "method": "full", "gpu": "4090"},
    {"model": "llama 3.1 70b", "method": "full", "num_gpus": 8, "gpu": "H100", "budget_usd": 2000},
    {"params_b": 8, "method": "lora", "dataset_tokens": 2e8, "deadline_hours": 6},
    {"params_b": 8, "method": "qlora", "gpu": "A100 40GB", "tokens_per_s": 3000},
    {"model": "mixtral 8x7b", "method": "qlora", "seq_len": 4096, "gpu": "h100"},
    {"model": "llama 3 8b", "method": "lora", "objective": "dpo", "dataset_tokens": 1e7},
    {"model": "qwen2.5 7b", "method": "lora", "objective": "grpo", "rollout": "vllm-colocate"},
    {"params_b": 13, "method": "lora", "gpu": "Voodoo 5 6000"},
)


def modules_passed(jobs: tuple[dict[str, object], ...]) -> Counter[str]:
    """Calls per module (of COUNTED packages) while planning `jobs`."""
    specs = [JobSpec.model_validate(job) for job in jobs]
    calls: Counter[str] = Counter()

    def seen(frame: FrameType, event: str, _arg: object) -> None:
        if event == "call":
            module = frame.f_globals.get("__name__", "")
            if module.split(".")[0] in COUNTED:
                calls[module] += 1

    sys.setprofile(seen)
    try:
        for spec in specs:
            make_plan(spec)
    finally:
        sys.setprofile(None)
    return calls


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--list", action="store_true", help="print each module and its calls")
    args = parser.parse_args()
    calls = modules_passed(JOBS)
    print(f"make_plan over {len(JOBS)} jobs passes through {len(calls)} planner/bot modules")
    if args.list:
        for module, count in sorted(calls.items()):
            print(f"  {count:8d}  {module}")


if __name__ == "__main__":
    main()
