"""GET /metrics for Prometheus (bot.metrics), on a bot's own HTTP server (Slack in HTTP mode) or,
for bots that serve no HTTP (Discord, Slack Socket Mode), on GPUPLAN_METRICS_PORT."""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

from bot import metrics

if TYPE_CHECKING:
    from aiohttp import web

METRICS_PATH = "/metrics"
METRICS_PORT_ENV = "GPUPLAN_METRICS_PORT"


async def metrics_page(request: web.Request) -> web.Response:
    from aiohttp import web

    return web.Response(body=metrics.exposition(), headers={"Content-Type": metrics.CONTENT_TYPE})


async def serve_metrics_from_env(name: str) -> web.AppRunner | None:
    """With GPUPLAN_METRICS_PORT set, serve /metrics on it (all interfaces, for the scraper);
    None when unset. A bad value is said on stderr and nothing is served."""
    raw = os.environ.get(METRICS_PORT_ENV, "").strip()
    if not raw:
        return None
    if not raw.isdigit() or int(raw) > 65535:
        print(f"gpuplan serve {name}: {METRICS_PORT_ENV} is not a port: {raw!r}", file=sys.stderr)
        return None
    from aiohttp import web

    app = web.Application()
    app.router.add_get(METRICS_PATH, metrics_page)
    runner = web.AppRunner(app)
    await runner.setup()
    await web.TCPSite(runner, "0.0.0.0", int(raw)).start()
    print(f"gpuplan: metrics at http://0.0.0.0:{runner.addresses[0][1]}{METRICS_PATH}", flush=True)
    return runner
