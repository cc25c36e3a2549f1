"""How long to wait before trying again: full-jitter exponential backoff inside a time budget.

Writers that collide and retry at once collide again; spreading each retry uniformly over
[0, min(cap, first * 2**n)] breaks the lockstep (M. Brooker, "Exponential Backoff And Jitter",
AWS Architecture Blog, 2015). A time budget instead of a fixed count keeps a caller's total wait
bounded whatever the delays turn out to be. Both the thread store's compare-and-set and the bots'
deliveries take their waits from here, sync or async.
"""

from __future__ import annotations

import itertools
import random
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass


@dataclass(frozen=True)
class Backoff:
    first_delay_s: float  # the cap on the first wait; each later cap doubles
    max_delay_s: float  # no single wait is longer
    budget_s: float  # no retry starts later than this after the first try
    max_attempts: int | None = None  # tries in all, first included; None: as many as fit

    def delays(
        self,
        clock: Callable[[], float] = time.monotonic,
        uniform: Callable[[], float] = random.random,
    ) -> Iterator[float]:
        """The wait before each retry, until the budget or the attempts run out. Call it when the
        first try starts: the budget counts from this call."""
        return self._delays(clock() + self.budget_s, clock, uniform)

    def _delays(
        self, deadline: float, clock: Callable[[], float], uniform: Callable[[], float]
    ) -> Iterator[float]:
        for retry in itertools.count():
            remaining_s = deadline - clock()
            if remaining_s <= 0 or (
                self.max_attempts is not None and retry + 1 >= self.max_attempts
            ):
                return
            yield min(self.cap_s(retry) * uniform(), remaining_s)

    def cap_s(self, retry: int) -> float:
        """The longest wait before retry number `retry` (0 for the first retry)."""
        return min(self.max_delay_s, self.first_delay_s * 2.0 ** min(retry, 60))
