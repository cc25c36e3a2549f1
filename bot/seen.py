"""Answer each delivery once: an id a platform never reuses (a Slack event id or trigger id, a
Discord interaction id), remembered for a while, says whether a delivery is a repeat.

`SeenIds` is the seam: this in-process form serves one process; the Redis form
(bot.redis_seen, `SET key 1 NX EX ttl`) serves several.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Protocol


class SeenIds(Protocol):
    async def first_time(self, delivery_id: str) -> bool:
        """True the first time `delivery_id` is offered within the TTL, False for every repeat;
        atomic, so two deliveries of one id racing each other get one True."""
        ...


class SeenInProcess:
    """An in-process TTL set of delivery ids."""

    def __init__(self, ttl_s: float, clock: Callable[[], float] = time.monotonic) -> None:
        self._ttl_s = ttl_s
        self._clock = clock
        self._seen_at: OrderedDict[str, float] = OrderedDict()

    async def first_time(self, delivery_id: str) -> bool:
        # No await between the check and the insert: one event loop makes this atomic.
        now = self._clock()
        while self._seen_at and next(iter(self._seen_at.values())) <= now - self._ttl_s:
            self._seen_at.popitem(last=False)
        if delivery_id in self._seen_at:
            return False
        self._seen_at[delivery_id] = now
        return True
