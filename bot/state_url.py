"""Where the bot's shared state lives: the SQLite file by default, Redis when GPUPLAN_STATE_URL
names one (redis://host:port/db, or rediss:// for TLS).

Every store (threads, rate limits, event de-duplication, Slack thread links and installs) asks
this module which backend to use, so one variable moves all of them together. Nothing here imports
the redis client: `gpuplan ask` and the SQLite default never load it.
"""

from __future__ import annotations

import importlib.util
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

STATE_URL_ENV = "GPUPLAN_STATE_URL"
REDIS_SCHEMES = ("redis", "rediss")
_PASSWORD = re.compile(r"//([^:/@]*):[^@/]*@")  # user:password@ in a URL


class StateUrlError(ValueError):
    """GPUPLAN_STATE_URL is set to something gpuplan cannot use; the message says what would do."""


@dataclass(frozen=True)
class StateBackend:
    redis_url: str | None  # None: the SQLite file under GPUPLAN_STATE_DIR

    @property
    def kind(self) -> str:
        return "redis" if self.redis_url else "sqlite"

    def describe(self) -> str:
        """One line for the start-up log and /healthz, with any password masked."""
        if self.redis_url is None:
            from bot.store import DB_NAME, state_dir

            return f"SQLite at {state_dir() / DB_NAME}"
        return f"Redis at {redacted(self.redis_url)}"


def backend_from_env(env: Mapping[str, str] | None = None) -> StateBackend:
    raw = (os.environ if env is None else env).get(STATE_URL_ENV, "").strip()
    if not raw:
        return StateBackend(redis_url=None)
    parts = urlsplit(raw)
    if parts.scheme not in REDIS_SCHEMES or not parts.hostname:
        raise StateUrlError(
            f"{STATE_URL_ENV} must be a Redis URL such as redis://localhost:6379/0 "
            f"(rediss:// for TLS), not {redacted(raw)!r}; unset it to keep state in SQLite."
        )
    try:
        parts.port  # noqa: B018 - urlsplit checks the port only when asked
    except ValueError:
        raise StateUrlError(f"{STATE_URL_ENV} has a bad port: {redacted(raw)!r}.") from None
    database = parts.path.strip("/")
    if database and not database.isdigit():
        raise StateUrlError(
            f"{STATE_URL_ENV}'s path is the database number (e.g. /0), not {database!r}."
        )
    if importlib.util.find_spec("redis") is None:
        raise StateUrlError(
            f"{STATE_URL_ENV} names Redis, but the redis client is not installed: "
            "pip install 'gpuplan[redis]'."
        )
    return StateBackend(redis_url=raw)


def redacted(url: str) -> str:
    """`url` with its password (if any) replaced by ***, safe to log."""
    return _PASSWORD.sub(r"//\1:***@", url)
