"""What reaches the Slack bot from outside, sent to the real Bolt app on loopback: junk gets a 401
before anything parses it, signed junk a 400 or a logged 200, a replay one answer, and failed
deliveries a log line with the thread key (never a token or a response_url)."""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Callable
from typing import Any
from urllib.parse import urlencode

import pytest

from adapters.rejections import LINES_AT_ONCE
from adapters.slack import delivery, limits
from adapters.slack.app import ACK_TEXT, AUTHORIZE_ERROR_TEXT
from bot.backoff import Backoff
from tests.fakes.slack_api import BOT_USER_ID, TEAM_ID, FakeSlack
from tests.test_slack_app import (
    CHANNEL,
    QUESTION,
    SECRET,
    Bot,
    GatedConversation,
)

INGRESS_LOGGER = "adapters.slack.ingress"
DELIVERY_LOGGER = "adapters.slack.delivery"
JSON = "application/json"
FORM = "application/x-www-form-urlencoded"
DEEP_ARRAY = "[" * 100_000 + "]" * 100_000
JUNK = [
    ("null", JSON),
    ("[]", JSON),
    ("{", JSON),
    (DEEP_ARRAY, JSON),
    ("payload=%7B", FORM),
    ("payload=" + "%5B" * 50_000, FORM),
]


def _lines(caplog: pytest.LogCaptureFixture, logger: str) -> list[str]:
    records = [record for record in caplog.records if record.name == logger]
    assert all(record.exc_info is None for record in records), "a traceback was logged"
    lines = [record.getMessage() for record in records]
    assert all("\n" not in line for line in lines)
    return lines


async def _until(predicate: Callable[[], Any], timeout_s: float = 20.0) -> None:
    """Poll for what only the log shows (the fake sees nothing after the last refused try)."""
    async with asyncio.timeout(timeout_s):
        while not predicate():
            await asyncio.sleep(0.01)


async def _unsigned(bot: Bot, body: str | bytes, content_type: str, **headers: str) -> int:
    async with bot.http.post(
        bot.url, data=body, headers={"Content-Type": content_type, **headers}
    ) as response:
        return response.status


def _open_gate() -> GatedConversation:
    conversation = GatedConversation()
    conversation.gate.set()
    return conversation


async def _still_answers(bot: Bot, slack: FakeSlack, slow: GatedConversation) -> None:
    """A good command afterwards gets its one answer: the app was fine all along."""
    status, body = await bot.slash(QUESTION, trigger="good")
    assert status == 200 and json.loads(body)["text"] == ACK_TEXT
    await slack.wait_for(lambda: slack.responses)
    assert [url for url, _ in slack.responses] == ["commands/good"]
    assert [key.thread for key in slow.keys] == ["slash-good"]


@pytest.mark.parametrize(("body", "content_type"), JUNK, ids=lambda v: str(v)[:12])
async def test_unsigned_junk_gets_401_and_one_log_line(
    slack: FakeSlack, caplog: pytest.LogCaptureFixture, body: str, content_type: str
) -> None:
    slow = _open_gate()
    async with Bot(slack, slow) as bot:
        assert await _unsigned(bot, body, content_type) == 401
        await _still_answers(bot, slack, slow)
    (line,) = _lines(caplog, INGRESS_LOGGER)
    assert line.startswith("slack 401 unsigned: ") and "from 127.0.0.1" in line


@pytest.mark.parametrize(
    "headers",
    [
        {"X-Slack-Request-Timestamp": "soon", "X-Slack-Signature": "v0=00"},
        {"X-Slack-Request-Timestamp": "1e9", "X-Slack-Signature": "v0=00"},
        {"X-Slack-Request-Timestamp": str(int(time.time()))},
        {"X-Slack-Signature": "v0=00"},
    ],
    ids=["words", "exponent", "no-signature", "no-timestamp"],
)
async def test_a_malformed_or_missing_signature_header_gets_401(
    slack: FakeSlack, caplog: pytest.LogCaptureFixture, headers: dict[str, str]
) -> None:
    async with Bot(slack, _open_gate()) as bot:
        assert await _unsigned(bot, "{}", JSON, **headers) == 401
    assert _lines(caplog, INGRESS_LOGGER)[0].startswith("slack 401 unsigned")


