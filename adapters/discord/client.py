"""The Discord bot: slash command, mentions that open a thread per job, re-plans inside threads.

Every message goes out with AllowedMentions.none(), so text echoed from a question never pings.
Planning runs in a worker thread (`Conversation.handle` is sync) so the event loop stays free to
acknowledge other interactions within Discord's 3 s deadline. Each interaction is answered once,
whichever process a redelivery reaches (its id in bot.state.seen, on Redis when shared), and every
answer runs as a tracked task (adapters.drain) so a shutdown finishes it.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import re
import time
from collections.abc import Coroutine
from typing import Any, Protocol

import discord

from adapters.discord import deliver, limits
from adapters.discord.blocked import Blocked
from adapters.discord.commands import build_tree
from adapters.discord.keys import key_for_interaction, key_for_message
from adapters.discord.views import WhatIfButton
from adapters.drain import InFlight
from bot import metrics, phrases
from bot.configs import MAX_CONFIG_ATTACHMENT_BYTES
from bot.conversation.settings_commands import is_settings_change
from bot.patches import Message
from bot.reply import Reply
from bot.state.seen import SeenIds, SeenInProcess
from bot.threads import ThreadKey

log = logging.getLogger(__name__)

# The interaction token dies after 15 minutes; give up planning early enough to still say so.
PLAN_TIMEOUT_S = limits.INTERACTION_TOKEN_TTL_S - 60
UNDELIVERABLE = phrases.UNDELIVERABLE


class Handles(Protocol):
    def handle(
        self, key: ThreadKey, text: Message, user: str = "", *, admin: bool = False
    ) -> Reply: ...


class GpuplanClient(discord.AutoShardedClient):
    def __init__(
        self,
        conversation: Handles,
        *,
        message_content: bool = False,
        sync_guild_id: int | None = None,
        seen: SeenIds | None = None,
        **options: Any,
    ) -> None:
        intents = discord.Intents.default()
        # Privileged: without it, thread replies that do not mention the bot arrive blank.
        intents.message_content = message_content
        super().__init__(
            intents=intents, allowed_mentions=discord.AllowedMentions.none(), **options
        )
        self.conversation = conversation
        self.sync_guild_id = sync_guild_id
        self.blocked = Blocked()
        self.tree = build_tree(self)
        # An interaction's id is good for its token's life; no redelivery comes later.
        self.seen = seen or SeenInProcess(limits.INTERACTION_TOKEN_TTL_S)
        self.in_flight = InFlight("discord")

    async def _tracked(self, work: Coroutine[Any, Any, None], label: str) -> None:
        """Run `work` as a tracked task (a shutdown waits for it), shielded from discord.py
        cancelling the event's own task."""
        await asyncio.shield(self.in_flight.start(work, label))

    async def disconnect_gateway(self) -> None:
        """Stop receiving events (every shard's WebSocket closes) while HTTP keeps working, so
        the answers in flight can still be delivered."""
        for shard in self.shards.values():
            await shard.disconnect()

    async def setup_hook(self) -> None:
        self.add_dynamic_items(WhatIfButton)
        # One process syncs the commands; the others (later shards) leave it alone.
        if self.shard_ids and 0 not in self.shard_ids:
            return
        if self.sync_guild_id is None:
            await self.tree.sync()
            return
        guild = discord.Object(id=self.sync_guild_id)
        self.tree.copy_global_to(guild=guild)
        await self.tree.sync(guild=guild)

    async def plan(self, key: ThreadKey, text: Message, user: str, *, admin: bool = False) -> Reply:
        """The conversation's answer; a crash or a hang becomes a short error reply. `admin`:
        the user may change this server's settings (Manage Server)."""
        # `admin` is passed only for a settings change by an admin: a conversation without
        # settings needs no new argument.
        self.in_flight.label(str(key))
        extra = (
            {"admin": True} if admin and isinstance(text, str) and is_settings_change(text) else {}
        )
        handle = functools.partial(self.conversation.handle, key, text, user, **extra)
        try:
            return await asyncio.wait_for(asyncio.to_thread(handle), PLAN_TIMEOUT_S)
        except TimeoutError:
            metrics.error("discord", "plan_timed_out")
            return _error_reply(phrases.PLAN_TIMED_OUT)
        except Exception:
            log.exception("planning failed for %s", key)
            metrics.error("discord", "plan_failed")
            return _error_reply(phrases.PLAN_CRASHED)

    def _delivered(self, reply: Reply) -> None:
        metrics.answered("discord", reply.kind)
        metrics.answer_time("discord", self.in_flight.age_s())

    async def on_message(self, message: discord.Message) -> None:
        await self._tracked(self._on_message(message), f"discord message {message.id}")

    async def _on_message(self, message: discord.Message) -> None:
        me = self.user
        if me is None or message.author.bot:
            return
        channel = message.channel
        in_own_thread = isinstance(channel, discord.Thread) and channel.owner_id == me.id
        mentioned = me in message.mentions
        if not (mentioned or in_own_thread or message.guild is None):
            return
        text = _without_mention(message.content, me.id)
        attached = await _attached_config(message)
        if attached:  # the config's JSON, for the conversation to read like a pasted one
            text = f"{text}\n{attached}"
        if not text:
            if not mentioned:
                await self._blank_reply(message)
                return
            text = "help"
        key = key_for_message(message)
        try:
            async with channel.typing():  # the first thing a channel that mutes the bot refuses
                reply = await self.plan(
                    key, text, str(message.author.id), admin=manages_server(message.author)
                )
        except discord.Forbidden as error:
            self.blocked.refused(channel.id, error.text or str(error.status))
            return
        target: discord.abc.Messageable = channel
        reference: discord.Message | None = message
        # A plan in a channel gets a thread for its what-ifs; help, questions back and errors
        # are answered in place.
        if reply.kind == "plan" and isinstance(channel, discord.TextChannel):
            thread = await _open_thread(message, text)
            if thread is not None:
                target, reference = thread, None
        try:
            await deliver.to_channel(target, reply, reference=reference)
            self._delivered(reply)
        except discord.Forbidden as error:
            self.blocked.refused(channel.id, error.text or str(error.status))
        except discord.HTTPException as error:  # after discord.py's own retries of 5xx and 429
            _lost(key, "the channel", error)

    async def _blank_reply(self, message: discord.Message) -> None:
        """A reply in our thread with no text: unreadable without the intent, so say how to ask."""
        if self.intents.message_content:
            return  # an image or sticker alone: nothing to plan
        notice = self.blocked.unreadable(message.channel.id)
        if notice is None:
            return
        try:
            await message.channel.send(notice, allowed_mentions=discord.AllowedMentions.none())
        except discord.HTTPException as error:
            self.blocked.refused(message.channel.id, error.text or str(error.status))

    async def answer(
        self, interaction: discord.Interaction, text: Message, *, ephemeral: bool
    ) -> None:
        """Once per interaction id: defer first (the 3 s deadline), then plan, then fill in the
        answer. A repeat is dropped before its defer: the first delivery has acknowledged it."""
        arrived_s = time.perf_counter()
        if not await self.seen.first_time(f"interaction:{interaction.id}"):
            log.info("interaction %s was answered already; dropped the repeat", interaction.id)
            return
        await interaction.response.defer(thinking=True, ephemeral=ephemeral)
        metrics.ack("discord", time.perf_counter() - arrived_s)
        label = f"discord interaction {interaction.id}"
        await self._tracked(self._answer(interaction, text, ephemeral=ephemeral), label)

    async def _answer(
        self, interaction: discord.Interaction, text: Message, *, ephemeral: bool
    ) -> None:
        key = key_for_interaction(interaction)
        reply = await self.plan(key, text, str(interaction.user.id), admin=may_manage(interaction))
        try:
            await deliver.to_interaction(interaction, reply, ephemeral=ephemeral)
            self._delivered(reply)
        except discord.HTTPException as error:  # after discord.py's own retries of 5xx and 429
            _lost(key, "the interaction's follow-up", error)
            try:  # never leave "gpuplan is thinking…" hanging, if Discord takes anything at all
                await interaction.edit_original_response(
                    content=UNDELIVERABLE, embeds=[], view=None
                )
            except discord.HTTPException as second:
                _lost(key, "the interaction's apology", second)


