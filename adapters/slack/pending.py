"""Plain thread replies that arrived while the store could not say whose thread it is.

A reply without a mention is answered only in gpuplan's own threads, and which threads those
are lives in the store (Redis). While it is down, full, read-only or stalled, such a reply is
held here and answered once the store answers again: holding it costs the asker a wait, where
answering it blind would answer every thread in the channel, and answering it without the
thread's job could only say "ask a full question". Holding is bounded: at most MAX_HELD replies
for at most MAX_WAIT_S each; a reply dropped past either is logged with its thread key.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from collections import deque
from collections.abc import Callable, Coroutine
from typing import Any

from adapters.drain import InFlight
from adapters.slack.store import ThreadLinks
from bot import metrics
from bot.backoff import Backoff

logger = logging.getLogger(__name__)

MAX_HELD = 500
MAX_WAIT_S = 600.0  # past this, an answer would read as out of place in the thread
# How often to ask whether the store is back: soon at first, then every few seconds (full
# jitter, so processes do not ask in step).
RETRY = Backoff(first_delay_s=0.25, max_delay_s=5.0, budget_s=MAX_WAIT_S)

Retry = Callable[[], Coroutine[Any, Any, None]]


class PendingReplies:
    def __init__(self, threads: ThreadLinks, in_flight: InFlight) -> None:
        self._threads = threads
        self._in_flight = in_flight
        self._held: deque[tuple[float, str, Retry]] = deque()
        self._waiting: asyncio.Task[None] | None = None

    def add(self, retry: Retry, label: str) -> None:
        """Hold a reply (`retry` answers it from scratch) until the store is back."""
        if len(self._held) >= MAX_HELD:
            _, dropped, _ = self._held.popleft()
            self._drop(dropped, f"more than {MAX_HELD} replies waited")
        self._held.append((time.monotonic(), label, retry))
        logger.info("%s: held until the thread store is back", label)
        if self._waiting is None or self._waiting.done():
            # Tracked as in flight: a shutdown waits for held replies too, and names them.
            self._waiting = self._in_flight.start(self._until_back(), "slack held replies")

    async def _until_back(self) -> None:
        attempt = 0
        while self._held:
            self._in_flight.label(", ".join(label for _, label, _ in self._held))
            await asyncio.sleep(RETRY.cap_s(attempt) * random.random())
            attempt += 1
            self._expire()
            if await self._threads.available():
                break
        held, self._held = list(self._held), deque()
        for _, label, retry in held:
            self._in_flight.start(retry(), label)

    def _expire(self) -> None:
        while self._held and time.monotonic() - self._held[0][0] > MAX_WAIT_S:
            _, label, _ = self._held.popleft()
            self._drop(label, f"the store was unavailable for over {MAX_WAIT_S:.0f} s")

    def _drop(self, label: str, why: str) -> None:
        logger.warning("%s: not answered: %s", label, why)
        metrics.error("slack", "reply_dropped")
