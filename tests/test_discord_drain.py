"""Discord on shutdown: the gateway disconnects (no new work) while an acknowledged answer still
goes out over REST, within the drain budget; one past the budget is named in the log."""

from __future__ import annotations

import asyncio
import logging
import threading

import pytest

from adapters.discord.client import GpuplanClient
from bot.conversation import Conversation
from bot.reply import Reply
from bot.state.threads import MemoryStore
from bot.threads import ThreadKey
from tests.fakes.discord_api import FakeDiscord


class Held:
    """The real conversation, each answer held until the test lets it go."""

    def __init__(self) -> None:
        self.go = threading.Event()
        self.conversation = Conversation(MemoryStore(), limit_rate=False)

    def handle(self, key: ThreadKey, text: str, user: str = "") -> Reply:
        self.go.wait(timeout=30)
        return self.conversation.handle(key, text, user)


async def _drain(discord_fake: FakeDiscord, budget_s: float, release: bool) -> list[str]:
    held = Held()
    client = GpuplanClient(held, guild_ready_timeout=0.05, shard_count=1)
    task = asyncio.create_task(client.start("fake-token"))
    try:
        await asyncio.wait_for(client.wait_until_ready(), 10)
        await discord_fake.slash({"query": "7B LoRA on a 4090"})
        await discord_fake.wait_for(
            lambda calls: [c for c in calls if c.path.endswith("/callback")]
        )
        await client.disconnect_gateway()  # what SIGTERM does first
        assert all(shard.is_closed() for shard in client.shards.values())
        if release:
            held.go.set()
        unfinished = await client.in_flight.finish(budget_s)
    finally:
        held.go.set()
        await client.close()
        await asyncio.wait_for(task, 10)
    return unfinished


async def test_an_acknowledged_answer_goes_out_after_the_gateway_disconnects(
    discord_fake: FakeDiscord,
) -> None:
    assert await _drain(discord_fake, budget_s=20, release=True) == []
    (edit,) = [c for c in discord_fake.calls if c.method == "PATCH"]
    assert edit.body["embeds"] and edit.status == 200


async def test_an_answer_past_the_budget_is_logged_with_its_thread(
    discord_fake: FakeDiscord, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING):
        (unfinished,) = await _drain(discord_fake, budget_s=0.2, release=False)
    assert unfinished.startswith("discord/") and "not answered before shutdown" in caplog.text
