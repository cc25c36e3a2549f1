"""How numbers and tables read in replies, in one place: every surface says "3.2 h" and "$12.40"
alike, and lines its card table up the same way."""

from __future__ import annotations

import unicodedata
from collections.abc import Callable, Collection, Sequence

from planner.messages import DURATIONS
from planner.units import hours_text


def gib(value_gib: float) -> str:
    return f"{value_gib:.1f} GiB"


def hours(value_h: float | None) -> str:
    return "–" if value_h is None else hours_text(value_h)


def usd(value_usd: float | None) -> str:
    if value_usd is None:
        return "–"
    if value_usd < 100:
        return f"${value_usd:,.2f}"
    return f"${value_usd:,.0f}"


def signed(delta: float, render: Callable[[float], str]) -> str:
    """A change with its sign, rendered like its quantity: "+2.5 GiB", "−4.3 h", "+$5.90"."""
    return ("+" if delta >= 0 else "−") + render(abs(delta))


def signed_hours(delta_h: float) -> str:
    """A change of duration with its sign ("−4.3 h"), said in the reply's language."""
    return DURATIONS("signed", sign="+" if delta_h >= 0 else "−", duration=hours(abs(delta_h)))


def card(gpu_name: str, count: int) -> str:
    return f"{count}× {gpu_name}"


def tokens(value: float) -> str:
    for scale, suffix in ((1e12, "T"), (1e9, "B"), (1e6, "M"), (1e3, "k")):
        if value >= scale:
            return f"{value / scale:.3g}{suffix}"
    return f"{value:.0f}"


def display_width(text: str) -> int:
    """Columns `text` takes in a monospace font: a CJK character takes two."""
    return sum(2 if unicodedata.east_asian_width(char) in "WF" else 1 for char in text)


def pad(text: str, width: int, *, right: bool = False) -> str:
    """`text` padded to `width` display columns, flush right or left."""
    fill = " " * max(0, width - display_width(text))
    return fill + text if right else text + fill


def padded_columns(
    rows: Sequence[Sequence[str]], right_aligned: Collection[int]
) -> list[list[str]]:
    """Each cell padded to its column's widest cell, numbers (the `right_aligned` column indexes)
    flush right; cells stay separate so a surface can style one after padding."""
    widths = (
        [max(display_width(row[i]) for row in rows) for i in range(len(rows[0]))] if rows else []
    )
    return [
        [
            pad(cell, width, right=i in right_aligned)
            for i, (cell, width) in enumerate(zip(row, widths, strict=True))
        ]
        for row in rows
    ]
