"""Answers in flight, and a shutdown that finishes them: every deploy, scale-down or daily
restart sends SIGTERM, and an answer whose question was already acknowledged is never asked
again (Slack does not retry an acknowledged event; a Discord interaction is not re-sent).

Each bot starts every acknowledged answer as a task here. On SIGTERM or SIGINT the server stops
taking new work, waits for these tasks up to GPUPLAN_DRAIN_S (default 20 s; Heroku allows 30
between SIGTERM and SIGKILL), logs each one that could not finish with its thread key, and exits 0.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import time
from collections.abc import Coroutine, Mapping
from typing import Any

from bot import metrics

logger = logging.getLogger(__name__)

DRAIN_ENV = "GPUPLAN_DRAIN_S"
DEFAULT_DRAIN_S = 20.0
STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)


def drain_budget_s(env: Mapping[str, str] | None = None) -> float:
    """GPUPLAN_DRAIN_S, else the default; ValueError naming the variable when it is not a
    number of seconds ≥ 0."""
    raw = (os.environ if env is None else env).get(DRAIN_ENV, "").strip()
    if not raw:
        return DEFAULT_DRAIN_S
    try:
        budget_s = float(raw)
    except ValueError:
        budget_s = -1.0
    if not budget_s >= 0 or budget_s == float("inf"):
        raise ValueError(f"{DRAIN_ENV} must be a number of seconds ≥ 0, not {raw!r}")
    return budget_s


class InFlight:
    """The answers this process owes: tasks with the thread each one answers (its label)."""

    def __init__(self, platform: str) -> None:
        self.platform = platform
        # asyncio keeps only weak references to tasks; this keeps them alive too.
        self._tasks: dict[asyncio.Task[None], tuple[str, float]] = {}
        self._changed = asyncio.Event()

    def start(self, work: Coroutine[Any, Any, None], label: str) -> asyncio.Task[None]:
        task = asyncio.ensure_future(self._logged(work))
        self._tasks[task] = (label, time.perf_counter())
        task.add_done_callback(self._done)
        return task

    def label(self, label: str) -> None:
        """Name the thread the current task answers, once it is known (for the exit log)."""
        task = asyncio.current_task()
        if task in self._tasks:
            self._tasks[task] = (label, self._tasks[task][1])  # type: ignore[index]

    def age_s(self) -> float:
        """Seconds since the current task was started (its question arrived)."""
        entry = self._tasks.get(asyncio.current_task())  # type: ignore[arg-type]
        return time.perf_counter() - entry[1] if entry else 0.0

    def _done(self, task: asyncio.Task[None]) -> None:
        self._tasks.pop(task, None)
        self._changed.set()

    async def _logged(self, work: Coroutine[Any, Any, None]) -> None:
        try:
            await work
        except Exception:
            # The platform already has its ack; what failed in our own code is logged in full.
            logger.exception("answering on %s failed", self.platform)
            metrics.error(self.platform, "crashed")

    async def finish(self, budget_s: float) -> list[str]:
        """Wait up to `budget_s` for every answer in flight, including any started meanwhile;
        log and return the labels of those still unfinished (they are then cancelled)."""
        deadline = time.monotonic() + budget_s
        while self._tasks:
            left_s = deadline - time.monotonic()
            if left_s <= 0:
                break
            self._changed.clear()
            try:
                await asyncio.wait_for(self._changed.wait(), left_s)
            except TimeoutError:
                break
        unfinished = sorted(label for label, _ in self._tasks.values())
        for label in unfinished:
            logger.warning(
                "%s: not answered before shutdown (drain budget %.0f s spent)", label, budget_s
            )
            metrics.error(self.platform, "unfinished_at_exit")
        for task in list(self._tasks):
            task.cancel()
        return unfinished


async def until_stop_signal() -> str:
    """Wait for SIGTERM or SIGINT; returns the signal's name. Off the main thread, where Python
    cannot take signals, this waits until cancelled."""
    received: asyncio.Future[str] = asyncio.get_running_loop().create_future()

    def stop(name: str) -> None:
        if not received.done():
            received.set_result(name)

    loop = asyncio.get_running_loop()
    for stop_signal in STOP_SIGNALS:
        try:
            loop.add_signal_handler(stop_signal, stop, stop_signal.name)
        except (RuntimeError, ValueError):  # not the main thread (a server run inside a test)
            break
    return await received
