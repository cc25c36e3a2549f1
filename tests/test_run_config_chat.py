"""Run configs in a thread: "config axolotl" and the Get-the-config button attach the files
(bot/run_configs.py), on the console, in Slack (files.uploadV2) and in Discord (attachments)."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import yaml

from adapters.discord.client import GpuplanClient
from bot.conversation import Conversation
from bot.patches import Button
from bot.reply import Reply, ReplyFile
from bot.run_configs import CONFIG_BUTTON_ID, read_config_request
from bot.state.threads import MemoryStore
from bot.threads import ThreadKey
from tests.fakes.discord_api import FakeDiscord
from tests.fakes.slack_api import FakeSlack
from tests.test_slack_app import CHANNEL, Bot, _button

QUESTION = "llama 3.1 8b qlora 4k ctx on a 4090, 20M tokens"
KEY = ThreadKey(platform="console", thread="configs")


def conversation() -> Conversation:
    return Conversation(MemoryStore(), limit_rate=False)


def test_config_requests_are_read_in_english_and_chinese() -> None:
    for text, stack in [
        ("config", None),
        ("config axolotl", "axolotl"),
        ("/gpuplan config ms-swift", "ms-swift"),
        ("get the config for TRL", "trl"),
        ("配置 axolotl", "axolotl"),
        ("axolotl 的配置", "axolotl"),
        ("生成配置", None),
    ]:
        request = read_config_request(text)
        assert request is not None and request.stack == stack, text
    for text in ("config.json qlora 4k", "config 8b qlora", "13B QLoRA config please", "configure"):
        assert read_config_request(text) is None, text


def test_a_thread_gets_its_plan_as_files_in_the_stack_asked() -> None:
    chat = conversation()
    answer = chat.respond(KEY, QUESTION).reply
    assert CONFIG_BUTTON_ID in [button.id for button in answer.whatifs]
    reply = chat.respond(KEY, "config axolotl").reply
    assert [file.name for file in reply.files] == ["axolotl.yaml", "sky.yaml", "README.txt"]
    axolotl = yaml.safe_load(reply.files[0].text)
    assert axolotl["sequence_len"] == 4096 and axolotl["adapter"] == "qlora"
    pressed = chat.respond(KEY, Button(CONFIG_BUTTON_ID, "config")).reply  # the job's own stack
    assert [file.name for file in pressed.files] == ["train.yaml", "sky.yaml", "README.txt"]
    # Asking for files leaves the thread's job as it was: a what-if still applies to it.
    changed = chat.respond(KEY, "what if 8k ctx?")
    assert changed.plan is not None and changed.plan.spec.seq_len == 8192


def test_chinese_asks_get_a_chinese_answer_and_the_same_files() -> None:
    chat = conversation()
    chat.respond(KEY, QUESTION)
    reply = chat.respond(KEY, "配置 axolotl").reply
    assert reply.language == "zh" and "配置" in reply.title
    assert [file.name for file in reply.files] == ["axolotl.yaml", "sky.yaml", "README.txt"]


def test_no_job_no_fit_or_no_such_stack_gets_a_reason_and_no_files() -> None:
    chat = conversation()
    assert not chat.respond(KEY, "config axolotl").reply.files  # no job yet
    chat.respond(KEY, "llama 3.1 70b full fine-tune on a 4090")
    misfit = chat.respond(KEY, "config").reply
    assert misfit.kind == "error" and "does not fit" in misfit.body and not misfit.files
    chat.respond(KEY, "new " + QUESTION)
    unknown = chat.respond(KEY, "config litgpt").reply
    assert "nearest stack it writes is torchtune" in unknown.body and not unknown.files


def test_console_chat_writes_the_files_next_to_the_user(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "adapters.cli", "chat", "--thread", "t9"],
        input=f"{QUESTION}\nconfig axolotl\n",
        env={**os.environ, "GPUPLAN_STATE_DIR": str(tmp_path / "state")},
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    folder = tmp_path / "gpuplan-config-t9"
    assert sorted(path.name for path in folder.iterdir()) == [
        "README.txt",
        "axolotl.yaml",
        "sky.yaml",
    ]
    assert "gpuplan-config-t9/" in done.stderr


async def test_slack_attaches_the_files_into_the_thread(slack: FakeSlack) -> None:
    root = "1700000050.000100"
    async with Bot(slack, conversation()) as bot:
        await bot.mention(QUESTION, ts=root)
        await slack.wait_for(lambda: slack.posts())
        await bot.mention("config axolotl", ts="1700000050.000200", thread_ts=root)
        await slack.wait_for(lambda: slack.posts("files.completeUploadExternal"))
    assert sorted(slack.upload_names.values()) == ["README.txt", "axolotl.yaml", "sky.yaml"]
    by_name = {slack.upload_names[file_id]: data for file_id, data in slack.uploaded.items()}
    assert yaml.safe_load(by_name["axolotl.yaml"])["load_in_4bit"] is True
    (complete,) = slack.posts("files.completeUploadExternal")
    assert complete["thread_ts"] == root and complete["channel_id"] == CHANNEL


async def test_slack_says_so_when_files_write_is_not_granted(slack: FakeSlack) -> None:
    slack.granted_scopes.remove("files:write")
    root = "1700000060.000100"
    async with Bot(slack, conversation()) as bot:
        await bot.mention(QUESTION, ts=root)
        await slack.wait_for(lambda: slack.posts())
        await bot.mention("config", ts="1700000060.000200", thread_ts=root)
        await slack.wait_for(
            lambda: any("files:write" in post.get("text", "") for post in slack.posts())
        )
    assert not slack.uploaded


class Attaching:
    """A conversation whose every answer attaches a file."""

    def handle(self, key: ThreadKey, text: str, user: str = "", **_: object) -> Reply:
        return Reply(
            kind="help",
            title="axolotl config",
            body="Attached.",
            files=[ReplyFile(name="axolotl.yaml", text="sequence_len: 4096\n")],
        )


async def test_discord_attaches_the_files_to_the_answer(discord_fake: FakeDiscord) -> None:
    client = GpuplanClient(Attaching(), guild_ready_timeout=0.05, shard_count=1)
    task = asyncio.create_task(client.start("fake-token"))
    await asyncio.wait_for(client.wait_until_ready(), 10)
    await discord_fake.slash({"query": "config axolotl"})
    (edit,) = await discord_fake.wait_for(lambda calls: [c for c in calls if c.method == "PATCH"])
    await client.close()
    await asyncio.wait_for(task, 10)
    assert edit.files == {"axolotl.yaml": b"sequence_len: 4096\n"}
    assert [a["filename"] for a in edit.body["attachments"]] == ["axolotl.yaml"]


async def test_a_private_slack_answer_says_where_to_get_the_files(slack: FakeSlack) -> None:
    async with Bot(slack, Attaching()) as bot:
        await bot.slash("config axolotl private")
        await slack.wait_for(lambda: slack.responses)
    ((_, answer),) = slack.responses
    assert "in a thread" in json.dumps(answer) and not slack.uploaded


async def test_the_get_the_config_button_attaches_the_files_in_slack(slack: FakeSlack) -> None:
    root = "1700000070.000100"
    async with Bot(slack, conversation()) as bot:
        await bot.mention(QUESTION, ts=root)
        await slack.wait_for(lambda: slack.posts())
        button = _button(slack.posts()[-1], "Get the config")
        container = {"message_ts": f"{root}1", "thread_ts": root, "is_ephemeral": False}
        await bot.click(button, container)
        await slack.wait_for(lambda: slack.posts("files.completeUploadExternal"))
    assert sorted(slack.upload_names.values()) == ["README.txt", "sky.yaml", "train.yaml"]
