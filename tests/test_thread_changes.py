"""Threads say everything they change (issue 33): over every golden thread, each field of the
planned job (defaults decided: the layout, the micro-batch, …) that differs between the thread's
job before a turn and after it is listed under "what changed", in the thread's language; and the
answer shows the plan of the job the thread keeps, so the next turn starts from what was shown."""

from __future__ import annotations

from typing import Any

import pytest

from bot.changes import change_line
from bot.followups import Reset, read_intent
from bot.language import in_chinese, question_language
from bot.state.threads import MemoryStore
from bot.threads import ThreadKey
from planner.planner import planned_job
from planner.spec import JobSpec
from tests.golden import conversation, threads


def _planned(job: dict[str, Any] | None) -> dict[str, Any] | None:
    """The job as the planner decides it (Plan.spec), without the market."""
    if job is None:
        return None
    return planned_job(JobSpec.model_validate(job)).to_spec().model_dump(mode="json")


def _walk(case: str) -> list[str]:
    """Every turn of the thread, the misses: fields changed but not said, answers not kept."""
    store = MemoryStore()
    talk = conversation(store)
    key = ThreadKey(platform="golden", thread=case)
    misses: list[str] = []
    before: dict[str, Any] | None = None
    chinese = False
    for number, text in enumerate(threads()[case], start=1):
        chinese = question_language(text) == "zh" or chinese
        turn = talk.respond(key, text)
        history = store.load(str(key)).history
        after = _planned(dict(history[-1]) if history else None)
        where = f"{case} turn {number} ({text!r})"
        if before is not None and after is not None and not isinstance(read_intent(text), Reset):
            listed = turn.reply.changes
            for name in sorted(set(before) | set(after)):
                old, new = before.get(name), after.get(name)
                if old != new:
                    line = change_line(name, old, new)
                    said = in_chinese(line) if turn.reply.language == "zh" else line
                    if said not in listed:
                        misses.append(f"{where}: {said!r} not in {listed}")
        if after is not None and after != before and turn.plan is not None:
            shown = turn.plan.spec.model_dump(mode="json")
            if shown != after:
                differ = sorted(k for k in after if shown.get(k) != after.get(k))
                misses.append(
                    f"{where}: the answer shows another job than the thread keeps: {differ}"
                )
        before = after
    return misses


@pytest.mark.parametrize("case", sorted(threads()))
def test_every_change_to_the_planned_job_is_said(case: str) -> None:
    assert _walk(case) == []


def test_a_chinese_thread_says_what_changed_in_chinese() -> None:
    store = MemoryStore()
    talk = conversation(store)
    key = ThreadKey(platform="golden", thread="zh")
    talk.respond(key, "qwen2.5-7b lora，单卡4090，上下文2k，数据1000万token")
    changes = talk.respond(key, "上下文翻倍").reply.changes
    assert changes[0].startswith("上下文长度：2048 → 4096"), changes
    assert any(line.startswith("每张GPU显存：") for line in changes), changes
    assert any("放得下 → 放不下" in line for line in changes), changes
    assert any(line.startswith("所问的卡：") for line in changes), changes


def test_cheapest_under_a_budget_nothing_meets_names_the_cheapest_run() -> None:
    talk = conversation()
    key = ThreadKey(platform="golden", thread="cheapest")
    talk.respond(key, "70b qlora 2x h100, 4k, 100M tokens")
    reply = talk.respond(key, "cheapest under $5?").reply
    assert reply.body.startswith("Nothing meets a $5.00 budget: the cheapest run, "), reply.body
    assert "×" in reply.body and reply.body.endswith(" over.")
