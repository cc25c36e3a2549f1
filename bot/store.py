"""Thread state: each thread's JobSpec history, behind a small compare-and-set interface.

`load` then `save(..., expected_version)` lets any store (this SQLite file, or a shared database
later) serialise writers to one thread without holding a lock while a plan is computed: a writer
whose version is stale loses and re-reads.
"""

from __future__ import annotations

import errno
import json
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from bot import phrases

DEFAULT_TTL_S = 7 * 24 * 3600.0
DB_NAME = "threads.db"
BUSY_TIMEOUT_S = 30.0
WAL_SWITCH_RETRY_S = 0.02

SpecJson = dict[str, Any]


@dataclass(frozen=True)
class ThreadState:
    history: tuple[SpecJson, ...]  # oldest first; the last one is the thread's current job
    version: int  # 0 when the store has never seen the thread


class StoreUnavailable(RuntimeError):
    """The shared store could not be reached in time (Redis down or slow); the message says which
    and when it is tried again. Callers answer without it rather than fail. `kind` says how, for
    metrics and logs (bot.redis_errors names Redis's kinds)."""

    def __init__(self, message: str, kind: str = "unavailable") -> None:
        super().__init__(message)
        self.kind = kind

    def user_sentence(self, *, read: bool) -> str:
        """What to tell the user, who was answered without the thread's job (`read`) or whose
        answer was not saved (not `read`)."""
        return phrases.NO_MEMORY if read else phrases.NOT_REMEMBERED


class StoreFailed(StoreUnavailable):
    """The SQLite state file failed. `kind` says how, in words a user can take (disk_full,
    read_only, locked, corrupt, unavailable); the message, for the log, says where and SQLite's
    or the OS's own words."""

    def __init__(self, kind: str, path: Path, cause: BaseException) -> None:
        super().__init__(f"thread store {path}: {kind.replace('_', ' ')} ({_reason(cause)})", kind)
        self.path = path

    def user_sentence(self, *, read: bool) -> str:
        return phrases.store_not_read(self.kind) if read else phrases.store_not_saved(self.kind)

    @classmethod
    def from_error(cls, path: Path, error: BaseException) -> StoreFailed:
        kind = _kind_of(error)
        if kind == "io_error":
            # SQLite reports a full disk met while growing its shared-memory file as a plain I/O
            # error; the file system can say whether that is what happened.
            kind = "disk_full" if _no_space_left(path.parent) else "unavailable"
        return cls(kind, path, error)


# SQLite's primary result codes (sqlite.org/rescode.html) and what each means for the user.
_SQLITE_KINDS = {5: "locked", 6: "locked", 8: "read_only", 10: "io_error", 11: "corrupt",
                 13: "disk_full", 26: "corrupt"}  # fmt: skip
_ERRNO_KINDS = {errno.ENOSPC: "disk_full", errno.EDQUOT: "disk_full", errno.EROFS: "read_only",
                errno.EACCES: "read_only", errno.EPERM: "read_only"}  # fmt: skip


def _kind_of(error: BaseException) -> str:
    if isinstance(error, sqlite3.Error):
        code = getattr(error, "sqlite_errorcode", None)
        return _SQLITE_KINDS.get(code & 0xFF, "unavailable") if code is not None else "unavailable"
    if isinstance(error, OSError) and error.errno is not None:
        return _ERRNO_KINDS.get(error.errno, "unavailable")
    return "unavailable"


def _no_space_left(directory: Path) -> bool:
    try:
        return os.statvfs(directory).f_bavail == 0
    except OSError:
        return False


def _reason(error: BaseException) -> str:
    if isinstance(error, OSError) and error.strerror:
        return error.strerror
    return str(error) or type(error).__name__


@contextmanager
def store_failures(path: Path) -> Iterator[None]:
    """SQLite's and the OS's errors as StoreFailed, naming the file and what went wrong: every
    table in the state DB (threads, button patches) fails the same way."""
    try:
        yield
    except (sqlite3.Error, OSError) as error:
        raise StoreFailed.from_error(path, error) from error


class StateStore(Protocol):
    def load(self, key: str) -> ThreadState: ...

    def save(self, key: str, history: Sequence[SpecJson], expected_version: int) -> bool:
        """Write `history` if the thread is still at `expected_version`; False if someone won."""
        ...


def open_thread_store() -> StateStore:
    """The thread store GPUPLAN_STATE_URL selects: Redis when it names one, else the SQLite file."""
    from bot.state_url import backend_from_env

    backend = backend_from_env()
    if backend.redis_url is None:
        return SQLiteStore()
    from bot.redis_client import shared_link
    from bot.redis_store import RedisStateStore

    return RedisStateStore(shared_link(backend.redis_url))


def state_dir() -> Path:
    """GPUPLAN_STATE_DIR, else the user's data directory (XDG), e.g. ~/.local/share/gpuplan."""
    if configured := os.environ.get("GPUPLAN_STATE_DIR"):
        return Path(configured).expanduser()
    data_home = os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share"
    return Path(data_home) / "gpuplan"


