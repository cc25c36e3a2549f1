"""The Discord checks, in order: settings and the token's shape, Discord's answer to the token,
the application (its id, intents, interactions endpoint), the servers it is in, where `/gpuplan`
is registered and how soon a change shows there, and the Gateway's login budget.

The token is only described, never printed. DISCORD_API_URL (default Discord's v10 REST API)
points the checks at a loopback fake in tests.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import aiohttp

from adapters.discord.serve import DiscordSettings, SettingsError, settings_from_env
from adapters.doctor.common import NETWORK_ERRORS, unreachable
from adapters.doctor.report import Check, fail, note, ok, skip, warn

API_URL_ENV = "DISCORD_API_URL"
DEFAULT_API_URL = "https://discord.com/api/v10"
REQUEST_TIMEOUT_S = 10.0
PORTAL = "https://discord.com/developers/applications"
# Application flags (Discord's docs, "Application Flags"): the portal's Message Content toggle
# for a verified app, and for an unverified one (under 100 servers).
GATEWAY_MESSAGE_CONTENT = 1 << 18
GATEWAY_MESSAGE_CONTENT_LIMITED = 1 << 19
_MAX_RETRY_AFTER_S = 5.0
_HEX_64 = re.compile(r"[0-9a-fA-F]{64}")
_TOKEN_PART = re.compile(r"[A-Za-z0-9_-]+")
_RESET_TOKEN = f"{PORTAL} → your application → Bot → Reset Token, and set DISCORD_TOKEN to it"


class DiscordRestError(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(f"{status} {message}")
        self.status = status


@dataclass
class DiscordRest:
    """The few GETs the doctor makes, authenticated as the bot; a 429 is waited out once."""

    token: str
    base_url: str

    async def get(self, path: str) -> Any:
        headers = {"Authorization": f"Bot {self.token}", "User-Agent": "gpuplan-doctor"}
        timeout = aiohttp.ClientTimeout(total=REQUEST_TIMEOUT_S)
        async with aiohttp.ClientSession(timeout=timeout, headers=headers) as http:
            for attempt in range(2):
                async with http.get(self.base_url.rstrip("/") + path) as response:
                    data = await response.json(content_type=None)
                    if response.status == 429 and attempt == 0:
                        await asyncio.sleep(
                            min(float(data.get("retry_after", 1)), _MAX_RETRY_AFTER_S)
                        )
                        continue
                    if response.status >= 400:
                        message = data.get("message", "") if isinstance(data, dict) else ""
                        raise DiscordRestError(response.status, message)
                    return data
        raise DiscordRestError(429, "rate limited")


async def discord_checks(env: Mapping[str, str]) -> list[Check]:
    checks = [token_shape(env.get("DISCORD_TOKEN", ""))]
    if checks[0].status != "ok":
        return [*checks, skip("Discord", "DISCORD_TOKEN")]
    try:
        settings = settings_from_env(env)
    except SettingsError as error:
        return [*checks, fail("settings", str(error), "fix that variable, then run this again")]
    rest = DiscordRest(settings.token, env.get(API_URL_ENV) or DEFAULT_API_URL)
    try:
        me = await rest.get("/users/@me")
    except DiscordRestError as error:
        if error.status == 401:
            return [
                *checks,
                fail("/users/@me", "Discord rejected DISCORD_TOKEN (401)", _RESET_TOKEN),
            ]
        return [*checks, _unreachable("/users/@me", rest.base_url, error)]
    except NETWORK_ERRORS as error:
        return [*checks, _unreachable("/users/@me", rest.base_url, error)]
    if not me.get("bot"):
        return [*checks, fail("/users/@me", "the token is not a bot's", _RESET_TOKEN)]
    checks.append(ok("/users/@me", f"logged in as bot {me.get('username')} ({me.get('id')})"))
    try:
        application = await rest.get("/oauth2/applications/@me")
        guilds = await rest.get("/users/@me/guilds")
        app_id = str(application["id"])
        commands = await _commands(rest, app_id, settings.sync_guild_id)
        gateway = await rest.get("/gateway/bot")
    except (*NETWORK_ERRORS, DiscordRestError, KeyError) as error:
        return [*checks, _unreachable("application", rest.base_url, error)]
    return [
        *checks,
        application_id(application),
        interactions_endpoint(application),
        message_content_intent(settings, int(application.get("flags") or 0)),
        servers(guilds, app_id, settings.sync_guild_id),
        server_permissions(guilds, app_id),
        command_registration(commands, settings.sync_guild_id),
        gateway_logins(gateway, settings),
    ]


def token_shape(raw: str) -> Check:
    """A bot token is three dot-separated base64url parts, the first being the bot's user id."""
    name = "DISCORD_TOKEN"
    token = raw.strip()
    if not token:
        return fail(name, "not set", f"copy it from {_RESET_TOKEN}")
    if token.lower().startswith("bot "):
        return fail(name, "starts with 'Bot '", "set only the token; the bot adds 'Bot ' itself")
    if token[:1] in "\"'" or token[-1:] in "\"'" or any(c.isspace() for c in token):
        return fail(name, "has quotes or spaces in it", "set it to the bare token")
    if _HEX_64.fullmatch(token):
        return fail(name, "holds the application's Public Key, not the bot token", _RESET_TOKEN)
    parts = token.split(".")
    if len(parts) != 3 or not all(_TOKEN_PART.fullmatch(part) for part in parts):
        looks = " (it looks like the OAuth2 Client Secret)" if len(parts) == 1 else ""
        return fail(name, f"is not shaped like a bot token{looks}", _RESET_TOKEN)
    user_id = _token_user_id(parts[0])
    if user_id is None:
        return fail(name, "its first part is not a bot id", _RESET_TOKEN)
    return ok(name, f"set (bot id {user_id}, {len(token)} characters)")


