"""Reading a message in a thread: the intents the conversation owns (help, undo, new, cheapest,
each in English and Chinese)
and, for everything else, the parser's fields as a patch onto the thread's last job."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from bot.run_configs import ConfigRequest, read_config_request
from planner.parsing.result import RelativeChange
from planner.patterns import lazy_pattern
from planner.spec import JobSpec

SpecJson = dict[str, Any]


@dataclass(frozen=True)
class Help:
    pass


@dataclass(frozen=True)
class Undo:
    pass


@dataclass(frozen=True)
class Reset:
    question: str  # what follows "new:", asked in a fresh thread; may be empty


@dataclass(frozen=True)
class Cheapest:
    text: str  # the parser reads a budget in it ("cheapest under $20?")


@dataclass(frozen=True)
class Question:
    text: str  # for the parser: a new job, or a patch onto the thread's job


@dataclass(frozen=True)
class Reported:
    """A measurement from a real run against the thread's job ("it peaked at 21.3 GiB", "OOM at
    step 3"): the job is re-anchored on it, and the report kept where the workspace allows."""

    text: str  # for the parser: the peak, and any change said with it ("OOM on 2x4090")
    oom: bool
    scope: str  # the workspace, whose settings say whether reports are kept


Intent = Help | Undo | Reset | Cheapest | Question | Reported

_HELP = lazy_pattern(
    r"^\s*[/!]?(?:help|\?+|commands|how (?:does|do) (?:this|you|i use this) work|帮助|求助|"
    r"使用说明|说明|命令|怎么用|如何使用)\s*[?!.？！。]*\s*$",
    re.IGNORECASE,
)
# Chinese verbs act exactly as their English: 撤销/撤回 (undo), 重来/重新开始/新问题 (new).
_UNDO = lazy_pattern(
    r"^\s*(?:undo|undo that|go back|revert|back|撤销|撤回|撤销修改|返回上一步)\s*[.!。！]*\s*$",
    re.IGNORECASE,
)
_RESET = lazy_pattern(
    r"^\s*(?:(?:reset|start over|new question|new job|new)\b|重来|重新开始|新问题|新任务)"
    r"\s*[:,\-–—：，]?\s*(?P<rest>.*)$",
    re.IGNORECASE | re.DOTALL,
)
# "最便宜的卡" is the Chinese of the cheapest-card button and budget hint (bot/phrases.py).
_CHEAPEST = lazy_pattern(
    r"^\s*(?:(?:what(?:'s| is)\s+the\s+|the\s+|show\s+(?:me\s+)?the\s+)?cheapest\b"
    r"|最便宜的\s*(?:显卡|卡|gpu))",
    re.IGNORECASE,
)

CARD_FIELDS = {"gpu", "num_gpus", "gpu_vram_gb"}
# Fields that mean one thing together: a patch that sets one drops the others unless it sets them
# too ("and Llama 70B?" must not keep the old 13B size; "what if LoRA?" must drop 4-bit loading).
LINKED_FIELDS: dict[str, tuple[str, ...]] = {
    "model": ("params_b",),
    "params_b": ("model",),
    "method": ("quant",),
    "gpu": ("gpu_vram_gb",),
    # Each objective has its own reference default; a new rollout its own fraction and GPUs; an
    # RL dataset is counted in prompts or in tokens, not both.
    "objective": ("reference_model",),
    "rollout": (
        "rollout_memory_fraction",
        "rollout_gpus",
        "rollout_tensor_parallel",
        "rollout_sleep",
    ),
    "dataset_prompts": ("dataset_tokens",),
    "dataset_tokens": ("dataset_prompts",),
}


def read_intent(text: str) -> Intent | ConfigRequest:
    if _HELP.match(text):
        return Help()
    if (config := read_config_request(text)) is not None:
        return config
    if _UNDO.match(text):
        return Undo()
    if match := _RESET.match(text):
        return Reset(question=match["rest"].strip())
    if _CHEAPEST.match(text):
        return Cheapest(text=text)
    return Question(text=text)


def patch_from_fields(fields: dict[str, Any]) -> SpecJson:
    """The parser's fields that name JobSpec fields: what a follow-up changes."""
    return {name: value for name, value in fields.items() if name in JobSpec.model_fields}


def compared_cards(fields: dict[str, Any], alternatives: list[dict[str, Any]]) -> list[str]:
    """The cards of a comparison that differs only in the card ("h100 vs a100", "13B QLoRA on
    4090 or H100?"), as the parser read them; empty when the variants differ in anything else."""
    if not alternatives or "gpu" not in fields:
        return []
    if not all("gpu" in alt and alt.keys() <= CARD_FIELDS for alt in alternatives):
        return []
    return [fields["gpu"], *(alt["gpu"] for alt in alternatives)]


def apply_patch(spec: SpecJson, patch: SpecJson) -> SpecJson:
    patched = dict(spec)
    for name in patch:
        for linked in LINKED_FIELDS.get(name, ()):
            if linked not in patch:
                patched.pop(linked, None)
    patched.update(patch)
    return patched


# Fields counted in whole units: a relative change rounds to the nearest, and never below one.
_WHOLE_FIELDS = {"seq_len", "micro_batch", "grad_accum", "num_gpus", "lora_rank"}


def relative_patch(
    spec: SpecJson, relative: Mapping[str, RelativeChange], planned: JobSpec
) -> tuple[SpecJson, list[str]]:
    """The patch "double the context", "half the batch" or "one more epoch" makes: applied to the
    thread's value, else to the value the plan assumed (`planned`, every default filled). Also the
    fields that have no value to change (a dataset size never given)."""
    patch: SpecJson = {}
    unknown: list[str] = []
    for name, change in relative.items():
        base = spec.get(name, getattr(planned, name, None))
        if base is None:
            unknown.append(name)
            continue
        value = base * change.by if change.op == "times" else base + change.by
        if name in _WHOLE_FIELDS:
            value = max(1, round(value))
        if value > 0:
            patch[name] = value
    return patch, unknown
