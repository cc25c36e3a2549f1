"""Settings per workspace (Slack) or server (Discord): one small key/value store every setting
uses (the providers a team rents from today; a language default or keeping reports later).

A scope is "platform/workspace" (`scope_of(key)`); a value is a short string each setting reads
and writes in its own format. Who may change a setting is the surface's decision (Slack
workspace admins, Discord members with Manage Server); the store records who did.

On Redis (GPUPLAN_STATE_URL) a scope is one hash, `gpuplan:settings:<scope>` {name: value}, with
no TTL: a setting an admin made stays until an admin changes it.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from bot.state.backend import StateBackend, backend_from_env
from bot.state.errors import StoreUnavailable
from bot.state.redis_keys import key
from bot.state.sqlite import state_db_connection
from bot.threads import ThreadKey

if TYPE_CHECKING:
    from bot.state.redis_link import RedisLink

logger = logging.getLogger(__name__)

MAX_VALUE_CHARS = 2_000


class SettingsStore(Protocol):
    """Reads never fail an answer: a store that cannot be read reads as nothing set (and logs
    why), so every setting falls back to its default. Writes raise SETTINGS_ERRORS, for the
    command that changes a setting to say it was not saved."""

    def get(self, scope: str, name: str) -> str | None: ...

    def put(self, scope: str, name: str, value: str | None, *, by: str = "") -> None:
        """Set `name` in `scope` (None removes it); `by` is who changed it."""
        ...

    def all(self, scope: str) -> dict[str, str]: ...


# What a settings write raises when its store refuses: SQLite's errors for the state file,
# StoreUnavailable for Redis.
SETTINGS_ERRORS: tuple[type[Exception], ...] = (sqlite3.Error, StoreUnavailable)


@contextmanager
def read_or_default(scope: str) -> Iterator[None]:
    """Around a settings read: a failing store is logged and the read gives the default."""
    try:
        yield
    except SETTINGS_ERRORS as error:
        logger.warning("reading settings for %s failed: %s", scope, error)


def open_settings_store(backend: StateBackend | None = None) -> SettingsStore:
    """The settings store for bots on `backend` (GPUPLAN_STATE_URL's by default): Redis when it
    names one, else the state directory's SQLite file, or memory when that cannot be opened (the
    thread store says why)."""
    backend = backend if backend is not None else backend_from_env()
    if backend.redis_url is not None:
        return RedisSettings(backend.redis_link())
    try:
        return SQLiteSettings()
    except StoreUnavailable:
        return MemorySettings()


def scope_of(key: ThreadKey) -> str:
    return f"{key.platform}/{key.workspace}"


class SQLiteSettings:
    """Rows of the state database, next to the threads."""

    def __init__(
        self, directory: Path | None = None, *, clock: Callable[[], float] = time.time
    ) -> None:
        self._connect = state_db_connection(directory)
        self._clock = clock
        # On a read-only file the tables are there already or cannot be made: reads then fail
        # where they are made, and callers treat that as nothing stored.
        with suppress(sqlite3.OperationalError), self._connect() as connection:
            connection.execute(
                "CREATE TABLE IF NOT EXISTS workspace_settings ("
                " scope TEXT NOT NULL, name TEXT NOT NULL, value TEXT NOT NULL,"
                " updated_by TEXT NOT NULL, updated_at REAL NOT NULL,"
                " PRIMARY KEY (scope, name))"
            )

    def get(self, scope: str, name: str) -> str | None:
        row = None
        with read_or_default(scope), self._connect() as connection:
            row = connection.execute(
                "SELECT value FROM workspace_settings WHERE scope = ? AND name = ?", (scope, name)
            ).fetchone()
        return row[0] if row else None

    def put(self, scope: str, name: str, value: str | None, *, by: str = "") -> None:
        with self._connect() as connection:
            if value is None:
                connection.execute(
                    "DELETE FROM workspace_settings WHERE scope = ? AND name = ?", (scope, name)
                )
                return
            connection.execute(
                "INSERT INTO workspace_settings (scope, name, value, updated_by, updated_at)"
                " VALUES (?, ?, ?, ?, ?) ON CONFLICT(scope, name) DO UPDATE SET"
                " value = excluded.value, updated_by = excluded.updated_by,"
                " updated_at = excluded.updated_at",
                (scope, name, checked_value(value), by, self._clock()),
            )

    def all(self, scope: str) -> dict[str, str]:
        rows: list[tuple[str, str]] = []
        with read_or_default(scope), self._connect() as connection:
            rows = connection.execute(
                "SELECT name, value FROM workspace_settings WHERE scope = ? ORDER BY name",
                (scope,),
            ).fetchall()
        return dict(rows)


class MemorySettings:
    """The same in memory (one-off answers, tests)."""

    def __init__(self) -> None:
        self._values: dict[tuple[str, str], str] = {}
        self._lock = threading.Lock()

    def get(self, scope: str, name: str) -> str | None:
        with self._lock:
            return self._values.get((scope, name))

    def put(self, scope: str, name: str, value: str | None, *, by: str = "") -> None:
        with self._lock:
            if value is None:
                self._values.pop((scope, name), None)
            else:
                self._values[(scope, name)] = checked_value(value)

    def all(self, scope: str) -> dict[str, str]:
        with self._lock:
            return {name: v for (s, name), v in sorted(self._values.items()) if s == scope}


class RedisSettings:
    """Raises StoreUnavailable when Redis is down, like the other Redis stores."""

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


def checked_value(value: str) -> str:
    if len(value) > MAX_VALUE_CHARS:
        raise ValueError(f"a setting holds at most {MAX_VALUE_CHARS:,} characters")
    return value
