"""The chart reads at a glance: card names get their own room, every label and the whole
memory-against-context curve stay inside the plot, an unpriced bar says "no price", and the
curve's reference line is the card the user named (or the run the answer recommends)."""

from __future__ import annotations

import pytest

from bot.chart import chart_figure, chart_png, curve_shown
from bot.conversation import Conversation
from bot.reply import ContextCurve, Reply
from bot.state.threads import MemoryStore
from bot.threads import ThreadKey
from tests.replies import card_row

pytest.importorskip("matplotlib")


def _answer(text: str) -> Reply:
    conversation = Conversation(MemoryStore(), limit_rate=False)
    return conversation.handle(ThreadKey(platform="test"), text)


def _texts(figure) -> list:
    """Every piece of text drawn: annotations, tick labels, axis labels, legends, the title."""
    texts = [figure._suptitle]
    for axes in figure.axes:
        texts += [*axes.texts, axes.xaxis.label, axes.yaxis.label]
        for axis in (axes.xaxis, axes.yaxis):
            low, high = sorted(axis.get_view_interval())
            texts += [t.label1 for t in axis.get_major_ticks() if low <= t.get_loc() <= high]
        legend = axes.get_legend()
        texts += legend.get_texts() if legend else []
    return [text for text in texts if text is not None and text.get_visible() and text.get_text()]


def _inside(inner, outer) -> bool:
    return (
        inner.x0 >= outer.x0 - 1
        and inner.x1 <= outer.x1 + 1
        and inner.y0 >= outer.y0 - 1
        and inner.y1 <= outer.y1 + 1
    )


@pytest.mark.parametrize(
    "question",
    [
        "llama 3.1 8b qlora 4090 8k ctx, 20M tokens",  # a named card that does not hold it
        "llama 3 70b lora on 8x A100 80GB, 4k ctx, 100M tokens",  # a multi-GPU answer
        "13B QLoRA, 4k ctx, 20M tokens x3",  # no card named
        "单卡4090 24G显存，qlora微调qwen2.5-32b，序列长度4096，数据1000万token",  # Chinese
    ],
)
def test_every_label_and_the_curve_stay_inside_the_plot(question: str) -> None:
    reply = _answer(question)
    figure = chart_figure(reply)
    renderer = figure.canvas.get_renderer()
    whole = figure.bbox
    for text in _texts(figure):
        assert _inside(text.get_window_extent(renderer), whole), text.get_text()
    for axes in figure.axes:  # a bar's value label sits inside its panel
        for text in axes.texts:
            assert _inside(text.get_window_extent(renderer), axes.bbox), text.get_text()
    curve_axes = figure.axes[-1]
    bottom, top = curve_axes.get_ylim()
    drawn = [y for line in curve_axes.lines for y in line.get_ydata()]
    assert drawn and all(bottom <= y <= top for y in drawn)
    # The names are drawn once, on the hours panel; the cost panel keeps its width for bars.
    hours_axes, cost_axes = figure.axes[:2]
    assert not any(label.get_text() for label in cost_axes.get_yticklabels())
    assert cost_axes.bbox.width == pytest.approx(hours_axes.bbox.width, rel=0.05)


def test_an_unpriced_bar_says_no_price() -> None:
    rows = [
        card_row(),
        card_row("A800 80GB SXM4", cost_usd=None, usd_per_hour=None, highlight=None),
    ]
    reply = Reply(kind="plan", title="7B LoRA", table=rows, has_chart=True)
    figure = chart_figure(reply)
    cost_axes = figure.axes[1]
    assert [text.get_text() for text in cost_axes.texts] == ["$9.80", "no price"]
    assert chart_png(reply).startswith(b"\x89PNG")


def test_the_curve_is_drawn_against_the_card_the_user_named() -> None:
    curve = _answer("7b lora on 2x A800 80GB SXM, 2k ctx, 10M tokens").context_curve
    assert curve is not None and curve.card == "2× NVIDIA A800 80GB SXM4"
    # No card named: the line is the run the answer recommends, at the curve's GPU count.
    reply = _answer("13B QLoRA, 4k ctx, 20M tokens x3")
    cheapest = next(row for row in reply.table if "cheapest" in (row.highlight or ""))
    expected = f"{cheapest.count}× {cheapest.gpu_name}" if cheapest.count == 1 else None
    assert reply.context_curve is not None and reply.context_curve.card == expected


def test_a_steep_curve_is_cut_just_past_the_card() -> None:
    points = [(1024 * 2**i, 10.0 * 2**i) for i in range(8)]  # 10 GiB at 1k … 1,280 at 128k
    curve = ContextCurve(points=points, asked_seq_len=2048, card="1× RTX 4090", card_gib=24.0)
    shown = curve_shown(curve)
    assert shown == points[:3]  # 40 GiB at 4k is the first above 1.6 × 24 GiB: kept, then cut
