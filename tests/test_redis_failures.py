"""One failure policy for every way a real Redis stops taking commands: a real redis-server is
driven into each state (full with noeviction, a read-only replica, a script holding it, a stall,
loading its dataset, gone), and each must read as "store unavailable": the conversation still
answers a fresh question and says the thread will not be remembered, nothing raises. Then a real
`gpuplan serve slack` on a full and on a stalled Redis: no 500, every question answered, and the
thread goes on once Redis is back."""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import AbstractContextManager
from functools import partial
from pathlib import Path
from urllib.parse import urlencode

import aiohttp
import pytest
import pytest_asyncio
import redis

from adapters.slack.serve import EVENTS_PATH, HEALTH_PATH
from bot.conversation import Conversation
from bot.phrases import NO_MEMORY, NOT_REMEMBERED
from bot.reply import Reply
from bot.state.errors import StoreUnavailable
from bot.state.limits import RedisRateLimiter
from bot.state.redis_errors import unavailable_kind
from bot.state.redis_link import RedisLink
from bot.state.threads import RedisStateStore
from bot.threads import ThreadKey
from tests.fakes.slack_api import BOT_USER_ID, TEAM_ID, FakeSlack, sign
from tests.redis_server import RedisServer, RedisStates
from tests.slack_process import BotProcess

QUESTION = "7B LoRA on a 4090"
SECRET = "failures-secret"
CHANNEL = "C0FULL"
ANSWER_WAIT_S = 60.0  # generous: a bot, a planner and Redis share two cores


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
    # The stall must outlast a timed-out write and a conversation's timed-out read (0.5 s each)
    # with a plan between them, also on a slow shared host: 1.5 s did not, once in a fresh clone.
    "stalled (DEBUG SLEEP)": (partial(RedisStates.sleeping, seconds=2.5), "timeout"),
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


class OneBot:
    """A real `gpuplan serve slack` process on the module's Redis, driven like Slack would."""

    def __init__(self, fake: FakeSlack, states: RedisStates, tmp_path: Path) -> None:
        self.fake = fake
        env = {**os.environ, "SLACK_SIGNING_SECRET": SECRET, "SLACK_BOT_TOKEN": "xoxb-one",
               "SLACK_API_URL": fake.base_url, "GPUPLAN_STATE_URL": states.server.url,
               "GPUPLAN_STATE_DIR": str(tmp_path / "state"), "GPUPLAN_DRAIN_S": "5"}  # fmt: skip
        self.bot = BotProcess(env)
        self.http = aiohttp.ClientSession()
        self.statuses: list[int] = []

    async def post(self, body: str, content_type: str) -> None:
        headers = {**sign(body, SECRET), "Content-Type": content_type}
        async with self.http.post(
            f"{self.bot.base}{EVENTS_PATH}", data=body, headers=headers
        ) as response:
            self.statuses.append(response.status)

    async def event(self, event: dict, event_id: str) -> None:
        event = {"channel": CHANNEL, "user": "U0ANA", **event}
        body = {"type": "event_callback", "team_id": TEAM_ID, "event_id": event_id,
                "api_app_id": "A0001", "event": event}  # fmt: skip
        await self.post(json.dumps(body), "application/json")

    async def mention(self, text: str, ts: str) -> str:
        await self.event({"type": "app_mention", "ts": ts, "text": f"<@{BOT_USER_ID}> {text}"}, ts)
        return ts

    async def reply(self, root: str, text: str, ts: str) -> None:
        await self.event({"type": "message", "ts": ts, "thread_ts": root, "text": text}, ts)

    async def slash(self, text: str, trigger: str) -> None:
        body = urlencode({"command": "/gpuplan", "text": text, "team_id": TEAM_ID,
                          "channel_id": CHANNEL, "user_id": "U0ANA", "trigger_id": trigger,
                          "response_url": self.fake.response_url(trigger)})  # fmt: skip
        await self.post(body, "application/x-www-form-urlencoded")

    async def answers_in(self, root: str, count: int) -> list[str]:
        def posts() -> list[str]:
            return [json.dumps(p) for p in self.fake.posts() if p.get("thread_ts") == root]

        await self.fake.wait_for(lambda: len(posts()) >= count, timeout_s=ANSWER_WAIT_S)
        return posts()

    async def healthy(self) -> bool:
        async with self.http.get(f"{self.bot.base}{HEALTH_PATH}") as response:
            return (await response.json())["state"]["ok"]


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def one_bot(
    states: RedisStates, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[OneBot]:
    """One bot process for the module's tests (each uses threads of its own)."""
    states.admin.flushall()
    fake = await FakeSlack().start()
    bot = OneBot(fake, states, tmp_path_factory.mktemp("one-bot"))
    try:
        yield bot
    finally:
        await bot.http.close()
        err = bot.bot.stop()
        await fake.stop()
    assert "Traceback" not in err, err


@pytest.mark.asyncio(loop_scope="module")
async def test_a_full_redis_answers_every_question_and_the_thread_goes_on(
    one_bot: OneBot, states: RedisStates
) -> None:
    bot = one_bot
    bot.statuses.clear()
    root = await bot.mention("13B QLoRA, 4k ctx, 20M tokens x3", "1700000100.000001")
    await bot.answers_in(root, 1)
    with states.out_of_memory():
        await bot.slash("7B LoRA on a 4090", "oom.1")
        fresh = await bot.mention("70B QLoRA on 2x A100", "1700000100.000002")
        (answer,) = await bot.answers_in(fresh, 1)
        await bot.fake.wait_for(lambda: bot.fake.responses, timeout_s=ANSWER_WAIT_S)
        (_, slash), *_ = bot.fake.responses
        # A plain reply: whose thread it is cannot be read now, so it waits for Redis.
        await bot.reply(root, "what if 8k ctx?", "1700000100.000003")
        assert not await bot.healthy()
    for said in (answer, json.dumps(slash)):
        assert "Thread memory is unavailable" in said
    # Memory freed: the held reply is answered, and the thread goes on from its job.
    _, followup = await bot.answers_in(root, 2)
    assert "8192" in followup and "Thread memory is unavailable" not in followup
    await bot.reply(root, "and 2 epochs?", "1700000100.000004")
    *_, later = await bot.answers_in(root, 3)
    assert "Thread memory is unavailable" not in later and "epochs" in later
    assert set(bot.statuses) == {200}  # no 500, ever


@pytest.mark.asyncio(loop_scope="module")
async def test_a_plain_reply_during_a_stall_is_answered_once_redis_is_back(
    one_bot: OneBot, states: RedisStates
) -> None:
    bot = one_bot
    bot.statuses.clear()
    root = await bot.mention("13B QLoRA, 4k ctx, 20M tokens x3", "1700000200.000001")
    await bot.answers_in(root, 1)
    states.server.pause()  # Redis hangs: every command times out
    try:
        await bot.reply(root, "what if 8k ctx?", "1700000200.000002")
        assert not await bot.healthy()
    finally:
        states.server.resume()
    _, followup = await bot.answers_in(root, 2)  # held, then answered with the thread's job
    assert "8192" in followup and "Thread memory is unavailable" not in followup
    assert set(bot.statuses) == {200}
