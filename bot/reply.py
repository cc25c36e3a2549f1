"""The platform-neutral reply document every surface renders. Renderers compute nothing.

All text here is plain (no markup); strings that came from the user are marked so renderers know
to escape them, but every renderer escapes every string anyway.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel

from planner.words import Text

ReplyKind = Literal["plan", "clarify", "error", "help", "rate_limited"]


class MemoryLine(BaseModel):
    component: str
    gib: float


class CardRow(BaseModel):
    """One line of the card table: a card × count and how the job fares on it."""

    gpu_name: str
    count: int
    verdict: Literal["fits", "tight", "no"]
    headroom_gib: float
    hours: float | None
    cost_usd: float | None
    cost_usd_median: float | None
    usd_per_hour: float | None
    highlight: str | None = None  # "cheapest", "fastest", "requested", …


class ContextCurve(BaseModel):
    """Memory per GPU against context (planner.context_curve), and the card it is drawn against."""

    points: list[tuple[int, float]]  # (seq_len, required GiB per GPU)
    asked_seq_len: int
    card: str | None = None  # "1× NVIDIA GeForce RTX 4090"
    card_gib: float | None = None  # its usable memory per GPU


class WhatIf(BaseModel):
    """A button: pressing it applies `patch` to the thread's job (the conversation stores the
    patch and puts its short id in `id`); `text` is the same change as a follow-up to type."""

    id: str  # stable, for persistent views / action ids
    label: Text
    text: Text
    patch: dict[str, Any] = {}  # JobSpec fields, JSON values


class ReplyFile(BaseModel):
    """A text file the reply attaches (a run config): surfaces upload it beside the answer."""

    name: str
    text: str


class Reply(BaseModel):
    # Sentences are `Text`: a catalog sentence keeps its message id, so bot/language.py can show
    # it in the asker's language (planner/words.py).
    kind: ReplyKind
    title: Text
    verdict: Text = ""
    required_gib: float | None = None
    range_gib: tuple[float, float] | None = None
    memory: list[MemoryLine] = []
    table: list[CardRow] = []
    recommendation: list[Text] = []
    suggestions: list[Text] = []
    changes: list[Text] = []
    # One line per job of a comparison ("7B or 13B", "lora vs qlora"), in the order asked.
    comparison: list[Text] = []
    assumptions: list[Text] = []
    warnings: list[Text] = []
    price_date: Text | None = None
    followups: list[Text] = []
    whatifs: list[WhatIf] = []
    has_chart: bool = False
    context_curve: ContextCurve | None = None
    body: Text = ""  # free text for help / clarify / error replies
    language: Literal["en", "zh"] = "en"  # the asker's (bot/language.py); renderers label in it
    # Attachments (bot/run_configs.py): the surfaces upload them beside the rendered answer.
    files: list[ReplyFile] = []
