"""Published resource figures for preference and RL runs (shared/docs/post-training.md §5.5, §6),
scored against gpuplan's plans; bench/accuracy.py prints the table.

Each figure is a claim about one job: it fit on its cards, it ran out of GPU memory, or its host
ran out of (or had enough) RAM. A GPU claim is right when the option for that card × count says
"fits"/"tight" (fits) or "no" (OOM); a host claim when `memory.host_ram_gib` is below (fits) or
above (OOM) the host's RAM. Jobs are planned as the source ran them where it says, else with
gpuplan's stated defaults; what the source leaves out is in `assumed`. Vendor claims (Unsloth's
GRPO figures) are not measurements and are not scored.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from planner.planner import make_plan, parse_spec

Claim = Literal["fits", "oom", "host_fits", "host_oom"]


@dataclass(frozen=True)
class Figure:
    id: str
    source: str
    spec: dict[str, object]
    claim: Claim
    host_ram_gib: float | None = None  # for host claims: the host's RAM
    assumed: str = ""


# verl's minimum GRPO configs run its hybrid engine: vLLM colocated at gpu_memory_utilization
# 0.5, asleep through the actor update (free_cache_engine: true), prompts and responses of 512
# (its generated config), FSDP on several GPUs. Its engine's tensor parallel is 2 by default
# (`_VERL_TP`), 1 on one GPU.
_VERL_GRPO = {
    "objective": "grpo",
    "rollout": "vllm-colocate",
    "rollout_memory_fraction": 0.5,
    "rollout_sleep": True,
    "prompt_len": 512,
    "completion_len": 512,
}
_VERL_TP = {"rollout_tensor_parallel": 2, "sharding": "fsdp"}
_VERL = "verl docs/perf/device_tuning.rst (2025-06-25)"
FIGURES = (
    Figure(
        "verl-0.5b-lora",
        _VERL,
        {"model": "qwen2.5 0.5b", "method": "lora", "gpu": "h100", **_VERL_GRPO},
        "fits",
    ),
    Figure(
        "verl-7b-lora",
        _VERL,
        {"model": "qwen2.5 7b", "method": "lora", "gpu": "h100", **_VERL_GRPO},
        "fits",
    ),
    Figure(
        "verl-7b-full-2xh800",
        _VERL,
        {
            "model": "qwen2.5 7b",
            "method": "full",
            "gpu": "h800",
            "num_gpus": 2,
            **_VERL_GRPO,
            **_VERL_TP,
        },
        "fits",
        assumed="Qwen2-7B planned as Qwen2.5-7B (same shape but for the vocabulary)",
    ),
    Figure(
        "verl-14b-lora-2xh100",
        _VERL,
        {
            "model": "qwen2.5 14b",
            "method": "lora",
            "gpu": "h100",
            "num_gpus": 2,
            **_VERL_GRPO,
            **_VERL_TP,
        },
        "fits",
    ),
    Figure(
        "verl-14b-full-4xh800",
        _VERL,
        {
            "model": "qwen2.5 14b",
            "method": "full",
            "gpu": "h800",
            "num_gpus": 4,
            **_VERL_GRPO,
            **_VERL_TP,
        },
        "fits",
    ),
    Figure(
        "verl-32b-lora-4xh100",
        _VERL,
        {
            "model": "qwen2.5 32b",
            "method": "lora",
            "gpu": "h100",
            "num_gpus": 4,
            **_VERL_GRPO,
            **_VERL_TP,
        },
        "fits",
    ),
    Figure(
        "verl-72b-lora-8xh100",
        _VERL,
        {
            "model": "qwen2.5 72b",
            "method": "lora",
            "gpu": "h100",
            "num_gpus": 8,
            **_VERL_GRPO,
            **_VERL_TP,
            "rollout_tensor_parallel": 4,
        },
        "fits",
        assumed="vLLM tensor parallel 4: the smallest that holds the engine's 145 GB copy in its "
        "0.5 share of an H100 (verl's default 2 cannot start)",
    ),
    Figure(
        "llamafactory-10175-sft-bs4",
        "hiyouga/LlamaFactory#10175",
        {
            "model": "qwen3 4b",
            "method": "lora",
            "lora_rank": 8,
            "framework": "llama-factory",
            "micro_batch": 4,
            "seq_len": 2048,
            "gpu": "a800",
        },
        "fits",
        assumed="the 4B read as Qwen3-4B; cutoff_len 2048 (LLaMA-Factory's examples)",
    ),
    Figure(
        "llamafactory-10175-dpo-bs2",
        "hiyouga/LlamaFactory#10175",
        {
            "model": "qwen3 4b",
            "method": "lora",
            "lora_rank": 8,
            "framework": "llama-factory",
            "objective": "dpo",
            "micro_batch": 2,
            "seq_len": 2048,
            "gpu": "a800",
        },
        "oom",
        assumed="as above; the thread's dependence on gradient accumulation is unexplained",
    ),
    Figure(
        "llamafactory-10175-dpo-bs1",
        "hiyouga/LlamaFactory#10175",
        {
            "model": "qwen3 4b",
            "method": "lora",
            "lora_rank": 8,
            "framework": "llama-factory",
            "objective": "dpo",
            "micro_batch": 1,
            "seq_len": 2048,
            "gpu": "a800",
        },
        "fits",
        assumed="as above",
    ),
    Figure(
        "verl-224-host-96gb",
        "volcengine/verl#224",
        {
            "model": "qwen2.5 7b",
            "method": "full",
            "num_gpus": 8,
            "gpu": "a800",
            **_VERL_GRPO,
            **_VERL_TP,
        },
        "host_oom",
        host_ram_gib=96e9 / 2**30,
        assumed="Qwen-7B planned as Qwen2.5-7B, GRPO as verl's examples run it",
    ),
    Figure(
        "verl-224-host-1tb",
        "volcengine/verl#224",
        {
            "model": "qwen2.5 7b",
            "method": "full",
            "num_gpus": 8,
            "gpu": "a800",
            **_VERL_GRPO,
            **_VERL_TP,
        },
        "host_fits",
        host_ram_gib=1e12 / 2**30,
    ),
    Figure(
        "llamafactory-798-host-400gb",
        "hiyouga/LlamaFactory#798",
        {
            "model": "llama 2 7b",
            "method": "full",
            "objective": "dpo",
            "num_gpus": 8,
            "sharding": "zero3",
            "framework": "llama-factory",
            "gpu": "a800",
        },
        "host_oom",
        host_ram_gib=400e9 / 2**30,
        assumed="7B read as Llama-2-7B; ZeRO-3 (the thread does not say)",
    ),
)


@dataclass(frozen=True)
class Scored:
    figure: Figure
    ours: str  # what gpuplan says, in the claim's terms
    right: bool


def score(figure: Figure) -> Scored:
    plan = make_plan(parse_spec(figure.spec))
    if figure.claim in ("host_fits", "host_oom"):
        host_gib = plan.memory.host_ram_gib or 0.0
        fits = host_gib <= (figure.host_ram_gib or 0.0)
        right = fits == (figure.claim == "host_fits")
        return Scored(figure, f"host RAM {host_gib:,.0f} GiB vs {figure.host_ram_gib:,.0f}", right)
    row = plan.requested
    verdict = row.verdict if row is not None else "no card"
    right = (verdict != "no") == (figure.claim == "fits")
    needed = f"{row.required_gib:.1f} of {row.usable_gib:.1f} GiB" if row else ""
    return Scored(figure, f"{verdict} ({needed})", right)


def table() -> str:
    scored = [score(figure) for figure in FIGURES]
    right = sum(s.right for s in scored)
    lines = [
        f"Preference and RL figures: {right}/{len(scored)} right",
        "",
        "| id | source | claim | gpuplan | right |",
        "|---|---|---|---|---|",
    ]
    for s in scored:
        mark = "yes" if s.right else "**no**"
        lines.append(
            f"| {s.figure.id} | {s.figure.source} | {s.figure.claim} | {s.ours} | {mark} |"
        )
    return "\n".join(lines)
