"""Serving a fake platform on 127.0.0.1: an aiohttp app on a free port, and its teardown."""

from __future__ import annotations

from collections.abc import Iterable

from aiohttp import web


async def serve_on_loopback(app: web.Application) -> tuple[web.AppRunner, int]:
    """Serve `app` on a free 127.0.0.1 port; returns the runner and the port it got."""
    runner = web.AppRunner(app)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    return runner, runner.addresses[0][1]


async def stop_loopback(runner: web.AppRunner, sockets: Iterable[web.WebSocketResponse]) -> None:
    """Close the WebSockets first: a runner waits for open connections before it stops."""
    for socket in sockets:
        await socket.close()
    await runner.cleanup()
