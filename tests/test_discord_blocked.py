"""When Discord keeps the bot from acting: a blank reply (no Message Content intent) is answered
once per thread with how to ask, and a channel that refuses the answer is logged once with the fix.
Real discord.py against SimCord, which blanks content and enforces permissions as Discord does."""

from __future__ import annotations

import logging

import discord
import pytest
import simcord

from adapters.discord.blocked import REFUSED_FIX, UNREADABLE_FIX, UNREADABLE_REPLY
from adapters.discord.client import GpuplanClient
from bot.conversation import Conversation
from tests.test_discord_bot import QUESTION, Recording, _bot_messages, _world


async def test_blank_replies_get_one_notice_per_thread_and_one_log_line(
    caplog: pytest.LogCaptureFixture,
) -> None:
    conversation = Recording(Conversation())
    client = GpuplanClient(conversation, shard_count=1)
    with caplog.at_level(logging.WARNING):
        async with simcord.run(client) as env:
            _, channel, ana = _world(env)
            for question in (QUESTION, "7B LoRA on a 4090"):
                await ana.send(channel, f"{client.user.mention} {question}")
            first, second = channel.threads
            for thread in (first, first, second):
                await ana.send(thread, "what if 8k ctx?")
            notices = [
                [m for m in _bot_messages(t, client) if m.content == UNREADABLE_REPLY]
                for t in (first, second)
            ]
    assert [len(n) for n in notices] == [1, 1]
    assert len(conversation.calls) == 2  # nothing unreadable was planned
    logged = [r for r in caplog.records if UNREADABLE_FIX in r.getMessage()]
    assert len(logged) == 1


async def test_a_channel_that_refuses_the_answer_is_logged_once_with_the_fix(
    caplog: pytest.LogCaptureFixture,
) -> None:
    client = GpuplanClient(Recording(Conversation()), shard_count=1)
    with caplog.at_level(logging.WARNING):
        async with simcord.run(client, check_errors=False) as env:
            guild, _, ana = _world(env)
            mute = discord.PermissionOverwrite(
                send_messages=False, send_messages_in_threads=False, create_public_threads=False
            )
            muted = guild.create_text_channel("muted", overwrites={client.user: mute})
            for _ in range(2):
                await ana.send(muted, f"{client.user.mention} {QUESTION}")
            assert _bot_messages(muted, client) == []
    refused = [r for r in caplog.records if REFUSED_FIX in r.getMessage()]
    assert len(refused) == 1 and str(muted.id) in refused[0].getMessage()
    assert not [r for r in caplog.records if r.exc_info]
