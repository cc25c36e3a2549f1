"""Memory against context: the job re-planned at doubling contexts (planner.context_curve), carried
by answers (bot.reply.ContextCurve) and drawn beside the card's memory in the chart."""

from __future__ import annotations

import pytest

from bot.chart import chart_png
from bot.conversation import Conversation
from bot.state.threads import MemoryStore
from bot.threads import ThreadKey
from planner.context_curve import context_lengths
from planner.planner import make_plan, parse_spec

JOB = {"model": "llama 3.1 8b", "method": "qlora", "seq_len": 4096, "gpu": "4090"}


def test_lengths_double_from_512_include_the_asked_one_and_stay_inside_the_window() -> None:
    assert context_lengths(4096, 8192) == [512, 1024, 2048, 4096, 8192]
    assert 3000 in context_lengths(3000, 4096) and max(context_lengths(3000, 4096)) == 4096
    assert max(context_lengths(2048, None)) == 131_072


def test_the_curve_rises_with_context_and_passes_through_the_plan() -> None:
    plan = make_plan(parse_spec(JOB), context_curve=True)
    points = plan.memory_by_context
    assert [p.seq_len for p in points] == context_lengths(4096, 131_072)
    memory = [p.required_gib for p in points]
    assert memory == sorted(memory)
    (asked,) = [p for p in points if p.seq_len == 4096]
    assert asked.required_gib == pytest.approx(plan.memory.required_gib, abs=0.01)
    assert make_plan(parse_spec(JOB)).memory_by_context == []  # only when asked for


def test_a_measured_peak_scales_the_whole_curve() -> None:
    plain = make_plan(parse_spec(JOB), context_curve=True).memory_by_context
    measured = {**JOB, "measured_peak_gib": 24.0, "measured_metric": "nvidia-smi"}
    scaled = make_plan(parse_spec(measured), context_curve=True).memory_by_context
    assert all(s.required_gib > p.required_gib for s, p in zip(scaled, plain, strict=True))


def test_an_answer_carries_the_curve_against_the_asked_card_and_charts_it() -> None:
    conversation = Conversation(MemoryStore(), limit_rate=False)
    reply = conversation.handle(
        ThreadKey(platform="test"), "llama 3.1 8b qlora on a 4090, 4k ctx, 20M tokens"
    )
    curve = reply.context_curve
    assert curve is not None and curve.asked_seq_len == 4096
    assert curve.card == "1× NVIDIA GeForce RTX 4090" and 23 < curve.card_gib < 24.5
    # The 4090 holds 4k but not 16k: the curve crosses the card's line between them.
    by_length = dict(curve.points)
    assert by_length[4096] < curve.card_gib < by_length[16384]
    assert chart_png(reply).startswith(b"\x89PNG")
