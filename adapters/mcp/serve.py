"""`gpuplan serve mcp`: gpuplan as an MCP server for coding agents and assistants.

Over stdio by default (the client starts it; only MCP messages reach stdout, logs go to stderr),
or over streamable HTTP with --http at http://HOST:PORT/mcp. With GPUPLAN_MCP_TOKEN set, every
HTTP request must carry it as a bearer token; binding beyond loopback without one is refused.
The SDK is imported only once the server starts, so importing this module stays cheap.
"""

from __future__ import annotations

import argparse
import ipaddress
import os
import sys
from typing import TYPE_CHECKING

from adapters.cli import positive_int
from adapters.serve import install_command

if TYPE_CHECKING:
    from adapters.mcp.tools import Gpuplan

TOKEN_ENV = "GPUPLAN_MCP_TOKEN"
DEFAULT_PORT = 8000
PATH = "/mcp"
INSTALL = install_command("mcp")
# The largest argument is a question with a pasted config.json (adapters/mcp/answers.py caps it
# at 200,000 characters): 1 MiB holds one with room; the SDK's 4 MiB default suits tools that
# take files, which none of these do.
MAX_REQUEST_BYTES = 1024 * 1024


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = (__doc__ or "").splitlines()[0]
    parser.add_argument(
        "--http", action="store_true", help=f"serve streamable HTTP at {PATH} (default: stdio)"
    )
    parser.add_argument("--host", default="127.0.0.1", help="HTTP bind address")
    parser.add_argument(
        "--port",
        type=positive_int,
        default=os.environ.get("PORT") or str(DEFAULT_PORT),
        help=f"HTTP port (PORT, default {DEFAULT_PORT})",
    )


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:  # a host name: it may resolve anywhere
        return False


def run(args: argparse.Namespace) -> int:
    from adapters.console import logs

    logs.configure()
    token = os.environ.get(TOKEN_ENV, "").strip()
    if args.http and not token and not is_loopback(args.host):
        print(
            f"gpuplan serve mcp: refusing to serve {args.host} without a token: set {TOKEN_ENV} "
            "(clients then send it as a bearer token) or bind 127.0.0.1",
            file=sys.stderr,
        )
        return 2
    gpuplan = open_gpuplan()
    if args.http:
        return _serve_http(gpuplan, args.host, args.port, token)
    return _serve_stdio(gpuplan)


def open_gpuplan() -> Gpuplan:
    """The bots' conversation on the configured thread and price stores, as `gpuplan chat`
    opens it; a store that cannot be written to still lets the server answer from memory."""
    from adapters.console.chat import thread_store
    from adapters.mcp.sessions import Sessions
    from adapters.mcp.tools import Gpuplan
    from bot.conversation import Conversation

    conversation = Conversation(thread_store("gpuplan serve mcp"), limit_rate=False)
    return Gpuplan(conversation, Sessions())


def _serve_stdio(gpuplan: Gpuplan) -> int:
    import anyio
    from mcp.server.stdio import stdio_server

    from adapters.mcp.server import build_server

    server = build_server(gpuplan, "stdio")

    async def serve() -> None:
        async with stdio_server() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())

    anyio.run(serve)
    return 0


def _serve_http(gpuplan: Gpuplan, host: str, port: int, token: str) -> int:
    import uvicorn

    from adapters.mcp.server import BearerToken, build_server

    app = build_server(gpuplan, "http").streamable_http_app(
        streamable_http_path=PATH, host=host, max_request_body_size=MAX_REQUEST_BYTES
    )
    guarded = BearerToken(app, token) if token else app
    how = "bearer token required" if token else f"no token ({TOKEN_ENV} unset), loopback only"
    print(f"gpuplan MCP server at http://{host}:{port}{PATH} ({how})", file=sys.stderr)
    uvicorn.run(guarded, host=host, port=port, log_level="warning")
    return 0
