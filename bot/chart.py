"""A PNG of hours and cost per card in a reply's table, for surfaces that can attach an image."""

from __future__ import annotations

import io

from bot import format as fmt
from bot.reply import Reply

_BAR_COLOURS = {"fits": "#2e7d32", "tight": "#f9a825", "no": "#9e9e9e"}


def chart_png(reply: Reply) -> bytes:
    """Two bar charts side by side (hours, dollars), one bar per card row; empty table → ValueError.

    matplotlib is imported here so nothing else pays its import time.
    """
    rows = [row for row in reply.table if row.hours is not None or row.cost_usd is not None]
    if not rows:
        raise ValueError("this reply has no hours or costs to chart")
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    labels = [
        fmt.card(row.gpu_name, row.count) + (f" ({row.highlight})" if row.highlight else "")
        for row in rows
    ]
    colours = [_BAR_COLOURS[row.verdict] for row in rows]
    figure = Figure(figsize=(10, 0.45 * len(rows) + 1.6), layout="constrained")
    hours_axes, cost_axes = figure.subplots(1, 2, sharey=True)
    positions = range(len(rows))
    hours_axes.barh(positions, [row.hours or 0 for row in rows], color=colours)
    hours_axes.set_xlabel("hours")
    hours_axes.set_yticks(list(positions), labels)
    hours_axes.invert_yaxis()
    cost_axes.barh(positions, [row.cost_usd or 0 for row in rows], color=colours)
    cost_axes.set_xlabel("cost (USD)")
    for axes, values, text in (
        (hours_axes, [row.hours for row in rows], fmt.hours),
        (cost_axes, [row.cost_usd for row in rows], fmt.usd),
    ):
        for position, value in zip(positions, values, strict=True):
            if value is not None:
                axes.annotate(
                    text(value),
                    (value, position),
                    xytext=(3, 0),
                    textcoords="offset points",
                    va="center",
                    fontsize=8,
                )
        axes.margins(x=0.2)
    figure.suptitle(reply.title[:120])
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=110)
    return buffer.getvalue()
