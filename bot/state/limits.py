"""Token buckets per user and per channel, so one busy person or room cannot starve the others.

On Redis, `gpuplan:rate:<user|channel>:<scope>` is a hash {tokens, at}. Both buckets an answer
draws on are checked and taken by one Lua script on Redis's own clock (processes' clocks may
differ), in one round trip. A bucket expires when it would have refilled, since a missing bucket
reads as full.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from bot.state.backend import StateBackend, backend_from_env
from bot.state.errors import StoreUnavailable
from bot.state.redis_keys import key

if TYPE_CHECKING:
    from bot.state.redis_link import RedisLink

logger = logging.getLogger(__name__)

MAX_TRACKED_BUCKETS = 10_000  # idle buckets are full anyway; dropping the oldest loses nothing


@dataclass(frozen=True)
class BucketRule:
    burst: int  # answers allowed back to back
    per_minute: float  # steady rate once the burst is spent


USER_RULE = BucketRule(burst=8, per_minute=12)
CHANNEL_RULE = BucketRule(burst=30, per_minute=60)


class Limiter(Protocol):
    def acquire(self, user: str, channel: str) -> float:
        """Take one token from the user's and the channel's bucket: 0.0 if allowed, else the
        seconds to wait."""
        ...


def scopes_for(user: str, channel: str) -> list[tuple[str, str]]:
    """The buckets an answer draws on. An empty user (e.g. the console) only counts against its
    channel."""
    return [("channel", channel)] + ([("user", user)] if user else [])


def open_rate_limiter(backend: StateBackend | None = None) -> Limiter:
    """The limiter on `backend` (GPUPLAN_STATE_URL's by default): buckets on Redis when it names
    one, so every process shares them; else this process's own."""
    backend = backend if backend is not None else backend_from_env()
    if backend.redis_url is None:
        return RateLimiter()
    return RedisRateLimiter(backend.redis_link())


# KEYS: buckets; ARGV: burst and tokens per second for each. 0 if a token was taken from every
# bucket, else the milliseconds until all of them hold one (nothing is taken then).
_TAKE_TOKENS = """
local clock = redis.call('TIME')
local now = tonumber(clock[1]) + tonumber(clock[2]) / 1000000
local levels, wait_s = {}, 0
for i, bucket in ipairs(KEYS) do
  local burst, rate = tonumber(ARGV[2 * i - 1]), tonumber(ARGV[2 * i])
  local stored = redis.call('HMGET', bucket, 'tokens', 'at')
  local level = burst
  if stored[1] then
    level = math.min(burst, tonumber(stored[1]) + math.max(0, now - tonumber(stored[2])) * rate)
  end
  levels[i] = level
  if level < 1 then wait_s = math.max(wait_s, (1 - level) / rate) end
end
if wait_s > 0 then return math.ceil(wait_s * 1000) end
for i, bucket in ipairs(KEYS) do
  local burst, rate = tonumber(ARGV[2 * i - 1]), tonumber(ARGV[2 * i])
  local left = levels[i] - 1
  local tokens, at = string.format('%.6f', left), string.format('%.6f', now)
  redis.call('HSET', bucket, 'tokens', tokens, 'at', at)
  redis.call('PEXPIRE', bucket, math.ceil((burst - left) / rate * 1000) + 1000)
end
return 0
"""


class RateLimiter:
    def __init__(
        self,
        user_rule: BucketRule = USER_RULE,
        channel_rule: BucketRule = CHANNEL_RULE,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._rules = {"user": user_rule, "channel": channel_rule}
        self._clock = clock
        self._buckets: OrderedDict[tuple[str, str], tuple[float, float]] = OrderedDict()
        self._lock = threading.Lock()

    def acquire(self, user: str, channel: str) -> float:
        scopes = scopes_for(user, channel)
        with self._lock:
            now = self._clock()
            levels = {scope: self._level(scope, now) for scope in scopes}
            waits = [
                (1 - level) / (self._rules[scope[0]].per_minute / 60)
                for scope, level in levels.items()
                if level < 1
            ]
            if waits:
                return max(waits)
            for scope, level in levels.items():
                self._buckets[scope] = (level - 1, now)
                self._buckets.move_to_end(scope)
            while len(self._buckets) > MAX_TRACKED_BUCKETS:
                self._buckets.popitem(last=False)
            return 0.0

    def _level(self, scope: tuple[str, str], now: float) -> float:
        rule = self._rules[scope[0]]
        tokens, since = self._buckets.get(scope, (float(rule.burst), now))
        return min(float(rule.burst), tokens + (now - since) * rule.per_minute / 60)


class RedisRateLimiter:
    """RateLimiter's buckets on Redis, so every process draws on the same ones.

    While Redis is unreachable the process falls back to its own in-memory buckets: limits then
    hold per process, which is looser but never blocks an answer."""

    def __init__(
        self,
        link: RedisLink,
        user_rule: BucketRule = USER_RULE,
        channel_rule: BucketRule = CHANNEL_RULE,
    ) -> None:
        self._link = link
        self._rules = {"user": user_rule, "channel": channel_rule}
        self._take = link.client.register_script(_TAKE_TOKENS)
        self._fallback = RateLimiter(user_rule, channel_rule)
        self._on_fallback = False  # log once per outage, not once per message

    def acquire(self, user: str, channel: str) -> float:
        scopes = scopes_for(user, channel)
        keys = [key("rate", kind, scope) for kind, scope in scopes]
        arguments: list[float] = []
        for kind, _ in scopes:
            rule = self._rules[kind]
            arguments += [rule.burst, rule.per_minute / 60]
        try:
            wait_ms = self._link.run(
                lambda client: self._take(keys=keys, args=arguments, client=client)
            )
        except StoreUnavailable as error:
            if not self._on_fallback:
                logger.warning("rate limits are per process until Redis is back: %s", error)
            self._on_fallback = True
            return self._fallback.acquire(user, channel)
        self._on_fallback = False
        return int(wait_ms) / 1000


def wait_text(wait_s: float) -> str:
    seconds = max(1, math.ceil(wait_s))
    return f"{seconds} s" if seconds < 90 else f"{math.ceil(seconds / 60)} min"
