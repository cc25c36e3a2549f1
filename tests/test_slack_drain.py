"""A deploy loses no acknowledged answer: real `gpuplan serve slack` processes (HTTP and Socket
Mode) get real SIGTERMs while the answers to questions they acknowledged are still on their way
(the fake Slack holds every response_url post until the test lets it through)."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from urllib.parse import urlencode

import aiohttp
import pytest_asyncio

from adapters.slack.app import ACK_TEXT
from adapters.slack.serve import EVENTS_PATH
from tests.fakes.slack_api import BOT_USER_ID, TEAM_ID, FakeSlack, sign
from tests.slack_process import REPO_ROOT, BotProcess

SECRET = "drain-secret"
CHANNEL = "C0DRAIN"
EXIT_WAIT_S = 60.0  # a busy two-core box; the drain itself is bounded by GPUPLAN_DRAIN_S


class Drained:
    def __init__(self, fake: FakeSlack, tmp_path: Path, drain_s: float) -> None:
        self.fake = fake
        env = {**os.environ, "SLACK_SIGNING_SECRET": SECRET, "SLACK_BOT_TOKEN": "xoxb-drain",
               "SLACK_API_URL": fake.base_url, "GPUPLAN_STATE_DIR": str(tmp_path / "state"),
               "GPUPLAN_DRAIN_S": str(drain_s)}  # fmt: skip
        env.pop("GPUPLAN_STATE_URL", None)
        self.bot = BotProcess(env)
        self.http = aiohttp.ClientSession()

    async def post(self, body: str, content_type: str) -> tuple[int, str, dict[str, str]]:
        headers = {**sign(body, SECRET), "Content-Type": content_type}
        url = f"{self.bot.base}{EVENTS_PATH}"
        async with self.http.post(url, data=body, headers=headers) as response:
            return response.status, await response.text(), dict(response.headers)

    async def slash(self, trigger: str) -> tuple[int, str, dict[str, str]]:
        body = urlencode({"command": "/gpuplan", "text": "7B LoRA on a 4090", "team_id": TEAM_ID,
                          "channel_id": CHANNEL, "user_id": f"U{trigger}", "trigger_id": trigger,
                          "response_url": self.fake.response_url(trigger)})  # fmt: skip
        return await self.post(body, "application/x-www-form-urlencoded")

    async def mention(self, event_id: str) -> tuple[int, str, dict[str, str]]:
        event = {"type": "app_mention", "ts": "1700000000.000900", "channel": CHANNEL,
                 "user": "U0ANA", "text": f"<@{BOT_USER_ID}> 13B QLoRA"}  # fmt: skip
        body = {"type": "event_callback", "team_id": TEAM_ID, "event_id": event_id,
                "api_app_id": "A0001", "event": event}  # fmt: skip
        return await self.post(json.dumps(body), "application/json")

    async def terminate(self) -> None:
        """SIGTERM, then wait until the process says it is draining."""
        self.bot.process.send_signal(signal.SIGTERM)
        line = await asyncio.to_thread(self.bot.process.stdout.readline)  # type: ignore[union-attr]
        assert "SIGTERM: draining" in line, line

    async def exit(self) -> tuple[int, str]:
        _, err = await asyncio.to_thread(self.bot.process.communicate, timeout=EXIT_WAIT_S)
        return self.bot.process.returncode, err

    def answered(self) -> list[str]:
        return sorted(url for url, _ in self.fake.responses)


@pytest_asyncio.fixture
async def fake() -> AsyncIterator[FakeSlack]:
    fake = await FakeSlack().start()
    fake.hold = asyncio.Event()
    try:
        yield fake
    finally:
        fake.hold.set()
        await fake.stop()


async def test_sigterm_after_15_acknowledged_questions_answers_all_15(
    fake: FakeSlack, tmp_path: Path
) -> None:
    drained = Drained(fake, tmp_path, drain_s=20)
    try:
        triggers = [f"q{n:02d}" for n in range(15)]
        acks = await asyncio.gather(*(drained.slash(trigger) for trigger in triggers))
        assert all(
            status == 200 and json.loads(text)["text"] == ACK_TEXT for status, text, _ in acks
        )
        await drained.terminate()
        # Draining: an event is turned away for Slack to retry elsewhere; a slash command, which
        # Slack never retries, is still acked and answered.
        status, _, headers = await drained.mention("EvDrain")
        assert status == 503 and headers["Retry-After"].isdigit()
        status, text, _ = await drained.slash("late")
        assert status == 200 and json.loads(text)["text"] == ACK_TEXT
        assert fake.responses == []  # every answer still on its way
        fake.hold.set()  # type: ignore[union-attr]
        code, err = await drained.exit()
    finally:
        await drained.http.close()
    assert code == 0, err
    assert drained.answered() == sorted([*triggers, "late"])
    assert all(body["response_type"] == "in_channel" for _, body in fake.responses)
    assert "Traceback" not in err and "not answered" not in err


async def test_answers_past_the_drain_budget_are_logged_with_their_thread(
    fake: FakeSlack, tmp_path: Path
) -> None:
    drained = Drained(fake, tmp_path, drain_s=0.3)  # the held answers never finish: any budget
    try:
        for trigger in ("s1", "s2"):
            assert (await drained.slash(trigger))[0] == 200
        await drained.terminate()
        code, err = await drained.exit()  # the held answers never get through
    finally:
        await drained.http.close()
    assert code == 0, err
    for trigger in ("s1", "s2"):
        assert f"slack/{TEAM_ID}/{CHANNEL}/slash-{trigger}: not answered before shutdown" in err
    assert "Traceback" not in err


async def test_socket_mode_disconnects_then_finishes_what_it_acknowledged(
    fake: FakeSlack, tmp_path: Path
) -> None:
    env = {**os.environ, "SLACK_APP_TOKEN": "xapp-drain", "SLACK_BOT_TOKEN": "xoxb-drain",
           "SLACK_API_URL": fake.base_url,
           "GPUPLAN_STATE_DIR": str(tmp_path / "state")}  # fmt: skip
    env.pop("GPUPLAN_STATE_URL", None)
    command = [sys.executable, "-m", "adapters.cli", "serve", "slack", "--socket"]
    bot = subprocess.Popen(
        command, env=env, cwd=REPO_ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True,
    )  # fmt: skip
    assert bot.stdout is not None
    try:
        first = await asyncio.to_thread(bot.stdout.readline)
        assert "connected to Slack over Socket Mode" in first, first
        command_payload = {"command": "/gpuplan", "text": "7B LoRA", "team_id": TEAM_ID,
                           "channel_id": CHANNEL, "user_id": "U0ANA", "trigger_id": "sock.1",
                           "response_url": fake.response_url("sock.1")}  # fmt: skip
        await fake.push_envelope({"envelope_id": "env-1", "type": "slash_commands",
                                  "accepts_response_payload": True,
                                  "payload": command_payload})  # fmt: skip
        await fake.wait_for(lambda: fake.socket_acks, timeout_s=EXIT_WAIT_S)
        bot.send_signal(signal.SIGTERM)
        await fake.wait_for(lambda: fake.socket_connections == 0, timeout_s=EXIT_WAIT_S)
        assert fake.responses == []  # disconnected with the answer still on its way
        fake.hold.set()  # type: ignore[union-attr]
        _, err = await asyncio.to_thread(bot.communicate, timeout=EXIT_WAIT_S)
    finally:
        if bot.poll() is None:
            bot.kill()
    assert bot.returncode == 0, err
    assert [url for url, _ in fake.responses] == ["sock.1"]
    assert "Traceback" not in err
