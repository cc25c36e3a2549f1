"""Reports from real runs through the real surfaces, kept in the state file and read back by
`gpuplan calibration`: an admin turns keeping on, someone asks in a thread, says what the run
peaked at, and the calibration table and its export show that report against our estimate."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import discord
import simcord

from adapters.discord.client import GpuplanClient
from bot.conversation import Conversation
from bot.state.reports import SQLiteReports
from bot.state.settings import SQLiteSettings
from bot.state.threads import SQLiteStore
from tests.fakes.slack_api import TEAM_ID, FakeSlack
from tests.test_slack_app import Bot

REPO_ROOT = Path(__file__).resolve().parents[1]
QUESTION = "llama 3.1 8b qlora on a 4090, 4k ctx"
REPORT = "it actually peaked at 21.3 GiB"


def _conversation(state_dir: Path) -> Conversation:
    """The conversation a bot process runs, on the state file the CLI reads."""
    return Conversation(
        SQLiteStore(state_dir),
        settings=SQLiteSettings(state_dir),
        reports=SQLiteReports(state_dir),
        limit_rate=False,
    )


def _calibration(state_dir: Path, *args: str) -> str:
    env = {**os.environ, "GPUPLAN_STATE_DIR": str(state_dir)}
    done = subprocess.run(
        [sys.executable, "-m", "adapters.cli", "calibration", *args],
        capture_output=True, text=True, env=env, cwd=REPO_ROOT, check=True,
    )  # fmt: skip
    return done.stdout


def _assert_one_kept_report(state_dir: Path, scope: str) -> None:
    (row,) = json.loads(_calibration(state_dir, "--json"))
    assert (row["framework"], row["method"], row["card"], row["reports"]) == (
        "hf", "qlora", "RTX 4090", 1,
    )  # fmt: skip
    assert row["range_held"] == "1/1"
    assert "RTX 4090" in _calibration(state_dir, "--scope", scope)
    exported = state_dir / "rows.jsonl"
    _calibration(state_dir, "--export", str(exported))
    (line,) = exported.read_text(encoding="utf-8").splitlines()
    assert json.loads(line)["truth"]["peak_gib"] == 21.3


async def test_a_slack_thread_report_reaches_gpuplan_calibration(
    slack: FakeSlack, tmp_path: Path
) -> None:
    root = "1700000100.000100"
    async with Bot(slack, _conversation(tmp_path)) as bot:
        # Before an admin turns keeping on, a report re-anchors the thread but is not kept.
        await bot.mention(QUESTION, ts="1700000050.000100")
        await slack.wait_for(lambda: slack.posts())  # the thread is ours once answered
        await bot.event({"type": "message", "text": REPORT, "ts": "1700000051.000100",
                         "thread_ts": "1700000050.000100"})  # fmt: skip
        await slack.wait_for(lambda: len(slack.posts()) >= 2)
        slack.admins.add("U0ANA")
        await bot.slash("reports on", trigger="1")
        await slack.wait_for(lambda: len(slack.responses) == 1)
        answered = len(slack.posts())
        await bot.mention(QUESTION, ts=root)
        await slack.wait_for(lambda: len(slack.posts()) > answered)
        await bot.event({"type": "message", "text": REPORT, "ts": "1700000101.000100",
                         "thread_ts": root})  # fmt: skip
        await slack.wait_for(lambda: len(slack.posts()) >= answered + 2)
    reply = json.dumps(slack.posts()[-1])
    assert "21.3" in reply and slack.posts()[-1]["thread_ts"] == root
    _assert_one_kept_report(tmp_path, f"slack/{TEAM_ID}")


async def test_a_discord_thread_report_reaches_gpuplan_calibration(tmp_path: Path) -> None:
    client = GpuplanClient(_conversation(tmp_path), shard_count=1)
    async with simcord.run(client) as env:
        guild = env.create_guild()
        channel = guild.create_text_channel("ml")
        admins = guild.create_role("admins", permissions=discord.Permissions(manage_guild=True))
        ana = guild.add_member(env.create_user("ana"), roles=[admins])
        bo = guild.add_member(env.create_user("bo"))
        refused = await bo.slash(channel, "gpuplan", query="reports on")
        assert "admins" in str(refused.response.embeds[0].title).lower()
        await ana.slash(channel, "gpuplan", query="reports on")
        await bo.send(channel, f"{client.user.mention} {QUESTION}")
        (thread,) = channel.threads
        await bo.send(thread, f"{client.user.mention} {REPORT}")
        answer = [m for m in thread.history() if m.author.id == client.user.id][-1]
        assert "21.3" in json.dumps([e.to_dict() for e in answer.embeds])
        scope = f"discord/{guild.id}"
    _assert_one_kept_report(tmp_path, scope)
