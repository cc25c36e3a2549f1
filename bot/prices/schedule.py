"""Scheduled refreshes for the bots: every GPUPLAN_PRICES_REFRESH_S (default hourly, jittered by
±10 % so processes started together drift apart), on a thread of its own, never on the answer
path. Processes sharing a store run one refresh per interval: the one that takes the store's
lock refreshes, the others skip and read its snapshot. A failed refresh keeps the last snapshot
serving and is logged once per run of failures (and once more when the feeds are back).
"""

from __future__ import annotations

import asyncio
import logging
import os
import random
import socket
import threading
import time
import uuid
from collections.abc import Callable

from bot.prices.http import Sleep
from bot.prices.market import when
from bot.prices.snapshot import Snapshot
from bot.state.prices import PriceStore

logger = logging.getLogger(__name__)

REFRESH_ENV = "GPUPLAN_PRICES_REFRESH_S"
DEFAULT_INTERVAL_S = 3600.0
JITTER_FRACTION = 0.10
LOCK_NAME = "price-refresh"


def interval_from_env() -> float | None:
    """The refresh interval in seconds; None when GPUPLAN_PRICES_REFRESH_S is 0 (no refresh)."""
    raw = os.environ.get(REFRESH_ENV, "").strip()
    if not raw:
        return DEFAULT_INTERVAL_S
    try:
        seconds = float(raw)
    except ValueError:
        raise ValueError(f"{REFRESH_ENV}={raw!r} is not a number of seconds") from None
    if seconds < 0 or seconds != seconds:
        raise ValueError(f"{REFRESH_ENV}={raw!r} must be 0 (off) or a positive number of seconds")
    return seconds or None


class PriceRefresher:
    def __init__(
        self,
        store: PriceStore,
        *,
        interval_s: float = DEFAULT_INTERVAL_S,
        clock: Callable[[], float] = time.time,
        sleep: Sleep = asyncio.sleep,
        random_unit: Callable[[], float] = random.random,
        holder: str | None = None,
        request_timeout_s: float | None = None,
    ) -> None:
        self.store = store
        self.interval_s = interval_s
        self._clock = clock
        self._sleep = sleep
        self._random_unit = random_unit
        self.holder = holder or f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        self._request_timeout_s = request_timeout_s
        self._failing = False

    def next_delay_s(self) -> float:
        return self.interval_s * (1 + JITTER_FRACTION * (2 * self._random_unit() - 1))

    async def tick(self) -> Snapshot | None:
        """Refresh if no process sharing the store has this interval; the new snapshot, or None
        when another process had the lock or the refresh failed outright."""
        from bot.prices.refresh import refresh

        now = self._clock()
        # Held just short of an interval, so the next tick (at least that much later) can take it.
        until = now + self.interval_s * (1 - JITTER_FRACTION)
        if not self.store.try_lock(LOCK_NAME, self.holder, until, now):
            return None
        try:
            snapshot = await refresh(
                self.store,
                clock=self._clock,
                sleep=self._sleep,
                request_timeout_s=self._request_timeout_s,
            )
        except Exception as error:  # a store or network failure must not end the schedule
            self._failed(f"{type(error).__name__}: {error}")
            return None
        if snapshot.any_ok:
            if self._failing:
                logger.info("price refresh: feeds answer again (%d offers)", len(snapshot.offers))
            self._failing = False
        else:
            errors = "; ".join(f"{s.name}: {s.error}" for s in snapshot.feeds if not s.ok)
            self._failed(errors)
        return snapshot

    def _failed(self, why: str) -> None:
        if not self._failing:
            previous = self.store.latest()
            serving = (
                f"serving the snapshot of {when(previous.taken_at)}"
                if previous is not None and previous.offers
                else "serving the bundled table"
            )
            logger.warning("price refresh failed (%s); %s until a refresh works", why, serving)
        self._failing = True

    async def run(self, stop: asyncio.Event) -> None:
        """Tick now, then every jittered interval, until `stop` is set."""
        while not stop.is_set():
            await self.tick()
            waiting = asyncio.ensure_future(stop.wait())
            pause = asyncio.ensure_future(self._sleep(self.next_delay_s()))
            await asyncio.wait({waiting, pause}, return_when=asyncio.FIRST_COMPLETED)
            for task in (waiting, pause):
                task.cancel()


def start_scheduled_refresh() -> threading.Thread | None:
    """For `gpuplan serve`: refresh on a daemon thread with its own event loop (the bot's loop
    never waits on a feed); None when GPUPLAN_PRICES_REFRESH_S=0."""
    interval_s = interval_from_env()
    if interval_s is None:
        logger.info("scheduled price refresh is off (%s=0)", REFRESH_ENV)
        return None
    from bot.state.prices import refresh_store

    store = refresh_store()
    refresher = PriceRefresher(store, interval_s=interval_s)

    def forever() -> None:
        asyncio.run(refresher.run(asyncio.Event()))

    thread = threading.Thread(target=forever, name="price-refresh", daemon=True)
    thread.start()
    logger.info("prices refresh every %.0f s (±10 %%)", interval_s)
    return thread
