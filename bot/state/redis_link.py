"""The Redis connection every shared store uses: short timeouts, and a backoff while Redis is down.

A Redis that is down or hung must not hold up an answer: a command gets COMMAND_TIMEOUT_S (well
under Slack's and Discord's 3 s), one immediate retry on a fresh connection if the connection
dropped (a pooled connection that died when Redis restarted fails its first command), and after
a failure the stores skip Redis for a backoff that doubles from BACKOFF_FIRST_S up to
BACKOFF_MAX_S (full jitter, so N processes do not reconnect in step) and then try again. What
counts as "down" is bot.state.redis_errors' one policy: a lost or hung connection, and also a full
Redis (OOM), a read-only replica, a server still loading its data, or one held by a script
(BUSY). While Redis is skipped, callers get StoreUnavailable at once and fall back (answers
without thread memory, local rate limits and de-duplication).

The blocking client serves the conversation (which runs in worker threads); the asyncio client
serves the adapters' event-loop code. Only this module and bot.state.redis_errors import
`redis`; the stores take a link and never load the client themselves.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from typing import TypeVar

import redis
import redis.asyncio
from redis.backoff import NoBackoff
from redis.retry import Retry

from bot import metrics
from bot.backoff import Backoff
from bot.state.errors import StoreUnavailable
from bot.state.redis_errors import REDIS_ERRORS, unavailable_kind
from bot.state.redis_keys import redacted

COMMAND_TIMEOUT_S = 0.5
CONNECT_TIMEOUT_S = 0.5
HEALTH_CHECK_INTERVAL_S = 30
ASYNC_MAX_CONNECTIONS = 8
BACKOFF_FIRST_S = 0.25
BACKOFF_MAX_S = 15.0
_RECONNECT = Backoff(first_delay_s=BACKOFF_FIRST_S, max_delay_s=BACKOFF_MAX_S, budget_s=math.inf)

Result = TypeVar("Result")
logger = logging.getLogger(__name__)


class ReconnectGate:
    """Whether to try Redis now, after failures: never blocks, only says 'not yet'. The waits
    between tries come from bot.backoff (full jitter, doubling to BACKOFF_MAX_S)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self._delays = _RECONNECT.delays(clock)
        self._retry_at = 0.0

    def ready(self) -> bool:
        with self._lock:
            return self._clock() >= self._retry_at

    def failed(self) -> float:
        """Record a failure; returns the seconds until the next try."""
        with self._lock:
            wait_s = next(self._delays)
            self._retry_at = self._clock() + wait_s
            return wait_s

    def succeeded(self) -> None:
        with self._lock:
            if self._retry_at:
                self._delays = _RECONNECT.delays(self._clock)
                self._retry_at = 0.0


def _client_options() -> dict[str, object]:
    # Options in the URL's query (e.g. ?socket_timeout=1) override these.
    return {
        "socket_timeout": COMMAND_TIMEOUT_S,
        "socket_connect_timeout": CONNECT_TIMEOUT_S,
        # A pooled connection that died when Redis restarted fails at once: retry that on a fresh
        # one. Not a timeout: a stalled Redis would then hold the command twice as long.
        "retry": Retry(NoBackoff(), 1, supported_errors=(redis.ConnectionError,)),
        "health_check_interval": HEALTH_CHECK_INTERVAL_S,
        "decode_responses": True,
        "client_name": "gpuplan",
    }


class _Guarded:
    def __init__(self, url: str) -> None:
        self.url = url
        self.gate = ReconnectGate()

    @contextmanager
    def _guard(self) -> Iterator[None]:
        if not self.gate.ready():
            raise StoreUnavailable(
                f"Redis at {redacted(self.url)} is unavailable; retrying soon", "backing_off"
            )
        metrics.store_round_trip("redis")
        try:
            yield
        except REDIS_ERRORS as error:
            kind = unavailable_kind(error)
            if kind is None:
                raise  # a command we got wrong, not an outage
            wait_s = self.gate.failed()
            metrics.store_unavailable("redis", kind)
            raise StoreUnavailable(
                f"Redis at {redacted(self.url)} is unavailable ({kind}: {type(error).__name__}:"
                f" {error}); next try in {wait_s:.1f} s",
                kind,
            ) from error
        self.gate.succeeded()


class RedisLink(_Guarded):
    """A blocking client (a thread-safe connection pool) for code that runs in worker threads."""

    def __init__(self, url: str) -> None:
        super().__init__(url)
        self.client: redis.Redis = redis.Redis.from_url(url, **_client_options())

    def run(self, command: Callable[[redis.Redis], Result]) -> Result:
        """`command(client)`, or StoreUnavailable when Redis is down, slow or backing off."""
        with self._guard():
            return command(self.client)


class AsyncRedisLink(_Guarded):
    """The asyncio client, for the adapters' event-loop code (one per event loop)."""

    def __init__(self, url: str) -> None:
        super().__init__(url)
        # A burst of deliveries runs its commands at once; a bounded pool makes them share a few
        # connections instead of opening one each (a connect, CLIENT SETNAME and PING per new
        # connection), and a command waits at most a command's timeout for a free one.
        pool = redis.asyncio.BlockingConnectionPool.from_url(
            url, max_connections=ASYNC_MAX_CONNECTIONS, timeout=COMMAND_TIMEOUT_S,
            **_client_options(),
        )  # fmt: skip
        self.client: redis.asyncio.Redis = redis.asyncio.Redis(connection_pool=pool)

    async def run(self, command: Callable[[redis.asyncio.Redis], Awaitable[Result]]) -> Result:
        with self._guard():
            return await command(self.client)

    async def status(self) -> dict[str, object]:
        """What /healthz shows: reachable or not, and the round trip of a PING. Healthy only once
        the worker threads' client (threads, rate limits) has left its backoff too: until then
        answers still come without thread memory, whatever this loop's client sees."""
        start = time.perf_counter()
        try:
            await self.run(lambda client: client.ping())
        except StoreUnavailable as error:
            return {"store": "redis", "url": redacted(self.url), "ok": False, "error": str(error)}
        ping_ms = round((time.perf_counter() - start) * 1000, 2)
        blocking = _links.get(self.url)
        if blocking is not None and not blocking.gate.ready():
            waiting = "Redis answers again; thread memory resumes when its retry comes due"
            return {"store": "redis", "url": redacted(self.url), "ok": False, "error": waiting}
        return {"store": "redis", "url": redacted(self.url), "ok": True, "ping_ms": ping_ms}


_links: dict[str, RedisLink] = {}
_links_lock = threading.Lock()


def shared_link(url: str) -> RedisLink:
    """One blocking client per URL per process, shared by the thread store and the rate limiter."""
    with _links_lock:
        link = _links.get(url)
        if link is None:
            link = _links[url] = RedisLink(url)
        return link
