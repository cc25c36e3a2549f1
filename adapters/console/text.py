"""Reply → terminal text: an aligned card table, ANSI colour only when asked for."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TextIO

from bot import format as fmt
from bot import phrases
from bot.language import duration, label, marks
from bot.reply import CardRow, Reply

_RESET = "\033[0m"
_STYLES = {
    "bold": "\033[1m",
    "dim": "\033[2m",
    "fits": "\033[32m",
    "tight": "\033[33m",
    "no": "\033[31m",
}
_COLUMNS = ("card", "fit", "headroom", "time", "cost", "$/GPU-h", "")
_RIGHT_ALIGNED = {2, 3, 4, 5}


def wants_colour(stream: TextIO) -> bool:
    """Colour on a terminal only, and never with NO_COLOR set (no-color.org) or TERM=dumb."""
    if os.environ.get("NO_COLOR") or os.environ.get("TERM") == "dumb":
        return False
    return stream.isatty()


def render_text(reply: Reply, *, colour: bool = False) -> str:
    def style(text: str, name: str) -> str:
        return f"{_STYLES[name]}{text}{_RESET}" if colour and text else text

    lines = [style(reply.title, "bold")]
    if reply.verdict:
        lines.append(reply.verdict)
    if reply.body:
        lines.append(reply.body)
    if reply.comparison:
        lines += [
            "",
            style(label(reply.language, phrases.SIDE_BY_SIDE), "bold"),
            *_bullets(reply.comparison),
        ]
    if reply.changes:
        lines += [
            "",
            style(label(reply.language, "What changed"), "bold"),
            *_bullets(reply.changes),
        ]
    if reply.required_gib is not None:
        lines += [
            "",
            style(label(reply.language, "Memory per GPU"), "bold")
            + f"  {fmt.gib(reply.required_gib)}",
        ]
        if reply.range_gib is not None:
            span = f"{reply.range_gib[0]:.1f}–{reply.range_gib[1]:.1f}"
            lines[-1] += f" ({label(reply.language, 'range')} {span})"
        if reply.memory:
            lines.append("  " + " · ".join(f"{m.component} {m.gib:.1f}" for m in reply.memory))
    if reply.table:
        lines += ["", *_table(reply.table, style, reply.language)]
    for heading, items in (
        (label(reply.language, "Recommendation"), reply.recommendation),
        (label(reply.language, "Suggestions"), reply.suggestions),
        (label(reply.language, "Assumptions"), reply.assumptions),
        (label(reply.language, "Warnings"), reply.warnings),
    ):
        if items:
            lines += ["", style(heading, "bold"), *_bullets(items)]
    if reply.price_date:
        lines += ["", style(f"{label(reply.language, 'Prices')}: {reply.price_date}.", "dim")]
    if reply.followups:
        lines.append(
            style(f"{label(reply.language, 'Try')}: " + " · ".join(reply.followups), "dim")
        )
    return "\n".join(lines)


def _table(rows: list[CardRow], style: Callable[[str, str], str], language: str) -> list[str]:
    cells = [
        (
            fmt.card(row.gpu_name, row.count),
            label(language, row.verdict),
            f"{row.headroom_gib:+.1f} GiB",
            duration(language, fmt.hours(row.hours)),
            fmt.usd(row.cost_usd),
            fmt.usd(row.usd_per_hour),
            marks(language, row.highlight),
        )
        for row in rows
    ]
    columns_named = tuple(label(language, name) for name in _COLUMNS)
    header, *padded = fmt.padded_columns([columns_named, *cells], _RIGHT_ALIGNED)
    out = [style("  ".join(header).rstrip(), "bold")]
    for row, (_, verdict, *_rest), columns in zip(rows, cells, padded, strict=True):
        # Colour the verdict after padding, so escape codes do not shift the columns.
        columns[1] = columns[1].replace(verdict, style(verdict, row.verdict))
        out.append("  ".join(columns).rstrip())
    return out


def _bullets(items: list[str]) -> list[str]:
    return [f"  • {item}" for item in items]