def state_db_path(directory: Path | None = None) -> Path:
    """The state database (created if missing), owner-only from its first byte: directory 0700,
    file 0600; SQLite gives the -wal and -shm files the database's mode. Everything that opens
    the state DB (adapters keep their own tables in it) should get its path here."""
    directory = directory if directory is not None else state_dir()
    directory.mkdir(mode=0o700, parents=True, exist_ok=True)
    path = directory / DB_NAME
    os.close(os.open(path, os.O_RDWR | os.O_CREAT, 0o600))
    return path


def ttl_from_env() -> float:
    raw = os.environ.get("GPUPLAN_THREAD_TTL_S", "")
    try:
        ttl_s = float(raw)
    except ValueError:
        return DEFAULT_TTL_S
    return ttl_s if ttl_s > 0 else DEFAULT_TTL_S


class SQLiteStore:
    """One row per thread in a WAL-mode SQLite file that only its owner can read (0600).

    Each call opens its own connection, so threads and processes share the file safely; WAL with
    synchronous=NORMAL keeps every committed write across a crash or kill -9 of the process.
    """

    def __init__(
        self,
        directory: Path | None = None,
        *,
        ttl_s: float | None = None,
        clock: Callable[[], float] = time.time,
        busy_timeout_s: float = BUSY_TIMEOUT_S,
    ) -> None:
        self.path = (directory if directory is not None else state_dir()) / DB_NAME
        self.ttl_s = ttl_s if ttl_s is not None else ttl_from_env()
        self._clock = clock
        self._busy_timeout_s = busy_timeout_s
        # Set when the file can be read but not written: loads work, every save says why not.
        self.read_only: StoreFailed | None = None
        try:
            with self._failures():
                state_db_path(self.path.parent)
        except StoreFailed as failure:
            if failure.kind != "read_only" or not self.path.is_file():
                raise
            self.read_only = failure
            return
        with self._failures():
            self._use_wal()
            with self._connect() as connection:
                connection.execute(
                    "CREATE TABLE IF NOT EXISTS threads ("
                    " key TEXT PRIMARY KEY, history TEXT NOT NULL,"
                    " version INTEGER NOT NULL, updated_at REAL NOT NULL)"
                )
                connection.execute(
                    "CREATE INDEX IF NOT EXISTS threads_updated_at ON threads(updated_at)"
                )

    def _failures(self) -> AbstractContextManager[None]:
        return store_failures(self.path)

    def _use_wal(self) -> None:
        """Switch a new file to WAL (the mode then sticks to the file). SQLite refuses the switch
        at once, without waiting, while another process is inside the file, as happens when two
        processes open a new state dir together; so wait and retry here."""
        deadline = time.monotonic() + BUSY_TIMEOUT_S
        while True:
            try:
                with self._connect() as connection:
                    if connection.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
                        connection.execute("PRAGMA journal_mode=WAL")
                return
            except sqlite3.OperationalError as error:
                if "locked" not in str(error) or time.monotonic() > deadline:
                    raise
                time.sleep(WAL_SWITCH_RETRY_S)

    def load(self, key: str) -> ThreadState:
        with self._failures(), self._connect() as connection:
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
        with self._failures(), self._connect() as connection:
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

    def _connect(self) -> _Connection:
        return _Connection(self.path, self._busy_timeout_s, read_only=self.read_only is not None)


class _Connection:
    """A short-lived autocommit connection, closed on exit (sqlite3's own context manager only
    commits)."""

    def __init__(self, path: Path, busy_timeout_s: float, *, read_only: bool = False) -> None:
        # Read-only, SQLite cannot create the WAL index (-shm) it needs to read a WAL file, so
        # it is told the file cannot change: it reads the main file, as the last writer's clean
        # close left it (a crashed writer's last commits, still in -wal, are not seen).
        target = f"{path.resolve().as_uri()}?mode=ro&immutable=1" if read_only else str(path)
        self._connection = sqlite3.connect(
            target, timeout=busy_timeout_s, isolation_level=None, uri=read_only
        )
        if not read_only:
            self._connection.execute("PRAGMA synchronous=NORMAL")

    def __enter__(self) -> sqlite3.Connection:
        return self._connection

    def __exit__(self, *exc: object) -> None:
        self._connection.close()


def state_db_connection(directory: Path | None = None) -> Callable[[], _Connection]:
    """Connections to the state database for the other stores that keep tables in it (price
    snapshots, workspace settings): the file is created and switched to WAL first, as the thread
    store does; on a read-only file they are read-only. Raises StoreFailed as SQLiteStore does."""
    store = SQLiteStore(directory)
    path, read_only = store.path, store.read_only is not None
    return lambda: _Connection(path, BUSY_TIMEOUT_S, read_only=read_only)


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


def decode_history(history_json: str) -> tuple[SpecJson, ...]:
    """A row another version wrote badly reads as an empty thread rather than an error."""
    try:
        history = json.loads(history_json)
    except ValueError:
        return ()
    if not isinstance(history, list):
        return ()
    return tuple(item for item in history if isinstance(item, dict))
