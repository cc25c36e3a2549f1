"""One log line per rejected request, rate-limited, so junk sent to a bot cannot flood its log.

Each reason (a 401 for a bad signature, a 413, ...) may log a few lines back to back, then one
line per interval; the rejections in between are counted, and the next line says how many.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass

LINES_AT_ONCE = 5
SECONDS_PER_LINE = 10.0


@dataclass
class _Allowance:
    lines: float
    at_s: float
    unlogged: int = 0


class RejectionLog:
    def __init__(
        self,
        logger: logging.Logger,
        *,
        lines_at_once: int = LINES_AT_ONCE,
        seconds_per_line: float = SECONDS_PER_LINE,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._logger = logger
        self._lines_at_once = lines_at_once
        self._seconds_per_line = seconds_per_line
        self._clock = clock
        self._allowances: dict[str, _Allowance] = {}

    def reject(self, reason: str, detail: str) -> None:
        """Log `reason: detail` if this reason's allowance has a line left, else count it."""
        now = self._clock()
        allowance = self._allowances.setdefault(reason, _Allowance(self._lines_at_once, now))
        allowance.lines = min(
            self._lines_at_once,
            allowance.lines + (now - allowance.at_s) / self._seconds_per_line,
        )
        allowance.at_s = now
        if allowance.lines < 1:
            allowance.unlogged += 1
            return
        allowance.lines -= 1
        unlogged, allowance.unlogged = allowance.unlogged, 0
        more = f" (+{unlogged} more like it not logged)" if unlogged else ""
        self._logger.warning("%s: %s%s", reason, detail, more)
