"""Socket Mode: the app built from the environment connects through a fake apps.connections.open
and a loopback WebSocket, acks envelopes there, and answers like in HTTP mode."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
import pytest_asyncio

from adapters.slack.app import ACK_TEXT
from adapters.slack.serve import build_app_from_env, connect_socket, read_env
from bot.reply import Reply
from bot.threads import ThreadKey
from tests.fakes.slack_api import TEAM_ID, FakeSlack, mention_envelope


class EchoPlanner:
    def handle(self, key: ThreadKey, text: str, user: str = "") -> Reply:
        return Reply(kind="plan", title=f"Plan: {text}", verdict="Fits on 1× RTX 4090")


@pytest_asyncio.fixture
async def fake(monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[FakeSlack]:
    server = await FakeSlack().start()
    monkeypatch.setenv("SLACK_APP_TOKEN", "xapp-test")
    monkeypatch.setenv("SLACK_BOT_TOKEN", "xoxb-test")
    monkeypatch.setenv("SLACK_API_URL", server.base_url.rstrip("/"))
    yield server
    await server.stop()


async def test_socket_mode_handshake_acks_and_answers(fake: FakeSlack) -> None:
    env, missing = read_env(socket=True)
    assert missing == []
    handler = await connect_socket(build_app_from_env(env, EchoPlanner()), env.app_token or "")
    try:
        (opened,) = fake.posts("apps.connections.open")
        assert opened["_auth"] == "Bearer xapp-test"
        await fake.push_envelope(
            {
                "envelope_id": "env-1",
                "type": "slash_commands",
                "accepts_response_payload": True,
                "payload": {
                    "command": "/gpuplan",
                    "text": "13B QLoRA",
                    "team_id": TEAM_ID,
                    "channel_id": "C0SOCK",
                    "user_id": "U0ANA",
                    "trigger_id": "3.3.3",
                    "response_url": fake.response_url("commands/socket"),
                },
            }
        )
        await fake.wait_for(lambda: fake.socket_acks and fake.responses)
        assert fake.socket_acks[0] == {
            "envelope_id": "env-1",
            "payload": {"response_type": "ephemeral", "text": ACK_TEXT},
        }
        assert fake.responses[0][1]["text"] == "Plan: 13B QLoRA: Fits on 1× RTX 4090"
        await fake.push_envelope(mention_envelope("env-2", "EvSOCK", "7B LoRA", ts="42.1"))
        await fake.wait_for(lambda: fake.posts())
        (post,) = fake.posts()
        assert post["thread_ts"] == "42.1" and post["text"].startswith("Plan: 7B LoRA")
        assert post["_auth"] == "Bearer xoxb-test"
        assert {ack["envelope_id"] for ack in fake.socket_acks} == {"env-1", "env-2"}
    finally:
        await handler.close_async()


async def test_a_socket_envelope_of_an_odd_shape_is_acked_and_logged_once(
    fake: FakeSlack, caplog: pytest.LogCaptureFixture
) -> None:
    env, _ = read_env(socket=True)
    handler = await connect_socket(build_app_from_env(env, EchoPlanner()), env.app_token or "")
    try:
        odd = mention_envelope("env-odd", "EvODD", "7B LoRA", ts="43.1")
        odd["payload"]["event"] = "app_mention"
        await fake.push_envelope(odd)
        await fake.push_envelope(mention_envelope("env-ok", "EvOK", "7B LoRA", ts="44.1"))
        await fake.wait_for(lambda: fake.posts() and len(fake.socket_acks) == 2)
    finally:
        await handler.close_async()
    assert {ack["envelope_id"] for ack in fake.socket_acks} == {"env-odd", "env-ok"}
    assert [post["thread_ts"] for post in fake.posts()] == ["44.1"]
    (line,) = [r.getMessage() for r in caplog.records if r.name == "adapters.slack.ingress"]
    assert line.startswith("slack socket ignored: event_callback: event input should be")
