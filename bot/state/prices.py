"""Where price snapshots live: the state store's SQLite file by default (the same file as
threads), Redis when GPUPLAN_STATE_URL names one (processes on several hosts then share one
snapshot and one refresh per interval), or memory. The refresh lock lives here too, so processes
sharing a store run one refresh per interval.

Redis keys:
- `gpuplan:prices:snapshot` — a hash {version, body}: the latest snapshot as JSON, its version
  bumped in the same MULTI. TTL 14 days, twice the age past which a feed's offers stop serving:
  a snapshot no refresh has touched for that long prices nothing anyway.
- `gpuplan:prices:lock:<name>` — the refresh lock: its holder, expiring at the end of the
  interval it was taken for (one Lua script: take it if free or ours).
"""

from __future__ import annotations

import json
import sqlite3
import threading
from contextlib import suppress
from dataclasses import asdict
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from bot.prices.snapshot import MAX_CARRIED_AGE, OFFERS, FeedStatus, Snapshot, with_version
from bot.state.backend import StateBackend, backend_from_env
from bot.state.errors import StoreUnavailable
from bot.state.redis_keys import key
from bot.state.sqlite import DB_NAME, state_db_connection, state_dir

if TYPE_CHECKING:
    from bot.state.redis_link import RedisLink

KEPT_SNAPSHOTS = 3  # the latest, and a couple before it for looking back at a bad refresh
SNAPSHOT_TTL_S = int(2 * MAX_CARRIED_AGE.total_seconds())
# KEYS[1] the lock; ARGV: holder, TTL in ms. 1 if now held by the holder, 0 if someone else has it.
_TAKE_LOCK = """
local holder = redis.call('GET', KEYS[1])
if holder and holder ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 1
"""


class PriceStore(Protocol):
    def latest_version(self) -> int:
        """The latest snapshot's version (0 when none): a cheap check before `latest`."""
        ...

    def latest(self) -> Snapshot | None: ...

    def save(self, snapshot: Snapshot) -> Snapshot:
        """Keep `snapshot` as the latest; returns it with its new version."""
        ...

    def try_lock(self, name: str, holder: str, until_s: float, now_s: float) -> bool:
        """Take (or renew) lock `name` for `holder` until `until_s` unless another holder has it
        past `now_s`."""
        ...


class SQLitePriceStore:
    """Snapshots as rows of the state database (JSON offers), the lock as one row per name."""

    def __init__(self, directory: Path | None = None) -> None:
        self._connect = state_db_connection(directory)
        # On a read-only file the tables are there already or cannot be made: reads then fail
        # where they are made, and callers treat that as nothing stored.
        with suppress(sqlite3.OperationalError), self._connect() as connection:
            connection.execute(
                "CREATE TABLE IF NOT EXISTS price_snapshots ("
                " version INTEGER PRIMARY KEY AUTOINCREMENT, taken_at TEXT NOT NULL,"
                " feeds TEXT NOT NULL, offers TEXT NOT NULL)"
            )
            connection.execute(
                "CREATE TABLE IF NOT EXISTS price_locks ("
                " name TEXT PRIMARY KEY, holder TEXT NOT NULL, until_s REAL NOT NULL)"
            )

    @classmethod
    def if_present(cls, directory: Path | None = None) -> SQLitePriceStore | None:
        """The store when the state file exists (a one-off `gpuplan ask` creates nothing)."""
        path = (directory if directory is not None else state_dir()) / DB_NAME
        return cls(directory) if path.exists() else None

    def latest_version(self) -> int:
        with self._connect() as connection:
            row = connection.execute("SELECT MAX(version) FROM price_snapshots").fetchone()
        return row[0] or 0

    def latest(self) -> Snapshot | None:
        with self._connect() as connection:
            row = connection.execute(
                "SELECT version, taken_at, feeds, offers FROM price_snapshots"
                " ORDER BY version DESC LIMIT 1"
            ).fetchone()
        if row is None:
            return None
        version, taken_at, feeds, offers = row
        try:
            return Snapshot(
                version=version,
                taken_at=datetime.fromisoformat(taken_at),
                offers=OFFERS.validate_json(offers),
                feeds=tuple(feed_from_json(item) for item in json.loads(feeds)),
            )
        except ValueError:
            return None  # written by an incompatible version: as if no refresh had run

    def save(self, snapshot: Snapshot) -> Snapshot:
        feeds = json.dumps([feed_json(status) for status in snapshot.feeds])
        with self._connect() as connection:
            cursor = connection.execute(
                "INSERT INTO price_snapshots (taken_at, feeds, offers) VALUES (?, ?, ?)",
                (snapshot.taken_at.isoformat(), feeds, OFFERS.dump_json(snapshot.offers).decode()),
            )
            version = cursor.lastrowid or 0
            connection.execute(
                "DELETE FROM price_snapshots WHERE version <= ?", (version - KEPT_SNAPSHOTS,)
            )
        return with_version(snapshot, version)

    def try_lock(self, name: str, holder: str, until_s: float, now_s: float) -> bool:
        with self._connect() as connection:
            connection.execute("BEGIN IMMEDIATE")
            row = connection.execute(
                "SELECT holder, until_s FROM price_locks WHERE name = ?", (name,)
            ).fetchone()
            if row is not None and row[0] != holder and row[1] > now_s:
                connection.execute("ROLLBACK")
                return False
            connection.execute(
                "INSERT INTO price_locks (name, holder, until_s) VALUES (?, ?, ?)"
                " ON CONFLICT(name) DO UPDATE SET holder = excluded.holder,"
                " until_s = excluded.until_s",
                (name, holder, until_s),
            )
            connection.execute("COMMIT")
        return True


