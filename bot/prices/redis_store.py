"""Price snapshots and the refresh lock on Redis (GPUPLAN_STATE_URL), so processes on several
hosts share one snapshot and one refresh per interval.

Keys:
- `gpuplan:prices:snapshot` — a hash {version, body}: the latest snapshot as JSON, its version
  bumped in the same MULTI. TTL 14 days, twice the age past which a feed's offers stop serving:
  a snapshot no refresh has touched for that long prices nothing anyway.
- `gpuplan:prices:lock:<name>` — the refresh lock: its holder, expiring at the end of the
  interval it was taken for (one Lua script: take it if free or ours).
"""

from __future__ import annotations

import json
from datetime import datetime

from bot.prices.snapshot import MAX_CARRIED_AGE, OFFERS, Snapshot
from bot.prices.store import feed_from_json, feed_json
from bot.redis_client import RedisLink, key

SNAPSHOT_TTL_S = int(2 * MAX_CARRIED_AGE.total_seconds())
# KEYS[1] the lock; ARGV: holder, TTL in ms. 1 if now held by the holder, 0 if someone else has it.
_TAKE_LOCK = """
local holder = redis.call('GET', KEYS[1])
if holder and holder ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 1
"""


class RedisPriceStore:
    """bot.prices.store.PriceStore on Redis; raises StoreUnavailable when Redis is down."""

    def __init__(self, link: RedisLink) -> None:
        self._link = link
        self._take_lock = link.client.register_script(_TAKE_LOCK)

    def latest_version(self) -> int:
        version = self._link.run(lambda client: client.hget(key("prices", "snapshot"), "version"))
        return int(version or 0)

    def latest(self) -> Snapshot | None:
        version, body = self._link.run(
            lambda client: client.hmget(key("prices", "snapshot"), "version", "body")
        )
        if version is None or body is None:
            return None
        try:
            data = json.loads(body)
            return Snapshot(
                version=int(version),
                taken_at=datetime.fromisoformat(data["taken_at"]),
                offers=OFFERS.validate_python(data["offers"]),
                feeds=tuple(feed_from_json(item) for item in data["feeds"]),
            )
        except (ValueError, KeyError, TypeError):
            return None  # written by an incompatible version: as if no refresh had run

    def save(self, snapshot: Snapshot) -> Snapshot:
        body = json.dumps(
            {
                "taken_at": snapshot.taken_at.isoformat(),
                "feeds": [feed_json(status) for status in snapshot.feeds],
                "offers": OFFERS.dump_python(snapshot.offers, mode="json"),
            }
        )
        name = key("prices", "snapshot")

        def write(client) -> list[object]:  # type: ignore[no-untyped-def]
            with client.pipeline(transaction=True) as pipe:
                pipe.hincrby(name, "version", 1)
                pipe.hset(name, "body", body)
                pipe.expire(name, SNAPSHOT_TTL_S)
                return pipe.execute()

        version = int(self._link.run(write)[0])
        return Snapshot(version, snapshot.taken_at, snapshot.offers, snapshot.feeds)

    def try_lock(self, name: str, holder: str, until_s: float, now_s: float) -> bool:
        ttl_ms = max(1, int((until_s - now_s) * 1000))
        taken = self._link.run(
            lambda client: self._take_lock(
                keys=[key("prices", "lock", name)], args=[holder, ttl_ms], client=client
            )
        )
        return taken == 1
