"""Token buckets per user and channel, and the short-lived answer cache."""

from __future__ import annotations

import pytest

from bot.cache import TTLCache
from bot.state.limits import BucketRule, RateLimiter, wait_text


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_a_user_gets_the_burst_then_waits_for_a_refill() -> None:
    clock = Clock()
    limiter = RateLimiter(BucketRule(burst=3, per_minute=6), BucketRule(100, 600), clock=clock)
    assert [limiter.acquire("ana", "c") for _ in range(3)] == [0.0, 0.0, 0.0]
    assert limiter.acquire("ana", "c") == pytest.approx(10.0)  # one token per 10 s
    assert limiter.acquire("bob", "c") == 0.0  # another user is not affected
    clock.now = 10.0
    assert limiter.acquire("ana", "c") == 0.0


def test_a_busy_channel_limits_everyone_in_it() -> None:
    clock = Clock()
    limiter = RateLimiter(BucketRule(100, 600), BucketRule(burst=2, per_minute=60), clock=clock)
    assert limiter.acquire("ana", "c") == 0.0
    assert limiter.acquire("bob", "c") == 0.0
    assert limiter.acquire("cy", "c") == pytest.approx(1.0)
    assert limiter.acquire("cy", "other") == 0.0


def test_a_refused_message_spends_no_token() -> None:
    clock = Clock()
    limiter = RateLimiter(BucketRule(burst=1, per_minute=60), BucketRule(100, 600), clock=clock)
    limiter.acquire("ana", "c")
    for _ in range(5):
        assert limiter.acquire("ana", "c") > 0
    clock.now = 1.0
    assert limiter.acquire("ana", "c") == 0.0


def test_anonymous_messages_count_against_the_channel_only() -> None:
    limiter = RateLimiter(BucketRule(burst=1, per_minute=1), BucketRule(burst=3, per_minute=1))
    assert [limiter.acquire("", "c") for _ in range(3)] == [0.0, 0.0, 0.0]
    assert limiter.acquire("", "c") > 0


def test_wait_text_reads_naturally() -> None:
    assert wait_text(0.2) == "1 s"
    assert wait_text(12.3) == "13 s"
    assert wait_text(300) == "5 min"


def test_cache_answers_repeats_until_the_entry_expires() -> None:
    clock = Clock()
    cache: TTLCache[int] = TTLCache(max_entries=8, ttl_s=60, clock=clock)
    calls: list[str] = []

    def compute(key: str) -> int:
        calls.append(key)
        return len(calls)

    assert cache.get_or_compute("q", lambda: compute("q")) == 1
    assert cache.get_or_compute("q", lambda: compute("q")) == 1
    clock.now = 61
    assert cache.get_or_compute("q", lambda: compute("q")) == 2
    assert calls == ["q", "q"]


def test_cache_drops_the_least_recently_used_and_never_caches_errors() -> None:
    cache: TTLCache[str] = TTLCache(max_entries=2, ttl_s=60)
    cache.get_or_compute("a", lambda: "a1")
    cache.get_or_compute("b", lambda: "b1")
    cache.get_or_compute("a", lambda: "a2")  # a is now the most recent
    cache.get_or_compute("c", lambda: "c1")  # evicts b
    assert cache.get_or_compute("a", lambda: "a3") == "a1"
    assert cache.get_or_compute("b", lambda: "b2") == "b2"

    def fail() -> str:
        raise ValueError("no plan")

    with pytest.raises(ValueError):
        cache.get_or_compute("x", fail)
    assert cache.get_or_compute("x", lambda: "x1") == "x1"
