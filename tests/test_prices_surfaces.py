"""`/gpuplan providers …` through the real surfaces: Slack asks users.info whether the user is a
workspace admin (only for a settings change), Discord reads Manage Server off the member."""

from __future__ import annotations

import types

import discord

from adapters.discord.client import manages_server
from bot.conversation import Conversation
from bot.state.settings import MemorySettings
from bot.state.threads import MemoryStore
from tests.fakes.slack_api import FakeSlack
from tests.test_slack_app import Bot


def _texts(slack: FakeSlack) -> list[str]:
    return [body.get("text", "") + str(body.get("blocks", "")) for _, body in slack.responses]


async def test_slack_lets_only_workspace_admins_change_the_providers(slack: FakeSlack) -> None:
    settings = MemorySettings()
    conversation = Conversation(MemoryStore(), settings=settings, limit_rate=False)
    async with Bot(slack, conversation) as bot:
        await bot.slash("providers vast.ai", trigger="1")
        await slack.wait_for(lambda: len(slack.responses) == 1)
        assert "Only admins can change this" in _texts(slack)[0]
        assert settings.get("slack/T0001", "providers") is None
        slack.admins.add("U0ANA")
        await bot.slash("providers vast.ai", trigger="2")
        await slack.wait_for(lambda: len(slack.responses) == 2)
        assert "Vast.ai only" in _texts(slack)[1]
        assert settings.get("slack/T0001", "providers") == "vastai"
        await bot.slash("7B LoRA on a 4090", trigger="3")
        await slack.wait_for(lambda: len(slack.responses) == 3)
    assert [p["user"] for p in slack.posts("users.info")] == ["U0ANA", "U0ANA"]


def test_discord_manage_server_is_the_admin_right() -> None:
    admin = types.SimpleNamespace(guild_permissions=discord.Permissions(manage_guild=True))
    member = types.SimpleNamespace(guild_permissions=discord.Permissions(send_messages=True))
    in_a_dm = types.SimpleNamespace()  # a discord.User has no guild permissions
    assert manages_server(admin) and not manages_server(member) and not manages_server(in_a_dm)