async def test_a_wrong_or_stale_signature_says_which(
    slack: FakeSlack, caplog: pytest.LogCaptureFixture
) -> None:
    async with Bot(slack, _open_gate()) as bot:
        assert (await bot.post("{}", JSON, secret="wrong"))[0] == 401
        assert (await bot.post("{}", JSON, timestamp=int(time.time()) - 600))[0] == 401
    bad, stale = _lines(caplog, INGRESS_LOGGER)
    assert bad.startswith("slack 401 bad signature: the signature does not match")
    assert stale.startswith("slack 401 stale signature: signed 60")  # 600 s, or 601


async def test_a_burst_of_junk_is_logged_a_few_lines_then_counted(
    slack: FakeSlack, caplog: pytest.LogCaptureFixture
) -> None:
    async with Bot(slack, _open_gate()) as bot:
        statuses = [await _unsigned(bot, "null", JSON) for _ in range(100)]
    assert statuses == [401] * 100
    lines = _lines(caplog, INGRESS_LOGGER)
    assert len(lines) == LINES_AT_ONCE  # the other 95 are counted, for the next line to report
    assert sum(len(line) for line in lines) < 1000


async def test_the_rejection_log_reports_what_it_did_not_log() -> None:
    from adapters.rejections import RejectionLog

    now = [0.0]
    logger = logging.getLogger("test.rejections")
    lines: list[str] = []
    handler = logging.Handler()
    handler.emit = lambda record: lines.append(record.getMessage())  # type: ignore[method-assign]
    logger.addHandler(handler)
    try:
        log = RejectionLog(logger, lines_at_once=2, seconds_per_line=10, clock=lambda: now[0])
        for _ in range(7):
            log.reject("slack 401 unsigned", "junk")
        log.reject("slack 413 too large", "big")  # each reason has its own allowance
        now[0] = 10.0
        log.reject("slack 401 unsigned", "junk")
    finally:
        logger.removeHandler(handler)
    assert lines == [
        "slack 401 unsigned: junk",
        "slack 401 unsigned: junk",
        "slack 413 too large: big",
        "slack 401 unsigned: junk (+5 more like it not logged)",
    ]


async def test_an_oversized_body_gets_413_signed_or_not(
    slack: FakeSlack, caplog: pytest.LogCaptureFixture
) -> None:
    big = "x" * (limits.REQUEST_MAX_BYTES + 1)

    async def chunks() -> Any:
        for _ in range(3):
            yield b"y" * limits.REQUEST_MAX_BYTES

    slow = _open_gate()
    async with Bot(slack, slow) as bot:
        assert (await bot.post(big, FORM))[0] == 413
        assert await _unsigned(bot, big, JSON) == 413
        assert await _unsigned(bot, chunks(), JSON) == 413  # no Content-Length to go by
        await _still_answers(bot, slack, slow)
    lines = _lines(caplog, INGRESS_LOGGER)
    assert [line.split(":")[0] for line in lines] == ["slack 413 too large"] * 3


@pytest.mark.parametrize(
    ("body", "content_type"),
    [*JUNK, (b"\xff\xfe{}", JSON), ('"event_callback"', JSON)],
    ids=lambda v: str(v)[:12],
)
async def test_signed_but_unreadable_gets_400(
    slack: FakeSlack, caplog: pytest.LogCaptureFixture, body: str | bytes, content_type: str
) -> None:
    slow = _open_gate()
    async with Bot(slack, slow) as bot:
        raw = body if isinstance(body, bytes) else body.encode()
        async with bot.http.post(
            bot.url,
            data=raw,
            headers={**_sign_bytes(raw), "Content-Type": content_type},
        ) as response:
            assert response.status == 400
        await _still_answers(bot, slack, slow)
    (line,) = _lines(caplog, INGRESS_LOGGER)
    assert line.startswith("slack 400 unreadable: signed but not readable")


