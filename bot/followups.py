"""Reading a message in a thread: the intents the conversation owns (help, undo, new, compare,
cheapest) and, for everything else, the parser's fields as a patch onto the thread's last job."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

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
class Compare:
    gpus: tuple[str, ...]  # catalog keys, in the order asked
    gpu_names: tuple[str, ...]


@dataclass(frozen=True)
class Cheapest:
    text: str  # the parser reads a budget in it ("cheapest under $20?")


@dataclass(frozen=True)
class Question:
    text: str  # for the parser: a new job, or a patch onto the thread's job


Intent = Help | Undo | Reset | Compare | Cheapest | Question

_HELP = re.compile(
    r"^\s*[/!]?(?:help|\?+|commands|how (?:does|do) (?:this|you|i use this) work)\s*[?!.]*\s*$",
    re.IGNORECASE,
)
_UNDO = re.compile(r"^\s*(?:undo|undo that|go back|revert|back)\s*[.!]*\s*$", re.IGNORECASE)
_RESET = re.compile(
    r"^\s*(?:reset|start over|new question|new job|new)\b\s*[:,\-–—]?\s*(?P<rest>.*)$",
    re.IGNORECASE | re.DOTALL,
)
_COMPARE = re.compile(r"^\s*compare\s+(?P<rest>.+)$|\b(?:vs\.?|versus)\b", re.IGNORECASE)
_COMPARE_SPLIT = re.compile(r"\s*(?:,|/|\bvs\.?|\bversus\b|\band\b|\bor\b|\bwith\b)\s*", re.I)
_CHEAPEST = re.compile(
    r"^\s*(?:what(?:'s| is)\s+the\s+|the\s+|show\s+(?:me\s+)?the\s+)?cheapest\b",
    re.IGNORECASE,
)
# Fields that mean one thing together: a patch that sets one drops the others unless it sets them
# too ("and Llama 70B?" must not keep the old 13B size; "what if LoRA?" must drop 4-bit loading).
LINKED_FIELDS: dict[str, tuple[str, ...]] = {
    "model": ("params_b",),
    "params_b": ("model",),
    "method": ("quant",),
    "gpu": ("gpu_vram_gb",),
}


def read_intent(text: str) -> Intent:
    if _HELP.match(text):
        return Help()
    if _UNDO.match(text):
        return Undo()
    if match := _RESET.match(text):
        return Reset(question=match["rest"].strip())
    if _CHEAPEST.match(text):
        return Cheapest(text=text)
    if (compare := _read_compare(text)) is not None:
        return compare
    return Question(text=text)


def patch_from_fields(fields: dict[str, Any]) -> SpecJson:
    """The parser's fields that name JobSpec fields: what a follow-up changes."""
    return {name: value for name, value in fields.items() if name in JobSpec.model_fields}


def apply_patch(spec: SpecJson, patch: SpecJson) -> SpecJson:
    patched = dict(spec)
    for name in patch:
        for linked in LINKED_FIELDS.get(name, ()):
            if linked not in patch:
                patched.pop(linked, None)
    patched.update(patch)
    return patched


def _read_compare(text: str) -> Compare | None:
    match = _COMPARE.search(text)
    if match is None:
        return None
    from planner.catalog.gpus import resolve_gpu

    rest = match["rest"] if match["rest"] else text
    gpus = []
    for part in _COMPARE_SPLIT.split(rest.strip().rstrip("?!. ")):
        words = re.sub(r"^(?:on\s+|an?\s+|the\s+)+", "", part.strip(), flags=re.I)
        spec = resolve_gpu(words) if words else None
        if spec is not None and spec.key not in (g.key for g in gpus):
            gpus.append(spec)
    if len(gpus) < 2:
        return None
    return Compare(gpus=tuple(g.key for g in gpus), gpu_names=tuple(g.name for g in gpus))
