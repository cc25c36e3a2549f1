"""Errors the planner raises for input it cannot plan; each names the field and says why."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pydantic import ValidationError

# How a JobSpec field reads in a sentence (an error, a change in a thread); fields not listed
# read as their own name with spaces.
FIELD_LABELS: dict[str, str] = {
    "model": "model",
    "params_b": "model size (B)",
    "method": "method",
    "quant": "quantization",
    "seq_len": "context length",
    "micro_batch": "micro-batch",
    "grad_accum": "gradient accumulation",
    "gradient_checkpointing": "gradient checkpointing",
    "flash_attention": "flash attention",
    "num_gpus": "GPU count",
    "gpu": "card",
    "gpu_vram_gb": "card memory (GB)",
    "dataset_tokens": "dataset tokens",
    "epochs": "epochs",
    "lora_rank": "LoRA rank",
    "lora_alpha": "LoRA alpha",
    "lora_targets": "LoRA targets",
    "cpu_offload": "CPU offload",
    "budget_usd": "budget ($)",
    "deadline_hours": "deadline (h)",
    "tokens_per_s": "measured tokens/s",
    "pricing": "pricing",
    # Fields a thread's "what changed" can list (issue 33: every change is said).
    "packing": "sequence packing",
    "activation_offloading": "activation offloading",
    "framework": "stack",
    "num_generations": "generations per prompt",
    "prompt_len": "prompt length",
    "completion_len": "completion length",
    "rollout": "rollout engine",
    "rollout_memory_fraction": "vLLM memory fraction",
    "rollout_gpus": "vLLM GPUs",
    "rollout_tensor_parallel": "vLLM tensor parallel",
    "rollout_sleep": "vLLM sleep mode",
    "dataset_prompts": "prompts",
    "images_per_sample": "images per sample",
    "train_vision_tower": "vision tower trained",
    "measured_peak_gib": "measured peak (GiB)",
    "measured_metric": "measured as",
    "memory_scale": "memory scale",
}
MAX_VALUE_SHOWN_CHARS = 40


class PlanningError(ValueError):
    """A job that cannot be planned as given; `field` names the JobSpec field at fault."""

    def __init__(self, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.field = field


def field_label(name: str) -> str:
    return FIELD_LABELS.get(name, name.replace("_", " "))


def invalid_field(error: ValidationError, *, name_the_key: bool = False) -> tuple[str, str]:
    """The field a validation error is about and one sentence saying what is wrong with it, the
    only place a pydantic error becomes words: "Context length can't be 0: it should be greater
    than or equal to 1."; `name_the_key` adds the JSON key for people who wrote JSON."""
    first = error.errors()[0]
    name = str(first["loc"][0]) if first["loc"] else "spec"
    label = field_label(name) if first["loc"] else "the job"
    if name_the_key and first["loc"]:
        label += f" ({'.'.join(str(part) for part in first['loc'])})"
    if first["type"] == "missing":
        sentence = f"{label} is missing"
    else:
        value = str(first.get("input"))[:MAX_VALUE_SHOWN_CHARS]
        limit = first["msg"].removeprefix("Input should be ").removeprefix("Value should be ")
        if limit == first["msg"]:
            sentence = f"{label} can't be {value}: {limit}"
        else:
            sentence = f"{label} can't be {value}: it should be {limit}"
    return name, sentence[:1].upper() + sentence[1:] + "."


def validation_sentence(error: ValidationError) -> str:
    return invalid_field(error)[1]
