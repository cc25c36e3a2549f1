"""`gpuplan doctor discord` against the loopback fake Discord: after the real bot has started (and
synced its command) every check passes; each broken set-up fails on its own line with the fix."""

from __future__ import annotations

import asyncio
import base64
import os
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
import yarl
from discord.gateway import DiscordWebSocket
from discord.http import Route

from adapters.discord.client import GpuplanClient
from adapters.discord.commands import command_payloads
from adapters.doctor.discord_checks import (
    GATEWAY_MESSAGE_CONTENT_LIMITED,
    discord_checks,
    token_shape,
)
from adapters.doctor.report import Check, exit_code
from bot.conversation import Conversation
from tests.fakes.discord_api import ALL_PERMISSIONS, APP_ID, GUILD_ID, FakeDiscord

# Shaped like a real bot token: base64 of the bot's id, a timestamp part, an HMAC part.
_BOT_ID_PART = base64.urlsafe_b64encode(str(APP_ID).encode()).decode().rstrip("=")
TOKEN = f"{_BOT_ID_PART}.GhI2kA.{'Zq8' * 12}"


@pytest_asyncio.fixture
async def fake() -> AsyncIterator[FakeDiscord]:
    server = await FakeDiscord(bot_token=TOKEN).start()
    yield server
    await server.stop()


def _env(fake: FakeDiscord, **extra: str) -> dict[str, str]:
    return {"DISCORD_TOKEN": TOKEN, "DISCORD_API_URL": fake.rest_base, **extra}


async def _doctor(fake: FakeDiscord, **extra: str) -> dict[str, Check]:
    return {check.name: check for check in await discord_checks(_env(fake, **extra))}


async def _start_the_bot_once(fake: FakeDiscord, monkeypatch: pytest.MonkeyPatch, **options):
    """What a newcomer does before the doctor: run the real bot, which syncs /gpuplan."""
    monkeypatch.setattr(Route, "BASE", fake.rest_base)
    monkeypatch.setattr(DiscordWebSocket, "DEFAULT_GATEWAY", yarl.URL(fake.gateway_url))
    client = GpuplanClient(Conversation(), guild_ready_timeout=0.05, shard_count=1, **options)
    task = asyncio.create_task(client.start(TOKEN))
    await asyncio.wait_for(client.wait_until_ready(), 10)
    await fake.wait_for(lambda calls: [c for c in calls if c.method == "PUT"])
    await client.close()
    await asyncio.wait_for(task, 10)


async def test_after_the_bot_synced_once_every_check_passes(fake, monkeypatch) -> None:
    await _start_the_bot_once(fake, monkeypatch)
    checks = await _doctor(fake)
    assert list(checks) == [
        "DISCORD_TOKEN",
        "/users/@me",
        "application id",
        "interactions endpoint",
        "intents",
        "servers",
        "permissions",
        "/gpuplan",
        "gateway",
    ]
    assert {c.status for c in checks.values()} == {"ok"}, [c.line for c in checks.values()]
    assert str(APP_ID) in checks["application id"].detail
    assert "General Information" in checks["application id"].detail
    assert f"--invite {APP_ID}" in checks["application id"].detail
    assert "globally" in checks["/gpuplan"].detail and "hour" in checks["/gpuplan"].detail
    assert TOKEN not in "".join(c.line for c in checks.values())


async def test_guild_sync_shows_at_once_in_that_server(fake, monkeypatch) -> None:
    await _start_the_bot_once(fake, monkeypatch, sync_guild_id=GUILD_ID)
    check = (await _doctor(fake, DISCORD_GUILD_ID=str(GUILD_ID)))["/gpuplan"]
    assert check.status == "ok" and "at once" in check.detail and str(GUILD_ID) in check.detail


async def test_both_guild_and_global_registration_warn_of_duplicates(fake) -> None:
    fake.commands = {"global": command_payloads(), str(GUILD_ID): command_payloads()}
    checks = await _doctor(fake, DISCORD_GUILD_ID=str(GUILD_ID))
    assert checks["/gpuplan"].status == "warn" and "twice" in checks["/gpuplan"].detail
    assert exit_code(checks.values()) == 0


async def test_an_unregistered_command_says_to_start_the_bot(fake) -> None:
    checks = await _doctor(fake)
    assert (
        checks["/gpuplan"].status == "fail"
        and "not registered globally" in checks["/gpuplan"].detail
    )
    assert "gpuplan serve discord" in checks["/gpuplan"].fix
    guild = (await _doctor(fake, DISCORD_GUILD_ID=str(GUILD_ID)))["/gpuplan"]
    assert guild.status == "fail" and str(GUILD_ID) in guild.detail


async def test_a_command_from_an_older_version_is_flagged(fake) -> None:
    (old,) = command_payloads()
    fake.commands = {"global": [{**old, "description": "an older description"}]}
    check = (await _doctor(fake))["/gpuplan"]
    assert check.status == "warn" and "not as this version defines it" in check.detail


