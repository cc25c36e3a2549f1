"""Follow-up threads (tests/data/followup_threads.jsonl), turn by turn through the real
Conversation: issue #21's aim is >= 98 % of the fields the thread should hold right after each
turn, with multi-change patches, token counts, and relative changes ("double the context")."""

from __future__ import annotations

from collections import Counter

import pytest

from bot.conversation import Conversation
from bot.state.threads import MemoryStore
from bot.threads import ThreadKey
from tests.thread_cases import THREADS, load_cases, score_thread

THREAD_CASES = load_cases(THREADS)
FLOOR = 0.98


def test_threads_cover_both_languages_and_relative_changes() -> None:
    assert len(THREAD_CASES) >= 15
    assert {thread["lang"] for thread in THREAD_CASES} == {"en", "zh"}
    texts = " ".join(turn["text"] for thread in THREAD_CASES for turn in thread["turns"])
    assert "double" in texts and "half" in texts and "翻倍" in texts


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_fields_kept_right_turn_by_turn(lang: str) -> None:
    tally: Counter[bool] = Counter()
    misses: list[str] = []
    for thread in THREAD_CASES:
        if thread["lang"] == lang:
            for verdicts, lines in score_thread(thread):
                tally.update(verdicts.values())
                misses += lines
    assert tally[True] / tally.total() >= FLOOR, "\n".join(misses)


def _thread(*texts: str) -> dict:
    store = MemoryStore()
    conversation = Conversation(store, limit_rate=False)
    key = ThreadKey(platform="test", thread="t")
    for text in texts:
        turn = conversation.respond(key, text)
    return {"job": dict(store.load(str(key)).history[-1]), "reply": turn.reply}


def test_a_relative_change_scales_the_planned_default_when_the_job_left_it_unsaid() -> None:
    thread = _thread("13b lora on a 4090", "double the context")
    assert thread["job"]["seq_len"] > 0
    planned = _thread("13b lora on a 4090")["job"]
    assert "seq_len" not in planned  # the first job left it to the planner's default


def test_a_relative_change_with_nothing_to_scale_asks() -> None:
    thread = _thread("13b lora on a 4090", "twice the data")
    assert "dataset_tokens" not in thread["job"]
    assert thread["reply"].kind == "clarify"


def test_halving_a_batch_of_one_stays_one() -> None:
    assert _thread("7b lora bs 1 on a 4090", "half the batch")["job"]["micro_batch"] == 1
