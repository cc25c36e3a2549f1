"""A PNG of hours and cost per card in a reply's table, for surfaces that can attach an image."""

from __future__ import annotations

import io
import re
import textwrap
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache
from typing import TYPE_CHECKING, Any, NamedTuple

from bot import format as fmt
from bot import phrases
from bot.language import duration, label, marks
from bot.reply import CardRow, ContextCurve, Reply

if TYPE_CHECKING:
    from matplotlib.figure import Figure

_BAR_COLOURS = {"fits": "#2e7d32", "tight": "#f9a825", "no": "#9e9e9e"}
_REQUESTED_HATCH = "//"
DPI = 110
CURVE_HEIGHT_IN = 2.8
ROW_HEIGHT_IN = 0.5  # a bar and its two-line label (card, marks)
BAR_PANELS_IN = 8.0  # the hours and cost panels together, whatever the names' length
# Width of one character of a 9 pt tick label (DejaVu Sans averages ~0.55 em), plus the ticks.
LABEL_IN_PER_CHAR = 0.075
BAR_LABEL_ROOM = 1.4  # the x axis runs 40 % past the longest bar: room for its "$3.76"
TITLE_CHARS = 90
# The curve is drawn up to its first point this far above the card's memory (or the asked
# point), so the card line stays readable and where the job stops fitting shows.
CURVE_TOP_OVER_CARD = 1.6
CURVE_HEADROOM = 1.12  # the axis ends a little above the highest point drawn
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
    no_price: str
    verdicts: dict[str, str]
    requested: str
    context: str
    memory_per_gpu: str
    language: str


