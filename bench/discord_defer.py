"""Defer latency of `/gpuplan` while the planner is slow: real discord.py, loopback fake Discord.

N slash commands arrive `--gap-ms` apart over the fake Gateway; every plan goes through the real
Conversation behind a `--plan-s` sleep, so plans pile up in the worker threads. Printed: p50/p99/max
of dispatch → deferral callback (what Discord's 3 s deadline measures) and of dispatch → answer,
and how many deferrals the fake rejected as late (404 / 10062).

Run: .venv/bin/python bench/discord_defer.py [-n 50] [--plan-s 2.0] [--gap-ms 20]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # for tests.fakes

import yarl
from discord.gateway import DiscordWebSocket
from discord.http import Route

from adapters.cli import positive_int
from adapters.console.bench_cmd import percentile
from adapters.discord.client import GpuplanClient
from bot.conversation import Conversation
from bot.reply import Reply
from bot.threads import ThreadKey
from tests.fakes.discord_api import FakeDiscord

QUESTIONS = [
    "13B QLoRA, 4k ctx, 20M tokens x3",
    "llama 3 8b lora on a 4090",
    "70B QLoRA on 2x A100",
]


class SlowConversation:
    def __init__(self, plan_s: float) -> None:
        self.plan_s = plan_s
        self.conversation = Conversation(limit_rate=False)

    def handle(self, key: ThreadKey, text: str, user: str = "") -> Reply:
        time.sleep(self.plan_s)
        return self.conversation.handle(key, text, user)


def _percentiles_ms(values_s: list[float]) -> str:
    ms = [v * 1000 for v in values_s]
    p99 = percentile(ms, 0.99)
    return f"p50 {statistics.median(ms):8.1f} ms   p99 {p99:8.1f} ms   max {max(ms):8.1f} ms"


async def bench(count: int, plan_s: float, gap_s: float) -> None:
    fake = await FakeDiscord().start()
    Route.BASE = fake.rest_base
    DiscordWebSocket.DEFAULT_GATEWAY = yarl.URL(fake.gateway_url)
    client = GpuplanClient(SlowConversation(plan_s), shard_count=1, guild_ready_timeout=0.05)
    runner = asyncio.create_task(client.start("bench-token"))
    await asyncio.wait_for(client.wait_until_ready(), 10)

    ids = []
    for i in range(count):
        ids.append(await fake.slash({"query": QUESTIONS[i % len(QUESTIONS)]}))
        await asyncio.sleep(gap_s)
    done = await fake.wait_for(
        lambda calls: len([c for c in calls if c.method == "PATCH"]) >= count or None,
        timeout_s=count * (plan_s + 1) + 60,
    )
    assert done
    await client.close()
    await runner
    await fake.stop()

    def first(interaction: str, suffix: str):
        return next(c for c in fake.calls if interaction in c.path and c.path.endswith(suffix))

    defer_s, answer_s, late = [], [], 0
    for interaction in ids:
        callback = first(interaction, "/callback")
        late += callback.status != 200
        defer_s.append(callback.at_s - fake.dispatched_at_s[interaction])
        answer_s.append(first(interaction, "/@original").at_s - fake.dispatched_at_s[interaction])
    print(f"{count} interactions, {gap_s * 1000:.0f} ms apart, planner {plan_s:.1f} s each")
    print(f"  dispatch → defer   {_percentiles_ms(defer_s)}")
    print(f"  dispatch → answer  {_percentiles_ms(answer_s)}")
    print(f"  deferrals rejected as late (> 3 s): {late}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=positive_int, default=50, help="interactions")
    parser.add_argument("--plan-s", type=float, default=2.0, help="planner delay per question")
    parser.add_argument("--gap-ms", type=float, default=20.0, help="time between interactions")
    args = parser.parse_args()
    os.environ.setdefault("GPUPLAN_STATE_DIR", tempfile.mkdtemp(prefix="gpuplan-bench-"))
    asyncio.run(bench(args.n, args.plan_s, args.gap_ms / 1000))


if __name__ == "__main__":
    main()
