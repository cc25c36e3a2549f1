"""The SQLite state file every store keeps its table in (threads, patches, settings, reports,
price snapshots, Slack's thread links and installs): where it is, how it is opened (owner-only,
WAL, short autocommit connections) and what happens when it can be read but not written.
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path

from bot.state.errors import StoreFailed, store_failures

DB_NAME = "threads.db"
BUSY_TIMEOUT_S = 30.0
WAL_SWITCH_RETRY_S = 0.02


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


class Connection:
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


class StateFile:
    """The state database in `directory` (GPUPLAN_STATE_DIR by default), created owner-only and
    switched to WAL on opening. Each `connect()` is its own connection, so threads and processes
    share the file safely; WAL with synchronous=NORMAL keeps every committed write across a crash
    or kill -9. A file that can be read but not written opens read-only: `read_only` then holds
    the StoreFailed every write raises. Raises StoreFailed when the file cannot be opened."""

    def __init__(
        self, directory: Path | None = None, *, busy_timeout_s: float = BUSY_TIMEOUT_S
    ) -> None:
        self.path = (directory if directory is not None else state_dir()) / DB_NAME
        self._busy_timeout_s = busy_timeout_s
        self.read_only: StoreFailed | None = None
        try:
            with self.failures():
                state_db_path(self.path.parent)
        except StoreFailed as failure:
            if failure.kind != "read_only" or not self.path.is_file():
                raise
            self.read_only = failure
            return
        with self.failures():
            self._use_wal()

    def failures(self) -> AbstractContextManager[None]:
        return store_failures(self.path)

    def connect(self) -> Connection:
        return Connection(self.path, self._busy_timeout_s, read_only=self.read_only is not None)

    def _use_wal(self) -> None:
        """Switch a new file to WAL (the mode then sticks to the file). SQLite refuses the switch
        at once, without waiting, while another process is inside the file, as happens when two
        processes open a new state dir together; so wait and retry here."""
        deadline = time.monotonic() + BUSY_TIMEOUT_S
        while True:
            try:
                with self.connect() as connection:
                    if connection.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
                        connection.execute("PRAGMA journal_mode=WAL")
                return
            except sqlite3.OperationalError as error:
                if "locked" not in str(error) or time.monotonic() > deadline:
                    raise
                time.sleep(WAL_SWITCH_RETRY_S)


def state_db_connection(directory: Path | None = None) -> Callable[[], Connection]:
    """Connections to the state database for a store that keeps a table in it: the file is
    created and switched to WAL first; on a read-only file they are read-only. Raises
    StoreFailed when the file cannot be opened."""
    return StateFile(directory).connect
