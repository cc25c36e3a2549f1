"""Bot secrets come only from the environment and never reach a log line, stdout or stderr: the
real serve paths run against the loopback fakes with recognisable tokens and logging at DEBUG."""

from __future__ import annotations

import argparse
import asyncio
import logging
from collections.abc import AsyncIterator, Iterator

import pytest
import pytest_asyncio

from adapters import serve
from adapters.cli import main
from adapters.discord.client import GpuplanClient
from adapters.slack.serve import build_app_from_env, connect_socket, read_env
from bot.conversation import Conversation
from tests.fakes.discord_api import FakeDiscord, serve_for_discord_py
from tests.fakes.slack_api import FakeSlack, mention_envelope

DISCORD_TOKEN = "MTAx.DISCORD-SECRET-TOKEN-0f9e8d"
SLACK_BOT_TOKEN = "xoxb-SLACK-SECRET-BOT-TOKEN-7c6b5a"
SLACK_APP_TOKEN = "xapp-1-SLACK-SECRET-APP-TOKEN-4d3c2b"
SECRETS = (DISCORD_TOKEN, SLACK_BOT_TOKEN, SLACK_APP_TOKEN)


def _leaks(*texts: str) -> list[str]:
    assert any(texts), "nothing was logged or printed, so nothing was checked"
    return [secret for secret in SECRETS if any(secret in text for text in texts)]


@pytest.fixture
def root_logging() -> Iterator[None]:
    """discord.py's `root_logger=True` adds a handler to the root logger: take it away again."""
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    yield
    root.handlers[:] = handlers
    root.setLevel(level)


@pytest_asyncio.fixture
async def discord_fake(monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[FakeDiscord]:
    """conftest's discord_fake, checking the bot token on every REST call."""
    fake = await serve_for_discord_py(monkeypatch, bot_token=DISCORD_TOKEN)
    yield fake
    await fake.stop()


def test_no_serve_option_takes_a_secret() -> None:
    parser = argparse.ArgumentParser()
    serve.add_arguments(parser)
    subparsers = parser._subparsers._group_actions[0].choices  # type: ignore[union-attr]
    options = [
        option
        for platform in subparsers.values()
        for action in platform._actions
        for option in action.option_strings
    ]
    assert options and not [o for o in options if "token" in o or "secret" in o]


async def test_serve_discord_with_a_rejected_token_never_echoes_it(
    discord_fake: FakeDiscord, monkeypatch, capsys, caplog, root_logging
) -> None:
    discord_fake.bot_token = "the-token-discord-expects"
    monkeypatch.setenv("DISCORD_TOKEN", DISCORD_TOKEN)
    caplog.set_level(logging.DEBUG)
    code = await asyncio.to_thread(main, ["serve", "discord"])
    out, err = capsys.readouterr()
    assert code == 1 and "Discord rejected DISCORD_TOKEN" in err
    assert [c.path for c in discord_fake.calls] == ["/users/@me"]
    assert _leaks(out, err, caplog.text) == []


async def test_discord_bot_answering_never_logs_its_token(
    discord_fake: FakeDiscord, capsys, caplog
) -> None:
    caplog.set_level(logging.DEBUG)
    client = GpuplanClient(Conversation(), guild_ready_timeout=0.05, shard_count=1)
    task = asyncio.create_task(client.start(DISCORD_TOKEN))
    await asyncio.wait_for(client.wait_until_ready(), 10)
    await discord_fake.slash({"query": "13B QLoRA on a 4090"})
    await discord_fake.wait_for(lambda calls: [c for c in calls if c.method == "PATCH"])
    await client.close()
    await asyncio.wait_for(task, 10)
    assert discord_fake.identify is not None and discord_fake.identify["token"] == DISCORD_TOKEN
    out, err = capsys.readouterr()
    assert _leaks(out, err, caplog.text) == []


async def test_slack_socket_mode_never_logs_its_tokens(
    monkeypatch: pytest.MonkeyPatch, capsys, caplog
) -> None:
    fake = await FakeSlack().start()
    monkeypatch.setenv("SLACK_APP_TOKEN", SLACK_APP_TOKEN)
    monkeypatch.setenv("SLACK_BOT_TOKEN", SLACK_BOT_TOKEN)
    monkeypatch.setenv("SLACK_API_URL", fake.base_url.rstrip("/"))
    caplog.set_level(logging.DEBUG)
    env, missing = read_env(socket=True)
    assert missing == []
    handler = await connect_socket(build_app_from_env(env, Conversation()), env.app_token or "")
    try:
        await fake.push_envelope(mention_envelope("env-1", "EvSECRET", "7B LoRA", ts="42.1"))
        (post,) = await fake.wait_for(lambda: fake.posts())
    finally:
        await handler.close_async()
        await fake.stop()
    assert post["_auth"] == f"Bearer {SLACK_BOT_TOKEN}"
    out, err = capsys.readouterr()
    assert _leaks(out, err, caplog.text) == []
