"""The terminal commands never load the bots' or the charts' libraries, and the serve modules
import cheaply (slack_bolt, discord.py and aiohttp only once a bot actually starts).

`gpuplan ask` is covered by tests/test_perf_commands.py; this covers the other terminal commands.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
HEAVY = ("matplotlib", "discord", "slack_bolt", "slack_sdk", "aiohttp", "redis", "mcp")
SPEC = '{"model": "llama 3 8b", "method": "qlora"}'

# Each runs `main(argv)` with this stdin, then reports which heavy libraries got imported.
COMMAND_SCRIPT = """
import contextlib, io, json, sys
from adapters.cli import main
sys.stdin = io.StringIO({stdin!r})
with contextlib.redirect_stdout(io.StringIO()) as out:
    code = main({argv!r})
heavy = sorted(m for m in {heavy!r} if m in sys.modules)
print(json.dumps({{"code": code, "heavy": heavy, "printed": bool(out.getvalue())}}))
"""


def _run(script: str, tmp_path: Path) -> dict:
    env = {"GPUPLAN_STATE_DIR": str(tmp_path), "PATH": "/usr/bin:/bin"}
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT, env=env
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.mark.parametrize(
    ("argv", "stdin"),
    [
        (["chat"], "13B QLoRA, 4k ctx\nwhat if 8k ctx?\n"),
        (["chat", "--json"], "13B QLoRA, 4k ctx\n"),
        (["parse", "13B QLoRA, 4k ctx, 20M tokens x3"], ""),
        (["parse", "--jsonl", "-"], '{"id": 1, "text": "70b qlora 48gb?"}\n'),
        (["estimate", "--spec", "-"], SPEC),
        (["estimate", "--jsonl", "-"], f'{{"id": 1, "spec": {SPEC}}}\n'),
    ],
)
def test_terminal_commands_stay_off_heavy_libraries(
    argv: list[str], stdin: str, tmp_path: Path
) -> None:
    result = _run(COMMAND_SCRIPT.format(stdin=stdin, argv=argv, heavy=HEAVY), tmp_path)
    assert result["code"] == 0 and result["printed"]
    assert result["heavy"] == []


@pytest.mark.parametrize(
    "module",
    [
        "adapters.serve",
        "adapters.slack.serve",
        "adapters.discord.serve",
        "adapters.mcp.serve",
        "adapters.cli",
    ],
)
def test_serve_modules_import_without_the_bot_libraries(module: str, tmp_path: Path) -> None:
    script = (
        f"import json, sys, {module}\n"
        f"print(json.dumps({{'heavy': sorted(m for m in {HEAVY!r} if m in sys.modules)}}))\n"
    )
    assert _run(script, tmp_path)["heavy"] == []
