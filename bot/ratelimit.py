"""Token buckets per user and per channel, so one busy person or room cannot starve the others."""

from __future__ import annotations

import math
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

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


def open_rate_limiter() -> Limiter:
    """The limiter GPUPLAN_STATE_URL selects: buckets on Redis when it names one, so every process
    shares them; else this process's own."""
    from bot.state_url import backend_from_env

    backend = backend_from_env()
    if backend.redis_url is None:
        return RateLimiter()
    from bot.redis_client import shared_link
    from bot.redis_store import RedisRateLimiter

    return RedisRateLimiter(shared_link(backend.redis_url))


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


def wait_text(wait_s: float) -> str:
    seconds = max(1, math.ceil(wait_s))
    return f"{seconds} s" if seconds < 90 else f"{math.ceil(seconds / 60)} min"
