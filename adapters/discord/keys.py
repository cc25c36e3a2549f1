"""Which conversation a Discord message or interaction belongs to, as a ThreadKey."""

from __future__ import annotations

from typing import TYPE_CHECKING

from bot.threads import ThreadKey

if TYPE_CHECKING:
    import discord

PLATFORM = "discord"


def thread_key(guild_id: int | None, channel_id: int, thread_id: int | None) -> ThreadKey:
    """A job lives in a thread; a public thread made from a message shares that message's id."""
    return ThreadKey(
        platform=PLATFORM,
        workspace=str(guild_id or ""),
        channel=str(channel_id),
        thread=str(thread_id or ""),
    )


def key_for_message(message: discord.Message) -> ThreadKey:
    """A message in a thread continues it; anywhere else it starts a job rooted at itself.

    A DM channel is one long conversation, so its key has no thread.
    """
    import discord

    channel = message.channel
    if isinstance(channel, discord.Thread):
        return thread_key(message.guild and message.guild.id, channel.parent_id, channel.id)
    if message.guild is None:
        return thread_key(None, channel.id, None)
    return thread_key(message.guild.id, channel.id, message.id)


def key_for_interaction(interaction: discord.Interaction) -> ThreadKey:
    """Slash commands and buttons: a thread continues; elsewhere the first command is the root.

    A button on a slash-command answer maps back to that command through interaction_metadata,
    so clicking it continues the same job.
    """
    import discord

    channel = interaction.channel
    if isinstance(channel, discord.Thread):
        return thread_key(interaction.guild_id, channel.parent_id, channel.id)
    channel_id = interaction.channel_id or 0
    message = interaction.message
    if message is None:
        return thread_key(interaction.guild_id, channel_id, interaction.id)
    metadata = message.interaction_metadata
    return thread_key(interaction.guild_id, channel_id, metadata.id if metadata else message.id)
