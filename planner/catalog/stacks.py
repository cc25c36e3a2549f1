"""The training stacks' versioned facts: one data file per stack (planner/data/stack-*.json), each
fact with its source and the releases it holds for, read on first use (nothing at import).

The memory constants each stack calibrates live in planner.estimate.memory.profiles; these
files say what the stack does by default at a given release (its loss kernel, how MoE experts
load, its rollout engine's memory fraction, ...), which `resolve` turns into the job's defaults
and assumptions.
See docs/stacks.md.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from planner.data_files import DATA_DIR
from planner.messages import STACK_NOTES, STACKS
from planner.spec import Framework


@dataclass(frozen=True, slots=True)
class StackFact:
    """One default of a stack: `value` (free text or a machine value), the releases it holds for
    ("all", ">= 1.0", "< 0.18", "3.x"), where it applies, its source and what is uncertain."""

    value: Any
    versions: str
    source: str
    applies: str | None = None
    uncertain: str | None = None
    # Machine-read parts: a loss kernel (planner.spec.LossKernel value) the stack uses by
    # default, for these methods only (None: all), and not for vision-language models.
    kernel: str | None = None
    methods: tuple[str, ...] | None = None
    text_only: bool = False
    said: str | None = None  # how an answer names the default in one clause (a STACK_NOTES id)
    # MoE facts: whether fused experts are held quantised under 4-bit loading, for these model
    # families only (None: every family the other facts do not name).
    quantized: bool | None = None
    families: tuple[str, ...] | None = None
    # ... and whether its loader dequantises a whole MoE layer's experts when the layer runs
    # (a parametrised 3-D tensor), not one nn.Linear expert at a time.
    dequantised_per_layer: bool = False
    # Rollout facts: the engine an online method generates with, and whether it sleeps.
    engine: str | None = None
    sleep: bool | None = None
    # Packing facts: the stack drops padding, so a micro-batch holds only its real tokens.
    padding_free: bool = False


@dataclass(frozen=True, slots=True)
class Stack:
    key: str
    name: str
    current_version: str | None
    current_date: str
    facts: dict[str, tuple[StackFact, ...]]

    def fact(self, name: str, version: str | None) -> StackFact | None:
        """The first fact called `name` that holds for `version` (None: the current release)."""
        for fact in self.facts.get(name, ()):
            if holds_for(fact.versions, version or self.current_version):
                return fact
        return None

    def family_fact(self, name: str, version: str | None, family: str) -> StackFact | None:
        """The first fact called `name` for this release that names `family`, else the first
        that names no family."""
        facts = [
            f
            for f in self.facts.get(name, ())
            if holds_for(f.versions, version or self.current_version)
        ]
        named = [f for f in facts if f.families and family in f.families]
        general = [f for f in facts if not f.families]
        return (named or general or [None])[0]

    def current_words(self) -> str:
        if self.current_version:
            return f"{self.current_version}, {self.current_date}"
        return STACKS("release.as_of", date=self.current_date)


def version_key(version: str) -> tuple[int, ...]:
    """ "2025.11.4" → (2025, 11, 4); non-numeric parts are ignored ("1.0rc1" → (1, 0, 1))."""
    return tuple(int(part) for part in re.findall(r"\d+", version)[:4])


_RANGE = re.compile(r"^(>=|<|<=|>)\s?([\d.]+)$")


def holds_for(versions: str, version: str | None) -> bool:
    """Whether a fact's release range admits `version`; an unknown release (None) takes the
    facts written for the current one, and a range that is not a comparison holds for all."""
    m = _RANGE.match(versions.strip())
    if m is None or version is None:
        return True
    left, right = version_key(version), version_key(m.group(2))
    return {
        ">=": left >= right,
        ">": left > right,
        "<": left < right,
        "<=": left <= right,
    }[m.group(1)]


@lru_cache(maxsize=16)
def stack(framework: Framework) -> Stack:
    """The stack's data file, parsed once."""
    path = DATA_DIR / f"stack-{Framework(framework).value}.json"
    raw = json.loads(path.read_text(encoding="utf-8"))
    facts = {
        name: tuple(
            StackFact(
                **{
                    **entry,
                    "methods": tuple(entry.get("methods") or ()) or None,
                    "families": tuple(entry.get("families") or ()) or None,
                    "said": STACK_NOTES(entry["said"]) if "said" in entry else None,
                }
            )
            for entry in entries
        )
        for name, entries in raw["facts"].items()
    }
    current = raw["current"]
    return Stack(raw["stack"], raw["name"], current["version"], current["date"], facts)


@lru_cache(maxsize=1024)
def stack_fact(framework: Framework, name: str, version: str | None) -> StackFact | None:
    """`stack(framework).fact(name, version)`, remembered: plans ask it for every layout."""
    return stack(framework).fact(name, version)


def method_fact(
    framework: Framework, name: str, version: str | None, method: str
) -> StackFact | None:
    """stack_fact, when it holds for `method` (a fact naming no methods holds for all)."""
    fact = stack_fact(framework, name, version)
    if fact is None or (fact.methods and method not in fact.methods):
        return None
    return fact


@lru_cache(maxsize=1024)
def stack_family_fact(
    framework: Framework, name: str, version: str | None, family: str
) -> StackFact | None:
    """`stack(framework).family_fact(name, version, family)`, remembered."""
    return stack(framework).family_fact(name, version, family)


def resolve_version(
    framework: Framework, version: str | None, said: list[str], warned: list[str]
) -> str | None:
    """The release the job is planned at: the one stated, else the stack's current release
    (said). A release newer than the newest known is planned with the newest known profile."""
    known = stack(framework)
    if version is not None and not version_key(version):
        current = known.current_words()
        warned.append(
            STACKS("release.not_version", stack=known.name, version=version, current=current)
        )
        return known.current_version
    if version is None:
        said.append(STACKS("release.current", stack=known.name, current=known.current_words()))
        return known.current_version
    newest = known.current_version
    if newest is not None and version_key(version) > version_key(newest):
        warned.append(STACKS("release.newer", stack=known.name, version=version, newest=newest))
        return newest
    said.append(STACKS("release.stated", stack=known.name, version=version))
    return version