def _sign_bytes(raw: bytes) -> dict[str, str]:
    import hashlib
    import hmac

    ts = str(int(time.time()))
    digest = hmac.new(SECRET.encode(), f"v0:{ts}:".encode() + raw, hashlib.sha256).hexdigest()
    return {"X-Slack-Request-Timestamp": ts, "X-Slack-Signature": f"v0={digest}"}


def _callback(**fields: Any) -> str:
    event = {"type": "app_mention", "ts": "1.1", "channel": CHANNEL, "text": f"<@{BOT_USER_ID}> hi"}
    return json.dumps(
        {"type": "event_callback", "team_id": TEAM_ID, "event_id": "EvX", "event": event, **fields}
    )


def _form(**fields: str) -> str:
    command = {"command": "/gpuplan", "text": "13B", "team_id": TEAM_ID, "channel_id": CHANNEL,
               "user_id": "U1", "trigger_id": "1.9", "response_url": "http://x/r"}  # fmt: skip
    return urlencode({key: value for key, value in {**command, **fields}.items() if value})


def _click(**fields: Any) -> str:
    payload = {"type": "block_actions", "trigger_id": "2.9", "user": {"id": "U1"},
               "team": {"id": TEAM_ID}, "actions": [{"action_id": "whatif:w", "value": "8k ctx"}],
               **fields}  # fmt: skip
    return urlencode({"payload": json.dumps(payload)})


@pytest.mark.parametrize(
    ("body", "content_type", "why"),
    [
        (_callback(event_id=["Ev1", "Ev2"]), JSON, "event_callback: event_id input should be"),
        (_callback(event_id=None), JSON, "event_callback: event_id input should be"),
        (_callback(event="app_mention"), JSON, "event_callback: event input should be"),
        (_callback(event={"type": "app_mention", "ts": "1.1"}), JSON, "event.channel field req"),
        (
            _callback(event={"type": "message", "channel": 5, "ts": "1"}),
            JSON,
            "event.channel input",
        ),
        (_callback(event={"type": "reaction_added"}), JSON, "ignored event type 'reaction_added'"),
        (_callback(event=[1]), JSON, "event_callback: event input should be"),
        (json.dumps({"type": "surprise"}), JSON, "unexpected request type 'surprise'"),
        (json.dumps({"type": ["event_callback"]}), JSON, "unexpected request type ['event_cal"),
        (json.dumps({"type": "url_verification"}), JSON, "url_verification: challenge field"),
        (_form(trigger_id=""), FORM, "SlashCommand: trigger_id field required"),
        (_form(response_url=""), FORM, "SlashCommand: response_url field required"),
        ("text=hello", FORM, "unexpected request type None"),
        (_click(actions=[]), FORM, "block_actions: actions list should have at least 1"),
        (_click(actions="8k ctx"), FORM, "block_actions: actions input should be a valid list"),
        (_click(user="U1"), FORM, "block_actions: user input should be"),
        (_click(type="view_submission"), FORM, "unexpected request type 'view_submission'"),
        (_click(actions=[{"action_id": "approve"}]), FORM, "actions.0.action_id string should"),
        (_form(command="gpuplan"), FORM, "SlashCommand: command string should match pattern"),
    ],
    ids=lambda v: str(v)[:40],
)
async def test_signed_envelopes_of_an_unexpected_shape_get_200_and_a_log_line(
    slack: FakeSlack, caplog: pytest.LogCaptureFixture, body: str, content_type: str, why: str
) -> None:
    slow = _open_gate()
    async with Bot(slack, slow) as bot:
        assert await bot.post(body, content_type) == (200, "")
        await _still_answers(bot, slack, slow)
    assert slack.posts() == []
    (line,) = _lines(caplog, INGRESS_LOGGER)
    assert line.startswith("slack 200 ignored: ") and why in line, line
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR and not _gc_noise(r)]


