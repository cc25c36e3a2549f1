"""The last input holes: JSON nested 1,000 deep or with an integer of thousands of digits gets a
clear sentence (never a traceback), and a Slack config.json bigger than one network read is read
whole."""

from __future__ import annotations

import json
import logging

import pytest

from bot.conversation import Conversation
from bot.state.threads import MemoryStore
from bot.threads import ThreadKey
from tests.fakes.slack_api import BOT_USER_ID, FakeSlack
from tests.test_config_questions import TINY
from tests.test_slack_app import Bot, _wire

KEY = ThreadKey(platform="test", thread="limits")


@pytest.mark.parametrize(
    ("pasted", "said"),
    [
        ('{"a": ' + "[" * 1000 + "]" * 1000 + "} lora", "nests deeper than 64 levels"),
        ('{"hidden_size": ' + "7" * 4400 + "} lora", "a number 4,400 digits long"),
        ('{"hidden_size": 1.' + "5" * 500 + "} lora", "a number 502 characters long"),
    ],
)
def test_hostile_json_gets_a_sentence_not_a_traceback(
    pasted: str, said: str, caplog: pytest.LogCaptureFixture
) -> None:
    conversation = Conversation(MemoryStore(), limit_rate=False)
    with caplog.at_level(logging.WARNING):
        reply = conversation.handle(KEY, pasted)
    assert reply.kind == "error" and said in reply.body
    assert not [record for record in caplog.records if record.exc_info]


async def test_a_slack_config_bigger_than_one_network_read_is_read_whole(slack: FakeSlack) -> None:
    # A classifier's config.json: the same model, with a label map of ~150 kB.
    big = {**TINY, "id2label": {str(n): f"LABEL_{n:06d}" for n in range(7000)}}
    content = json.dumps(big, indent=2).encode()
    assert 100_000 < len(content) < 200_000
    config = slack.share_file("config.json", content)
    async with Bot(slack, Conversation(limit_rate=False)) as bot:
        await bot.event({"type": "app_mention", "text": f"<@{BOT_USER_ID}> qlora 4k ctx",
                         "ts": "1700000500.000100", "files": [config]})  # fmt: skip
        await slack.wait_for(lambda: slack.posts())
    assert "tiny-llama-3b" in _wire(slack.posts())
    assert "does not parse" not in _wire(slack.posts())


def test_the_terminal_refuses_hostile_json_lines_in_a_sentence(tmp_path, capsys) -> None:
    from adapters.cli import main

    lines = tmp_path / "jobs.jsonl"
    deep = "[" * 1000 + "]" * 1000
    lines.write_text(f'{{"id": 1, "spec": {deep}}}\n{{"id": 2, "spec": {"9" * 5000}}}\n')
    assert main(["estimate", "--jsonl", str(lines)]) == 0
    errors = [json.loads(line)["error"] for line in capsys.readouterr().out.splitlines()]
    assert errors == [
        "not JSON (it nests deeper than 64 levels)",
        "not JSON (it has a number 5,000 digits long)",
    ]
