"""Workspace settings on Redis (GPUPLAN_STATE_URL): one hash per scope,
`gpuplan:settings:<scope>` {name: value}, with no TTL — a setting an admin made stays until an
admin changes it. Raises StoreUnavailable when Redis is down, like the other Redis stores."""

from __future__ import annotations

from bot.redis_client import RedisLink, key
from bot.settings import checked_value, read_or_default


class RedisSettings:
    def __init__(self, link: RedisLink) -> None:
        self._link = link

    def get(self, scope: str, name: str) -> str | None:
        with read_or_default(scope):
            return self._link.run(lambda client: client.hget(key("settings", scope), name))
        return None

    def put(self, scope: str, name: str, value: str | None, *, by: str = "") -> None:
        hash_key = key("settings", scope)
        if value is None:
            self._link.run(lambda client: client.hdel(hash_key, name))
            return
        value = checked_value(value)
        self._link.run(lambda client: client.hset(hash_key, name, value))

    def all(self, scope: str) -> dict[str, str]:
        with read_or_default(scope):
            values = self._link.run(lambda client: client.hgetall(key("settings", scope)))
            return dict(sorted(values.items()))
        return {}
