"""Junk at the Slack endpoint: what 100 unsigned, malformed requests cost in status codes and log.

The same AsyncApp is served twice on loopback: as Bolt serves it alone ("Bolt alone", how
gpuplan served it before the gate), and behind adapters.slack.ingress's gate (how it is served
now). Each run sends the bodies of issue #20's probe (`null`, `[]`, `{`, a deeply nested array,
`payload=%7B`, and a non-numeric X-Slack-Request-Timestamp) in turn, and counts the log lines and
bytes a WARNING-level log (the default) would get, tracebacks included.
Run: .venv/bin/python bench/ingress_flood.py [--requests 100]
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import logging
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from adapters.cli import positive_int

SECRET = "flood-signing-secret"
JUNK = [
    ("null", "application/json", {}),
    ("[]", "application/json", {}),
    ("{", "application/json", {}),
    ("[" * 50_000 + "]" * 50_000, "application/json", {}),
    ("payload=%7B", "application/x-www-form-urlencoded", {}),
    ("{}", "application/json", {"X-Slack-Request-Timestamp": "soon", "X-Slack-Signature": "v0=0"}),
]


class Tally(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s %(message)s"))
        self.lines = 0
        self.bytes = 0

    def emit(self, record: logging.LogRecord) -> None:
        text = self.format(record) + "\n"
        self.lines += text.count("\n")
        self.bytes += len(text.encode())


async def _flood(gated: bool, requests: int) -> tuple[collections.Counter[int], Tally, float]:
    import aiohttp
    from aiohttp import web

    from adapters.slack.app import build_app, make_client
    from adapters.slack.serve import EVENTS_PATH, start_http
    from bot.conversation import Conversation
    from bot.state.threads import MemoryStore

    app = build_app(
        Conversation(MemoryStore(), limit_rate=False),
        signing_secret=SECRET,
        client=make_client("xoxb-flood", "http://127.0.0.1:9/api/"),
    )
    if gated:
        runner = await start_http(app, "127.0.0.1", 0, signing_secret=SECRET)
    else:
        runner = web.AppRunner(app.web_app(path=EVENTS_PATH, port=0))
        await runner.setup()
        await web.TCPSite(runner, "127.0.0.1", 0).start()
    url = f"http://127.0.0.1:{runner.addresses[0][1]}{EVENTS_PATH}"
    tally = Tally()
    logging.getLogger().addHandler(tally)
    statuses: collections.Counter[int] = collections.Counter()
    started = time.perf_counter()
    try:
        async with aiohttp.ClientSession() as http:
            for n in range(requests):
                body, content_type, headers = JUNK[n % len(JUNK)]
                headers = {"Content-Type": content_type, **headers}
                async with http.post(url, data=body, headers=headers) as response:
                    statuses[response.status] += 1
    finally:
        elapsed_s = time.perf_counter() - started
        logging.getLogger().removeHandler(tally)
        await runner.cleanup()
    return statuses, tally, elapsed_s


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--requests", type=positive_int, default=100)
    args = parser.parse_args()
    logging.getLogger().setLevel(logging.WARNING)
    logging.lastResort = None  # count the log, do not print it
    print(f"{args.requests} unsigned junk requests to /slack/events")
    print(f"{'served':<12} {'statuses':<22} {'log lines':>9} {'log KB':>8} {'seconds':>8}")
    for name, gated in (("Bolt alone", False), ("with gate", True)):
        statuses, tally, elapsed_s = asyncio.run(_flood(gated, args.requests))
        shown = ", ".join(f"{count}×{status}" for status, count in sorted(statuses.items()))
        print(
            f"{name:<12} {shown:<22} {tally.lines:>9} {tally.bytes / 1024:>8.1f} {elapsed_s:>8.2f}"
        )


if __name__ == "__main__":
    main()
