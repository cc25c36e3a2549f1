"""A PNG of hours and cost per card in a reply's table, for surfaces that can attach an image."""

from __future__ import annotations

import io

from bot import format as fmt
from bot import phrases
from bot.reply import CardRow, Reply

_BAR_COLOURS = {"fits": "#2e7d32", "tight": "#f9a825", "no": "#9e9e9e"}
_REQUESTED_HATCH = "//"


def chart_png(reply: Reply) -> bytes:
    """Two bar charts side by side (hours, dollars), one bar per card row; empty table → ValueError.

    matplotlib is imported here so nothing else pays its import time.
    """
    if not any(row.hours is not None or row.cost_usd is not None for row in reply.table):
        raise ValueError("this reply has no hours or costs to chart")
    # Every row of the table, so the chart says what the table says: a card that does not hold
    # the job gets a labelled empty bar, never a time or a price.
    rows = reply.table
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    labels = [
        fmt.card(row.gpu_name, row.count) + (f" ({row.highlight})" if row.highlight else "")
        for row in rows
    ]
    colours = [_BAR_COLOURS[row.verdict] for row in rows]
    hatches = [_REQUESTED_HATCH if _is_requested(row) else "" for row in rows]
    figure = Figure(figsize=(10, 0.45 * len(rows) + 1.6), layout="constrained")
    hours_axes, cost_axes = figure.subplots(1, 2, sharey=True)
    positions = range(len(rows))
    hours_axes.barh(positions, [row.hours or 0 for row in rows], color=colours, hatch=hatches)
    hours_axes.set_xlabel("hours")
    hours_axes.set_yticks(list(positions), labels)
    hours_axes.invert_yaxis()
    cost_axes.barh(positions, [row.cost_usd or 0 for row in rows], color=colours, hatch=hatches)
    cost_axes.set_xlabel("cost (USD)")
    for axes, values, text in (
        (hours_axes, [row.hours for row in rows], fmt.hours),
        (cost_axes, [row.cost_usd for row in rows], fmt.usd),
    ):
        for position, value, row in zip(positions, values, rows, strict=True):
            label = phrases.DOES_NOT_FIT if row.verdict == "no" else None
            if value is not None or label is not None:
                axes.annotate(
                    label or text(value),
                    (value or 0, position),
                    xytext=(3, 0),
                    textcoords="offset points",
                    va="center",
                    fontsize=8,
                )
        axes.margins(x=0.2)
    figure.legend(handles=_legend(rows), loc="outside lower center", ncols=4, fontsize=8)
    figure.suptitle(reply.title[:120])
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=110)
    return buffer.getvalue()


def _is_requested(row: CardRow) -> bool:
    return phrases.REQUESTED in (row.highlight or "").split(", ")


def _legend(rows: list[CardRow]) -> list:
    """What the colours and the hatching mean, for the verdicts and marks the chart shows."""
    from matplotlib.patches import Patch

    shown = {row.verdict for row in rows}
    handles = [
        Patch(color=_BAR_COLOURS[verdict], label=phrases.CHART_VERDICTS[verdict])
        for verdict in ("fits", "tight", "no")
        if verdict in shown
    ]
    if any(_is_requested(row) for row in rows):
        handles.append(
            Patch(
                facecolor="white",
                edgecolor="black",
                hatch=_REQUESTED_HATCH,
                label=phrases.REQUESTED,
            )
        )
    return handles
