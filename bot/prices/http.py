"""HTTP for the feeds: one aiohttp session, a timeout per request, retries with exponential
backoff on what a retry can fix (connection errors, timeouts, 429 and 5xx), and each feed's
published rate limit. Backoff and rate limiting sleep through an injected `sleep` and read an
injected clock, so tests run them without waiting.

What a feed may send is bounded: a body over MAX_BODY_BYTES is refused (by its Content-Length
before reading, else while reading), and a redirect is followed only to the same scheme, host and
port (a feed answering with a redirect elsewhere is not the feed). A host name that does not
resolve is not retried: offline, the refresh says so at once instead of after every backoff.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections import deque
from collections.abc import Awaitable, Callable
from typing import Any

import aiohttp
from tenacity import (
    AsyncRetrying,
    retry_if_exception_type,
    stop_after_attempt,
    wait_exponential,
)
from yarl import URL

Sleep = Callable[[float], Awaitable[None]]
Clock = Callable[[], float]

REQUEST_TIMEOUT_S = 30.0
ATTEMPTS = 3
BACKOFF_S = 2.0  # the first retry waits this long, the next twice as long
MAX_BACKOFF_S = 30.0
# gpuhunt's largest catalog zip (AWS) is a few MB, an Azure page of 1,000 items about 1 MB.
MAX_BODY_BYTES = 32 * 1024 * 1024
MAX_REDIRECTS = 5
# Some feeds sit behind Cloudflare, which refuses Python's default User-Agent (README §2.4).
USER_AGENT = "gpuplan-price-refresh/1 (+https://github.com/gpuplan)"
RETRIED_STATUSES = frozenset({408, 425, 429, 500, 502, 503, 504})


class FeedError(Exception):
    """A feed that did not answer usefully; the message is shown as the feed's error."""


class NotFound(FeedError):
    """A 404: for gpuhunt, a provider it does not publish."""


class Unreachable(FeedError):
    """The feed's host name does not resolve: no retry, and no other request to that host."""


class _Transient(FeedError):
    """Worth another try."""


class RateLimiter:
    """At most `requests` per `per_s` seconds (a sliding window), waiting with `sleep`."""

    def __init__(
        self,
        requests: int,
        per_s: float,
        *,
        clock: Clock = time.monotonic,
        sleep: Sleep = asyncio.sleep,
    ) -> None:
        self.requests = requests
        self.per_s = per_s
        self._clock = clock
        self._sleep = sleep
        self._sent: deque[float] = deque()
        self._lock = asyncio.Lock()

    async def wait(self) -> None:
        async with self._lock:
            while True:
                now = self._clock()
                while self._sent and self._sent[0] <= now - self.per_s:
                    self._sent.popleft()
                if len(self._sent) < self.requests:
                    self._sent.append(now)
                    return
                await self._sleep(self._sent[0] + self.per_s - now)


class FeedHttp:
    """Requests for one feed; `limiter` is that feed's rate limit (None: none published)."""

    def __init__(
        self,
        session: aiohttp.ClientSession,
        *,
        limiter: RateLimiter | None = None,
        timeout_s: float = REQUEST_TIMEOUT_S,
        attempts: int = ATTEMPTS,
        backoff_s: float | None = None,
        sleep: Sleep = asyncio.sleep,
    ) -> None:
        self._session = session
        self._limiter = limiter
        self._timeout = aiohttp.ClientTimeout(total=timeout_s)
        self._attempts = attempts
        self._backoff_s = BACKOFF_S if backoff_s is None else backoff_s
        self._sleep = sleep

    async def get_bytes(self, url: str, params: dict[str, str] | None = None) -> bytes:
        return await self._request("GET", url, params=params)

    async def get_json(self, url: str, params: dict[str, str] | None = None) -> Any:
        return _json(await self.get_bytes(url, params), url)

    async def post_json(self, url: str, body: object) -> Any:
        return _json(await self._request("POST", url, body=body), url)

    async def _request(
        self,
        method: str,
        url: str,
        *,
        params: dict[str, str] | None = None,
        body: object = None,
    ) -> bytes:
        retrying = AsyncRetrying(
            stop=stop_after_attempt(self._attempts),
            wait=wait_exponential(multiplier=self._backoff_s, max=MAX_BACKOFF_S),
            retry=retry_if_exception_type(_Transient),
            sleep=self._sleep,
            reraise=True,
        )
        async for attempt in retrying:
            with attempt:
                return await self._once(method, url, params, body)
        raise AssertionError("unreachable: tenacity reraises the last error")

    async def _once(
        self, method: str, url: str, params: dict[str, str] | None, body: object
    ) -> bytes:
        if self._limiter is not None:
            await self._limiter.wait()
        origin = URL(url).origin()
        target: str | URL = url
        try:
            for _ in range(MAX_REDIRECTS + 1):
                async with self._session.request(
                    method,
                    target,
                    params=params,
                    json=body,
                    timeout=self._timeout,
                    headers={"User-Agent": USER_AGENT, "Accept": "*/*"},
                    allow_redirects=False,
                ) as response:
                    if response.status in REDIRECT_STATUSES:
                        target = _same_host(response, origin, url)
                        params = None  # the Location carries its own query
                        continue
                    if response.status == 404:
                        raise NotFound(f"HTTP 404 from {_short(url)}")
                    if response.status in RETRIED_STATUSES:
                        raise _Transient(f"HTTP {response.status} from {_short(url)}")
                    if response.status >= 400:
                        raise FeedError(f"HTTP {response.status} from {_short(url)}")
                    return await _body(response, url)
            raise FeedError(f"{_short(url)} redirected more than {MAX_REDIRECTS} times")
        except TimeoutError:
            wait_s = self._timeout.total
            raise _Transient(f"no answer from {_short(url)} within {wait_s:g} s") from None
        except aiohttp.ClientConnectorDNSError:
            raise Unreachable(f"{origin.host} does not resolve (offline?)") from None
        except aiohttp.ClientError as error:
            raise _Transient(f"{_short(url)}: {type(error).__name__}") from error


REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})


def _same_host(response: aiohttp.ClientResponse, origin: URL, url: str) -> URL:
    """Where a redirect points, if it stays on the feed's scheme, host and port."""
    location = response.headers.get("Location", "")
    target = response.url.join(URL(location))
    if not location or target.origin() != origin:
        raise FeedError(f"{_short(url)} redirected to another host ({target.host or location!r})")
    return target


async def _body(response: aiohttp.ClientResponse, url: str) -> bytes:
    declared = response.content_length
    if declared is not None and declared > MAX_BODY_BYTES:
        raise FeedError(f"{_short(url)} announced {declared:,} bytes, over {MAX_BODY_BYTES:,}")
    chunks, size = [], 0
    async for chunk in response.content.iter_chunked(1 << 16):
        size += len(chunk)
        if size > MAX_BODY_BYTES:
            raise FeedError(f"{_short(url)} answered more than {MAX_BODY_BYTES:,} bytes")
        chunks.append(chunk)
    return b"".join(chunks)


def _json(body: bytes, url: str) -> Any:
    try:
        return json.loads(body)
    except ValueError:
        raise FeedError(f"{_short(url)} did not answer JSON") from None


def _short(url: str) -> str:
    """The URL without its query string, which for Azure is a long filter."""
    return url.split("?", 1)[0]
