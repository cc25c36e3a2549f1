"""The Slack adapter's stores on a real redis-server: two apps (as two processes would be, each with
its own Redis client) share installs, OAuth states, token rotation, de-duplication and thread
links."""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from html import unescape
from pathlib import Path
from urllib.parse import parse_qs, urlparse

import aiohttp
import pytest
import pytest_asyncio
from slack_sdk.oauth.installation_store.models.installation import Installation

from adapters.slack import serve
from adapters.slack.redis_store import (
    RedisInstallationStore,
    RedisOAuthStateStore,
    RedisThreadLinks,
)
from adapters.slack.state import open_stores
from bot.reply import Reply
from bot.state.backend import StateBackend
from bot.state.errors import StoreUnavailable
from bot.state.redis_link import AsyncRedisLink
from bot.state.seen import RedisSeenIds
from bot.threads import ThreadKey
from tests.fakes.slack_api import BOT_USER_ID, FakeSlack, sign
from tests.redis_server import RedisServer

SECRET = "redis-signing-secret"


class EchoPlanner:
    def handle(self, key: ThreadKey, text: str, user: str = "") -> Reply:
        return Reply(kind="plan", title=f"Plan for {key.workspace}", verdict=text)


@pytest_asyncio.fixture
async def two_apps(redis_url: str, monkeypatch) -> AsyncIterator[tuple[FakeSlack, list[str]]]:
    """Two OAuth-mode apps on one Redis, each with its own stores and client; their base URLs."""
    fake = await FakeSlack().start()
    for name, value in {
        "SLACK_CLIENT_ID": "111.222",
        "SLACK_CLIENT_SECRET": "oauth-secret",
        "SLACK_SIGNING_SECRET": SECRET,
        "SLACK_API_URL": fake.base_url,
        "GPUPLAN_STATE_URL": redis_url,
    }.items():
        monkeypatch.setenv(name, value)
    env, _ = serve.read_env(socket=False)
    runners = [
        await serve.start_http(
            serve.build_app_from_env(env, EchoPlanner()), "127.0.0.1", 0, signing_secret=SECRET
        )
        for _ in range(2)
    ]
    yield fake, [f"http://127.0.0.1:{runner.addresses[0][1]}" for runner in runners]
    for runner in runners:
        await runner.cleanup()
    await fake.stop()


async def _install(http: aiohttp.ClientSession, start: str, finish: str, code: str) -> None:
    """Open the install page on one process; Slack's redirect lands on the other."""
    async with http.get(f"{start}{serve.INSTALL_PATH}") as page:
        html, cookie = await page.text(), page.headers["Set-Cookie"].split(";")[0]
    link = re.search(r'href="(https://slack.com/oauth/v2/authorize[^"]+)"', html).group(1)  # type: ignore[union-attr]
    state = parse_qs(urlparse(unescape(link)).query)["state"][0]
    callback = f"{finish}{serve.OAUTH_REDIRECT_PATH}?code={code}&state={state}"
    async with http.get(callback, headers={"Cookie": cookie}) as done:
        assert done.status == 200, await done.text()


async def _mention(http: aiohttp.ClientSession, base: str, team: str, event_id: str) -> None:
    body = json.dumps({"type": "event_callback", "team_id": team, "event_id": event_id,
                       "api_app_id": "A0001",
                       "event": {"type": "app_mention", "ts": f"1.{event_id[-1]}", "channel": "C2",
                                 "text": f"<@{BOT_USER_ID}> 7B LoRA"}})  # fmt: skip
    headers = {**sign(body, SECRET), "Content-Type": "application/json"}
    async with http.post(f"{base}{serve.EVENTS_PATH}", data=body, headers=headers) as event:
        assert event.status == 200


async def test_an_install_through_one_process_serves_every_other(two_apps) -> None:
    fake, (first, second) = two_apps
    fake.installs["code-T0002"] = "T0002"
    async with aiohttp.ClientSession() as http:
        await _install(http, first, second, "code-T0002")
        await _mention(http, first, "T0002", "Ev1")
        await _mention(http, second, "T0002", "Ev2")
    await fake.wait_for(lambda: len(fake.posts()) == 2)
    assert {post["_auth"] for post in fake.posts()} == {"Bearer xoxb-T0002"}