def _gc_noise(record: logging.LogRecord) -> bool:
    """asyncio's "Task was destroyed but it is pending!" when the garbage collector happens to
    reclaim an earlier test's finished aiohttp server during this one: not this request's doing."""
    return record.name == "asyncio" and record.getMessage().startswith("Task was destroyed")


async def test_an_event_the_bot_acts_on_is_answered_once_in_its_thread(slack: FakeSlack) -> None:
    slow = _open_gate()
    async with Bot(slack, slow) as bot:
        assert await bot.post(_callback(), JSON) == (200, "")
        assert await bot.post(_callback(), JSON) == (200, "")  # the same event_id again
        await slack.wait_for(lambda: slack.posts())
    assert [post["thread_ts"] for post in slack.posts()] == ["1.1"]


@pytest.fixture
def quick_retries(monkeypatch: pytest.MonkeyPatch) -> None:
    """Slack calls retried as often as in production, without its real waits between tries
    (tests/test_bot_backoff.py covers the waits)."""
    monkeypatch.setattr(delivery, "DELIVERY_BACKOFF", Backoff(0.001, 0.002, 10.0))


@pytest.mark.parametrize(
    ("where", "thread", "why"),
    [("response_url", "slash-2", "HTTP 500"), ("chat.postMessage", "2.0", "HTTP 500 fatal_error")],
)
async def test_delivery_500s_are_retried_then_logged_with_the_thread_key(
    slack: FakeSlack,
    caplog: pytest.LogCaptureFixture,
    quick_retries: None,
    where: str,
    thread: str,
    why: str,
) -> None:
    def answered() -> list[Any]:
        return slack.responses if where == "response_url" else slack.posts()

    async def ask(bot: Bot, n: str) -> None:
        if where == "response_url":
            await bot.slash(QUESTION, trigger=n)
        else:
            await bot.mention(QUESTION, ts=f"{n}.0")

    slack.fail_next[where] = 2
    async with Bot(slack, _open_gate()) as bot:
        await ask(bot, "1")
        await slack.wait_for(answered, timeout_s=10)
        assert _lines(caplog, DELIVERY_LOGGER) == []
        slack.fail_next[where] = 100
        await ask(bot, "2")
        await _until(lambda: _lines(caplog, DELIVERY_LOGGER))
    assert len(answered()) == 1
    assert len([m for m, _ in slack.calls if m == f"{where}#500"]) == 2 + 4  # 3 retries each
    (line,) = _lines(caplog, DELIVERY_LOGGER)
    assert (
        line == f"slack/{TEAM_ID}/{CHANNEL}/{thread}: answer lost at {where}, part 1 of 1 ({why})"
    )
    assert "xoxb" not in caplog.text and "/response/" not in caplog.text


async def test_a_brief_auth_test_500_does_not_show_the_reinstall_text(
    slack: FakeSlack, quick_retries: None
) -> None:
    slack.fail_next["auth.test"] = 1
    async with Bot(slack, _open_gate()) as bot:
        status, body = await bot.slash(QUESTION, trigger="a.1")
        assert status == 200 and json.loads(body)["text"] == ACK_TEXT
        await slack.wait_for(lambda: slack.responses)


async def test_an_auth_test_outage_says_so_plainly(slack: FakeSlack, quick_retries: None) -> None:
    slack.fail_next["auth.test"] = 100
    async with Bot(slack, _open_gate()) as bot:
        status, body = await bot.slash(QUESTION, trigger="a.2")
    assert status == 200 and AUTHORIZE_ERROR_TEXT in body and "reinstall" not in body
    assert slack.responses == []
