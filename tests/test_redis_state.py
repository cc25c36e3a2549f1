"""The conversation's state on a real redis-server: shared by separate clients (as separate
processes are), rate limits that hold across them, every key with a TTL, and answers that keep
coming while Redis is hung or dead."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import pytest

from bot.conversation import Conversation
from bot.phrases import NO_MEMORY
from bot.state.backend import StateUrlError
from bot.state.limits import BucketRule, RedisRateLimiter
from bot.state.redis_link import RedisLink
from bot.state.threads import RedisStateStore
from bot.threads import ThreadKey
from tests.redis_server import RedisServer

SEED = "13B QLoRA, 4k ctx, 20M tokens x3"
WAIT_S = 30.0


def _key(thread: str = "t1") -> ThreadKey:
    return ThreadKey(platform="test", workspace="w", channel="c", thread=thread)


def _process(url: str) -> Conversation:
    """What one bot process holds: its own Redis clients, the shared keys."""
    link = RedisLink(url)
    return Conversation(RedisStateStore(link), rate_limiter=RedisRateLimiter(link))


def _until(condition: Callable[[], bool], what: str) -> None:
    """Wait for `condition` (bounded; polled, since it is Redis's backoff we wait on)."""
    deadline = time.monotonic() + WAIT_S
    while not condition():
        assert time.monotonic() < deadline, f"gave up waiting for {what}"
        time.sleep(0.05)


def test_a_thread_started_by_one_process_continues_in_another(redis_url: str) -> None:
    first, second = _process(redis_url), _process(redis_url)
    assert first.handle(_key(), SEED).kind == "plan"
    followup = second.respond(_key(), "what if 8k ctx?")
    assert followup.changes["seq_len"] == (4096, 8192)
    assert first.respond(_key(), "undo").plan.spec.seq_len == 4096  # type: ignore[union-attr]


def test_the_environment_selects_redis_for_threads_and_limits(redis_url: str, monkeypatch) -> None:
    monkeypatch.setenv("GPUPLAN_STATE_URL", redis_url)
    Conversation().handle(_key(), SEED)
    import redis

    client = redis.Redis.from_url(redis_url, decode_responses=True)
    kinds = {name.split(":")[1] for name in client.keys("gpuplan:*")}
    assert kinds == {"thread", "rate", "patch"}  # the what-if buttons' patches too
    monkeypatch.setenv("GPUPLAN_STATE_URL", "memcached://localhost")
    with pytest.raises(StateUrlError, match="must be a Redis URL"):
        Conversation()


def test_one_users_limit_holds_across_processes(redis_url: str) -> None:
    rule, roomy = BucketRule(burst=4, per_minute=1), BucketRule(burst=100, per_minute=600)
    limiters = [RedisRateLimiter(RedisLink(redis_url), rule, roomy) for _ in range(2)]
    waits = [limiters[n % 2].acquire("ana", "c") for n in range(6)]
    assert waits[:4] == [0.0] * 4
    assert all(50 < wait <= 60 for wait in waits[4:])  # one token a minute, shared
    assert limiters[1].acquire("bob", "c") == 0.0


def test_every_key_has_a_ttl(redis_url: str) -> None:
    import redis

    conversation = _process(redis_url)
    conversation.handle(_key(), SEED)
    conversation.handle(_key(), "what if 8k ctx?")
    client = redis.Redis.from_url(redis_url, decode_responses=True)
    names = client.keys("*")
    assert names and all(name.startswith("gpuplan:") for name in names)
    assert all(client.ttl(name) > 0 for name in names), {n: client.ttl(n) for n in names}


def test_hung_redis_answers_without_memory_then_threads_continue(tmp_path: Path) -> None:
    server = RedisServer(tmp_path / "redis").start()
    try:
        conversation = _process(server.url)
        conversation.handle(_key(), SEED)
        server.pause()
        # Each command times out (0.5 s), so these answer rather than hang on the stopped server.
        fresh = conversation.handle(_key("t2"), "7B LoRA on a 4090")
        assert fresh.kind == "plan" and NO_MEMORY in fresh.warnings
        followup = conversation.handle(_key(), "what if 8k ctx?")
        assert NO_MEMORY in followup.warnings  # answered, said so, and the thread is untouched
        server.resume()

        def continues() -> bool:
            return NO_MEMORY not in conversation.handle(_key(), "what if 8k ctx?").warnings

        _until(continues, "the thread to continue once Redis answered again")
        assert conversation.respond(_key(), "and 2 epochs?").changes["epochs"] == (3, 2)
    finally:
        server.kill()


def test_redis_killed_and_restarted_reconnects(tmp_path: Path) -> None:
    server = RedisServer(tmp_path / "redis").start()
    try:
        conversation = _process(server.url)
        conversation.handle(_key(), SEED)
        server.kill()
        reply = conversation.handle(_key("t2"), SEED)
        assert reply.kind == "plan" and NO_MEMORY in reply.warnings
        server.start()  # same port, empty (no persistence)

        def remembers() -> bool:
            return NO_MEMORY not in conversation.handle(_key("t3"), SEED).warnings

        _until(remembers, "the store to reconnect")
        assert conversation.respond(_key("t3"), "what if 8k ctx?").changes["seq_len"] == (
            4096,
            8192,
        )
    finally:
        server.kill()


def test_state_urls_are_checked_and_passwords_never_shown() -> None:
    from bot.state.backend import backend_from_env
    from bot.state.redis_keys import redacted
    from bot.state.redis_link import RedisLink

    tls = backend_from_env({"GPUPLAN_STATE_URL": "rediss://default:s3cret@cache.example:6380/2"})
    assert tls.kind == "redis" and "s3cret" not in tls.describe() and "***" in tls.describe()
    assert RedisLink(tls.redis_url or "").client.connection_pool.connection_class.__name__ == (
        "SSLConnection"
    )
    assert backend_from_env({}).kind == "sqlite"
    for bad, why in [("http://x", "must be a Redis URL"), ("redis://h:port", "bad port"),
                     ("redis://h/zero", "database number")]:  # fmt: skip
        with pytest.raises(StateUrlError, match=why):
            backend_from_env({"GPUPLAN_STATE_URL": bad})
    assert redacted("redis://:pw@h:1/0") == "redis://:***@h:1/0"
