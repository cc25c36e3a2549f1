"""bot.seen.SeenIds on Redis, shared by every process of a platform: `gpuplan:<platform>:seen:<id>`
set with `SET NX EX`, so the first process to set it answers and every repeat (a retry, a replay,
a redelivery that landed on another process) is dropped. While Redis is unavailable the ids are
remembered in this process's memory instead (logged once per outage).
"""

from __future__ import annotations

from bot.redis_client import AsyncRedisLink, OutageLog, key
from bot.seen import SeenInProcess
from bot.store import StoreUnavailable


class RedisSeenIds:
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