async def test_a_rejected_token_stops_at_users_me_with_the_reset_fix(fake) -> None:
    fake.bot_token = TOKEN + "x"  # Discord no longer accepts the one we have
    checks = await _doctor(fake)
    assert list(checks) == ["DISCORD_TOKEN", "/users/@me"]
    assert "401" in checks["/users/@me"].detail and "Reset Token" in checks["/users/@me"].fix


@pytest.mark.parametrize(
    ("raw", "found"),
    [
        ("", "not set"),
        (f"Bot {TOKEN}", "starts with 'Bot '"),
        (f'"{TOKEN}"', "quotes or spaces"),
        ("ab" * 32, "Public Key"),
        ("Zx9" * 10 + "ab", "OAuth2 Client Secret"),
        ("aGVsbG8.GhI2kA.abcdef", "not a bot id"),
        ("a.b", "not shaped like a bot token"),
    ],
)
def test_a_malformed_token_is_named_without_printing_it(raw: str, found: str) -> None:
    check = token_shape(raw)
    assert check.status == "fail" and found in check.detail
    assert not raw or raw not in check.line


def test_a_well_formed_token_names_the_bot_id_it_carries() -> None:
    check = token_shape(f" {TOKEN}\n")  # the bot strips surrounding whitespace too
    assert check.status == "ok" and str(APP_ID) in check.detail and TOKEN not in check.line


async def test_the_message_content_intent_must_be_on_in_the_portal_when_asked_for(fake) -> None:
    asked = {"GPUPLAN_DISCORD_MESSAGE_CONTENT": "1"}
    refused = (await _doctor(fake, **asked))["intents"]
    assert refused.status == "fail" and "4014" in refused.detail
    assert "Privileged Gateway Intents" in refused.fix
    fake.application_flags = GATEWAY_MESSAGE_CONTENT_LIMITED
    assert (await _doctor(fake, **asked))["intents"].status == "ok"
    on_but_unused = (await _doctor(fake))["intents"]
    assert (
        on_but_unused.status == "note"
        and "GPUPLAN_DISCORD_MESSAGE_CONTENT=1" in on_but_unused.detail
    )


async def test_an_interactions_endpoint_url_is_a_failure(fake) -> None:
    fake.interactions_endpoint_url = "https://example.com/interactions"
    check = (await _doctor(fake))["interactions endpoint"]
    assert check.status == "fail" and "clear it" in check.fix


async def test_a_bot_in_no_server_gets_the_invite(fake) -> None:
    fake.guilds = []
    check = (await _doctor(fake))["servers"]
    assert check.status == "fail" and f"--invite {APP_ID}" in check.fix
    elsewhere = (await _doctor(fake, DISCORD_GUILD_ID="123456789"))["servers"]
    assert elsewhere.status == "fail"  # the bot is in no server, so not in that one either


async def test_a_guild_the_bot_is_not_in_is_named(fake) -> None:
    check = (await _doctor(fake, DISCORD_GUILD_ID="123456789"))["servers"]
    assert check.status == "fail" and "DISCORD_GUILD_ID=123456789" in check.detail


async def test_a_malformed_setting_is_its_own_failure(fake) -> None:
    checks = await _doctor(fake, DISCORD_SHARD_COUNT="two")
    assert (
        checks["settings"].status == "fail" and "DISCORD_SHARD_COUNT" in checks["settings"].detail
    )


async def test_the_command_exits_1_without_a_token_and_never_prints_one(
    fake, tmp_path: Path
) -> None:
    async def run(env: dict[str, str]) -> tuple[int, str]:
        process = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "adapters.cli", "doctor", "discord",
            env={**os.environ, "GPUPLAN_STATE_DIR": str(tmp_path), **env},
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
        )  # fmt: skip
        out, _ = await process.communicate()
        return process.returncode or 0, out.decode()

    missing, out = await run({})
    assert missing == 1 and "FAIL  DISCORD_TOKEN: not set" in out and "Reset Token" in out
    fake.commands = {"global": command_payloads()}
    passed, out = await run(_env(fake))
    assert passed == 0 and "all 11 checks passed" in out, out
    assert TOKEN not in out and "Traceback" not in out


async def test_roles_that_lack_a_needed_permission_are_named_with_the_fix(fake) -> None:
    no_embeds = int(ALL_PERMISSIONS) & ~(1 << 14) & ~(1 << 3)  # Embed Links off, not an admin
    fake.guilds = [{"id": str(GUILD_ID), "name": "ml lab", "permissions": str(no_embeds)}]
    check = (await _doctor(fake))["permissions"]
    assert check.status == "fail" and check.detail.endswith("lack ml lab: Embed Links")
    assert f"--invite {APP_ID}" in check.fix
    view_only = {"id": "5", "name": "reading room", "permissions": str(1 << 10)}
    fake.guilds = [view_only, {"id": "6", "name": "admins", "permissions": str(1 << 3)}]
    check = (await _doctor(fake))["permissions"]
    assert "reading room: Send Messages," in check.detail and "admins" not in check.detail