class MemoryPriceStore:
    """The same in memory, for tests and a process that keeps nothing."""

    def __init__(self) -> None:
        self._snapshots: list[Snapshot] = []
        self._locks: dict[str, tuple[str, float]] = {}
        self._guard = threading.Lock()

    def latest_version(self) -> int:
        with self._guard:
            return self._snapshots[-1].version if self._snapshots else 0

    def latest(self) -> Snapshot | None:
        with self._guard:
            return self._snapshots[-1] if self._snapshots else None

    def save(self, snapshot: Snapshot) -> Snapshot:
        with self._guard:
            saved = with_version(snapshot, len(self._snapshots) + 1)
            self._snapshots = [*self._snapshots[-KEPT_SNAPSHOTS + 1 :], saved]
            return saved

    def try_lock(self, name: str, holder: str, until_s: float, now_s: float) -> bool:
        with self._guard:
            current = self._locks.get(name)
            if current is not None and current[0] != holder and current[1] > now_s:
                return False
            self._locks[name] = (holder, until_s)
            return True


def feed_json(status: FeedStatus) -> dict[str, object]:
    data = asdict(status)
    data["fetched_at"] = status.fetched_at.isoformat() if status.fetched_at else None
    return data


def feed_from_json(data: dict[str, object]) -> FeedStatus:
    fetched_at = data.get("fetched_at")
    return FeedStatus(
        name=str(data["name"]),
        ok=bool(data["ok"]),
        offers=int(data["offers"]),  # type: ignore[arg-type]
        fetched_at=datetime.fromisoformat(fetched_at) if isinstance(fetched_at, str) else None,
        error=data.get("error") if isinstance(data.get("error"), str) else None,  # type: ignore[arg-type]
        skipped=int(data.get("skipped") or 0),  # type: ignore[arg-type]
    )


def open_price_store(backend: StateBackend | None = None) -> PriceStore | None:
    """Where answers read snapshots on `backend` (GPUPLAN_STATE_URL's by default): Redis when it
    names one, else the state directory's SQLite file; None when that file does not exist yet (a
    one-off answer creates nothing) or cannot be opened (the thread store says why), and answers
    then use the bundled table."""
    backend = backend if backend is not None else backend_from_env()
    if backend.redis_url is not None:
        return RedisPriceStore(backend.redis_link())
    try:
        return SQLitePriceStore.if_present()
    except StoreUnavailable:
        return None


def refresh_store(backend: StateBackend | None = None) -> PriceStore:
    """Where a refresh saves its snapshot: the same store, created if need be."""
    backend = backend if backend is not None else backend_from_env()
    if backend.redis_url is not None:
        return RedisPriceStore(backend.redis_link())
    return SQLitePriceStore()


class RedisPriceStore:
    """PriceStore on Redis; raises StoreUnavailable when Redis is down."""

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
