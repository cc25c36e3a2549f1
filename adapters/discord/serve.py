"""`gpuplan serve discord`: run the Discord bot over the Gateway.

Environment: DISCORD_TOKEN (required, never logged), DISCORD_GUILD_ID (sync commands to one
guild instantly, for testing), DISCORD_SHARD_COUNT and DISCORD_SHARD_IDS (e.g. "0-3" or "4,5": run
a large bot as several processes; the flags --shard-count and --shard-ids override them, so each
Procfile process type can own its range), GPUPLAN_DISCORD_MESSAGE_CONTENT=1 (the privileged
intent that lets plain thread replies re-plan without a mention), GPUPLAN_DRAIN_S (on SIGTERM or
SIGINT: how long to finish the answers in flight, default 20 s), GPUPLAN_METRICS_PORT (serve
/metrics on this port).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from bot.state.backend import StateBackend


class SettingsError(ValueError):
    """An environment variable that is missing or malformed; the message says which and how."""


@dataclass(frozen=True)
class DiscordSettings:
    token: str
    sync_guild_id: int | None
    shard_count: int | None
    shard_ids: list[int] | None
    message_content: bool

    def __repr__(self) -> str:  # the token must never reach a log line
        return (
            f"DiscordSettings(sync_guild_id={self.sync_guild_id}, shard_count={self.shard_count},"
            f" shard_ids={self.shard_ids}, message_content={self.message_content})"
        )


def settings_from_env(env: Mapping[str, str]) -> DiscordSettings:
    token = env.get("DISCORD_TOKEN", "").strip()
    if not token:
        raise SettingsError(
            "DISCORD_TOKEN is not set: copy the bot token from the Developer Portal "
            "(your application → Bot → Reset Token) into the environment."
        )
    shard_count = _int(env, "DISCORD_SHARD_COUNT", minimum=1)
    shard_ids = _shard_ids(env.get("DISCORD_SHARD_IDS", ""), shard_count)
    return DiscordSettings(
        token=token,
        sync_guild_id=_int(env, "DISCORD_GUILD_ID", minimum=1),
        shard_count=shard_count,
        shard_ids=shard_ids,
        message_content=env.get("GPUPLAN_DISCORD_MESSAGE_CONTENT", "").strip() in ("1", "true"),
    )


# Each flag stands in for its environment variable and wins over it.
SHARD_FLAGS = {"shard_count": "DISCORD_SHARD_COUNT", "shard_ids": "DISCORD_SHARD_IDS"}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = __doc__.splitlines()[0] if __doc__ else None
    parser.add_argument(
        "--shard-count", metavar="N", help="total shards across all processes (DISCORD_SHARD_COUNT)"
    )
    parser.add_argument(
        "--shard-ids", metavar="IDS", help="this process's shards, e.g. 0-3 (DISCORD_SHARD_IDS)"
    )


def settings_from_args(args: argparse.Namespace, env: Mapping[str, str]) -> DiscordSettings:
    """The environment's settings with the command line's shard flags laid over them."""
    flags = {
        variable: value
        for name, variable in SHARD_FLAGS.items()
        if (value := getattr(args, name, None)) is not None
    }
    return settings_from_env({**env, **flags})


def run(args: argparse.Namespace) -> int:
    from bot.state.backend import StateUrlError, backend_from_env

    try:
        settings = settings_from_args(args, os.environ)
        backend = backend_from_env()
    except (SettingsError, StateUrlError) as error:
        print(f"gpuplan serve discord: {error}", file=sys.stderr)
        return 2
    from bot.prices.schedule import start_scheduled_refresh

    try:
        start_scheduled_refresh()
    except ValueError as error:  # a bad GPUPLAN_PRICES_REFRESH_S
        print(f"gpuplan serve discord: {error}", file=sys.stderr)
        return 2
    import discord

    from adapters.drain import drain_budget_s

    try:
        budget_s = drain_budget_s()
    except ValueError as error:
        print(f"gpuplan serve discord: {error}", file=sys.stderr)
        return 2
    shards = (
        f"shards {settings.shard_ids} of {settings.shard_count}"
        if settings.shard_ids
        else ("Discord's recommended shards")
    )
    print(f"gpuplan: Discord bot on {shards}; state in {backend.describe()}", flush=True)
    discord.utils.setup_logging(root=True)
    try:
        asyncio.run(_serve(settings, backend, budget_s))
    except discord.LoginFailure:
        print("gpuplan serve discord: Discord rejected DISCORD_TOKEN (reset it?)", file=sys.stderr)
        return 1
    except discord.PrivilegedIntentsRequired:
        print(
            "gpuplan serve discord: enable the Message Content intent in the Developer Portal "
            "(Bot → Privileged Gateway Intents) or unset GPUPLAN_DISCORD_MESSAGE_CONTENT.",
            file=sys.stderr,
        )
        return 1
    return 0


async def _serve(settings: DiscordSettings, backend: StateBackend, budget_s: float) -> None:
    """Run the bot until SIGTERM or SIGINT, then drain: the gateway disconnects (no new work),
    the answers in flight finish within `budget_s`, and the client closes."""
    from adapters.discord.client import GpuplanClient
    from adapters.discord.keys import PLATFORM
    from adapters.discord.limits import INTERACTION_TOKEN_TTL_S
    from adapters.drain import until_stop_signal
    from adapters.metrics_http import serve_metrics_from_env
    from bot import metrics
    from bot.conversation import Conversation
    from bot.state.seen import open_seen_ids

    conversation = Conversation(backend=backend)
    metrics.enable(conversation.prices.snapshot)
    client = GpuplanClient(
        conversation,
        message_content=settings.message_content,
        sync_guild_id=settings.sync_guild_id,
        seen=open_seen_ids(backend, PLATFORM, INTERACTION_TOKEN_TTL_S),
        shard_count=settings.shard_count,
        shard_ids=settings.shard_ids,
    )
    metrics_runner = await serve_metrics_from_env("discord")
    try:
        async with client:
            running = asyncio.ensure_future(client.start(settings.token))
            stopping = asyncio.ensure_future(until_stop_signal())
            await asyncio.wait({running, stopping}, return_when=asyncio.FIRST_COMPLETED)
            if running.done():
                stopping.cancel()
                running.result()  # a login or intents failure, for run() to explain
                return
            print(f"gpuplan: {stopping.result()}: draining (up to {budget_s:g} s)", flush=True)
            await client.disconnect_gateway()
            await client.in_flight.finish(budget_s)
            await client.close()
            await asyncio.gather(running, return_exceptions=True)
    finally:
        if metrics_runner is not None:
            await metrics_runner.cleanup()


def _int(env: Mapping[str, str], name: str, *, minimum: int) -> int | None:
    raw = env.get(name, "").strip()
    if not raw:
        return None
    if not raw.isdigit() or int(raw) < minimum:
        raise SettingsError(f"{name} must be a whole number ≥ {minimum}, not {raw!r}.")
    return int(raw)


def _shard_ids(raw: str, shard_count: int | None) -> list[int] | None:
    """ "0-3" or "4,5,7" → ids, each below DISCORD_SHARD_COUNT (which they require)."""
    raw = raw.strip()
    if not raw:
        return None
    if shard_count is None:
        raise SettingsError(
            "DISCORD_SHARD_IDS (--shard-ids) needs DISCORD_SHARD_COUNT (--shard-count), the total."
        )
    ids: list[int] = []
    for part in raw.split(","):
        low, _, high = part.strip().partition("-")
        if not low.isdigit() or (high and not high.isdigit()):
            raise SettingsError(f"DISCORD_SHARD_IDS must look like '0-3' or '4,5', not {raw!r}.")
        ids += range(int(low), int(high or low) + 1)
    if any(i >= shard_count for i in ids) or len(set(ids)) != len(ids):
        raise SettingsError(
            f"DISCORD_SHARD_IDS must be distinct ids below DISCORD_SHARD_COUNT={shard_count}."
        )
    return ids
