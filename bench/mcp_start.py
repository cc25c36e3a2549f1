"""Start-up of `gpuplan serve mcp` to its first `plan` answer, against `python -c "import mcp"`.

An agent's client starts the server over stdio when a session opens, so what the user waits for
is the process start, the SDK import, the handshake and the first plan. The SDK import alone is
the floor any Python MCP server pays; the target is that gpuplan adds at most 0.5 s to it.

Runs are paired (one of each, back to back, the order alternating) so the machine's load moves
both alike; the figure is the median of the paired differences.

    .venv/bin/python bench/mcp_start.py [--pairs 10]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import anyio
from mcp import Client, StdioServerParameters, stdio_client

ROOT = Path(__file__).resolve().parents[1]
QUESTION = "13B QLoRA, 4k ctx, 20M tokens x3"
TARGET_ADDED_S = 0.5


def _server_command() -> tuple[str, list[str]]:
    """The venv's `gpuplan` script, as a client config names it (`python -m` without one)."""
    script = Path(sys.executable).with_name("gpuplan")
    if script.exists():
        return str(script), ["serve", "mcp"]
    return sys.executable, ["-m", "adapters.cli", "serve", "mcp"]


async def _first_plan_s(state_dir: str) -> float:
    command, args = _server_command()
    env = {**os.environ, "GPUPLAN_STATE_DIR": state_dir}
    params = StdioServerParameters(command=command, args=args, env=env, cwd=str(ROOT))
    started = time.perf_counter()
    async with Client(stdio_client(params)) as client:
        answer = await client.call_tool("plan", {"question": QUESTION})
        elapsed_s = time.perf_counter() - started
    if answer.is_error:
        raise SystemExit(f"the server refused the question: {answer.content[0].text}")
    return elapsed_s


def _import_mcp_s() -> float:
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", "import mcp"], check=True)
    return time.perf_counter() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=10)
    args = parser.parse_args()
    servers: list[float] = []
    imports: list[float] = []
    with tempfile.TemporaryDirectory() as state_dir:
        anyio.run(_first_plan_s, state_dir)  # warm the file cache: every run after is alike
        for pair in range(args.pairs):
            if pair % 2:
                imports.append(_import_mcp_s())
                servers.append(anyio.run(_first_plan_s, state_dir))
            else:
                servers.append(anyio.run(_first_plan_s, state_dir))
                imports.append(_import_mcp_s())
    added = [server - floor for server, floor in zip(servers, imports, strict=True)]
    median_added_s = statistics.median(added)
    print(f"{args.pairs} paired runs, {sys.executable}")
    print(f"  python -c 'import mcp'             median {statistics.median(imports):.2f} s")
    print(f"  serve mcp → first plan answer      median {statistics.median(servers):.2f} s")
    print(
        f"  added by gpuplan (paired)          median {median_added_s:.2f} s, "
        f"max {max(added):.2f} s (target ≤ {TARGET_ADDED_S} s)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
