"""Follow-up threads (tests/data/followup_threads.jsonl): a question, then changes to it, each
turn with the whole job the thread should hold after it. Written apart from the parser, like the
realistic set. A thread runs through the real `Conversation` (memory store, no rate limit), so
what is scored is what the bot keeps, turn by turn; fields are judged with `same_field`.
"""

from __future__ import annotations

from typing import Any

from bot.conversation import Conversation
from bot.state.threads import MemoryStore
from bot.threads import ThreadKey
from tests.parse_cases import DATA, field_diff, load_cases

THREADS = DATA / "followup_threads.jsonl"


def score_thread(thread: dict[str, Any]) -> list[tuple[dict[str, bool], list[str]]]:
    """Per turn: right/wrong per field of the thread's job after it, and a line per wrong field."""
    store = MemoryStore()
    conversation = Conversation(store, limit_rate=False)
    key = ThreadKey(platform="test", thread=thread["id"])
    scored = []
    for number, turn in enumerate(thread["turns"], start=1):
        conversation.respond(key, turn["text"])
        history = store.load(str(key)).history
        job = dict(history[-1]) if history else {}
        misses = field_diff(turn["expect"], job)
        verdicts = {field: field not in misses for field in turn["expect"].keys() | job.keys()}
        lines = [
            f"{thread['id']} turn {number} ({turn['text']!r}) {field}: expected {e!r}, kept {a!r}"
            for field, (e, a) in misses.items()
        ]
        scored.append((verdicts, lines))
    return scored


__all__ = ["THREADS", "load_cases", "score_thread"]
