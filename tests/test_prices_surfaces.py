"""`/gpuplan providers …` through the real surfaces: Slack asks users.info whether the user is a
workspace admin (only for a settings change), Discord reads Manage Server off the member."""

from __future__ import annotations

import types
from collections.abc import AsyncIterator

import discord
import pytest_asyncio

from adapters.discord.client import manages_server
from bot.conversation import Conversation
from bot.state.settings import MemorySettings
from bot.state.threads import MemoryStore
from tests.fakes.slack_api import FakeSlack
from tests.test_slack_app import Bot


@pytest_asyncio.fixture
async def fake() -> AsyncIterator[FakeSlack]:
    server = await FakeSlack().start()
    yield server
    await server.stop()


def _texts(fake: FakeSlack) -> list[str]:
    return [body.get("text", "") + str(body.get("blocks", "")) for _, body in fake.responses]


async def test_slack_lets_only_workspace_admins_change_the_providers(fake: FakeSlack) -> None:
    settings = MemorySettings()
    conversation = Conversation(MemoryStore(), settings=settings, limit_rate=False)
    async with Bot(fake, conversation) as bot:
        await bot.slash("providers vast.ai", trigger="1")
        await fake.wait_for(lambda: len(fake.responses) == 1)
        assert "Only admins can change this" in _texts(fake)[0]
        assert settings.get("slack/T0001", "providers") is None
        fake.admins.add("U0ANA")
        await bot.slash("providers vast.ai", trigger="2")
        await fake.wait_for(lambda: len(fake.responses) == 2)
        assert "Vast.ai only" in _texts(fake)[1]
        assert settings.get("slack/T0001", "providers") == "vastai"
        await bot.slash("7B LoRA on a 4090", trigger="3")
        await fake.wait_for(lambda: len(fake.responses) == 3)
    assert [p["user"] for p in fake.posts("users.info")] == ["U0ANA", "U0ANA"]


def test_discord_manage_server_is_the_admin_right() -> None:
    admin = types.SimpleNamespace(guild_permissions=discord.Permissions(manage_guild=True))
    member = types.SimpleNamespace(guild_permissions=discord.Permissions(send_messages=True))
    in_a_dm = types.SimpleNamespace()  # a discord.User has no guild permissions
    assert manages_server(admin) and not manages_server(member) and not manages_server(in_a_dm)