async def _open_thread(message: discord.Message, text: str) -> discord.Thread | None:
    name = f"gpuplan: {' '.join(text.split())}"[: limits.THREAD_NAME]
    try:
        # The thread shares the message's id, already the root of this job's ThreadKey.
        return await message.create_thread(name=name, auto_archive_duration=1440)
    except discord.HTTPException:
        log.warning("could not open a thread in channel %s; replying in place", message.channel.id)
        return None


def _lost(key: ThreadKey, where: str, error: discord.HTTPException) -> None:
    # The status and Discord's error code, not the URL: it holds the interaction token.
    log.warning("%s: answer lost at %s (HTTP %s, code %s)", key, where, error.status, error.code)
    metrics.error("discord", "answer_lost")


def manages_server(member: discord.abc.User) -> bool:
    """Whether `member` may change this server's gpuplan settings: Manage Server (a DM has no
    server, so no one there can)."""
    permissions = getattr(member, "guild_permissions", None)
    return bool(permissions is not None and permissions.manage_guild)


def may_manage(interaction: discord.Interaction) -> bool:
    """Manage Server, as Discord itself resolved the member's permissions for this interaction
    (its `member.permissions`), not as the roles this process has cached say; never in a DM."""
    return interaction.guild_id is not None and interaction.permissions.manage_guild


async def _attached_config(message: discord.Message) -> str:
    """The text of a config.json attached to the message (a .json file of at most
    MAX_CONFIG_ATTACHMENT_BYTES); empty when there is none or it cannot be fetched."""
    for attachment in message.attachments:
        if not attachment.filename.lower().endswith(".json"):
            continue
        if attachment.size > MAX_CONFIG_ATTACHMENT_BYTES:
            return ""
        try:
            return (await attachment.read()).decode("utf-8", errors="replace")
        except discord.HTTPException:
            log.warning("could not fetch attachment %s", attachment.filename)
            return ""
    return ""


def _without_mention(content: str, user_id: int) -> str:
    return " ".join(re.sub(rf"<@!?{user_id}>", " ", content).split())


def _error_reply(body: str) -> Reply:
    return Reply(kind="error", title=phrases.ADAPTER_ERROR_TITLE, body=body)
