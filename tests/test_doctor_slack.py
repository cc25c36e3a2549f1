"""`gpuplan doctor slack` against the loopback fake Slack and the real bot's HTTP server: a correct
set-up passes, and each broken one fails on its own line with the fix."""

from __future__ import annotations

import asyncio
import os
import socket
import sys
from collections.abc import AsyncIterator
from datetime import date
from pathlib import Path

import pytest
import pytest_asyncio

from adapters.doctor import common
from adapters.doctor.report import Check, exit_code
from adapters.doctor.slack_checks import (
    SlackDoctorOptions,
    signing_secret_shape,
    slack_checks,
    token_shape,
)
from adapters.slack.app import build_app, make_client
from adapters.slack.serve import EVENTS_PATH, build_app_from_env, read_env, start_http
from bot.conversation import Conversation
from tests.fakes.slack_api import FakeSlack

SECRET = "0123456789abcdef0123456789abcdef"
BOT_TOKEN = "xoxb-1111-2222-abcdefghijklmnop"
APP_TOKEN = "xapp-1-A0001-3333-abcdefghijkl"


@pytest_asyncio.fixture
async def fake(monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[FakeSlack]:
    server = await FakeSlack().start()
    monkeypatch.setenv("SLACK_BOT_TOKEN", BOT_TOKEN)
    monkeypatch.setenv("SLACK_SIGNING_SECRET", SECRET)
    monkeypatch.setenv("SLACK_API_URL", server.base_url)
    yield server
    await server.stop()


async def _serve_bot(fake: FakeSlack, secret: str = SECRET) -> tuple[object, str]:
    app = build_app(
        Conversation(), signing_secret=secret, client=make_client(BOT_TOKEN, fake.base_url)
    )
    runner = await start_http(app, "127.0.0.1", 0, signing_secret=secret)
    return runner, f"http://127.0.0.1:{runner.addresses[0][1]}{EVENTS_PATH}"


@pytest_asyncio.fixture
async def bot_url(fake: FakeSlack) -> AsyncIterator[str]:
    runner, url = await _serve_bot(fake)
    yield url
    await runner.cleanup()  # type: ignore[attr-defined]


async def _doctor(
    url: str, *, socket_mode: bool = False, public_url: str | None = None, files: bool = False
) -> dict[str, Check]:
    env, _ = read_env(socket=socket_mode, files_flag=files)
    options = SlackDoctorOptions(
        socket=socket_mode, local_url=url, public_url=public_url, files_enabled=env.files_enabled
    )
    return {check.name: check for check in await slack_checks(env, options)}


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


async def test_a_correct_http_setup_passes_every_check(fake: FakeSlack, bot_url: str) -> None:
    checks = await _doctor(bot_url)
    assert list(checks) == [
        "SLACK_BOT_TOKEN",
        "SLACK_SIGNING_SECRET",
        "auth.test",
        "scopes",
        "local server",
        "public URL",
        "event subscriptions",
    ]
    assert {c.status for c in checks.values()} == {"ok", "note"}, [c.line for c in checks.values()]
    assert exit_code(checks.values()) == 0
    assert "fake workspace" in checks["auth.test"].detail
    assert "message.im" in checks["event subscriptions"].detail
    assert "--public-url" in checks["public URL"].detail
    (auth,) = fake.posts("auth.test")
    assert auth["_auth"] == f"Bearer {BOT_TOKEN}"


async def test_the_command_exits_0_then_1_and_never_prints_a_secret(
    fake: FakeSlack, bot_url: str, tmp_path: Path
) -> None:
    command = [sys.executable, "-m", "adapters.cli", "doctor", "slack", "--url"]
    env = {**os.environ, "GPUPLAN_STATE_DIR": str(tmp_path)}

    async def run(url: str) -> tuple[int, str]:
        process = await asyncio.create_subprocess_exec(
            *command, url, env=env, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT
        )
        out, _ = await process.communicate()
        return process.returncode or 0, out.decode()

    passed, out = await run(bot_url)
    assert passed == 0, out
    assert "all 9 checks passed" in out and "ok    state store" in out
    failed, out_failed = await run(f"http://127.0.0.1:{_free_port()}{EVENTS_PATH}")
    assert (
        failed == 1 and "FAIL  local server" in out_failed and "gpuplan serve slack" in out_failed
    )
    for text in (out, out_failed):
        assert BOT_TOKEN not in text and SECRET not in text and "Traceback" not in text


@pytest.mark.parametrize(
    ("value", "found"),
    [
        (None, "not set"),
        ("", "not set"),
        (f" {BOT_TOKEN}", "spaces or quotes"),
        (f'"{BOT_TOKEN}"', "spaces or quotes"),
        ("xoxp-1111-2222-3333-abcdef", "holds a user token"),
        (APP_TOKEN, "holds an app-level token"),
        ("1111-2222-abcdef", "does not start with xoxb-"),
        ("xoxb-12", "cut short"),
        ("xoxb-1111-2222-abc/def", "odd characters"),
    ],
)
def test_a_malformed_bot_token_is_named_without_printing_it(value: str | None, found: str) -> None:
    check = token_shape("SLACK_BOT_TOKEN", value, "xoxb-", "OAuth & Permissions")
    assert check.status == "fail" and found in check.detail
    assert "OAuth & Permissions" in check.fix or "bare" in check.fix
    assert not value or value.strip().strip('"') not in check.line


def test_a_well_formed_token_is_described_by_kind_and_length_only() -> None:
    check = token_shape("SLACK_BOT_TOKEN", BOT_TOKEN, "xoxb-", "OAuth & Permissions")
    assert (
        check.status == "ok" and BOT_TOKEN not in check.line and str(len(BOT_TOKEN)) in check.line
    )


@pytest.mark.parametrize(
    ("secret", "found"),
    [("", "not set"), (BOT_TOKEN, "holds a token"), ("not-hex-at-all", "32 hex characters")],
)
def test_a_missing_or_malformed_signing_secret_fails(secret: str, found: str) -> None:
    check = signing_secret_shape(secret)
    assert check.status == "fail" and found in check.detail and "Basic Information" in check.fix


@pytest.mark.parametrize(
    ("error", "fix"),
    [
        ("invalid_auth", "copy the Bot User OAuth Token again"),
        ("token_revoked", "reinstall the app"),
        ("account_inactive", "reinstall the app"),
        ("token_expired", "rotation"),
    ],
)
async def test_a_token_slack_refuses_names_the_error_and_the_fix(
    fake: FakeSlack, bot_url: str, error: str, fix: str
) -> None:
    fake.auth_error = error
    checks = await _doctor(bot_url)
    assert checks["auth.test"].status == "fail" and error in checks["auth.test"].detail
    assert fix in checks["auth.test"].fix
    assert checks["scopes"].status == "skip"
    assert exit_code(checks.values()) == 1


async def test_missing_scopes_are_named_with_what_breaks_and_reinstall(
    fake: FakeSlack, bot_url: str
) -> None:
    fake.granted_scopes = ["app_mentions:read", "commands", "channels:history", "groups:history"]
    check = (await _doctor(bot_url))["scopes"]
    assert check.status == "fail"
    assert "chat:write (the bot cannot post answers in threads)" in check.detail
    assert "im:history (direct messages to the bot are not delivered)" in check.detail
    assert "reinstall" in check.fix


async def test_files_write_is_needed_only_when_charts_are_uploaded(
    fake: FakeSlack, bot_url: str
) -> None:
    fake.granted_scopes = [s for s in fake.granted_scopes if s != "files:write"]
    without_files = await _doctor(bot_url)
    assert without_files["scopes"].status == "warn" and exit_code(without_files.values()) == 0
    with_files = await _doctor(bot_url, files=True)
    assert with_files["scopes"].status == "fail" and "files:write" in with_files["scopes"].detail


async def test_an_install_without_files_read_still_passes_and_says_what_it_misses(
    fake: FakeSlack, bot_url: str
) -> None:
    fake.granted_scopes = [s for s in fake.granted_scopes if s != "files:read"]
    checks = await _doctor(bot_url, files=True)
    assert checks["scopes"].status == "warn" and exit_code(checks.values()) == 0
    assert "config.json is not read" in checks["scopes"].detail


async def test_a_server_with_another_signing_secret_is_caught(fake: FakeSlack) -> None:
    runner, url = await _serve_bot(fake, secret="f" * 32)
    try:
        check = (await _doctor(url))["local server"]
    finally:
        await runner.cleanup()  # type: ignore[attr-defined]
    assert check.status == "fail" and "401" in check.detail
    assert "different SLACK_SIGNING_SECRET" in check.fix


async def test_nothing_listening_says_how_to_start_the_bot(fake: FakeSlack) -> None:
    check = (await _doctor(f"http://127.0.0.1:{_free_port()}{EVENTS_PATH}"))["local server"]
    assert check.status == "fail" and "no answer from" in check.detail
    assert "gpuplan serve slack --http" in check.fix


async def test_a_wrong_path_is_a_404_with_the_right_path(fake: FakeSlack, bot_url: str) -> None:
    check = (await _doctor(bot_url.removesuffix(EVENTS_PATH) + "/events"))["local server"]
    assert check.status == "fail" and "404" in check.detail and EVENTS_PATH in check.fix


async def test_the_public_url_gets_slacks_check_and_must_be_https(
    fake: FakeSlack, bot_url: str
) -> None:
    base = bot_url.removesuffix(EVENTS_PATH)  # loopback stands in for the tunnel
    checks = await _doctor(bot_url, public_url=base)
    assert checks["through the public URL"].status == "ok"
    assert checks["public URL"].status == "fail" and "https://" in checks["public URL"].fix
    tunnel_down = await _doctor(bot_url, public_url=f"http://127.0.0.1:{_free_port()}")
    assert tunnel_down["through the public URL"].status == "fail"
    assert "tunnel" in tunnel_down["through the public URL"].fix


async def test_https_public_url_is_what_to_paste(fake: FakeSlack, bot_url: str) -> None:
    checks = await _doctor(bot_url, public_url="https://bot.example/")
    assert checks["public URL"].status == "ok"
    assert "https://bot.example/slack/events" in checks["public URL"].detail
    assert "https://bot.example/slack/events" in checks["event subscriptions"].detail


async def test_socket_mode_connects_and_says_hello(
    fake: FakeSlack, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SLACK_APP_TOKEN", APP_TOKEN)
    monkeypatch.delenv("SLACK_SIGNING_SECRET")
    checks = await _doctor("", socket_mode=True)
    assert list(checks) == [
        "SLACK_APP_TOKEN",
        "SLACK_BOT_TOKEN",
        "auth.test",
        "scopes",
        "Socket Mode",
        "event subscriptions",
    ]
    assert checks["Socket Mode"].status == "ok" and "A0001" in checks["Socket Mode"].detail
    assert exit_code(checks.values()) == 0
    (opened,) = fake.posts("apps.connections.open")
    assert opened["_auth"] == f"Bearer {APP_TOKEN}"


async def test_socket_mode_without_connections_write_names_the_scope(
    fake: FakeSlack, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SLACK_APP_TOKEN", APP_TOKEN)
    fake.socket_error = "missing_scope"
    check = (await _doctor("", socket_mode=True))["Socket Mode"]
    assert check.status == "fail" and "connections:write" in check.fix


async def test_a_bot_token_in_the_app_token_slot_is_named(
    fake: FakeSlack, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SLACK_APP_TOKEN", BOT_TOKEN)
    checks = await _doctor("", socket_mode=True)
    assert checks["SLACK_APP_TOKEN"].detail == "it holds a bot token"
    assert checks["Socket Mode"].status == "skip" and not fake.posts("apps.connections.open")


def test_an_unwritable_state_dir_fails_with_the_variable_to_set(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    monkeypatch.setenv("GPUPLAN_STATE_DIR", str(blocker / "state"))
    check = common.state_store()
    assert check.status == "fail" and str(blocker / "state") in check.detail
    assert "GPUPLAN_STATE_DIR" in check.fix


def test_the_state_store_check_writes_through_the_bots_store() -> None:
    check = common.state_store()
    assert check.status == "ok" and "SQLite at" in check.detail and "threads.db" in check.detail
    assert common.state_store().status == "ok"  # the probe row is rewritten, not a second row


def test_the_state_store_check_uses_redis_when_the_url_names_it(
    redis_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GPUPLAN_STATE_URL", redis_url)
    check = common.state_store()
    assert check.status == "ok" and check.detail.startswith("Redis at redis://127.0.0.1")


def test_an_unreachable_redis_fails_with_what_to_start(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GPUPLAN_STATE_URL", f"redis://127.0.0.1:{_free_port()}/0")
    check = common.state_store()
    assert check.status == "fail" and "start Redis" in check.fix


def test_a_malformed_state_url_fails_naming_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GPUPLAN_STATE_URL", "postgres://db/1")
    check = common.state_store()
    assert check.status == "fail" and "GPUPLAN_STATE_URL" in check.fix


def test_prices_say_their_age_and_warn_when_stale() -> None:
    fresh = common.prices(today=date(2026, 11, 10))  # the bundled table's newest: 2026-11-09
    assert fresh.status == "ok" and "1 days old" in fresh.detail
    stale = common.prices(today=date(2028, 1, 1))
    assert stale.status == "warn" and "GPUPLAN_PRICES" in stale.fix


def test_a_broken_price_override_fails(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GPUPLAN_PRICES", str(tmp_path / "missing.csv"))
    check = common.prices()
    assert check.status == "fail" and "GPUPLAN_PRICES" in check.fix


async def test_an_oauth_setup_checks_its_credentials_and_the_install_page(
    fake: FakeSlack, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("SLACK_BOT_TOKEN")  # each workspace's token comes from its install
    monkeypatch.setenv("SLACK_CLIENT_ID", "1111.2222")
    monkeypatch.setenv("SLACK_CLIENT_SECRET", "abcdef0123456789" * 2)
    env, _ = read_env(socket=False)
    app = build_app_from_env(env, Conversation())
    runner = await start_http(app, "127.0.0.1", 0, signing_secret=SECRET)
    url = f"http://127.0.0.1:{runner.addresses[0][1]}{EVENTS_PATH}"
    try:
        checks = await _doctor(url)
    finally:
        await runner.cleanup()
    assert checks["SLACK_BOT_TOKEN"].status == "note"
    assert checks["SLACK_CLIENT_ID"].status == checks["SLACK_CLIENT_SECRET"].status == "ok"
    assert checks["install page"].status == "ok"
    assert "https://YOUR-HOST/slack/oauth_redirect" in checks["install page"].detail
    assert exit_code(checks.values()) == 0


async def test_oauth_settings_against_a_server_started_without_them_fail(
    fake: FakeSlack, bot_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SLACK_CLIENT_ID", "not-an-id")
    monkeypatch.setenv("SLACK_CLIENT_SECRET", "abcdef0123456789" * 2)
    checks = await _doctor(bot_url)
    assert (
        checks["SLACK_CLIENT_ID"].status == "fail"
        and "App Credentials" in checks["SLACK_CLIENT_ID"].fix
    )
    assert (
        checks["install page"].status == "fail" and "SLACK_CLIENT_ID" in checks["install page"].fix
    )
