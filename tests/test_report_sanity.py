"""Reports with a sanity check: a peak below the resident weights, or outside ×0.5–×2 of the
estimate, is asked about, not applied; a measured scale never shrinks weights below their bytes."""

from __future__ import annotations

import pytest

from bot.conversation import Conversation
from bot.state.threads import MemoryStore
from bot.threads import ThreadKey
from planner.anchor import report_doubt
from planner.planner import make_plan
from planner.resolve.defaults import resolve
from planner.spec import JobSpec

JOB = {"model": "qwen3 14b", "method": "qlora", "seq_len": 4096}


def _key() -> ThreadKey:
    return ThreadKey(platform="slack", workspace="T9", channel="C1", thread="9.9")


def test_a_peak_below_the_weights_is_asked_about_not_applied() -> None:
    conversation = Conversation(MemoryStore(), limit_rate=False)
    first = conversation.respond(_key(), "qwen3 14b qlora 4k ctx")
    asked = conversation.respond(_key(), "it actually peaked at 5 GiB")
    assert asked.reply.kind == "clarify" and "weights need resident" in asked.reply.body
    after = conversation.respond(_key(), "what if 8k ctx?")
    assert after.plan.spec.memory_scale is None  # the doubtful report was not applied
    assert first.plan.spec.memory_scale is None


@pytest.mark.parametrize(
    ("job", "report", "asks", "insists"),
    [
        ("qwen3 14b qlora 4k ctx", "it peaked at 70 GiB", "same job", "it really peaked at 70 GiB"),
        # A Chinese thread is told to insist in words it reads, and they apply the peak.
        (
            "qwen3 14b qlora 4k 上下文",
            "实测峰值 70 GiB",
            "「确实，实测峰值 70 GiB」",
            "确实，实测峰值 70 GiB",
        ),
    ],
)
def test_a_peak_far_from_the_estimate_is_asked_then_applied_when_insisted(
    job: str, report: str, asks: str, insists: str
) -> None:
    conversation = Conversation(MemoryStore(), limit_rate=False)
    conversation.respond(_key(), job)
    asked = conversation.respond(_key(), report)
    assert asked.reply.kind == "clarify" and asks in asked.reply.body
    applied = conversation.respond(_key(), insists)
    assert applied.plan.spec.memory_scale is not None and applied.plan.spec.memory_scale > 2


def test_a_plausible_peak_needs_no_question() -> None:
    job = resolve(JobSpec.model_validate({**JOB, "measured_peak_gib": 24.0}))
    assert report_doubt(job) is None


def test_a_measured_scale_never_shrinks_weights_below_their_bytes() -> None:
    plain = make_plan(JobSpec.model_validate(JOB))
    scaled = make_plan(JobSpec.model_validate({**JOB, "memory_scale": 0.3}))
    assert scaled.memory.breakdown_gib.weights == plain.memory.breakdown_gib.weights
    assert scaled.memory.peak_allocated_gib >= plain.memory.breakdown_gib.weights
