"""Persistent what-if buttons: they re-plan from their custom_id alone, so they survive restarts."""

from __future__ import annotations

import re
from typing import Any

import discord

from adapters.discord.render import WHATIF_TEMPLATE
from bot.patches import Button


class WhatIfButton(discord.ui.DynamicItem[discord.ui.Button], template=WHATIF_TEMPLATE):
    """Registered once with `Client.add_dynamic_items`; discord.py rebuilds it for every click."""

    def __init__(self, label: str, custom_id: str, *, row: int | None = None) -> None:
        button = discord.ui.Button(
            label=label, custom_id=custom_id, style=discord.ButtonStyle.secondary
        )
        super().__init__(button, row=row)

    @classmethod
    async def from_custom_id(
        cls, interaction: discord.Interaction, item: discord.ui.Item, match: re.Match[str], /
    ) -> WhatIfButton:
        return cls(getattr(item, "label", None) or match["id"], item.custom_id)

    async def callback(self, interaction: discord.Interaction) -> None:
        match = WHATIF_TEMPLATE.fullmatch(self.item.custom_id or "")
        if match is None:  # the template already matched to get here; keep the type checker honest
            return
        ephemeral = bool(interaction.message and interaction.message.flags.ephemeral)
        # The id names the button's stored change; an old-format button carries its text.
        pressed = Button(match["id"], match["text"])
        await interaction.client.answer(interaction, pressed, ephemeral=ephemeral)


def view_for(components: list[dict[str, Any]]) -> discord.ui.View | None:
    """A timeout-free View of WhatIfButtons built from the rendered action rows."""
    if not components:
        return None
    view = discord.ui.View(timeout=None)
    for row_index, row in enumerate(components):
        for button in row["components"]:
            view.add_item(WhatIfButton(button["label"], button["custom_id"], row=row_index))
    return view
