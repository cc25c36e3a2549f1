"""A reply's attached files (a run config, bot/run_configs.py) as Discord attachments on the
answer's first message (at most 10 per message, far more than a config has)."""

from __future__ import annotations

import io

import discord

from bot.reply import Reply

MAX_ATTACHMENTS = 10  # Discord's per-message limit


def reply_files(reply: Reply) -> list[discord.File]:
    return [
        discord.File(io.BytesIO(file.text.encode("utf-8")), filename=file.name)
        for file in reply.files[:MAX_ATTACHMENTS]
    ]
