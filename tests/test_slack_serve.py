"""`gpuplan serve slack`: settings only from the environment, a clear exit 2 when one is missing,
the real process answering on loopback, and multi-workspace installs through OAuth."""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
from collections.abc import AsyncIterator
from html import unescape
from pathlib import Path
from urllib.parse import parse_qs, urlencode, urlparse

import aiohttp
import pytest
import pytest_asyncio

from adapters.slack import manifest, serve
from adapters.slack.app import ACK_TEXT
from bot.reply import Reply
from bot.threads import ThreadKey
from tests.fakes.slack_api import BOT_USER_ID, FakeSlack, sign

SECRET = "serve-signing-secret"
BOT_TOKEN = "xoxb-secret-bot-token"


def _args(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    serve.add_arguments(parser)
    return parser.parse_args(argv)


@pytest.mark.parametrize(
    ("argv", "env", "missing"),
    [
        (["--http"], {}, "SLACK_SIGNING_SECRET, SLACK_BOT_TOKEN"),
        (["--http"], {"SLACK_SIGNING_SECRET": "s"}, "SLACK_BOT_TOKEN"),
        (["--socket"], {"SLACK_BOT_TOKEN": "xoxb-1"}, "SLACK_APP_TOKEN"),
        (["--http"], {"SLACK_CLIENT_ID": "1", "SLACK_CLIENT_SECRET": "2"}, "SLACK_SIGNING_SECRET"),
    ],
)
def test_missing_settings_exit_2_naming_them(
    argv: list[str], env: dict[str, str], missing: str, monkeypatch, capsys
) -> None:
    for name in ("SLACK_CLIENT_ID", "SLACK_CLIENT_SECRET"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert serve.run(_args(*argv)) == 2
    err = capsys.readouterr().err
    assert f"set {missing} in the environment" in err and "Traceback" not in err


def test_files_come_from_the_flag_or_the_environment(monkeypatch) -> None:
    assert not serve.read_env(socket=False)[0].files_enabled
    assert serve.read_env(socket=False, files_flag=True)[0].files_enabled
    monkeypatch.setenv("GPUPLAN_SLACK_FILES", "1")
    assert serve.read_env(socket=False)[0].files_enabled


async def test_the_served_process_answers_a_signed_slash_command(tmp_path: Path) -> None:
    fake = await FakeSlack().start()
    env = {
        **os.environ,
        "SLACK_SIGNING_SECRET": SECRET,
        "SLACK_BOT_TOKEN": BOT_TOKEN,
        "SLACK_API_URL": fake.base_url,
        "GPUPLAN_STATE_DIR": str(tmp_path),
    }
    command = [sys.executable, "-m", "adapters.cli", "serve", "slack", "--http", "--port", "0"]
    process = subprocess.Popen(
        command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        assert process.stdout is not None
        url = re.search(r"http://\S+", process.stdout.readline()).group(0)  # type: ignore[union-attr]
        body = urlencode({"command": "/gpuplan", "text": "help", "team_id": "T0001",
                          "channel_id": "C1", "user_id": "U1", "trigger_id": "1.1.1",
                          "response_url": fake.response_url("commands/1")})  # fmt: skip
        headers = {**sign(body, SECRET), "Content-Type": "application/x-www-form-urlencoded"}
        async with (
            aiohttp.ClientSession() as http,
            http.post(url, data=body, headers=headers) as response,
        ):
            assert response.status == 200 and (await response.json())["text"] == ACK_TEXT
        await fake.wait_for(lambda: fake.responses, timeout_s=30)
        assert fake.responses[0][1]["response_type"] == "ephemeral"
    finally:
        process.terminate()
        out, err = process.communicate(timeout=10)
        await fake.stop()
    assert BOT_TOKEN not in out + err and SECRET not in out + err


class EchoPlanner:
    def handle(self, key: ThreadKey, text: str, user: str = "") -> Reply:
        return Reply(kind="plan", title=f"Plan for {key.workspace}", verdict=text)


@pytest_asyncio.fixture
async def oauth_bot(monkeypatch) -> AsyncIterator[tuple[FakeSlack, str]]:
    fake = await FakeSlack().start()
    for name, value in {
        "SLACK_CLIENT_ID": "111.222",
        "SLACK_CLIENT_SECRET": "oauth-secret",
        "SLACK_SIGNING_SECRET": SECRET,
        "SLACK_API_URL": fake.base_url,
    }.items():
        monkeypatch.setenv(name, value)
    env, missing = serve.read_env(socket=False)
    assert env.oauth and missing == []
    runner = await serve.start_http(
        serve.build_app_from_env(env, EchoPlanner()), "127.0.0.1", 0, signing_secret=SECRET
    )
    yield fake, f"http://127.0.0.1:{runner.addresses[0][1]}"
    await runner.cleanup()
    await fake.stop()


async def test_oauth_install_stores_the_workspace_token_and_uses_it(oauth_bot) -> None:
    fake, base = oauth_bot
    fake.installs["code-T0002"] = "T0002"
    async with aiohttp.ClientSession() as http:
        async with http.get(f"{base}{serve.INSTALL_PATH}") as page:
            assert page.status == 200
            html, cookie = await page.text(), page.headers["Set-Cookie"].split(";")[0]
        link = re.search(r'href="(https://slack.com/oauth/v2/authorize[^"]+)"', html).group(1)
        authorize = urlparse(unescape(link))
        query = parse_qs(authorize.query)
        assert query["client_id"] == ["111.222"] and "app_mentions:read" in query["scope"][0]
        callback = f"{base}{serve.OAUTH_REDIRECT_PATH}?code=code-T0002&state={query['state'][0]}"
        async with http.get(callback, headers={"Cookie": cookie}) as done:
            assert done.status == 200, await done.text()
        body = json.dumps({"type": "event_callback", "team_id": "T0002", "event_id": "EvT2",
                           "api_app_id": "A0001",
                           "event": {"type": "app_mention", "ts": "1.5", "channel": "C2",
                                     "text": f"<@{BOT_USER_ID}> 7B LoRA"}})  # fmt: skip
        headers = {**sign(body, SECRET), "Content-Type": "application/json"}
        async with http.post(f"{base}{serve.EVENTS_PATH}", data=body, headers=headers) as event:
            assert event.status == 200
    await fake.wait_for(lambda: fake.posts())
    (post,) = fake.posts()
    assert post["_auth"] == "Bearer xoxb-T0002" and post["text"] == "Plan for T0002: 7B LoRA"


async def test_oauth_pages_answer_junk_queries_without_a_500(oauth_bot, caplog) -> None:
    _, base = oauth_bot
    queries = ["", "?code=x", "?state=junk", "?code=x&state=junk", "?error=access_denied",
               "?code=%ff&state=%00", "?code=a&code=b&state=c&state=d"]  # fmt: skip
    async with aiohttp.ClientSession() as http:
        for query in queries:
            async with http.get(f"{base}/slack/oauth_redirect{query}") as page:
                assert page.status < 500, (query, page.status)
        async with http.post(f"{base}/slack/install", data="x") as page:
            assert page.status == 405
    assert "Traceback" not in caplog.text


def test_manifest_asks_for_what_the_bot_uses() -> None:
    assert serve.BOT_SCOPES == [
        "app_mentions:read",
        "channels:history",
        "chat:write",
        "commands",
        "files:read",
        "files:write",
        "groups:history",
        "im:history",
    ]
    assert manifest.bot_events() == (
        "app_mention",
        "message.channels",
        "message.groups",
        "message.im",
    )
    text = manifest.MANIFEST_PATH.read_text()
    assert "messages_tab_enabled: true" in text and "messages_tab_read_only_enabled: false" in text
    assert f"https://YOUR-HOST{serve.EVENTS_PATH}" in text
    assert f"https://YOUR-HOST{serve.OAUTH_REDIRECT_PATH}" in text
