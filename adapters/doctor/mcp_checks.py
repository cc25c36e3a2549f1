"""`gpuplan doctor mcp`: the SDK extra is installed, and the server starts and answers a `plan`
through the SDK's own stdio client, as an agent's client would start it."""

from __future__ import annotations

import os
import sys
import time

from adapters.doctor.report import Check, fail, note, ok, skip

EXAMPLE = "13B QLoRA, 4k ctx, 20M tokens x3"
# A cold start imports the planner and the SDK and plans once: well under this on any machine.
START_TIMEOUT_S = 60.0


def mcp_checks() -> list[Check]:
    from importlib.metadata import PackageNotFoundError, version

    from adapters.mcp.serve import INSTALL, TOKEN_ENV

    try:
        installed = version("mcp")
    except PackageNotFoundError:
        sdk = fail("MCP SDK", "the `mcp` package is not installed", INSTALL)
        return [sdk, skip("server", "MCP SDK")]
    checks = [ok("MCP SDK", f"mcp {installed}"), _server_answers()]
    if os.environ.get(TOKEN_ENV, "").strip():
        checks.append(ok("HTTP token", f"{TOKEN_ENV} is set: --http requires it on every request"))
    else:
        checks.append(note("HTTP token", f"{TOKEN_ENV} unset: --http serves loopback only"))
    return checks


def _server_answers() -> Check:
    import anyio

    started_s = time.monotonic()
    try:
        tools, memory_gib = anyio.run(_ask_the_server)
    except Exception as error:  # whatever stops it, the line says what
        reason = str(error) or type(error).__name__
        return fail(
            "server",
            f"`gpuplan serve mcp` did not answer: {reason}",
            "run it by hand with GPUPLAN_DEBUG=1 and read its stderr",
        )
    elapsed_s = time.monotonic() - started_s
    return ok(
        "server",
        f"started over stdio, listed {len(tools)} tools ({', '.join(tools)}) and planned "
        f"“{EXAMPLE}” ({memory_gib} GiB per GPU) in {elapsed_s:.1f} s",
    )


async def _ask_the_server() -> tuple[list[str], float]:
    import anyio
    from mcp import Client, StdioServerParameters, stdio_client

    server = StdioServerParameters(
        command=sys.executable,
        args=["-m", "adapters.cli", "serve", "mcp"],
        env=dict(os.environ),
    )
    with anyio.fail_after(START_TIMEOUT_S):
        async with Client(stdio_client(server)) as client:
            tools = [tool.name for tool in (await client.list_tools()).tools]
            answer = await client.call_tool("plan", {"question": EXAMPLE})
    if answer.is_error or not answer.structured_content:
        raise RuntimeError(answer.content[0].text if answer.content else "an empty answer")
    return tools, answer.structured_content["memory"]["required_gib"]