def _token_user_id(part: str) -> str | None:
    try:
        decoded = base64.urlsafe_b64decode(part + "=" * (-len(part) % 4)).decode()
    except (binascii.Error, UnicodeDecodeError):
        return None
    return decoded if decoded.isdigit() else None


def application_id(application: Mapping[str, Any]) -> Check:
    app_id = application.get("id")
    return ok(
        "application id",
        f"{app_id} ({application.get('name')}): Developer Portal → your application → General "
        f"Information → Application ID; invite link: gpuplan discord-commands --invite {app_id}",
    )


def interactions_endpoint(application: Mapping[str, Any]) -> Check:
    url = application.get("interactions_endpoint_url")
    if url:
        return fail(
            "interactions endpoint",
            f"set to {url}, so Discord sends /gpuplan and button presses there, not to the bot",
            "General Information → Interactions Endpoint URL: clear it and save",
        )
    return ok("interactions endpoint", "empty, so interactions come over the Gateway")


def message_content_intent(settings: DiscordSettings, flags: int) -> Check:
    enabled = bool(flags & (GATEWAY_MESSAGE_CONTENT | GATEWAY_MESSAGE_CONTENT_LIMITED))
    name = "intents"
    toggle = "Bot → Privileged Gateway Intents → Message Content Intent"
    if settings.message_content and not enabled:
        return fail(
            name,
            "GPUPLAN_DISCORD_MESSAGE_CONTENT=1 asks for Message Content, which the portal has off: "
            "Discord will refuse the login (close code 4014)",
            f"turn on {toggle}, or unset GPUPLAN_DISCORD_MESSAGE_CONTENT",
        )
    if settings.message_content:
        return ok(name, "default intents plus Message Content: plain replies in threads re-plan")
    if enabled:
        return note(
            name,
            "Message Content is on in the portal but not asked for; set "
            "GPUPLAN_DISCORD_MESSAGE_CONTENT=1 so plain replies in the bot's threads re-plan",
        )
    return ok(
        name,
        "default intents only (none privileged): mentions, /gpuplan and buttons work; plain "
        "thread replies need a mention (or Message Content, see docs/deploy.md)",
    )


def servers(guilds: list[Mapping[str, Any]], app_id: str, sync_guild_id: int | None) -> Check:
    invite = f"invite it: gpuplan discord-commands --invite {app_id}, open the link, pick a server"
    if not guilds:
        return fail("servers", "the bot is in no server", invite)
    if sync_guild_id is not None and str(sync_guild_id) not in {str(g.get("id")) for g in guilds}:
        return fail("servers", f"the bot is not in DISCORD_GUILD_ID={sync_guild_id}", invite)
    names = ", ".join(str(g.get("name")) for g in guilds[:3])
    more = f" and {len(guilds) - 3} more" if len(guilds) > 3 else ""
    return ok("servers", f"in {len(guilds)}: {names}{more}")


# The portal's names for the permissions the bot needs (discord.py says read_messages).
_PERMISSION_LABELS = {
    "read_messages": "View Channel",
    "send_messages": "Send Messages",
    "send_messages_in_threads": "Send Messages in Threads",
    "create_public_threads": "Create Public Threads",
    "embed_links": "Embed Links",
    "attach_files": "Attach Files",
    "read_message_history": "Read Message History",
}


