"""Bot process memory: RSS after 1,000 answers (goal ≤ 150 MB, no growth after warm-up).

Drives the real Conversation (parser, planner, SQLite store) the way a busy server would: new
questions in fresh threads and what-if follow-ups in existing ones. Prints RSS at checkpoints.
Run: .venv/bin/python bench/bot_rss.py [--answers 1000]
"""

from __future__ import annotations

import argparse
import os
import tempfile
from pathlib import Path

from adapters.cli import positive_int

QUESTIONS = (
    "13B QLoRA, 4k ctx, 20M tokens x3",
    "can I lora llama 3 8b with 8k context on 2x3090?",
    "70b qlora 48gb?",
    "full fine-tune mistral 7b 2k ctx on an A100 80GB",
)
FOLLOWUPS = ("what if 8k ctx?", "2 epochs", "on 2x4090", "without checkpointing", "undo")


def rss_mib() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--answers", type=positive_int, default=1000)
    args = parser.parse_args()
    os.environ["GPUPLAN_STATE_DIR"] = tempfile.mkdtemp(prefix="gpuplan-rss-")

    from bot.conversation import Conversation
    from bot.threads import ThreadKey

    # Rate limits would turn most of a single-process burst into one-line refusals: measure answers.
    conversation = Conversation(limit_rate=False)
    checkpoints = {100, args.answers // 2, args.answers}
    print(f"start: {rss_mib():.1f} MiB")
    for i in range(1, args.answers + 1):
        thread = ThreadKey(platform="bench", channel="c", thread=str(i // 5))
        text = QUESTIONS[i % len(QUESTIONS)] if i % 5 == 0 else FOLLOWUPS[i % len(FOLLOWUPS)]
        conversation.handle(thread, text, user=f"u{i % 50}")
        if i in checkpoints:
            print(f"after {i:>5} answers: {rss_mib():.1f} MiB")


if __name__ == "__main__":
    main()
