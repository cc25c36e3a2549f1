"""Where a backend's failures become "store unavailable": the one exception every store raises
when it cannot serve (StoreUnavailable), what the user is told, and how a failure is logged.

Which failures count, per backend: SQLite's and the OS's errors on the state file map here
(`store_failures`, by SQLite result code and errno); Redis's map in bot.state.redis_errors (the
deploys issue's policy), applied to every command by bot.state.redis_link. That one lives apart
only because it imports the redis client, which the SQLite default and `gpuplan ask` never load.
"""

from __future__ import annotations

import errno
import logging
import os
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from bot import phrases

logger = logging.getLogger(__name__)


class StoreUnavailable(RuntimeError):
    """The shared store could not be reached in time (Redis down or slow); the message says which
    and when it is tried again. Callers answer without it rather than fail. `kind` says how, for
    metrics and logs (bot.state.redis_errors names Redis's kinds)."""

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


class OutageLog:
    """Logs the first StoreUnavailable of an outage, and that it is over, once each: `what` says
    what the caller does meanwhile ("de-duplication is per process")."""

    def __init__(self, what: str) -> None:
        self._what = what
        self._degraded = False

    def failed(self, error: StoreUnavailable) -> None:
        if not self._degraded:
            logger.warning("%s until Redis is back: %s", self._what, error)
        self._degraded = True

    def recovered(self) -> None:
        if self._degraded:
            logger.info("Redis answers again; %s no longer", self._what)
        self._degraded = False
