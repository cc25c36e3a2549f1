"""The state one parse builds up: the text still unread, and what has been read from it."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from planner.parsing.numbers import BadNumber, to_float
from planner.patterns import lazy_pattern

_FILLER = " "
# Where a number (or the "~" before one) can start: after anything but a digit or a point.
_DIGIT_OR_POINT = frozenset("0123456789.")
_NUMBER_START = lazy_pattern(r"[~\d.](?<![\d.][\d.])")
# Words that make two values of one field a comparison ("8b vs 70b", "lora or qlora").
COMPARING = lazy_pattern(
    r"(?<![a-z])(?:vs\.?|versus|or|compared?|comparison|difference|between|和|还是|对比)(?![a-z])"
)


@dataclass
class Reading:
    """Readers find patterns in `text`, record fields, and blank what they used (`take`).

    Blanking means a later reader never reads the same characters again: once "mixtral 8x7b" is a
    model, its "8x7" cannot become a GPU count.
    """

    text: str
    source: str = ""
    cased: dict[str, str] = field(default_factory=dict)
    fields: dict[str, Any] = field(default_factory=dict)
    assumptions: list[str] = field(default_factory=list)
    alternatives: list[dict[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    # Samples counted but not yet turned into tokens (that needs the context length).
    samples: float | None = None
    # The middle of a per-sample length range ("300–400 tokens per sample"), for the dataset.
    sample_tokens: float | None = None
    # Training steps and the batch each holds ("3000 steps of batch 64"), for the dataset.
    steps: tuple[float, int | None] | None = None
    # The whole step's batch ("global_batch_size=256"), from the batch reader.
    global_batch: int | None = None
    # verl's micro-batch key, its value and whether it is per GPU already (planner.parsing.batch).
    verl_micro: tuple[str, int, bool] | None = None
    # Compute the user has in GPU-hours ("200 GPU-hours"), a deadline once the GPUs are known.
    gpu_hours: float | None = None
    # A question to ask instead of guessing (one short line), see assemble.py.
    doubt: str | None = None
    # Changes relative to the thread's job ("double the context"): field → ("times"|"plus", by).
    relative: dict[str, tuple[str, float]] = field(default_factory=dict)
    # Methods the user ruled out ("not QLoRA", "full FT is overkill"), see contrast.py.
    ruled_out: set[str] = field(default_factory=set)
    # Number starts in `text`, recomputed only when `take` has changed it.
    _number_starts: tuple[str, list[int]] = field(default=("", []), repr=False)

    def __post_init__(self) -> None:
        self.source = self.source or self.text

    def matches(self, pattern: re.Pattern[str]) -> list[re.Match[str]]:
        return list(pattern.finditer(self.text))

    def matches_if(self, words: tuple[str, ...], pattern: re.Pattern[str]) -> list[re.Match[str]]:
        """`matches(pattern)` when one of `words` (a part of every match) is in the text; otherwise
        nothing, without scanning it character by character."""
        text = self.text
        return self.matches(pattern) if any(word in text for word in words) else []

    def matches_when(self, hint: re.Pattern[str], pattern: re.Pattern[str]) -> list[re.Match[str]]:
        """`matches(pattern)` when `hint`, a quick pattern every match of `pattern` contains, is
        found; otherwise nothing."""
        return self.matches(pattern) if hint.search(self.text) else []

    def matches_at_numbers(
        self, pattern: re.Pattern[str], needs: tuple[str, ...] = ()
    ) -> list[re.Match[str]]:
        """`matches(pattern)`, for a pattern whose every match starts with a number or a "~": tried
        only where numbers start, not at every character (lookbehinds still see what precedes),
        and not at all when none of `needs` (words every match contains) is in the text."""
        if needs and not any(word in self.text for word in needs):
            return []
        text, starts = self._number_starts
        if text is not self.text:
            starts = [m.start() for m in _NUMBER_START.finditer(self.text)]
            self._number_starts = (self.text, starts)
        found: list[re.Match[str]] = []
        end = 0
        for start in starts:
            if start >= end and (m := pattern.match(self.text, start)):
                found.append(m)
                end = m.end()
        return found

    def matches_near(
        self, pattern: re.Pattern[str], anchor: re.Pattern[str], reach: int
    ) -> list[re.Match[str]]:
        """`matches(pattern)`, for a pattern whose every match contains a match of `anchor`
        starting at most `reach` characters after its own start: only the stretches in front of
        anchors are scanned, so a long pattern costs little on text that never names its anchor."""
        found: list[re.Match[str]] = []
        position = 0
        while (hit := anchor.search(self.text, position)) is not None:
            m = pattern.search(self.text, max(position, hit.start() - reach))
            if m is None:
                break
            found.append(m)
            position = max(m.end(), m.start() + 1)
        return found

    def take(self, match: re.Match[str], group: int | str = 0) -> None:
        start, end = match.span(group)
        text = self.text[:start] + _FILLER * (end - start) + self.text[end:]
        known, starts = self._number_starts
        if known is self.text:
            # Blanking removes the starts inside the span and can only add one right after it.
            kept = [s for s in starts if not start <= s < end]
            if end < len(text) and text[end] in _DIGIT_OR_POINT and end not in kept:
                kept = sorted([*kept, end])
            self._number_starts = (text, kept)
        self.text = text

    def put(self, name: str, value: Any, assumption: str | None = None) -> bool:
        """Record a field unless an earlier, more specific reader already did."""
        if name in self.fields:
            return False
        self.fields[name] = value
        if assumption and assumption not in self.assumptions:
            self.assumptions.append(assumption)
        return True

    def put_spellings(
        self, name: str, words: tuple[str, ...], table: Sequence[tuple[re.Pattern[str], Any]]
    ) -> None:
        """Record `name` from the first spelling in `table` found in the text (each match is taken
        out); the table is searched only when one of `words`, which every spelling contains, is."""
        if not any(word in self.text for word in words):
            return
        for pattern, value in table:
            m = pattern.search(self.text)
            if m:
                self.put(name, value)
                self.take(m)

    def assume(self, assumption: str) -> None:
        if assumption not in self.assumptions:
            self.assumptions.append(assumption)

    def number(self, match: re.Match[str], group: int | str, what: str) -> float:
        """The number in `group`; a minus sign in front ("-3 epochs") is refused with a message."""
        start = match.start(group)
        before = self.source[max(0, start - 2) : start]
        if before.endswith("-") and not before[:1].isalnum():
            raise BadNumber(f"{what} must be positive, not -{match.group(group)}.")
        return to_float(match.group(group))
