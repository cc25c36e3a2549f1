"""Where a posted button's change (bot.patches.Patch) is kept until it is clicked: SQLite beside
the thread table by default, Redis (`gpuplan:patch:<id>`, SET … EX) when GPUPLAN_STATE_URL names
one, in memory for one-off answers. A stored patch lives as long as a thread does
(GPUPLAN_THREAD_TTL_S).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from bot.patches import Patch, patch_id
from bot.state.backend import StateBackend, backend_from_env, ttl_from_env
from bot.state.redis_keys import key
from bot.state.sqlite import StateFile

if TYPE_CHECKING:
    import redis

    from bot.state.redis_link import RedisLink


class PatchStore(Protocol):
    def put(self, patch: Patch) -> str:
        """Keep `patch` and return its new id."""
        ...

    def put_all(self, patches: Sequence[Patch]) -> list[str]:
        """Keep every patch of one answer at once (one round trip on Redis); their new ids."""
        ...

    def get(self, patch_id: str) -> Patch | None:
        """The patch, or None once it expired (or never existed)."""
        ...


@dataclass
class MemoryPatchStore:
    """For one-off answers (`gpuplan ask`), and tests."""

    ttl_s: float = field(default_factory=ttl_from_env)
    clock: Callable[[], float] = time.time
    _rows: dict[str, tuple[float, Patch]] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def put(self, patch: Patch) -> str:
        new_id = patch_id(patch)
        with self._lock:
            now = self.clock()
            self._rows = {k: v for k, v in self._rows.items() if v[0] >= now - self.ttl_s}
            self._rows[new_id] = (now, patch)
        return new_id

    def put_all(self, patches: Sequence[Patch]) -> list[str]:
        return [self.put(patch) for patch in patches]

    def get(self, patch_id: str) -> Patch | None:
        with self._lock:
            row = self._rows.get(patch_id)
        if row is None or row[0] < self.clock() - self.ttl_s:
            return None
        return row[1]


class SQLitePatchStore:
    """A `patches` table in the state file (bot.state.sqlite), expired rows dropped on write.

    The file and table are made on first use, and SQLite's or the OS's errors surface as
    StoreFailed: a full disk or a read-only state dir leaves buttons on their text rather than
    failing."""

    def __init__(
        self,
        directory: Path | None = None,
        *,
        ttl_s: float | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._directory = directory
        self.ttl_s = ttl_s if ttl_s is not None else ttl_from_env()
        self._clock = clock
        self._file: StateFile | None = None

    def put(self, patch: Patch) -> str:
        return self.put_all([patch])[0]

    def put_all(self, patches: Sequence[Patch]) -> list[str]:
        ids, now = [patch_id(patch) for patch in patches], self._clock()
        state = self._state_file()
        with state.failures(), state.connect() as connection:
            # Posting the same button again restarts its lifetime.
            connection.executemany(
                "INSERT OR REPLACE INTO patches (id, patch, created_at) VALUES (?, ?, ?)",
                [
                    (new_id, patch.to_json(), now)
                    for new_id, patch in zip(ids, patches, strict=True)
                ],
            )
            connection.execute("DELETE FROM patches WHERE created_at < ?", (now - self.ttl_s,))
        return ids

    def get(self, patch_id: str) -> Patch | None:
        state = self._state_file()
        with state.failures(), state.connect() as connection:
            row = connection.execute(
                "SELECT patch, created_at FROM patches WHERE id = ?", (patch_id,)
            ).fetchone()
        if row is None or row[1] < self._clock() - self.ttl_s:
            return None
        return Patch.from_json(row[0])

    def _state_file(self) -> StateFile:
        if self._file is None:
            state = StateFile(self._directory)
            with state.failures(), state.connect() as connection:
                connection.execute(
                    "CREATE TABLE IF NOT EXISTS patches ("
                    " id TEXT PRIMARY KEY, patch TEXT NOT NULL, created_at REAL NOT NULL)"
                )
            self._file = state
        return self._file


class RedisPatchStore:
    """`gpuplan:patch:<id>` → the patch JSON, with the thread TTL (SET … EX)."""

    def __init__(self, link: RedisLink, *, ttl_s: float | None = None) -> None:
        self._link = link
        self.ttl_s = ttl_s if ttl_s is not None else ttl_from_env()

    def put(self, patch: Patch) -> str:
        return self.put_all([patch])[0]

    def put_all(self, patches: Sequence[Patch]) -> list[str]:
        ids = [patch_id(patch) for patch in patches]
        ttl_ms = max(1, int(self.ttl_s * 1000))

        def write(client: redis.Redis) -> None:
            with client.pipeline(transaction=False) as batch:  # one round trip for every button
                for new_id, patch in zip(ids, patches, strict=True):
                    batch.set(key("patch", new_id), patch.to_json(), px=ttl_ms)
                batch.execute()

        self._link.run(write)
        return ids

    def get(self, patch_id: str) -> Patch | None:
        stored = self._link.run(lambda client: client.get(key("patch", patch_id)))
        if stored is None:
            return None
        return Patch.from_json(stored if isinstance(stored, str) else stored.decode())


def open_patch_store(backend: StateBackend | None = None) -> PatchStore:
    """The patch store on `backend` (GPUPLAN_STATE_URL's by default), beside the thread store."""
    backend = backend if backend is not None else backend_from_env()
    if backend.redis_url is None:
        return SQLitePatchStore()
    return RedisPatchStore(backend.redis_link())
