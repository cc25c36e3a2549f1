"""What one turn of a conversation produces: the answer (Turn), with the thread's new history
when the answer changes it (Outcome); and a message that carries a model's config.json."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from bot.reply import Reply
from bot.state.threads import SpecJson
from planner.plan import Plan


@dataclass(frozen=True)
class Turn:
    """One answer: the Reply, and for the machine-readable forms the plan and what changed."""

    reply: Reply
    plan: Plan | None = None
    changes: dict[str, tuple[Any, Any]] = field(default_factory=dict)
    # Every job of a comparison ("7B or 13B", "lora vs qlora"), planned, in the order asked;
    # empty for a single job.
    alternatives: tuple[Plan, ...] = ()


@dataclass(frozen=True)
class Outcome:
    turn: Turn
    history: tuple[SpecJson, ...] | None = None  # the thread's new history; None leaves it as is


@dataclass(frozen=True)
class ConfigQuestion:
    """A message carrying a config.json: the model, and the words around it (the job)."""

    config: dict[str, Any]
    text: str
