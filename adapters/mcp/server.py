"""The MCP server on the official SDK (`mcp`, the `gpuplan[mcp]` extra; imported only here, so
only `gpuplan serve mcp` pays for it): TOOLS listed with their schemas and called, over stdio or
streamable HTTP.

Every call ends in a result: bad input, an unreadable question and a bug alike come back as a
tool error (`isError`) with a sentence, and the server keeps answering.
"""

from __future__ import annotations

import hmac
import logging
import secrets
from typing import Any

import anyio
from mcp import types
from mcp.server import Server
from mcp.server.context import ServerRequestContext
from pydantic import ValidationError
from starlette.responses import PlainTextResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from adapters.console.text import render_text
from adapters.mcp.answers import Refusal
from adapters.mcp.sessions import Caller
from adapters.mcp.tools import TOOLS, Gpuplan, ToolSpec
from bot import phrases
from bot.reply_builder import message_reply
from planner.errors import PlanningError, invalid_field
from planner.planner import parse_spec

logger = logging.getLogger(__name__)

NAME = "gpuplan"
INSTRUCTIONS = (
    "gpuplan answers whether an LLM fine-tuning job fits on a GPU and what it costs. Call `plan` "
    "with the job in plain words; follow-ups such as 'what if 8k ctx?' continue this session's "
    "last job. `solve` answers limits (max context, largest model, fewest GPUs, cheapest card "
    "for a deadline); `explain` says where a number comes from."
)
SESSION_HEADER = "mcp-session-id"


def build_server(gpuplan: Gpuplan, transport: str) -> Server[Any]:
    from importlib.metadata import version

    # A stdio server has one client for its whole life: the process is the session.
    process_session = secrets.token_hex(8) if transport == "stdio" else None
    by_name = {spec.name: spec for spec in TOOLS}
    listed = types.ListToolsResult(tools=[_listed(spec) for spec in TOOLS])

    async def list_tools(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return listed

    async def call_tool(
        ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        spec = by_name.get(params.name)
        if spec is None:
            return _error(f"No tool {params.name[:40]!r}: the tools are {', '.join(by_name)}.")
        caller = Caller(transport, process_session or _http_session(ctx))
        arguments = params.arguments or {}
        try:
            asked = spec.input.model_validate(arguments)
            # Planning is CPU work: a worker thread keeps the server answering meanwhile.
            answer = await anyio.to_thread.run_sync(spec.answer, gpuplan, caller, asked)
        except ValidationError as error:
            reply = message_reply("error", phrases.CANT_USE, _input_sentence(error, arguments))
            return _error(render_text(reply))
        except Refusal as refused:
            return _error(refused.text)
        except Exception:  # a bug must cost one answer, never the server
            logger.exception("the %s tool failed", spec.name)
            return _error(render_text(message_reply("error", *phrases.SOMETHING_WENT_WRONG)))
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=answer.text)],
            structured_content=answer.structured,
        )

    return Server(
        NAME,
        version=version("gpuplan"),
        instructions=INSTRUCTIONS,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


def _listed(spec: ToolSpec) -> types.Tool:
    return types.Tool(
        name=spec.name,
        description=spec.description,
        input_schema=spec.input.model_json_schema(),
        output_schema=spec.output.model_json_schema(mode="serialization"),
    )


def _error(text: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=True)


def _http_session(ctx: ServerRequestContext[Any]) -> str | None:
    """The streamable-HTTP session (Mcp-Session-Id); None for a sessionless 2026-07-28 call."""
    request = ctx.request
    headers = getattr(request, "headers", None)
    return headers.get(SESSION_HEADER) if headers is not None else None


def _input_sentence(error: ValidationError, arguments: dict[str, Any]) -> str:
    """What is wrong with the arguments, as the chat and `gpuplan estimate` say it; a JobSpec's
    field is named as JobSpec names it."""
    location = error.errors()[0]["loc"]
    if location[:1] == ("spec",) and len(location) > 1:
        try:
            parse_spec(arguments.get("spec"))
        except PlanningError as refused:
            return refused.message
    return invalid_field(error, name_the_key=True)[1]


class BearerToken:
    """Every HTTP request must carry `Authorization: Bearer <token>`; others get a 401."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self._app = app
        self._expected = f"Bearer {token}".encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            given = dict(scope["headers"]).get(b"authorization", b"")
            if not hmac.compare_digest(given, self._expected):
                refused = PlainTextResponse(
                    "401: this server needs `Authorization: Bearer <GPUPLAN_MCP_TOKEN>`.\n",
                    status_code=401,
                    headers={"WWW-Authenticate": "Bearer"},
                )
                await refused(scope, receive, send)
                return
        await self._app(scope, receive, send)
