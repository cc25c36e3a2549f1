"""The exact JSON on the wire: real discord.py, full Client.start(), against a loopback fake."""

from __future__ import annotations

import argparse
import asyncio
import json
import time

from adapters.discord import commands_cmd
from adapters.discord.client import GpuplanClient
from adapters.discord.commands import command_payloads
from bot.conversation import Conversation
from bot.reply import Reply
from bot.threads import ThreadKey
from tests.fakes.discord_api import schema_errors

MESSAGE_CONTENT_INTENT = 1 << 15


class Slow:
    """The real conversation behind a planner that takes `delay_s` of real time."""

    def __init__(self, delay_s: float) -> None:
        self.delay_s = delay_s
        self.conversation = Conversation()

    def handle(self, key: ThreadKey, text: str, user: str = "") -> Reply:
        time.sleep(self.delay_s)
        return self.conversation.handle(key, text, user)


async def _run(client: GpuplanClient) -> asyncio.Task:
    task = asyncio.create_task(client.start("fake-token"))
    await asyncio.wait_for(client.wait_until_ready(), 10)
    return task


async def _close(client: GpuplanClient, task: asyncio.Task) -> None:
    await client.close()
    await asyncio.wait_for(task, 10)


def _client(conversation, **options) -> GpuplanClient:
    return GpuplanClient(conversation, guild_ready_timeout=0.05, **options)


async def test_start_syncs_exactly_the_printed_command_json(discord_fake, capsys):
    client = _client(Conversation(), shard_count=1)
    task = await _run(client)
    (sync,) = await discord_fake.wait_for(lambda calls: [c for c in calls if c.method == "PUT"])
    await _close(client, task)

    commands_cmd.run(argparse.Namespace(compact=False, invite=None))
    printed = json.loads(capsys.readouterr().out)
    assert sync.body == printed == command_payloads()
    assert sync.path.endswith("/commands")
    assert discord_fake.identify["shard"] == [0, 1]
    assert not discord_fake.identify["intents"] & MESSAGE_CONTENT_INTENT


async def test_a_later_shard_process_identifies_as_its_shard_and_leaves_commands_alone(
    discord_fake,
):
    client = _client(Conversation(), shard_count=4, shard_ids=[3], message_content=True)
    task = await _run(client)
    await _close(client, task)
    assert discord_fake.identify["shard"] == [3, 4]
    assert discord_fake.identify["intents"] & MESSAGE_CONTENT_INTENT
    assert not [c for c in discord_fake.calls if c.method == "PUT"]


async def test_a_slash_command_defers_then_edits_in_a_no_ping_answer(discord_fake):
    client = _client(Slow(0), shard_count=1)
    task = await _run(client)
    interaction = await discord_fake.slash({"query": "@everyone 13B QLoRA on a 4090 <@&42>"})
    (edit,) = await discord_fake.wait_for(lambda calls: [c for c in calls if c.method == "PATCH"])
    await _close(client, task)

    (callback,) = [c for c in discord_fake.calls if c.path.endswith("/callback")]
    assert callback.path == f"/interactions/{interaction}/token-{interaction}/callback"
    assert callback.body == {"type": 5}
    assert callback.at_s < edit.at_s
    assert schema_errors("CreateMessageInteractionCallbackRequest", callback.body) == []

    assert edit.path.endswith(f"/token-{interaction}/messages/@original")
    assert edit.body["allowed_mentions"] == {"parse": []}
    assert edit.body["embeds"] and edit.body["embeds"][0]["title"]
    assert "@everyone" not in json.dumps(edit.body)
    assert (
        schema_errors("IncomingWebhookUpdateForInteractionCallbackRequestPartial", edit.body) == []
    )


async def test_the_deferral_beats_a_real_time_deadline_the_planner_overruns(discord_fake):
    discord_fake.ack_deadline_s = 1.0  # Discord's 3 s, scaled down so the test stays quick
    client = _client(Slow(1.5), shard_count=1)
    task = await _run(client)
    interaction = await discord_fake.slash({"query": "13B QLoRA", "private": True})
    (edit,) = await discord_fake.wait_for(lambda calls: [c for c in calls if c.method == "PATCH"])
    await _close(client, task)

    (callback,) = [c for c in discord_fake.calls if c.path.endswith("/callback")]
    assert callback.status == 200  # accepted: it came within the deadline
    assert edit.at_s - discord_fake.dispatched_at_s[interaction] > discord_fake.ack_deadline_s
    assert edit.status == 200
    assert callback.body == {"type": 5, "data": {"flags": 64}}