def chart_words(reply: Reply, cjk_font: str | None) -> ChartWords:
    """Chinese words when the answer is Chinese and `cjk_font` can draw them; otherwise English,
    with the title's Chinese runs left out rather than drawn as empty boxes."""
    language = "zh" if reply.language == "zh" and cjk_font is not None else "en"
    title = reply.title
    if language == "en":
        title = re.sub(r"\s+", " ", _CJK_RUN.sub(" ", title)).strip(" ·")

    def word(english: str) -> str:
        return label(language, english)

    return ChartWords(
        title=title[:120],
        hours=word("hours"),
        cost=word("cost") + " (USD)",
        does_not_fit=word(phrases.DOES_NOT_FIT),
        no_price=word(phrases.NO_PRICE),
        verdicts={v: word(text) for v, text in phrases.CHART_VERDICTS.items()},
        requested=word(phrases.REQUESTED),
        context=word(CONTEXT_AXIS),
        memory_per_gpu=word(MEMORY_AXIS),
        language=language,
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
    buffer = io.BytesIO()
    with _drawn(reply) as figure:
        # Saved while the fonts are in force: saving lays out and draws the figure once.
        figure.savefig(buffer, format="png", dpi=DPI)
    return buffer.getvalue()


def chart_figure(reply: Reply) -> Figure:
    """The chart as a matplotlib Figure, laid out (chart_png saves the same figure); tests read
    what it draws."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    with _drawn(reply) as figure:
        # Laid out now, while the fonts are in force: the layout measures the text.
        FigureCanvasAgg(figure).draw()
    return figure


@contextmanager
def _drawn(reply: Reply) -> Iterator[Figure]:
    """The chart's figure, inside the fonts of the reply's language (layout and drawing
    measure text in them)."""
    if not any(row.hours is not None or row.cost_usd is not None for row in reply.table):
        raise ValueError("this reply has no hours or costs to chart")
    # Every row of the table, so the chart says what the table says: a card that does not hold
    # the job gets a labelled empty bar, never a time or a price.
    rows = reply.table
    import matplotlib

    font = installed_cjk_font() if reply.language == "zh" else None
    words = chart_words(reply, font)
    families = [font, "DejaVu Sans"] if words.language == "zh" else ["DejaVu Sans"]
    with matplotlib.rc_context({"font.family": families}):
        yield _draw(rows, words, reply.context_curve)


def _row_label(row: CardRow, language: str) -> str:
    """The card on one line and its marks ("requested, cheapest") on a second, so long names
    and marks do not squeeze the bars."""
    card = fmt.card(row.gpu_name, row.count)
    return f"{card}\n{marks(language, row.highlight)}" if row.highlight else card


def _draw(rows: list[CardRow], words: ChartWords, curve: ContextCurve | None) -> Figure:
    from matplotlib.figure import Figure

    labels = [_row_label(row, words.language) for row in rows]
    colours = [_BAR_COLOURS[row.verdict] for row in rows]
    hatches = [_REQUESTED_HATCH if _is_requested(row) else "" for row in rows]
    bars_height = ROW_HEIGHT_IN * len(rows) + 1.6
    # The card names take their own room at the left: the two panels keep their width.
    names_in = max(fmt.display_width(line) for text in labels for line in text.split("\n"))
    width = BAR_PANELS_IN + names_in * LABEL_IN_PER_CHAR
    figure = Figure(
        figsize=(width, bars_height + (CURVE_HEIGHT_IN if curve else 0.0)), layout="constrained"
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
    hours_axes.set_yticks(list(positions), labels, fontsize=9)
    hours_axes.invert_yaxis()
    cost_axes.barh(positions, [row.cost_usd or 0 for row in rows], color=colours, hatch=hatches)
    cost_axes.set_xlabel(words.cost)
    cost_axes.tick_params(labelleft=False)  # the names are on the hours panel, once
    for axes, values, text, unpriced in (
        (
            hours_axes,
            [row.hours for row in rows],
            lambda h: duration(words.language, fmt.hours(h)),
            None,
        ),
        (cost_axes, [row.cost_usd for row in rows], fmt.usd, words.no_price),
    ):
        for position, value, row in zip(positions, values, rows, strict=True):
            missing = words.does_not_fit if row.verdict == "no" else unpriced
            if value is not None or missing is not None:
                axes.annotate(
                    text(value) if value is not None and row.verdict != "no" else missing,
                    (value or 0, position),
                    xytext=(3, 0),
                    textcoords="offset points",
                    va="center",
                    fontsize=8,
                )
        # Room right of the longest bar for its label.
        longest = max((value for value in values if value is not None), default=0.0)
        axes.set_xlim(0, longest * BAR_LABEL_ROOM or 1.0)
    figure.legend(handles=_legend(rows, words), loc="outside lower center", ncols=4, fontsize=8)
    figure.suptitle(textwrap.fill(words.title, TITLE_CHARS))
    return figure


def curve_shown(curve: ContextCurve) -> list[tuple[int, float]]:
    """The curve's points up to the first one well above the card (or the asked point): the
    plot stays readable near the card, and shows where the job stops fitting."""
    asked = dict(curve.points).get(curve.asked_seq_len, 0.0)
    ceiling = max(asked, curve.card_gib or 0.0) * CURVE_TOP_OVER_CARD
    shown: list[tuple[int, float]] = []
    for seq_len, gib in curve.points:
        shown.append((seq_len, gib))
        if ceiling and gib > ceiling and seq_len >= curve.asked_seq_len:
            break
    return shown


def _draw_curve(axes: Any, curve: ContextCurve, words: ChartWords) -> None:
    """Memory per GPU against context (log-2 axis), the card's memory as a dashed line, the asked
    context marked; every point drawn and its labels in the legend, inside the plot."""
    points = curve_shown(curve)
    lengths = [seq_len for seq_len, _ in points]
    memory = [gib for _, gib in points]
    axes.plot(lengths, memory, marker="o", markersize=3, color="#1565c0")
    asked = dict(points).get(curve.asked_seq_len)
    if asked is not None:
        axes.plot(
            [curve.asked_seq_len],
            [asked],
            linestyle="none",
            marker="o",
            markersize=8,
            color="#1565c0",
            label=f"{fmt.gib(asked)} @ {curve.asked_seq_len:,}",
        )
    if curve.card_gib is not None and curve.card is not None:
        axes.axhline(
            curve.card_gib,
            linestyle="--",
            color="#c62828",
            linewidth=1,
            label=f"{curve.card}: {fmt.gib(curve.card_gib)}",
        )
    axes.set_xscale("log", base=2)
    axes.set_xticks(lengths, [_context_label(length) for length in lengths])
    axes.set_ylim(0, max([*memory, curve.card_gib or 0.0]) * CURVE_HEADROOM)
    axes.set_xlabel(words.context)
    axes.set_ylabel(words.memory_per_gpu)
    axes.grid(alpha=0.3)
    if axes.get_legend_handles_labels()[0]:
        axes.legend(loc="best", fontsize=8)


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
