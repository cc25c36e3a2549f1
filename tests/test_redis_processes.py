"""Two real `gpuplan serve slack` processes on one real redis-server, driven over loopback like a
load balancer would: whichever process a delivery lands on, they act as one bot.

Every wait is bounded and waits on an event (a post reaching the fake Slack, a process printing
its address), never a fixed sleep, so the tests hold on two busy cores.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import signal
import time
from collections.abc import AsyncIterator
from pathlib import Path
from urllib.parse import urlencode

import aiohttp
import pytest_asyncio

from adapters.slack.serve import EVENTS_PATH, HEALTH_PATH
from bot.phrases import NO_MEMORY
from tests.fakes.slack_api import BOT_USER_ID, TEAM_ID, FakeSlack, sign
from tests.redis_server import RedisServer
from tests.slack_process import BotProcess

SECRET = "two-process-secret"
CHANNEL = "C0TWO"
REPO_ROOT = Path(__file__).resolve().parents[1]
ANSWER_WAIT_S = 60.0  # generous: two bots and a planner share two cores


class TwoBots:
    def __init__(self, fake: FakeSlack, redis: RedisServer, tmp_path: Path) -> None:
        self.fake, self.redis = fake, redis
        env = {**os.environ, "SLACK_SIGNING_SECRET": SECRET, "SLACK_BOT_TOKEN": "xoxb-two",
               "SLACK_API_URL": fake.base_url, "GPUPLAN_STATE_URL": redis.url}  # fmt: skip
        self.bots = [
            BotProcess({**env, "GPUPLAN_STATE_DIR": str(tmp_path / name)}) for name in "ab"
        ]
        self.http = aiohttp.ClientSession()
        self._ts = 0

    async def close(self) -> list[str]:
        await self.http.close()
        return [bot.stop() for bot in self.bots]

    async def post(self, bot: int, body: str, content_type: str) -> None:
        headers = {**sign(body, SECRET), "Content-Type": content_type}
        url = f"{self.bots[bot].base}{EVENTS_PATH}"
        async with self.http.post(url, data=body, headers=headers) as response:
            assert response.status == 200, await response.text()

    async def event(self, bot: int, event: dict, event_id: str) -> None:
        event = {"channel": CHANNEL, "user": "U0ANA", **event}
        body = {"type": "event_callback", "team_id": TEAM_ID, "event_id": event_id,
                "api_app_id": "A0001", "event": event}  # fmt: skip
        await self.post(bot, json.dumps(body), "application/json")

    async def mention(self, bot: int, text: str, event_id: str, thread_ts: str = "") -> str:
        self._ts += 1
        ts = f"1700000000.{self._ts:06d}"
        event = {"type": "app_mention", "ts": ts, "text": f"<@{BOT_USER_ID}> {text}"}
        await self.event(
            bot, {**event, **({"thread_ts": thread_ts} if thread_ts else {})}, event_id
        )
        return ts

    async def slash(self, bot: int, text: str, trigger: str, user: str) -> None:
        body = urlencode({"command": "/gpuplan", "text": text, "team_id": TEAM_ID,
                          "channel_id": CHANNEL, "user_id": user, "trigger_id": trigger,
                          "response_url": self.fake.response_url(trigger)})  # fmt: skip
        await self.post(bot, body, "application/x-www-form-urlencoded")

    async def answers_in(self, root: str, count: int) -> list[dict]:
        def posts() -> list[dict]:
            return [post for post in self.fake.posts() if post.get("thread_ts") == root]

        await self.fake.wait_for(lambda: len(posts()) >= count, timeout_s=ANSWER_WAIT_S)
        return posts()

    async def health(self, bot: int) -> dict:
        async with self.http.get(f"{self.bots[bot].base}{HEALTH_PATH}") as response:
            assert response.status == 200
            return await response.json()


@pytest_asyncio.fixture
async def two_bots(tmp_path: Path) -> AsyncIterator[TwoBots]:
    redis = RedisServer(tmp_path / "redis").start()
    fake = await FakeSlack().start()
    bots = TwoBots(fake, redis, tmp_path)
    try:
        yield bots
    finally:
        errors = await bots.close()
        await fake.stop()
        redis.kill()
    for err in errors:
        assert "Traceback" not in err, err


def _text(post: dict) -> str:
    return json.dumps(post, ensure_ascii=False)


async def test_two_processes_act_as_one_bot(two_bots: TwoBots) -> None:
    bots = two_bots
    assert all("state in Redis at redis://127.0.0.1:" in bot.store_line for bot in bots.bots)
    assert (await bots.health(0))["state"]["ok"] is True

    # A thread started on one process continues on the other (a plain reply, no mention).
    root = await bots.mention(0, "13B QLoRA, 4k ctx, 20M tokens x3", "Ev1")
    await bots.answers_in(root, 1)
    await bots.event(1, {"type": "message", "ts": "1700000001.1", "thread_ts": root,
                         "text": "what if 8k ctx?"}, "Ev2")  # fmt: skip
    (_, followup) = await bots.answers_in(root, 2)
    assert "4096" in _text(followup) and "8192" in _text(followup)

    # An event Slack retries onto the other process is answered once. Both are acked; the repeat
    # is dropped right after its ack (one SET NX), long before the sentinel below is planned and
    # answered, so a second answer would come before the sentinel's.
    retried = await bots.mention(0, "7B LoRA on a 4090", "Ev3")
    await bots.event(1, {"type": "app_mention", "ts": retried,
                         "text": f"<@{BOT_USER_ID}> 7B LoRA on a 4090"}, "Ev3")  # fmt: skip
    await bots.answers_in(retried, 1)
    await bots.mention(1, "sentinel", "Ev4", thread_ts=retried)  # answered after any repeat
    assert len(await bots.answers_in(retried, 2)) == 2

    # One user's rate limit (8 at once) holds across both processes: 12 commands split 6 and 6
    # would all pass if each process kept its own buckets.
    for n in range(12):
        await bots.slash(n % 2, "7B LoRA", f"burst.{n}", user="U0BURST")
    await bots.fake.wait_for(
        lambda: len([url for url, _ in bots.fake.responses if url.startswith("burst.")]) == 12,
        timeout_s=ANSWER_WAIT_S,
    )
    limited = [body for url, body in bots.fake.responses if "a lot of questions" in _text(body)]
    assert 2 <= len(limited) <= 4  # 12 - 8, less what refilled (one token per 5 s) meanwhile


async def test_kill_9_loses_no_thread_and_a_redis_outage_is_survived(two_bots: TwoBots) -> None:
    bots = two_bots
    root = await bots.mention(0, "13B QLoRA, 4k ctx, 20M tokens x3", "Ev10")
    await bots.answers_in(root, 1)
    bots.bots[0].process.send_signal(signal.SIGKILL)
    bots.bots[0].process.wait(timeout=20)
    await bots.mention(1, "what if 8k ctx?", "Ev11", thread_ts=root)
    (_, followup) = await bots.answers_in(root, 2)
    assert "8192" in _text(followup) and NO_MEMORY not in _text(followup)

    bots.redis.kill()
    fresh = await bots.mention(1, "7B LoRA on a 4090", "Ev12")
    (answer,) = await bots.answers_in(fresh, 1)
    assert NO_MEMORY in _text(answer)
    assert (await bots.health(1))["state"]["ok"] is False

    bots.redis.start()  # same port, empty: the process reconnects on its own

    deadline = time.monotonic() + ANSWER_WAIT_S
    while not (await bots.health(1))["state"]["ok"]:  # polls the bot's backoff, bounded
        assert time.monotonic() < deadline, "the bot never reconnected to Redis"
        await asyncio.sleep(0.1)
    # The conversation's own client backs off on its own clock too: ask until it remembers.
    for attempt in itertools.count():
        assert time.monotonic() < deadline, "the conversation never reconnected to Redis"
        root = await bots.mention(1, "13B QLoRA, 4k ctx, 20M tokens x3", f"Ev13.{attempt}")
        (answer,) = await bots.answers_in(root, 1)
        if NO_MEMORY not in _text(answer):
            break
        await asyncio.sleep(0.1)
    await bots.mention(1, "and 2 epochs?", "Ev14", thread_ts=root)
    (_, followup) = await bots.answers_in(root, 2)
    assert NO_MEMORY not in _text(followup) and "epochs" in _text(followup)
