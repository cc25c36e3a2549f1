"""Follow-ups racing on one thread: how many are refused ("This thread is busy") and how long
the answers take, with 2, 4 and 8 writer processes on one SQLite state file.

Each writer is a separate process with its own Conversation (so the per-process thread lock does
not serialise them, as with several bot processes behind a load balancer), all sending what-ifs
that each change the job to the same thread at once. "before" is the old compare-and-set retry
(5 tries back to back); "after" is bot.conversation.SAVE_BACKOFF (full-jitter backoff inside a
time budget).
Run: .venv/bin/python bench/cas_contention.py [--followups 40] [--writers 2 4 8]
"""

from __future__ import annotations

import argparse
import logging
import math
import multiprocessing
import statistics
import tempfile
import time
from pathlib import Path

from adapters.cli import positive_int
from bot.backoff import Backoff

QUESTION = "13B QLoRA, 4k ctx, 20M tokens x3"
BEFORE = Backoff(first_delay_s=0.0, max_delay_s=0.0, budget_s=math.inf, max_attempts=5)
BUSY_TITLE = "This thread is busy"


def _writer(
    writer: int,
    followups: int,
    state: str,
    backoff: Backoff,
    start: multiprocessing.synchronize.Barrier,
    results: multiprocessing.Queue,
) -> None:
    from bot.conversation import Conversation
    from bot.state.threads import SQLiteStore
    from bot.threads import ThreadKey

    logging.getLogger("bot.conversation").setLevel(logging.ERROR)  # refusals are counted instead
    conversation = Conversation(SQLiteStore(Path(state)), limit_rate=False, save_backoff=backoff)
    conversation.handle(ThreadKey(platform="bench", thread=f"warm-{writer}"), QUESTION)
    key = ThreadKey(platform="bench", thread="contended")
    start.wait()
    for step in range(followups):
        epochs = 1 + (writer * followups + step) % 97  # every what-if changes the job
        began = time.perf_counter()
        reply = conversation.handle(key, f"and {epochs} epochs", user=f"u{writer}")
        results.put((reply.title == BUSY_TITLE, time.perf_counter() - began))


def run(writers: int, followups: int, backoff: Backoff) -> tuple[int, list[float]]:
    from bot.conversation import Conversation
    from bot.state.threads import SQLiteStore
    from bot.threads import ThreadKey

    context = multiprocessing.get_context("spawn")
    with tempfile.TemporaryDirectory(prefix="gpuplan-cas-") as state:
        Conversation(SQLiteStore(Path(state)), limit_rate=False).handle(
            ThreadKey(platform="bench", thread="contended"), QUESTION
        )
        start, results = context.Barrier(writers), context.Queue()
        processes = [
            context.Process(target=_writer, args=(n, followups, state, backoff, start, results))
            for n in range(writers)
        ]
        for process in processes:
            process.start()
        outcomes = [results.get(timeout=120) for _ in range(writers * followups)]
        for process in processes:
            process.join()
    refused = sum(1 for busy, _ in outcomes if busy)
    return refused, sorted(seconds for _, seconds in outcomes)


def main() -> None:
    from bot.conversation.turn import SAVE_BACKOFF

    parser = argparse.ArgumentParser()
    parser.add_argument("--followups", type=positive_int, default=40, help="per writer")
    parser.add_argument("--writers", type=positive_int, nargs="+", default=[2, 4, 8])
    args = parser.parse_args()
    print(f"{'writers':>7} {'retry':>6} {'refused':>14} {'p50 ms':>7} {'p99 ms':>7} {'max ms':>7}")
    for writers in args.writers:
        for name, backoff in (("before", BEFORE), ("after", SAVE_BACKOFF)):
            refused, seconds = run(writers, args.followups, backoff)
            total = len(seconds)
            p99 = seconds[min(total - 1, math.ceil(0.99 * total) - 1)]
            print(
                f"{writers:>7} {name:>6} {refused:>4}/{total:<4} {100 * refused / total:4.1f}%"
                f" {1000 * statistics.median(seconds):7.1f} {1000 * p99:7.1f}"
                f" {1000 * seconds[-1]:7.1f}",
                flush=True,
            )


if __name__ == "__main__":
    main()