async def test_rotated_tokens_are_refreshed_and_shared(two_apps, redis_url: str) -> None:
    fake, (first, second) = two_apps
    fake.installs["code-T0003"] = "T0003"
    fake.install_expires_in_s = 3600  # inside Bolt's 2-hour refresh window: refreshed at once
    async with aiohttp.ClientSession() as http:
        await _install(http, first, first, "code-T0003")
        await _mention(http, first, "T0003", "Ev3")
        await fake.wait_for(lambda: fake.posts())
        refreshed = fake.refreshes
        await _mention(http, second, "T0003", "Ev4")
        await fake.wait_for(lambda: len(fake.posts()) == 2)
    # The first process refreshed the token; the second used the one it saved.
    assert refreshed >= 1 and fake.refreshes == refreshed
    rotated = f"xoxe.xoxb-T0003-{refreshed}"
    assert [post["_auth"] for post in fake.posts()] == [f"Bearer {rotated}"] * 2
    store = RedisInstallationStore(AsyncRedisLink(redis_url), "111.222")
    bot = await store.async_find_bot(enterprise_id=None, team_id="T0003")
    assert bot is not None and bot.bot_token == rotated and bot.bot_refresh_token


async def test_installation_store_finds_saves_and_deletes(redis_url: str) -> None:
    store = RedisInstallationStore(AsyncRedisLink(redis_url), "111.222")
    installation = Installation(
        app_id="A1", team_id="T9", user_id="U1", bot_token="xoxb-1", bot_id="B1",
        bot_user_id="UB", bot_scopes="chat:write", installed_at=1.0,
    )  # fmt: skip
    await store.async_save(installation)
    newer_bot = Installation(
        app_id="A1", team_id="T9", user_id="U2", bot_token="xoxb-2", bot_id="B1",
        bot_user_id="UB", installed_at=2.0,
    )  # fmt: skip
    await store.async_save(newer_bot)
    by_user = await store.async_find_installation(enterprise_id=None, team_id="T9", user_id="U1")
    assert by_user is not None and by_user.user_id == "U1" and by_user.bot_token == "xoxb-2"
    latest = await store.async_find_installation(enterprise_id=None, team_id="T9")
    assert latest is not None and latest.user_id == "U2"
    assert await store.async_find_installation(enterprise_id=None, team_id="T8") is None
    await store.async_delete_all(enterprise_id=None, team_id="T9")
    assert await store.async_find_bot(enterprise_id=None, team_id="T9") is None
    assert await store.async_find_installation(enterprise_id=None, team_id="T9") is None
    assert (
        await store.async_find_installation(enterprise_id=None, team_id="T9", user_id="U1") is None
    )


async def test_an_oauth_state_is_good_once_on_any_process(redis_url: str) -> None:
    issuer, consumer = (RedisOAuthStateStore(AsyncRedisLink(redis_url), 600) for _ in range(2))
    state = await issuer.async_issue()
    assert await consumer.async_consume(state)
    assert not await issuer.async_consume(state)
    assert not await consumer.async_consume("never-issued")


async def test_a_delivery_is_first_on_one_process_only(redis_url: str) -> None:
    first, second = (RedisSeenIds(AsyncRedisLink(redis_url), "slack", 60) for _ in range(2))
    assert await first.first_time("event:Ev1")
    assert not await second.first_time("event:Ev1")
    assert await second.first_time("event:Ev2")


async def test_stores_fall_back_while_redis_is_down(tmp_path: Path) -> None:
    server = RedisServer(tmp_path / "redis").start()
    link = AsyncRedisLink(server.url)
    seen, links = RedisSeenIds(link, "slack", 60), RedisThreadLinks(link)
    await links.remember("T", "C", "1.1", "conv")
    server.kill()
    try:
        assert await seen.first_time("event:Ev9")  # this process still answers each id once
        assert not await seen.first_time("event:Ev9")
        with pytest.raises(StoreUnavailable):  # not "not ours": the store cannot say
            await links.conversation_for("T", "C", "1.1")
        await links.remember("T", "C", "1.2", "conv")  # kept here until Redis takes it
        assert await links.conversation_for("T", "C", "1.2") == "conv"
        status = await open_stores(StateBackend(server.url)).status()
        assert status["ok"] is False and "unavailable (connection" in str(status["error"])
        server.start()  # same port, empty
        other = RedisThreadLinks(AsyncRedisLink(server.url))
        link.gate.succeeded()  # past the backoff, as time would bring
        assert await links.conversation_for("T", "C", "0.0") is None  # writes what it kept
        assert await other.conversation_for("T", "C", "1.2") == "conv"
    finally:
        server.kill()
