"""A PNG of hours and cost per card in a reply's table, for surfaces that can attach an image."""

from __future__ import annotations

import io
import re
from functools import cache
from typing import Any, NamedTuple

from bot import format as fmt
from bot import phrases
from bot.language import duration, label, marks
from bot.reply import CardRow, ContextCurve, Reply

_BAR_COLOURS = {"fits": "#2e7d32", "tight": "#f9a825", "no": "#9e9e9e"}
_REQUESTED_HATCH = "//"
CURVE_HEIGHT_IN = 2.6
# The curve's axis ends this far above the card's memory (or the asked point), so the card line
# sits in view and the curve leaves the top where the job stops fitting.
CURVE_TOP_OVER_CARD = 1.6
# Fonts with Chinese glyphs, tried in order when an answer is in Chinese; matplotlib's bundled
# DejaVu Sans has none, and drawing CJK with it gives empty boxes.
CJK_FONTS = (
    "Noto Sans CJK SC",
    "Noto Sans SC",
    "Source Han Sans SC",
    "WenQuanYi Zen Hei",
    "WenQuanYi Micro Hei",
    "Droid Sans Fallback",
    "Microsoft YaHei",
    "PingFang SC",
    "SimHei",
)
CONTEXT_AXIS = "context (tokens)"
MEMORY_AXIS = "memory per GPU (GiB)"
_CJK_RUN = re.compile(r"[\u3000-\u303f\u4e00-\u9fff\uff00-\uffef]+")


class ChartWords(NamedTuple):
    """Every string the chart draws, in the reply's language where a font can draw it."""

    title: str
    hours: str
    cost: str
    does_not_fit: str
    verdicts: dict[str, str]
    requested: str
    context: str
    memory_per_gpu: str
    language: str


def chart_words(reply: Reply, cjk_font: str | None) -> ChartWords:
    """Chinese words when the answer is Chinese and `cjk_font` can draw them; otherwise English,
    with the title's Chinese runs left out rather than drawn as empty boxes."""
    if reply.language == "zh" and cjk_font is not None:
        return ChartWords(
            title=reply.title[:120],
            hours=label("zh", "hours"),
            cost=label("zh", "cost") + " (USD)",
            does_not_fit=label("zh", phrases.DOES_NOT_FIT),
            verdicts={v: label("zh", text) for v, text in phrases.CHART_VERDICTS.items()},
            requested=label("zh", phrases.REQUESTED),
            context=label("zh", CONTEXT_AXIS),
            memory_per_gpu=label("zh", MEMORY_AXIS),
            language="zh",
        )
    title = re.sub(r"\s+", " ", _CJK_RUN.sub(" ", reply.title)).strip(" ·")
    return ChartWords(
        title=title[:120],
        hours="hours",
        cost="cost (USD)",
        does_not_fit=phrases.DOES_NOT_FIT,
        verdicts=dict(phrases.CHART_VERDICTS),
        requested=phrases.REQUESTED,
        context=CONTEXT_AXIS,
        memory_per_gpu=MEMORY_AXIS,
        language="en",
    )


@cache
def installed_cjk_font() -> str | None:
    """The first of CJK_FONTS matplotlib finds on this machine, or None."""
    from matplotlib import font_manager

    names = {font.name for font in font_manager.fontManager.ttflist}
    return next((name for name in CJK_FONTS if name in names), None)


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
    font = installed_cjk_font() if reply.language == "zh" else None
    words = chart_words(reply, font)
    families = [font, "DejaVu Sans"] if words.language == "zh" else ["DejaVu Sans"]
    with matplotlib.rc_context({"font.family": families}):
        return _draw(rows, words, reply.context_curve)


