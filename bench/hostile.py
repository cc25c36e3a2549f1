"""Latency of answers to hostile input (goal: each < 50 ms), through the real conversation.

Run: .venv/bin/python bench/hostile.py
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def main() -> None:
    os.environ["GPUPLAN_STATE_DIR"] = tempfile.mkdtemp(prefix="gpuplan-hostile-")
    from bot.conversation import Conversation
    from bot.threads import ThreadKey
    from planner import parse
    from tests.hostile_inputs import HOSTILE_INPUTS

    conversation = Conversation()
    conversation.handle(ThreadKey(platform="bench", thread="warm"), "7B lora")  # warm caches
    print(f"{'input':<22}{'parse ms':>10}{'answer ms':>11}  reply")
    worst_ms = 0.0
    for name, text in HOSTILE_INPUTS.items():
        t0 = time.perf_counter()
        parse(text)
        parse_ms = (time.perf_counter() - t0) * 1000
        t0 = time.perf_counter()
        reply = conversation.handle(ThreadKey(platform="bench", thread=name), text, user=name)
        answer_ms = (time.perf_counter() - t0) * 1000
        worst_ms = max(worst_ms, parse_ms, answer_ms)
        print(f"{name:<22}{parse_ms:>10.2f}{answer_ms:>11.2f}  {reply.kind}")
    print(f"worst: {worst_ms:.2f} ms (goal < 50 ms)")


if __name__ == "__main__":
    main()
