"""Workspace settings through the real surfaces, from one command table
(bot.conversation.settings_commands): a Slack workspace admin (users.info) and a Discord member
with Manage Server can set the answer language; others cannot. Also: a Discord interaction
delivered twice is answered once."""

from __future__ import annotations

import asyncio
import json

import discord
import pytest

from adapters.discord.client import GpuplanClient
from bot.conversation import Conversation
from bot.conversation.settings_commands import COMMANDS, is_settings_change, read_settings_command
from bot.state.redis_link import AsyncRedisLink
from bot.state.seen import RedisSeenIds
from bot.state.settings import MemorySettings
from bot.state.threads import MemoryStore
from bot.threads import ThreadKey
from tests.fakes.discord_api import GUILD_ID, FakeDiscord
from tests.fakes.slack_api import FakeSlack
from tests.test_slack_app import Bot

MANAGE_SERVER = str(discord.Permissions(manage_guild=True, send_messages=True).value)
MEMBER = str(discord.Permissions(send_messages=True).value)
KEY = ThreadKey(platform="slack", workspace="T0001", channel="C1", thread="t")


def _conversation(settings: MemorySettings) -> Conversation:
    return Conversation(MemoryStore(), settings=settings, limit_rate=False)


@pytest.mark.parametrize(
    ("text", "name", "change"),
    [
        ("/gpuplan language zh", "language", True),
        ("language auto", "language", True),
        ("providers runpod, vast.ai", "providers", True),
        ("providers", "providers", False),
        ("reports on", "reports", True),
        ("reports", "reports", False),
    ],
)
def test_one_table_reads_every_settings_command(text: str, name: str, change: bool) -> None:
    command = read_settings_command(text)
    assert command is not None and (command.name, command.change) == (name, change)
    assert is_settings_change(text) == change
    assert read_settings_command("13B QLoRA on a 4090") is None


def test_the_conversation_answers_every_command_in_the_table() -> None:
    settings = MemorySettings()
    conversation = _conversation(settings)
    for entry in COMMANDS:  # a command added to the table without an answer would raise here
        reply = conversation.handle(KEY, entry.name, "U1", admin=True)
        assert reply.kind in ("help", "error", "clarify")


async def test_a_slack_workspace_admin_sets_the_language_and_others_cannot(
    slack: FakeSlack,
) -> None:
    settings = MemorySettings()
    async with Bot(slack, _conversation(settings)) as bot:
        await bot.slash("language zh", trigger="1")
        await slack.wait_for(lambda: len(slack.responses) == 1)
        assert "Only admins" in json.dumps(slack.responses[0][1])
        assert settings.get("slack/T0001", "language") is None
        slack.admins.add("U0ANA")
        await bot.slash("language zh", trigger="2")
        await slack.wait_for(lambda: len(slack.responses) == 2)
        assert settings.get("slack/T0001", "language") == "zh"
        await bot.slash("7B LoRA on a 4090", trigger="3")
        await slack.wait_for(lambda: len(slack.responses) == 3)
    answer = json.dumps(slack.responses[2][1], ensure_ascii=False)
    assert "需要" in answer or "显存" in answer  # the workspace's language now
    assert [p["user"] for p in slack.posts("users.info")] == ["U0ANA", "U0ANA"]


async def _edits(fake: FakeDiscord, count: int) -> list[str]:
    edits = await fake.wait_for(
        lambda calls: len(found := [c for c in calls if c.method == "PATCH"]) >= count and found
    )
    return [json.dumps(call.body, ensure_ascii=False) for call in edits]


async def test_a_discord_member_with_manage_server_sets_the_language_others_cannot(
    discord_fake: FakeDiscord,
) -> None:
    settings = MemorySettings()
    client = GpuplanClient(_conversation(settings), guild_ready_timeout=0.05, shard_count=1)
    task = asyncio.create_task(client.start("fake-token"))
    try:
        await asyncio.wait_for(client.wait_until_ready(), 10)
        await discord_fake.slash({"query": "language zh"}, permissions=MEMBER)
        assert "Only admins" in (await _edits(discord_fake, 1))[0]
        assert settings.get(f"discord/{GUILD_ID}", "language") is None
        await discord_fake.slash({"query": "language zh"}, permissions=MANAGE_SERVER)
        await _edits(discord_fake, 2)
        assert settings.get(f"discord/{GUILD_ID}", "language") == "zh"
    finally:
        await client.close()
        await asyncio.wait_for(task, 10)


async def test_a_discord_interaction_delivered_twice_is_answered_once(
    discord_fake: FakeDiscord,
) -> None:
    client = GpuplanClient(_conversation(MemorySettings()), guild_ready_timeout=0.05, shard_count=1)
    task = asyncio.create_task(client.start("fake-token"))
    try:
        await asyncio.wait_for(client.wait_until_ready(), 10)
        first = await discord_fake.slash({"query": "7B LoRA on a 4090"})
        await discord_fake.slash({"query": "7B LoRA on a 4090"}, interaction_id=first)
        await discord_fake.slash({"query": "help"})  # answered after any repeat would be
        await _edits(discord_fake, 2)
        await asyncio.sleep(0)  # let a wrongly answered repeat reach the fake
    finally:
        await client.close()
        await asyncio.wait_for(task, 10)
    callbacks = [c.path for c in discord_fake.calls if c.path.endswith("/callback")]
    assert len(callbacks) == 2 and len(set(callbacks)) == 2


async def test_discord_interaction_ids_are_shared_across_processes(redis_url: str) -> None:
    first, second = (RedisSeenIds(AsyncRedisLink(redis_url), "discord", 900) for _ in range(2))
    assert await first.first_time("interaction:1")
    assert not await second.first_time("interaction:1")
