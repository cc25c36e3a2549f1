"""One failure policy for every way a real Redis stops taking commands: a real redis-server is
driven into each state (full with noeviction, a read-only replica, a script holding it, a stall,
loading its dataset, gone), and each must read as "store unavailable": the conversation still
answers a fresh question and says the thread will not be remembered, nothing raises."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from pathlib import Path

import pytest
import redis

from bot.conversation import Conversation
from bot.phrases import NO_MEMORY, NOT_REMEMBERED
from bot.redis_client import RedisLink
from bot.redis_errors import unavailable_kind
from bot.redis_store import RedisRateLimiter, RedisStateStore
from bot.reply import Reply
from bot.store import StoreUnavailable
from bot.threads import ThreadKey
from tests.redis_server import RedisServer, RedisStates

QUESTION = "7B LoRA on a 4090"


@pytest.fixture(scope="module")
def states(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisStates]:
    """A redis-server of this module's own: the states change its configuration."""
    server = RedisServer(tmp_path_factory.mktemp("redis-states")).start()
    yield RedisStates(server)
    server.kill()


def _conversation(link: RedisLink) -> Conversation:
    return Conversation(RedisStateStore(link), rate_limiter=RedisRateLimiter(link))


def _words(reply: Reply) -> str:
    return " ".join([reply.title, reply.verdict, reply.body, *reply.warnings])


STATES: dict[str, tuple[Callable[[RedisStates], AbstractContextManager[None]], str]] = {
    # state: (how to enter it, the kind the policy names)
    "out of memory": (RedisStates.out_of_memory, "out_of_memory"),
    "read-only replica": (RedisStates.read_only, "read_only"),
    "busy script": (RedisStates.busy, "busy"),
    "stalled (DEBUG SLEEP)": (RedisStates.sleeping, "timeout"),
    "loading": (RedisStates.loading, "loading"),
}
# NO_MEMORY when the thread could not be read, NOT_REMEMBERED when only the save failed.
TOLD = {NO_MEMORY, NOT_REMEMBERED}


@pytest.mark.parametrize("state", list(STATES))
def test_every_way_redis_refuses_is_store_unavailable(states: RedisStates, state: str) -> None:
    enter, kind = STATES[state]
    link = RedisLink(states.server.url)
    conversation = _conversation(link)
    key = ThreadKey(platform="test", workspace="w", channel="c", thread=state)
    with enter(states):
        with pytest.raises(StoreUnavailable) as refused:
            link.run(lambda client: client.set("gpuplan:probe", 1))
        assert refused.value.kind == kind
        link.gate.succeeded()  # past the backoff, as time would bring
        reply = conversation.handle(key, QUESTION, "U1")
    assert reply.kind == "plan" and TOLD & set(reply.warnings)
    # Once Redis takes commands again, the thread is remembered.
    link.gate.succeeded()
    conversation.handle(key, QUESTION, "U1")
    followup = conversation.handle(key, "what if 8k ctx?", "U1")
    assert "2048 → 8192" in " ".join(followup.changes) and not TOLD & set(followup.warnings)


def test_a_lost_connection_is_store_unavailable_too(tmp_path: Path) -> None:
    server = RedisServer(tmp_path / "gone").start()
    link = RedisLink(server.url)
    server.kill()
    with pytest.raises(StoreUnavailable) as refused:
        link.run(lambda client: client.get("gpuplan:probe"))
    assert refused.value.kind == "connection"


def test_a_command_we_got_wrong_is_not_an_outage(redis_url: str) -> None:
    link = RedisLink(redis_url)
    link.run(lambda client: client.set("gpuplan:probe", "text"))
    with pytest.raises(redis.ResponseError):  # WRONGTYPE: our bug, raised as it is
        link.run(lambda client: client.hget("gpuplan:probe", "field"))
    assert link.gate.ready()  # and no backoff for it


@pytest.mark.parametrize(
    ("reply", "kind"),
    [
        ("BUSY Redis is busy running a script. You can only call SCRIPT KILL", "busy"),
        ("Command # 1 (SET a 1) of pipeline caused error: BUSY Redis is busy", "busy"),
        ("MISCONF Redis is configured to save RDB snapshots, but it's unable to", "read_only"),
        ("NOREPLICAS Not enough good replicas to write.", "read_only"),
        ("WRONGTYPE Operation against a key holding the wrong kind of value", None),
        ("ERR unknown command 'BUSYBOX'", None),
    ],
)
def test_replies_redis_py_leaves_unparsed_are_read_by_their_code(reply: str, kind: str) -> None:
    assert unavailable_kind(redis.ResponseError(reply)) == kind
