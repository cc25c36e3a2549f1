"""Thread state: each thread's JobSpec history, behind a small compare-and-set interface.

`load` then `save(..., expected_version)` lets any store (the SQLite file, or Redis) serialise
writers to one thread without holding a lock while a plan is computed: a writer whose version is
stale loses and re-reads.

On Redis, `gpuplan:thread:<thread key>` is a hash {history: JSON list, version: n}, saved by one
Lua script that compares the version and writes in one step, so two processes answering one
thread cannot both win. It expires GPUPLAN_THREAD_TTL_S (7 days) after the last change, like the
SQLite rows. One round trip each: load is HMGET, save is EVALSHA (redis-py reloads a script that
a restarted Redis forgot).
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from bot.state.backend import StateBackend, backend_from_env, ttl_from_env
from bot.state.redis_keys import key
from bot.state.sqlite import BUSY_TIMEOUT_S, StateFile

if TYPE_CHECKING:
    from bot.state.redis_link import RedisLink

SpecJson = dict[str, Any]

# KEYS[1] the thread; ARGV: expected version, history JSON, TTL in ms. 1 if written, 0 if stale.
_SAVE_IF_VERSION = """
local version = tonumber(redis.call('HGET', KEYS[1], 'version') or '0')
if version ~= tonumber(ARGV[1]) then return 0 end
redis.call('HSET', KEYS[1], 'history', ARGV[2], 'version', version + 1)
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return 1
"""


@dataclass(frozen=True)
class ThreadState:
    history: tuple[SpecJson, ...]  # oldest first; the last one is the thread's current job
    version: int  # 0 when the store has never seen the thread


class StateStore(Protocol):
    def load(self, key: str) -> ThreadState: ...

    def save(self, key: str, history: Sequence[SpecJson], expected_version: int) -> bool:
        """Write `history` if the thread is still at `expected_version`; False if someone won."""
        ...


def open_thread_store(backend: StateBackend | None = None) -> StateStore:
    """The thread store on `backend` (GPUPLAN_STATE_URL's by default)."""
    backend = backend if backend is not None else backend_from_env()
    if backend.redis_url is None:
        return SQLiteStore()
    return RedisStateStore(backend.redis_link())


class SQLiteStore:
    """One row per thread in the state file (bot.state.sqlite), which only its owner can read."""

    def __init__(
        self,
        directory: Path | None = None,
        *,
        ttl_s: float | None = None,
        clock: Callable[[], float] = time.time,
        busy_timeout_s: float = BUSY_TIMEOUT_S,
    ) -> None:
        self.file = StateFile(directory, busy_timeout_s=busy_timeout_s)
        self.path = self.file.path
        self.ttl_s = ttl_s if ttl_s is not None else ttl_from_env()
        self._clock = clock
        # Set when the file can be read but not written: loads work, every save says why not.
        self.read_only = self.file.read_only
        if self.read_only is not None:
            return
        with self.file.failures(), self.file.connect() as connection:
            connection.execute(
                "CREATE TABLE IF NOT EXISTS threads ("
                " key TEXT PRIMARY KEY, history TEXT NOT NULL,"
                " version INTEGER NOT NULL, updated_at REAL NOT NULL)"
            )
            connection.execute(
                "CREATE INDEX IF NOT EXISTS threads_updated_at ON threads(updated_at)"
            )

    def load(self, key: str) -> ThreadState:
        with self.file.failures(), self.file.connect() as connection:
            row = connection.execute(
                "SELECT history, version, updated_at FROM threads WHERE key = ?", (key,)
            ).fetchone()
        if row is None:
            return ThreadState(history=(), version=0)
        history_json, version, updated_at = row
        if updated_at < self._clock() - self.ttl_s:
            return ThreadState(history=(), version=version)
        return ThreadState(history=decode_history(history_json), version=version)

    def save(self, key: str, history: Sequence[SpecJson], expected_version: int) -> bool:
        if self.read_only is not None:
            raise self.read_only
        now = self._clock()
        with self.file.failures(), self.file.connect() as connection:
            # IMMEDIATE takes the write lock before reading the version, so two processes
            # cannot both see the same version and both write.
            connection.execute("BEGIN IMMEDIATE")
            try:
                row = connection.execute(
                    "SELECT version FROM threads WHERE key = ?", (key,)
                ).fetchone()
                if (row[0] if row else 0) != expected_version:
                    connection.execute("ROLLBACK")
                    return False
                connection.execute(
                    "INSERT INTO threads (key, history, version, updated_at) VALUES (?, ?, ?, ?)"
                    " ON CONFLICT(key) DO UPDATE SET history = excluded.history,"
                    " version = excluded.version, updated_at = excluded.updated_at",
                    (key, json.dumps(list(history)), expected_version + 1, now),
                )
                connection.execute("DELETE FROM threads WHERE updated_at < ?", (now - self.ttl_s,))
                connection.execute("COMMIT")
            except BaseException:
                # SQLite has already rolled back after some errors (a full disk at COMMIT); a
                # second ROLLBACK would fail and hide the real cause.
                if connection.in_transaction:
                    connection.execute("ROLLBACK")
                raise
        return True


class MemoryStore:
    """The same interface in memory, for one-shot answers (`gpuplan ask`) that keep no thread."""

    def __init__(self) -> None:
        self._rows: dict[str, ThreadState] = {}
        self._lock = threading.Lock()

    def load(self, key: str) -> ThreadState:
        with self._lock:
            return self._rows.get(key, ThreadState(history=(), version=0))

    def save(self, key: str, history: Sequence[SpecJson], expected_version: int) -> bool:
        with self._lock:
            if self._rows.get(key, ThreadState((), 0)).version != expected_version:
                return False
            self._rows[key] = ThreadState(tuple(history), expected_version + 1)
            return True


class RedisStateStore:
    """StateStore on Redis. Raises StoreUnavailable when Redis cannot be reached."""

    def __init__(self, link: RedisLink, *, ttl_s: float | None = None) -> None:
        self._link = link
        self.ttl_s = ttl_s if ttl_s is not None else ttl_from_env()
        self._save = link.client.register_script(_SAVE_IF_VERSION)

    def load(self, thread: str) -> ThreadState:
        history_json, version = self._link.run(
            lambda client: client.hmget(key("thread", thread), "history", "version")
        )
        if version is None:
            return ThreadState(history=(), version=0)
        return ThreadState(history=decode_history(history_json or ""), version=int(version))

    def save(self, thread: str, history: Sequence[SpecJson], expected_version: int) -> bool:
        arguments = [expected_version, json.dumps(list(history)), int(self.ttl_s * 1000)]
        written = self._link.run(
            lambda client: self._save(keys=[key("thread", thread)], args=arguments, client=client)
        )
        return written == 1


def decode_history(history_json: str) -> tuple[SpecJson, ...]:
    """A row another version wrote badly reads as an empty thread rather than an error."""
    try:
        history = json.loads(history_json)
    except ValueError:
        return ()
    if not isinstance(history, list):
        return ()
    return tuple(item for item in history if isinstance(item, dict))
