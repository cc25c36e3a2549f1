"""The app command tree: `/gpuplan query:<text> [private] [model] [gpu]`, with autocomplete.

`/gpuplan help` works because Discord puts text typed after the command name into its first
option, so it arrives as query="help", which the conversation answers with usage and examples.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import discord
from discord import app_commands

from adapters.discord import limits

COMMAND_NAME = "gpuplan"
INVITE_SCOPES = ("bot", "applications.commands")


def required_permissions() -> discord.Permissions:
    """What the bot needs in a channel: read, answer with embeds and the chart, open threads."""
    return discord.Permissions(
        view_channel=True,
        send_messages=True,
        send_messages_in_threads=True,
        create_public_threads=True,
        embed_links=True,
        attach_files=True,
        read_message_history=True,
    )


def invite_url(client_id: int) -> str:
    return discord.utils.oauth_url(
        client_id, permissions=required_permissions(), scopes=INVITE_SCOPES
    )


def build_tree(client: discord.Client) -> app_commands.CommandTree:
    tree = app_commands.CommandTree(client)
    tree.add_command(_gpuplan_command())
    return tree


def command_payloads() -> list[dict[str, Any]]:
    """Exactly the JSON `tree.sync()` PUTs to Discord (it sends each command's to_dict)."""
    tree = build_tree(discord.Client(intents=discord.Intents.none()))
    return [command.to_dict(tree) for command in tree.get_commands()]


def suggest(names: Iterable[str], typed: str) -> list[app_commands.Choice[str]]:
    """Up to 25 names: those starting with what was typed first, then those containing it."""
    needle = typed.strip().lower()
    unique = list(dict.fromkeys(n for n in names if 0 < len(n) <= limits.CHOICE_VALUE_MAX))
    starts = [n for n in unique if n.lower().startswith(needle)]
    contains = [n for n in unique if needle in n.lower() and n not in starts]
    return [app_commands.Choice(name=n, value=n) for n in (starts + contains)[: limits.CHOICES_MAX]]


def compose_query(query: str, model: str | None, gpu: str | None) -> str:
    """Fold the autocompleted options into the free text the parser reads."""
    parts = [query.strip()]
    if model:
        parts.append(model.strip())
    if gpu:
        parts.append(f"on {gpu.strip()}")
    return ", ".join(p for p in parts if p)


def _gpuplan_command() -> app_commands.Command:
    @app_commands.command(
        name=COMMAND_NAME, description="Will a fine-tuning job fit on a GPU, and what will it cost?"
    )
    @app_commands.describe(
        query="e.g. 13B QLoRA, 4k ctx, 20M tokens x3 on a 4090 (or: help)",
        private="Only you see the answer",
        model="Model to plan for (added to the query)",
        gpu="GPU to check (added to the query)",
    )
    async def gpuplan(
        interaction: discord.Interaction,
        query: str,
        private: bool = False,
        model: str | None = None,
        gpu: str | None = None,
    ) -> None:
        await interaction.client.answer(  # type: ignore[attr-defined]
            interaction, compose_query(query, model, gpu), ephemeral=private
        )

    @gpuplan.autocomplete("model")
    async def _models(
        interaction: discord.Interaction, current: str
    ) -> list[app_commands.Choice[str]]:
        from planner.catalog.models import model_names

        return suggest(model_names(), current)

    @gpuplan.autocomplete("gpu")
    async def _gpus(
        interaction: discord.Interaction, current: str
    ) -> list[app_commands.Choice[str]]:
        from planner.catalog.gpus import gpu_names

        return suggest(gpu_names(), current)

    return gpuplan
