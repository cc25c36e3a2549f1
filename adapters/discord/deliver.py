"""Send a Reply to Discord: rendered payloads → discord.py calls, plus the chart attachment."""

from __future__ import annotations

import asyncio
import io
import logging
from typing import Any

import discord

from adapters.discord.attachments import reply_files
from adapters.discord.render import CHART_FILENAME, render_reply
from adapters.discord.views import view_for
from bot.reply import Reply

log = logging.getLogger(__name__)


async def to_channel(
    channel: discord.abc.Messageable, reply: Reply, *, reference: discord.Message | None = None
) -> None:
    """Post the reply as one or more messages; only the first answers `reference`."""
    reply, chart = await _with_chart(reply)
    files = [*([chart] if chart else []), *reply_files(reply)]
    for index, payload in enumerate(render_reply(reply)):
        first = index == 0
        await channel.send(
            **_message_kwargs(payload),
            files=files if first and files else None,
            reference=reference if first else None,
            mention_author=False,
        )


async def to_interaction(
    interaction: discord.Interaction, reply: Reply, *, ephemeral: bool
) -> None:
    """Fill the deferred "thinking" message, then follow up with any further parts."""
    reply, chart = await _with_chart(reply)
    files = [*([chart] if chart else []), *reply_files(reply)]
    first, *rest = render_reply(reply)
    await interaction.edit_original_response(
        **_message_kwargs(first), attachments=files if files else discord.utils.MISSING
    )
    for payload in rest:
        await interaction.followup.send(**_message_kwargs(payload), ephemeral=ephemeral)


def _message_kwargs(payload: dict[str, Any]) -> dict[str, Any]:
    view = view_for(payload["components"])
    return {
        "content": payload["content"] or None,
        "embeds": [discord.Embed.from_dict(embed) for embed in payload["embeds"]],
        "view": view if view is not None else discord.utils.MISSING,
        # Same as the payload's {"parse": []}; discord.py needs it as an object.
        "allowed_mentions": discord.AllowedMentions.none(),
    }


async def _with_chart(reply: Reply) -> tuple[Reply, discord.File | None]:
    """Draw the chart off the event loop; a failed chart drops the image, never the answer."""
    if not reply.has_chart:
        return reply, None
    try:
        from bot.chart import chart_png

        png = await asyncio.to_thread(chart_png, reply)
    except Exception:
        log.exception("chart failed; answering without it")
        return reply.model_copy(update={"has_chart": False}), None
    return reply, discord.File(io.BytesIO(png), filename=CHART_FILENAME)