def server_permissions(guilds: list[Mapping[str, Any]], app_id: str) -> Check:
    """What the bot's roles grant in each server (Discord lists it with the bot's servers);
    a channel's own overrides can still take permissions away, which the bot's log then names."""
    import discord

    from adapters.discord.commands import required_permissions

    needed = required_permissions()
    short: list[str] = []
    for guild in guilds:
        granted = discord.Permissions(int(guild.get("permissions") or 0))
        if granted.administrator or needed <= granted:
            continue
        missing = [
            _PERMISSION_LABELS.get(n, n)
            for n, wanted in needed
            if wanted and not getattr(granted, n)
        ]
        short.append(f"{guild.get('name')}: {', '.join(missing)}")
    if not guilds:
        return skip("permissions", "the bot is in a server")
    if short:
        return fail(
            "permissions",
            f"the bot's roles lack {'; '.join(short)}",
            "Server Settings → Roles → the bot's role: allow those, or re-invite it with "
            f"gpuplan discord-commands --invite {app_id} (it asks for exactly these)",
        )
    return ok("permissions", f"the bot's roles grant what it needs in all {len(guilds)} server(s)")


async def _commands(
    rest: DiscordRest, app_id: str, sync_guild_id: int | None
) -> dict[str, list[Mapping[str, Any]]]:
    found = {"global": await rest.get(f"/applications/{app_id}/commands")}
    if sync_guild_id is not None:
        try:
            found["guild"] = await rest.get(
                f"/applications/{app_id}/guilds/{sync_guild_id}/commands"
            )
        except DiscordRestError as error:
            if error.status != 403:  # 403: not in that server, which `servers` reports
                raise
            found["guild"] = []
    return found


def command_registration(
    commands: Mapping[str, list[Mapping[str, Any]]], sync_guild_id: int | None
) -> Check:
    """Where /gpuplan is registered, whether it matches this version, and when changes show."""
    from adapters.discord.commands import COMMAND_NAME

    name = f"/{COMMAND_NAME}"
    places = {
        place: next((c for c in listed if c.get("name") == COMMAND_NAME), None)
        for place, listed in commands.items()
    }
    start = "start the bot once (gpuplan serve discord): it registers /gpuplan when it starts"
    if sync_guild_id is not None:
        registered = places.get("guild")
        where = f"in server {sync_guild_id} (DISCORD_GUILD_ID): changes show there at once"
        if registered is None:
            return fail(name, f"not registered in server {sync_guild_id}", start)
        if places.get("global") is not None:
            return warn(
                name,
                f"registered {where}, and globally too, so that server lists it twice",
                "unset DISCORD_GUILD_ID for production, or delete the global copy",
            )
    else:
        registered = places.get("global")
        where = (
            "globally: every server the bot is in and DMs; after a change clients can take up to "
            "an hour to show it (Ctrl+R reloads Discord), DISCORD_GUILD_ID makes one server instant"
        )
        if registered is None:
            return fail(name, "not registered globally", start)
    if not _same_command(registered):
        return warn(name, f"registered {where}, but not as this version defines it", start)
    return ok(name, f"registered {where}")


def _same_command(registered: Mapping[str, Any]) -> bool:
    """Discord echoes back what was synced; compare the parts people see."""
    from adapters.discord.commands import command_payloads

    def shape(command: Mapping[str, Any]) -> tuple[Any, ...]:
        options = tuple(
            (o.get("name"), o.get("type"), o.get("description"), bool(o.get("required")))
            for o in command.get("options") or []
        )
        return command.get("name"), command.get("description"), options

    return any(shape(registered) == shape(payload) for payload in command_payloads())


def gateway_logins(gateway: Mapping[str, Any], settings: DiscordSettings) -> Check:
    limit = gateway.get("session_start_limit") or {}
    remaining, recommended = limit.get("remaining"), gateway.get("shards", 1)
    if remaining == 0:
        wait_min = round(float(limit.get("reset_after", 0)) / 60_000)
        return fail(
            "gateway",
            "no logins left today (Discord counts every connect)",
            f"wait about {wait_min} min; stop restart loops",
        )
    detail = (
        f"{remaining} of {limit.get('total')} logins left today; {recommended} shard(s) advised"
    )
    if settings.shard_count is not None and settings.shard_count < recommended:
        return warn("gateway", detail, f"raise DISCORD_SHARD_COUNT to at least {recommended}")
    return ok("gateway", detail)


def _unreachable(name: str, where: str, error: Exception) -> Check:
    return unreachable(name, where, error, f"check the network and {API_URL_ENV}")
