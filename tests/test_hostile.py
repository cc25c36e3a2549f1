"""The hostile-input suite: every odd paste gets a clear, short answer — no traceback, no hang,
nothing echoed unescaped, and the thread's job untouched."""

from __future__ import annotations

import json

import pytest

from bot.conversation import Conversation
from bot.reply import Reply
from bot.threads import ThreadKey
from planner import parse
from tests.hostile_inputs import HOSTILE_INPUTS

SEED = "13B QLoRA, 4k ctx, 20M tokens x3"


def _all_text(reply: Reply) -> str:
    return json.dumps(reply.model_dump(), ensure_ascii=False)


@pytest.mark.parametrize("name", sorted(HOSTILE_INPUTS))
def test_parser_never_raises(name: str) -> None:
    result = parse(HOSTILE_INPUTS[name])
    assert result.spec is not None or result.clarify or result.error or result.fields is not None


@pytest.mark.parametrize("name", sorted(HOSTILE_INPUTS))
def test_new_question_gets_a_clear_short_answer(name: str) -> None:
    reply = Conversation().handle(ThreadKey(platform="test", thread=name), HOSTILE_INPUTS[name])
    assert reply.kind in ("plan", "clarify", "error", "help")
    text = _all_text(reply)
    assert "Traceback" not in text
    assert len(reply.body) < 2_000
    if reply.kind != "plan":
        assert reply.body or reply.title


@pytest.mark.parametrize("name", sorted(HOSTILE_INPUTS))
def test_hostile_followup_leaves_the_thread_job_untouched(name: str) -> None:
    conversation = Conversation()
    key = ThreadKey(platform="test", channel="c", thread=f"job-{name}")
    first = conversation.handle(key, SEED)
    assert first.kind == "plan"
    conversation.handle(key, HOSTILE_INPUTS[name])
    after = conversation.handle(key, "what if 8k ctx?")
    assert after.kind == "plan"
    # The what-if still applies to the seed job: 4k → 8k, whatever the hostile message was.
    assert any("4096" in change and "8192" in change for change in after.changes), after.changes


@pytest.mark.parametrize("name", ["slack_mentions", "discord_mentions", "html", "control_chars"])
def test_rendered_payloads_defuse_mentions(name: str) -> None:
    from adapters.discord.render import render_reply as render_discord
    from adapters.slack.render import render_reply as render_slack

    reply = Conversation().handle(ThreadKey(platform="test", thread=name), HOSTILE_INPUTS[name])
    for payload in render_slack(reply):
        wire = json.dumps(payload)
        for raw in ("<!everyone>", "<!channel>", "<!here>", "<@U123456>", "<https://evil"):
            assert raw not in wire
        assert "\\u0000" not in wire
    for payload in render_discord(reply):
        assert payload["allowed_mentions"] == {"parse": []}
