"""Golden answers: what every surface says for a fixed set of questions and threads.

Issue 33 moves most of the code; these answers pin what users see while it moves. Each case is
answered through the real `Conversation` (memory thread store, no rate limit, fresh state, the
bundled price table, no snapshot, a fixed clock) and rendered the way each surface renders it:
the terminal's text, `ask --json`'s Plan, Slack's blocks and Discord's embeds. English and
Chinese questions come from the realistic parse set; threads from the follow-up set.

A commit that changes answers on purpose regenerates them and says why:
`.venv/bin/python -m tests.golden` rewrites tests/data/golden/; review the diff.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from bot.conversation import Conversation
    from bot.state.threads import StateStore

# Answers say how old the prices are, so the clock is fixed: the day the set was made.
FIXED_NOW_S = datetime(2026, 12, 3, 12, 0, tzinfo=UTC).timestamp()
GOLDEN = Path(__file__).resolve().parent / "data" / "golden"
DATA = Path(__file__).resolve().parent / "data"

# Questions the realistic set does not cover: inverse, comparison, post-training, MoE and bad
# input, which take other paths through the conversation.
EXTRA_QUESTIONS: dict[str, str] = {
    "x-seed": "13B QLoRA, 4k ctx, 20M tokens x3",
    "x-max-ctx": "max context for llama 3.1 8b qlora on a 4090?",
    "x-max-batch": "max batch for 7b lora 2k ctx on an A100 80GB",
    "x-fewest-gpus": "how many H100s to full fine-tune llama 3.1 70b at 4k",
    "x-budget": "cheapest way to qlora 70b, 50M tokens, under $100?",
    "x-compare": "7B vs 13B QLoRA on a 4090",
    "x-compare-cards": "compare h100 and a100 for mistral 7b lora 4k ctx",
    "x-grpo": "GRPO qwen2.5 7b lora, 8 generations, 512 prompt 1024 completion, vllm colocate",
    "x-dpo": "DPO llama 3 8b lora 2k ctx 10k pairs",
    "x-moe": "mixtral 8x7b qlora on one h100",
    "x-vlm": "Qwen2.5-VL-7B LoRA, 2 images per sample, 50k samples",
    "x-nonsense": "purple elephants dancing",
    "x-empty-ish": "?",
    "x-zh-full": "全参微调 7B 需要几张4090",
    "x-zh-max-ctx": "用 QLoRA 在 4090 上微调 llama 3.1 8b 最长能到多少上下文?",
    "x-zh-nonsense": "今天天气怎么样",
}
# Threads the follow-up set does not cover, each a turn that once changed the job unannounced
# (issue 33): a report re-anchoring a multi-GPU job, an inverse follow-up, vLLM sleep mode, a
# card comparison inside a thread and "cheapest under $5?" with nothing that cheap.
EXTRA_THREADS: dict[str, list[str]] = {
    "x-th-report": [
        "llama 3.1 8b lora on 2x 4090, 2k ctx, 10M tokens",
        "it actually peaked at 23 GiB",
        "OOM at step 3",
        "2k ctx",
    ],
    "x-th-max-batch": ["7b lora 2k ctx on an A100 80GB, 10M tokens", "max batch?", "undo"],
    "x-th-sleep": [
        "GRPO qwen2.5 7b lora, 8 generations, 512 prompt 1024 completion, vllm colocate, 2x H100",
        "vllm sleep mode",
    ],
    "x-th-compare": [
        "mistral 7b lora 4k ctx, 50M tokens",
        "compare h100 and a100",
        "double the context",
    ],
    "x-th-cheapest": [
        "70b qlora 2x h100, 4k, 100M tokens",
        "cheapest under $5?",
        "cheapest under $500?",
    ],
    "x-th-zh-batch": [
        "用lora微调7b，A100 80G一张，上下文2k，数据1000万token",
        "最大batch能开多少？",
        "最便宜的方案，5美元以内？",
    ],
}
# Every fourth English question and every second Chinese one of the realistic set.
EN_EVERY, ZH_EVERY = 4, 2
SURFACES = ("text", "json", "slack", "discord")
# The Plan JSON is ~40 KB an answer: pinned for the targeted questions and every thread turn's
# text and embeds pin the rest.
REALISTIC_SURFACES = ("text", "slack", "discord")


def questions() -> dict[str, str]:
    rows = [json.loads(line) for line in (DATA / "parse_realistic.jsonl").open(encoding="utf-8")]
    english = [row for row in rows if row["lang"] == "en"][::EN_EVERY]
    chinese = [row for row in rows if row["lang"] == "zh"][::ZH_EVERY]
    return {row["id"]: row["text"] for row in english + chinese} | EXTRA_QUESTIONS


def threads() -> dict[str, list[str]]:
    path = DATA / "followup_threads.jsonl"
    rows = [json.loads(line) for line in path.open(encoding="utf-8")]
    return {row["id"]: [turn["text"] for turn in row["turns"]] for row in rows} | EXTRA_THREADS


def _renderings(turn: Any, surfaces: tuple[str, ...]) -> Iterator[tuple[str, str]]:
    from adapters.console.ask import plan_json
    from adapters.console.text import render_text
    from adapters.discord.render import render_reply as discord_reply
    from adapters.slack.render import render_reply as slack_reply

    for surface in surfaces:
        if surface == "text":
            yield "text.txt", render_text(turn.reply, colour=False) + "\n"
        elif surface == "json":
            body = plan_json(turn) if turn.plan is not None else json.dumps({"kind": "none"})
            yield "plan.json", body + "\n"
        elif surface == "slack":
            yield "slack.json", _pretty(slack_reply(turn.reply, conversation_id="golden"))
        else:
            yield "discord.json", _pretty(discord_reply(turn.reply))


def _pretty(payload: object) -> str:
    return json.dumps(payload, indent=1, ensure_ascii=False, sort_keys=True) + "\n"


def conversation(store: StateStore | None = None) -> Conversation:
    """A conversation as the golden answers are made: fresh memory state, no rate limit, the
    bundled price table on the fixed clock."""
    from bot.conversation import Conversation
    from bot.prices.market import MarketPrices
    from bot.state.prices import MemoryPriceStore
    from bot.state.threads import MemoryStore

    prices = MarketPrices(MemoryPriceStore(), clock=lambda: FIXED_NOW_S)
    return Conversation(store or MemoryStore(), limit_rate=False, prices=prices)


def answers() -> dict[str, str]:
    """Every golden file's path (relative to tests/data/golden) and its text."""
    from bot.threads import ThreadKey

    files: dict[str, str] = {}
    with tempfile.TemporaryDirectory() as state_dir:
        previous = os.environ.get("GPUPLAN_STATE_DIR")
        os.environ["GPUPLAN_STATE_DIR"] = state_dir
        try:
            for case, text in questions().items():
                turn = conversation().respond(ThreadKey(platform="golden", thread=case), text)
                surfaces = SURFACES if case in EXTRA_QUESTIONS else REALISTIC_SURFACES
                for name, body in _renderings(turn, surfaces):
                    files[f"questions/{case}/{name}"] = body
            for case, texts in threads().items():
                talk = conversation()
                key = ThreadKey(platform="golden", thread=case)
                for number, text in enumerate(texts, start=1):
                    turn = talk.respond(key, text)
                    for name, body in _renderings(turn, ("text", "discord")):
                        files[f"threads/{case}/turn{number:02d}.{name}"] = body
        finally:
            if previous is None:
                os.environ.pop("GPUPLAN_STATE_DIR", None)
            else:
                os.environ["GPUPLAN_STATE_DIR"] = previous
    return files


def write() -> int:
    files = answers()
    for stale in GOLDEN.rglob("*"):
        if stale.is_file() and str(stale.relative_to(GOLDEN)) not in files:
            stale.unlink()
    for name, body in files.items():
        path = GOLDEN / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(body, encoding="utf-8")
    print(f"{len(files)} golden answers written to {GOLDEN}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(write())
