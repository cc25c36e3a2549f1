"""Where the Slack bot can and cannot act: DMs are answered like mentions, and a channel Slack will
not let it post in is logged once with the fix and, for a button press, told to the asker."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

import pytest

from tests.fakes.slack_api import BOT_USER_ID, FakeSlack
from tests.test_slack_app import CHANNEL, QUESTION, Bot, Recording, _button, _wire

DM = "D0ANA"


async def _eventually(predicate: Callable[[], bool], timeout_s: float = 10.0) -> None:
    """For what the fake cannot signal (a log line written after the refused post)."""
    async with asyncio.timeout(timeout_s):
        while not predicate():
            await asyncio.sleep(0.01)


def _dm(text: str, ts: str, **extra: str) -> dict[str, str]:
    return {"type": "message", "channel_type": "im", "channel": DM, "text": text, "ts": ts, **extra}


async def test_a_dm_is_answered_in_a_thread_and_its_follow_ups_replan(slack: FakeSlack) -> None:
    conversation = Recording()
    async with Bot(slack, conversation) as bot:
        assert (await bot.event(_dm(QUESTION, ts="50.1")))[0] == 200
        await slack.wait_for(lambda: slack.posts())
        first = slack.posts()
        assert {(p["channel"], p["thread_ts"]) for p in first} == {(DM, "50.1")}
        await bot.event(_dm("what if 8k ctx?", ts="50.2", thread_ts="50.1"))
        await slack.wait_for(lambda: len(slack.posts()) > len(first))
    assert "8192" in _wire(slack.posts()[len(first) :])
    assert conversation.texts == [QUESTION, "what if 8k ctx?"]


async def test_a_dm_that_mentions_the_bot_is_still_answered_once(slack: FakeSlack) -> None:
    conversation = Recording()  # Slack sends no app_mention for a DM, so message.im is the only one
    async with Bot(slack, conversation) as bot:
        await bot.event(_dm(f"<@{BOT_USER_ID}> {QUESTION}", ts="51.1"))
        await bot.event(_dm("ok thanks", ts="51.2", bot_id="B0BOT"))  # our own answers are not
        await slack.wait_for(lambda: slack.posts())
    assert conversation.texts == [QUESTION]


async def test_a_button_in_a_private_channel_without_the_bot_says_invite_it(
    slack: FakeSlack, caplog: pytest.LogCaptureFixture
) -> None:
    async with Bot(slack, Recording()) as bot:
        await bot.slash(QUESTION, trigger="6.6.6")  # works anywhere: response_url needs no member
        await slack.wait_for(lambda: slack.responses)
        slack.channel_errors[CHANNEL] = "channel_not_found"
        button = _button(slack.responses[-1][1], "8k context")
        answered = len(slack.responses)
        with caplog.at_level(logging.WARNING):
            for message_ts in ("60.1", "60.2"):
                await bot.click(
                    button, {"message_ts": message_ts, "is_ephemeral": False}, trigger=message_ts
                )
            await slack.wait_for(lambda: len(slack.responses) >= answered + 2)
    notices = [body for _, body in slack.responses[answered:]]
    assert all(n["response_type"] == "ephemeral" for n in notices)
    assert "/invite @gpuplan" in notices[0]["text"] and "private" in notices[0]["text"]
    logged = [r for r in caplog.records if "channel_not_found" in r.getMessage()]
    assert len(logged) == 1 and "/invite @gpuplan" in logged[0].getMessage()
    assert not [r for r in caplog.records if r.exc_info]


@pytest.mark.parametrize(
    ("error", "where", "fix"),
    [
        ("not_in_channel", CHANNEL, "/invite @gpuplan"),
        ("restricted_action", CHANNEL, "Posting permissions"),
        ("missing_scope", DM, "reinstall"),  # Slack names the scope: "needed": "chat:write"
    ],
)
async def test_an_answer_slack_refuses_is_logged_once_with_the_fix_and_no_traceback(
    slack: FakeSlack, caplog: pytest.LogCaptureFixture, error: str, where: str, fix: str
) -> None:
    slack.channel_errors[where] = error
    with caplog.at_level(logging.WARNING):
        async with Bot(slack, Recording()) as bot:
            for ts in ("70.1", "70.2"):
                if where == DM:
                    await bot.event(_dm(QUESTION, ts=ts))
                else:
                    await bot.mention(QUESTION, ts=ts)
            await slack.wait_for(lambda: len(slack.posts()) >= 2)
            await _eventually(lambda: any(error in r.getMessage() for r in caplog.records))
    (logged,) = [r for r in caplog.records if error in r.getMessage()]
    assert fix in logged.getMessage() and where in logged.getMessage()
    if error == "missing_scope":
        assert "(chat:write)" in logged.getMessage()
    assert not [r for r in caplog.records if r.exc_info]