def _draw(rows: list[CardRow], words: ChartWords, curve: ContextCurve | None) -> bytes:
    from matplotlib.figure import Figure

    labels = [
        fmt.card(row.gpu_name, row.count)
        + (f" ({marks(words.language, row.highlight)})" if row.highlight else "")
        for row in rows
    ]
    colours = [_BAR_COLOURS[row.verdict] for row in rows]
    hatches = [_REQUESTED_HATCH if _is_requested(row) else "" for row in rows]
    bars_height = 0.45 * len(rows) + 1.6
    figure = Figure(
        figsize=(10, bars_height + (CURVE_HEIGHT_IN if curve else 0.0)), layout="constrained"
    )
    if curve:
        panels = figure.subplot_mosaic(
            [["hours", "cost"], ["curve", "curve"]],
            height_ratios=[bars_height, CURVE_HEIGHT_IN],
        )
        hours_axes, cost_axes = panels["hours"], panels["cost"]
        cost_axes.sharey(hours_axes)
        _draw_curve(panels["curve"], curve, words)
    else:
        hours_axes, cost_axes = figure.subplots(1, 2, sharey=True)
    positions = range(len(rows))
    hours_axes.barh(positions, [row.hours or 0 for row in rows], color=colours, hatch=hatches)
    hours_axes.set_xlabel(words.hours)
    hours_axes.set_yticks(list(positions), labels)
    hours_axes.invert_yaxis()
    cost_axes.barh(positions, [row.cost_usd or 0 for row in rows], color=colours, hatch=hatches)
    cost_axes.set_xlabel(words.cost)
    for axes, values, text in (
        (hours_axes, [row.hours for row in rows], lambda h: duration(words.language, fmt.hours(h))),
        (cost_axes, [row.cost_usd for row in rows], fmt.usd),
    ):
        for position, value, row in zip(positions, values, rows, strict=True):
            missing = words.does_not_fit if row.verdict == "no" else None
            if value is not None or missing is not None:
                axes.annotate(
                    missing or text(value),
                    (value or 0, position),
                    xytext=(3, 0),
                    textcoords="offset points",
                    va="center",
                    fontsize=8,
                )
        axes.margins(x=0.2)
    figure.legend(handles=_legend(rows, words), loc="outside lower center", ncols=4, fontsize=8)
    figure.suptitle(words.title)
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=110)
    return buffer.getvalue()


def _draw_curve(axes: Any, curve: ContextCurve, words: ChartWords) -> None:
    """Memory per GPU against context (log-2 axis), the card's memory as a dashed line, the asked
    context marked; the axis stops a little above the card, so where the job stops fitting
    shows."""
    lengths = [seq_len for seq_len, _ in curve.points]
    memory = [gib for _, gib in curve.points]
    axes.plot(lengths, memory, marker="o", markersize=3, color="#1565c0")
    asked = dict(curve.points).get(curve.asked_seq_len)
    if asked is not None:
        axes.plot([curve.asked_seq_len], [asked], marker="o", markersize=8, color="#1565c0")
        axes.annotate(
            f"{fmt.gib(asked)} @ {curve.asked_seq_len:,}",
            (curve.asked_seq_len, asked),
            xytext=(6, -12),
            textcoords="offset points",
            fontsize=8,
        )
    top = max(asked or 0.0, curve.card_gib or 0.0) * CURVE_TOP_OVER_CARD
    if curve.card_gib is not None and curve.card is not None:
        axes.axhline(curve.card_gib, linestyle="--", color="#c62828", linewidth=1)
        axes.annotate(
            f"{curve.card}: {fmt.gib(curve.card_gib)}",
            (lengths[0], curve.card_gib),
            xytext=(0, 4),
            textcoords="offset points",
            fontsize=8,
            color="#c62828",
        )
    axes.set_xscale("log", base=2)
    axes.set_xticks(lengths, [_context_label(length) for length in lengths])
    axes.set_ylim(0, top or None)
    axes.set_xlabel(words.context)
    axes.set_ylabel(words.memory_per_gpu)
    axes.grid(alpha=0.3)


def _context_label(seq_len: int) -> str:
    """ "4k" for 4,096, as people write contexts (k = 1,024); other lengths as numbers."""
    return f"{seq_len // 1024}k" if seq_len >= 1024 and seq_len % 1024 == 0 else f"{seq_len:,}"


def _is_requested(row: CardRow) -> bool:
    return phrases.REQUESTED in (row.highlight or "").split(", ")


def _legend(rows: list[CardRow], words: ChartWords) -> list:
    """What the colours and the hatching mean, for the verdicts and marks the chart shows."""
    from matplotlib.patches import Patch

    shown = {row.verdict for row in rows}
    handles = [
        Patch(color=_BAR_COLOURS[verdict], label=words.verdicts[verdict])
        for verdict in ("fits", "tight", "no")
        if verdict in shown
    ]
    if any(_is_requested(row) for row in rows):
        handles.append(
            Patch(
                facecolor="white",
                edgecolor="black",
                hatch=_REQUESTED_HATCH,
                label=words.requested,
            )
        )
    return handles
