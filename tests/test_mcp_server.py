"""`gpuplan serve mcp` through the official SDK's own clients, on loopback: over stdio (the SDK
starts the server as a client would) and over streamable HTTP with a bearer token. One server per
transport for the whole module."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest

from adapters.cli import main

pytest.importorskip("mcp")

import httpx2
from mcp import Client, StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

ROOT = Path(__file__).resolve().parents[1]
QUESTION = "13B QLoRA, 4k ctx, 20M tokens x3"
TOKEN = "test-token-not-secret"
TOOLS = {"plan", "solve", "compare", "prices", "models", "explain", "config"}
# Settings of ours a developer's shell may hold: the server and `ask` run without them.
OUR_SETTINGS = ("GPUPLAN_", "SLACK_", "DISCORD_")


def _env(state_dir: Path, **extra: str) -> dict[str, str]:
    env = {name: value for name, value in os.environ.items() if not name.startswith(OUR_SETTINGS)}
    return env | {"GPUPLAN_STATE_DIR": str(state_dir), "PYTHONPATH": str(ROOT), **extra}


def _text(result) -> str:
    return result.content[0].text


# ---- stdio: one server process for every call below, as a desktop client would run it ----


def _ask_json(state_dir: Path, monkeypatch: pytest.MonkeyPatch, capsys) -> dict:
    """`gpuplan ask --json QUESTION`'s document, run in this process with the server's
    environment (tests/test_cli_imports.py and test_perf_commands.py start the real command)."""
    for name in [n for n in os.environ if n.startswith(OUR_SETTINGS)]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("GPUPLAN_STATE_DIR", str(state_dir))
    capsys.readouterr()
    assert main(["ask", "--json", QUESTION]) == 0
    return json.loads(capsys.readouterr().out)


async def test_stdio_lists_and_answers_every_tool_and_survives_bad_input(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "adapters.cli", "serve", "mcp"],
        env=_env(tmp_path),
        cwd=str(ROOT),
    )
    async with Client(stdio_client(params)) as client:
        listed = await client.list_tools()
        assert {tool.name for tool in listed.tools} == TOOLS
        assert all(tool.output_schema and tool.description for tool in listed.tools)

        plan = await client.call_tool("plan", {"question": QUESTION})
        assert not plan.is_error
        document = plan.structured_content
        assert document["plan_id"] in _text(plan)
        # The Plan itself, as `ask --json` prints it, plus its id.
        ask = _ask_json(tmp_path, monkeypatch, capsys)
        assert {k: v for k, v in document.items() if k != "plan_id"} == ask

        followup = await client.call_tool("plan", {"question": "what if 8k ctx?"})
        assert followup.structured_content["spec"]["seq_len"] == 8192
        assert followup.structured_content["changes"]["seq_len"] == [4096, 8192]

        spec = {"model": "llama 3 8b", "method": "qlora", "seq_len": 0}
        bad_spec = await client.call_tool("plan", {"spec": spec})
        assert bad_spec.is_error
        assert "Context length (seq_len) can't be 0" in _text(bad_spec)

        given = await client.call_tool("plan", {"spec": {**spec, "seq_len": 2048}})
        assert given.structured_content["spec"]["seq_len"] == 2048
        longer = await client.call_tool("plan", {"question": "what if 4k ctx?"})
        assert longer.structured_content["changes"]["seq_len"] == [2048, 4096]

        not_a_type = await client.call_tool("plan", {"question": 42})
        assert not_a_type.is_error

        limit = await client.call_tool(
            "solve", {"question": "max context for 8B LoRA on a 24 GB card?"}
        )
        answer = limit.structured_content
        assert answer["asked"] == "seq_len" and answer["binding"] == "memory"
        assert answer["plan"]["spec"]["seq_len"] == answer["value"]

        compared = await client.call_tool("compare", {"question": "7B vs 13B QLoRA on a 4090"})
        sizes = [p["model"]["params_b"] for p in compared.structured_content["alternatives"]]
        assert len(sizes) == 2 and sizes[0] < 10 < sizes[1]
        assert len(compared.structured_content["plan_ids"]) == 2

        quotes = (await client.call_tool("prices", {"card": "H100"})).structured_content
        assert quotes["quotes"] and {q["origin"] for q in quotes["quotes"]} == {"bundled"}
        assert all(q["source_url"] and q["fetched_at"] for q in quotes["quotes"])

        models = (await client.call_tool("models", {"filter": "qwen3"})).structured_content
        assert models["models"] and all("qwen" in m["name"].lower() for m in models["models"])

        why = await client.call_tool(
            "explain", {"plan_id": document["plan_id"], "component": "weights"}
        )
        explained = why.structured_content
        assert explained["value"] == document["memory"]["breakdown_gib"]["weights"]
        assert explained["function"] == "planner.estimate.memory.components.weights_bytes"
        assert "qlora" in explained["formula"]

        unknown = await client.call_tool("explain", {"plan_id": "made-up", "component": "weights"})
        assert unknown.is_error and "No such plan" in _text(unknown)

        files = await client.call_tool(
            "config",
            {"question": "llama 3.1 8b qlora 4k ctx on a 4090, 20M tokens", "stack": "axolotl"},
        )
        written = files.structured_content["files"]
        assert set(written) >= {"axolotl.yaml", "sky.yaml", "README.txt"}
        assert "sequence_len: 4096" in written["axolotl.yaml"]
        assert "RTX4090:1" in written["sky.yaml"]
        refused = await client.call_tool("config", {"stack": "litgpt"})
        assert refused.is_error and "torchtune" in _text(refused)

        # The server is still answering after every refusal above.
        again = await client.call_tool("models", {"filter": "llama 3"})
        assert not again.is_error


# ---- streamable HTTP: one server for the module, with a token ----


@pytest.fixture(scope="module")
def http_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = subprocess.Popen(
        [sys.executable, "-m", "adapters.cli", "serve", "mcp", "--http", "--port", str(port)],
        cwd=ROOT,
        env=_env(tmp_path_factory.mktemp("mcp-state"), GPUPLAN_MCP_TOKEN=TOKEN),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            with socket.socket() as attempt:
                if attempt.connect_ex(("127.0.0.1", port)) == 0:
                    break
            assert server.poll() is None, server.stderr.read().decode()
            time.sleep(0.1)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        server.terminate()
        server.wait(timeout=10)


@asynccontextmanager
async def _http_client(url: str, *, mode: str = "legacy") -> AsyncIterator[Client]:
    """A client with the token; 'legacy' has a session (Mcp-Session-Id), 'auto' speaks the
    sessionless 2026-07-28 protocol."""
    headers = {"Authorization": f"Bearer {TOKEN}"}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=60) as http,
        Client(streamable_http_client(url, http_client=http), mode=mode) as client,
    ):
        yield client


async def test_http_refuses_requests_without_the_token(http_url: str) -> None:
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    async with httpx2.AsyncClient() as http:
        for headers in ({}, {"Authorization": "Bearer wrong"}):
            response = await http.post(http_url, json=body, headers=headers)
            assert response.status_code == 401
    async with _http_client(http_url, mode="auto") as client:
        assert {tool.name for tool in (await client.list_tools()).tools} == TOOLS


async def test_http_sessions_are_kept_apart(http_url: str) -> None:
    async with _http_client(http_url) as alice, _http_client(http_url) as bob:
        first = await alice.call_tool("plan", {"question": QUESTION})
        plan_id = first.structured_content["plan_id"]
        # Bob's session has no job: a follow-up there changes nothing of Alice's.
        stray = await bob.call_tool("plan", {"question": "what if 8k ctx?"})
        assert stray.is_error and "No job to change yet" in _text(stray)
        theirs = await bob.call_tool("explain", {"plan_id": plan_id, "component": "weights"})
        assert theirs.is_error
        mine = await alice.call_tool("plan", {"question": "what if 8k ctx?"})
        assert mine.structured_content["changes"]["seq_len"] == [4096, 8192]
        nonsense = await alice.call_tool("plan", {"question": "qwfp zxcv"})
        assert nonsense.is_error
        chinese = await bob.call_tool("solve", {"question": "13B QLoRA 4k 上下文要多少显存"})
        assert chinese.is_error and "这个问题没有问上限" in _text(chinese)


async def test_a_sessionless_client_continues_a_job_by_its_plan_id(http_url: str) -> None:
    async with _http_client(http_url, mode="auto") as client:
        first = await client.call_tool("plan", {"question": QUESTION})
        plan_id = first.structured_content["plan_id"]
        alone = await client.call_tool("plan", {"question": "what if 8k ctx?"})
        assert alone.is_error  # each 2026-07-28 request stands alone
        followup = await client.call_tool(
            "plan", {"question": "what if 8k ctx?", "plan_id": plan_id}
        )
        assert followup.structured_content["spec"]["seq_len"] == 8192


def test_serving_beyond_loopback_needs_a_token(monkeypatch, capsys) -> None:
    from adapters.cli import main

    monkeypatch.delenv("GPUPLAN_MCP_TOKEN", raising=False)
    assert main(["serve", "mcp", "--http", "--host", "0.0.0.0"]) == 2
    assert "GPUPLAN_MCP_TOKEN" in capsys.readouterr().err


def test_doctor_starts_the_server_and_gets_a_plan(capsys) -> None:
    from adapters.cli import main

    assert main(["doctor", "mcp"]) == 0
    printed = capsys.readouterr().out
    assert "ok    server: started over stdio, listed 7 tools" in printed


def test_doctor_names_the_missing_extra(monkeypatch, capsys) -> None:
    from importlib import metadata

    from adapters.cli import main

    def not_installed(name: str) -> str:
        raise metadata.PackageNotFoundError(name)

    monkeypatch.setattr(metadata, "version", not_installed)
    assert main(["doctor", "mcp"]) == 1
    printed = capsys.readouterr().out
    assert "FAIL  MCP SDK" in printed and ".[mcp]" in printed
