"""Plain thread replies held while the thread store is unavailable: answered once it is back,
and bounded in number and in age (each reply dropped past a bound is logged by thread)."""

from __future__ import annotations

import asyncio
import logging

import pytest

from adapters.drain import InFlight
from adapters.slack import pending
from adapters.slack.pending import PendingReplies
from bot.backoff import Backoff


class Links:
    """A thread store that is unavailable until `back` is set."""

    def __init__(self) -> None:
        self.back = False

    async def available(self) -> bool:
        return self.back


@pytest.fixture(autouse=True)
def quick_retries(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pending, "RETRY", Backoff(0.001, 0.002, 1.0))


async def test_held_replies_are_answered_once_the_store_is_back(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(pending, "MAX_HELD", 2)
    links, in_flight, answered = Links(), InFlight("slack"), []

    def reply(name: str):
        async def answer() -> None:
            answered.append(name)

        return answer

    held = PendingReplies(links, in_flight)  # type: ignore[arg-type]
    with caplog.at_level(logging.WARNING):
        for name in ("a", "b", "c"):
            held.add(reply(name), f"slack/T/C/{name} (plain reply)")
        await asyncio.sleep(0.02)
        assert answered == []  # the store is still down
        links.back = True
        assert await in_flight.finish(5) == []
    assert answered == ["b", "c"]
    assert "slack/T/C/a (plain reply): not answered: more than 2 replies waited" in caplog.text


async def test_a_reply_held_too_long_is_dropped_and_named(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(pending, "MAX_WAIT_S", 0.01)
    links, in_flight = Links(), InFlight("slack")

    async def never() -> None:
        raise AssertionError("a dropped reply must not be answered")

    with caplog.at_level(logging.WARNING):
        PendingReplies(links, in_flight).add(never, "slack/T/C/old (plain reply)")  # type: ignore[arg-type]
        assert await in_flight.finish(5) == []
    assert "slack/T/C/old (plain reply): not answered: the store was unavailable" in caplog.text
