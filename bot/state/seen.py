"""Answer each delivery once: an id a platform never reuses (a Slack event id or trigger id, a
Discord interaction id), remembered for a while, says whether a delivery is a repeat.

`SeenIds` is the seam: the in-process form serves one process; the Redis form serves several:
`gpuplan:<platform>:seen:<id>` set with `SET NX EX`, so the first process to set it answers and
every repeat (a retry, a replay, a redelivery that landed on another process) is dropped. While
Redis is unavailable the ids are remembered in this process's memory instead (logged once per
outage).
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

from bot.state.backend import StateBackend
from bot.state.errors import OutageLog, StoreUnavailable
from bot.state.redis_keys import key

if TYPE_CHECKING:
    from bot.state.redis_link import AsyncRedisLink


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


class RedisSeenIds:
    """SeenIds on Redis, shared by every process of a platform."""

    def __init__(self, link: AsyncRedisLink, platform: str, ttl_s: float) -> None:
        self._link = link
        self._platform = platform
        self._ttl_s = int(ttl_s)
        self._fallback = SeenInProcess(ttl_s)
        self._outage = OutageLog(f"{platform} de-duplication is per process")

    async def first_time(self, delivery_id: str) -> bool:
        name = key(self._platform, "seen", delivery_id)
        try:
            first = await self._link.run(
                lambda client: client.set(name, 1, nx=True, ex=self._ttl_s)
            )
        except StoreUnavailable as error:
            self._outage.failed(error)
            return await self._fallback.first_time(delivery_id)
        self._outage.recovered()
        return bool(first)


def open_seen_ids(
    backend: StateBackend, platform: str, ttl_s: float, link: AsyncRedisLink | None = None
) -> SeenIds:
    """De-duplication on `backend`: on Redis (through `link`, the event loop's client, when the
    caller shares one) when it names one, else in this process."""
    if backend.redis_url is None:
        return SeenInProcess(ttl_s)
    return RedisSeenIds(link if link is not None else backend.async_redis_link(), platform, ttl_s)
