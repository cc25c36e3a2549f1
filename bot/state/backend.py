"""Where the bot's shared state lives: the SQLite file by default, Redis when GPUPLAN_STATE_URL
names one (redis://host:port/db, or rediss:// for TLS).

Every store (threads, rate limits, patches, settings, reports, prices, event de-duplication,
Slack thread links and installs) is opened on the StateBackend this module reads, so one variable
moves all of them together. Nothing here imports the redis client at import time: `gpuplan ask`
and the SQLite default never load it; a Redis backend's links are made here, the one place that
loads it (bot.state.redis_link), and only when a store is opened on Redis.
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from bot.state.redis_keys import redacted
from bot.state.sqlite import DB_NAME, state_dir

if TYPE_CHECKING:
    from bot.state.redis_link import AsyncRedisLink, RedisLink

STATE_URL_ENV = "GPUPLAN_STATE_URL"
REDIS_SCHEMES = ("redis", "rediss")
DEFAULT_TTL_S = 7 * 24 * 3600.0


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
            return f"SQLite at {state_dir() / DB_NAME}"
        return f"Redis at {redacted(self.redis_url)}"

    def redis_link(self) -> RedisLink:
        """The process's blocking client for this Redis (shared by every store on it)."""
        from bot.state.redis_link import shared_link

        return shared_link(self._redis_url())

    def async_redis_link(self) -> AsyncRedisLink:
        """A new asyncio client for this Redis, for one event loop's stores."""
        from bot.state.redis_link import AsyncRedisLink

        return AsyncRedisLink(self._redis_url())

    def _redis_url(self) -> str:
        if self.redis_url is None:
            raise ValueError("the SQLite backend has no Redis link")
        return self.redis_url


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


def ttl_from_env() -> float:
    """How long a thread (and what hangs off it: patches, Slack thread links) is kept after its
    last change: GPUPLAN_THREAD_TTL_S, 7 days by default."""
    raw = os.environ.get("GPUPLAN_THREAD_TTL_S", "")
    try:
        ttl_s = float(raw)
    except ValueError:
        return DEFAULT_TTL_S
    return ttl_s if ttl_s > 0 else DEFAULT_TTL_S
