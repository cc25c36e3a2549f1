"""Inverse questions through the conversation (new questions and thread follow-ups), the console
JSON and both platforms' renderers: the answer leads with the number."""

from __future__ import annotations

import json
import subprocess
import sys

from adapters.discord.render import render_reply as discord_render
from adapters.slack.render import render_reply as slack_render
from bot.conversation import Conversation, answer_once
from bot.state.threads import MemoryStore
from bot.threads import ThreadKey
from planner.market.solve import CONTEXT_STEP


def _key() -> ThreadKey:
    return ThreadKey(platform="test", workspace="w", channel="c", thread="inverse")


def test_max_context_leads_with_the_number_and_plans_at_it() -> None:
    turn = answer_once("max context for llama 3.1 8b qlora on a 4090")
    solve = turn.plan.solve
    assert solve is not None and solve.asked == "seq_len" and solve.gpu == "rtx4090"
    assert turn.plan.spec.seq_len == solve.value and solve.value % CONTEXT_STEP == 0
    assert turn.plan.requested.verdict in ("fits", "tight")
    shown = (f"{solve.value:,}", f"{solve.value // 1024}k")  # 7k for 7,168
    assert any(
        turn.reply.verdict.startswith(f"Up to {value} tokens fit one NVIDIA GeForce")
        for value in shown
    )
    assert "with Unsloth" in turn.reply.verdict  # the lever that moves it most
    assert any("multiple of 256" in said for said in turn.reply.assumptions)


def test_a_thread_re_solves_on_its_job() -> None:
    conversation = Conversation(MemoryStore(), limit_rate=False)
    first = conversation.respond(_key(), "llama 3.1 8b lora on an A100 80GB, 4k ctx")
    assert first.plan.solve is None
    batch = conversation.respond(_key(), "and the max batch?")
    assert batch.plan.solve.asked == "micro_batch"
    assert batch.plan.spec.seq_len == 4096 and batch.plan.spec.micro_batch == batch.plan.solve.value
    longest = conversation.respond(_key(), "max context on a 3090?")
    assert longest.plan.solve.asked == "seq_len" and longest.plan.solve.gpu == "rtx3090"
    # The thread's job is now the answered one: a what-if continues from it.
    more = conversation.respond(_key(), "and 2 epochs?")
    assert more.plan.spec.gpu and "3090" in more.plan.spec.gpu
    assert more.plan.spec.seq_len == longest.plan.solve.value


def test_nothing_fits_says_so_and_names_a_card_that_holds_the_default() -> None:
    turn = answer_once("32B QLoRA max context on a 12 GB card")
    assert turn.plan.solve.value is None
    assert turn.reply.verdict.startswith("No context of even 256 tokens fits one 12 GB card")
    assert "the smallest card that holds 2,048 tokens is" in turn.reply.verdict


def test_how_many_cards_and_a_deadline_in_chinese_and_english() -> None:
    cards = answer_once("全参微调 7B 需要几张4090?")
    assert cards.plan.solve.asked == "num_gpus" and cards.plan.solve.value >= 2
    assert cards.plan.requested.count == cards.plan.solve.count
    deadline = answer_once("cheapest way to finish 13B QLoRA on 20M tokens by tomorrow?")
    assert deadline.plan.solve.asked == "gpu" and deadline.plan.solve.binding == "deadline"
    pick = deadline.plan.recommendation.meets_deadline
    assert deadline.reply.verdict.startswith("The cheapest run that meets a 24.0 h deadline")
    assert pick is not None and deadline.plan.solve.value == pick.gpu


def test_slack_and_discord_show_the_answer() -> None:
    reply = answer_once("biggest batch for Mistral 7B on an A100?").reply
    assert "Up to micro-batch" in json.dumps(slack_render(reply))
    assert "Up to micro-batch" in json.dumps(discord_render(reply), default=str)


def test_ask_json_carries_the_solve() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "adapters.cli", "ask", "--json", "max ctx 8b qlora 3090"],
        capture_output=True,
        text=True,
        check=True,
    )
    solve = json.loads(out.stdout)["solve"]
    assert solve["asked"] == "seq_len" and solve["gpu"] == "rtx3090" and solve["count"] == 1
    assert solve["binding"] == "memory" and isinstance(solve["value"], int)
