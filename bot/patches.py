"""Typed changes at the seam: what a button or a parsed follow-up changes, and where a posted
button's change is kept until it is clicked.

A button carries a short id (`p-…`), not prose for the parser to read back: the id maps to a
stored Patch (JobSpec fields + the label shown). The id is the patch's own digest, so the same
button on many answers is one row, and a patch holds nothing secret: applied in a thread it
does what typing the change would (the thread comes from where the click happened). Buttons
posted before patches were stored carry their follow-up text instead, and still work by reading
that text. A stored patch lives as long as a thread does (GPUPLAN_THREAD_TTL_S); past that the
click is answered "this button has expired, ask again".

`PatchStore` is the seam: SQLite beside the thread table by default, Redis (SET … EX) when
GPUPLAN_STATE_URL names one, in memory for one-off answers.
"""

from __future__ import annotations

import base64
import hashlib
import json
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from bot.store import (
    BUSY_TIMEOUT_S,
    DB_NAME,
    _Connection,
    state_db_path,
    state_dir,
    store_failures,
    ttl_from_env,
)

if TYPE_CHECKING:
    import redis

    from bot.redis_client import RedisLink

PATCH_ID_PREFIX = "p-"
# 12 base-32 characters of the digest (60 bits): no two patches a deployment stores collide.
_ID_CHARS = 12


@dataclass(frozen=True)
class Patch:
    """A change to a thread's job: JobSpec fields (JSON values) and the label to show."""

    fields: Mapping[str, Any]
    label: str = ""

    def to_json(self) -> str:
        return json.dumps({"fields": dict(self.fields), "label": self.label}, sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> Patch | None:
        try:
            data = json.loads(text)
            return cls(fields=dict(data["fields"]), label=str(data.get("label", "")))
        except (ValueError, KeyError, TypeError):
            return None


@dataclass(frozen=True)
class Button:
    """A click: the button's id, and the follow-up text it carried (the old format's payload,
    kept for buttons posted before their patches were stored)."""

    id: str
    text: str = ""

    @property
    def stored(self) -> bool:
        return self.id.startswith(PATCH_ID_PREFIX)


# What the conversation takes: the text someone typed, a click, or a change already typed.
Message = str | Button | Patch


def patch_id(patch: Patch) -> str:
    """The patch's id: a digest of its canonical JSON, lower-case base 32 (Discord custom ids
    and Slack action ids take it as is)."""
    digest = hashlib.sha256(patch.to_json().encode()).digest()
    return PATCH_ID_PREFIX + base64.b32encode(digest).decode()[:_ID_CHARS].lower()


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
    """A `patches` table in the state DB (bot.store's file), expired rows dropped on write.

    The table is made on first use, and SQLite's or the OS's errors surface as StoreFailed: a
    full disk or a read-only state dir leaves buttons on their text rather than failing."""

    def __init__(
        self,
        directory: Path | None = None,
        *,
        ttl_s: float | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.path = (directory if directory is not None else state_dir()) / DB_NAME
        self.ttl_s = ttl_s if ttl_s is not None else ttl_from_env()
        self._clock = clock
        self._ready = False

    def put(self, patch: Patch) -> str:
        return self.put_all([patch])[0]

    def put_all(self, patches: Sequence[Patch]) -> list[str]:
        ids, now = [patch_id(patch) for patch in patches], self._clock()
        with self._failures(), self._connect() as connection:
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
        with self._failures(), self._connect() as connection:
            row = connection.execute(
                "SELECT patch, created_at FROM patches WHERE id = ?", (patch_id,)
            ).fetchone()
        if row is None or row[1] < self._clock() - self.ttl_s:
            return None
        return Patch.from_json(row[0])

    def _failures(self) -> AbstractContextManager[None]:
        return store_failures(self.path)

    def _connect(self) -> _Connection:
        if not self._ready:
            state_db_path(self.path.parent)
            with _Connection(self.path, BUSY_TIMEOUT_S) as connection:
                connection.execute(
                    "CREATE TABLE IF NOT EXISTS patches ("
                    " id TEXT PRIMARY KEY, patch TEXT NOT NULL, created_at REAL NOT NULL)"
                )
            self._ready = True
        return _Connection(self.path, BUSY_TIMEOUT_S)


class RedisPatchStore:
    """`gpuplan:patch:<id>` → the patch JSON, with the thread TTL (SET … EX)."""

    def __init__(self, link: RedisLink, *, ttl_s: float | None = None) -> None:
        self._link = link
        self.ttl_s = ttl_s if ttl_s is not None else ttl_from_env()

    def put(self, patch: Patch) -> str:
        return self.put_all([patch])[0]

    def put_all(self, patches: Sequence[Patch]) -> list[str]:
        from bot.redis_client import key

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
        from bot.redis_client import key

        stored = self._link.run(lambda client: client.get(key("patch", patch_id)))
        if stored is None:
            return None
        return Patch.from_json(stored if isinstance(stored, str) else stored.decode())


def open_patch_store() -> PatchStore:
    """The patch store GPUPLAN_STATE_URL selects, beside the thread store."""
    from bot.state_url import backend_from_env

    backend = backend_from_env()
    if backend.redis_url is None:
        return SQLitePatchStore()
    from bot.redis_client import shared_link

    return RedisPatchStore(shared_link(backend.redis_url))
