"""`gpuplan bench` reports its figures, and `gpuplan ask` stays off the heavy libraries.

Speed itself is measured by `gpuplan bench` and bench/ask_cold_start.py, never asserted here.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from adapters.cli import main

ROOT = Path(__file__).resolve().parents[1]
SEED = "13B QLoRA, 4k ctx, 20M tokens x3"
# Libraries only the bots, charts or the parser's unit reader need.
HEAVY = ("matplotlib", "numpy", "discord", "slack_bolt", "slack_sdk", "aiohttp", "pint")


def test_bench_json_reports_rate_latency_and_the_split(capsys) -> None:
    assert main(["bench", "--json", "--rounds", "1"]) == 0
    figures = json.loads(capsys.readouterr().out)
    assert set(figures) == {"plans_per_s", "p50_ms", "p99_ms", "parse_ms", "plan_ms"}
    assert all(value > 0 for value in figures.values())
    assert figures["p50_ms"] <= figures["p99_ms"]


def test_bench_text_names_the_goals(capsys) -> None:
    assert main(["bench", "--rounds", "1"]) == 0
    out = capsys.readouterr().out
    assert "plans/s" in out and "goal ≥ 2,000" in out and "goal ≤ 5 ms" in out


def test_ask_answers_without_importing_heavy_libraries(tmp_path: Path) -> None:
    script = (
        "import contextlib, io, json, sys\n"
        "from adapters.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()) as out:\n"
        f"    code = main(['ask', {SEED!r}])\n"
        f"heavy = sorted(m for m in {HEAVY!r} if m in sys.modules)\n"
        "print(json.dumps({'code': code, 'heavy': heavy, 'answer': out.getvalue()}))\n"
    )
    env = {"GPUPLAN_STATE_DIR": str(tmp_path), "PATH": "/usr/bin:/bin"}
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT, env=env
    )
    result = json.loads(done.stdout)
    assert result["code"] == 0 and "13" in result["answer"]
    assert result["heavy"] == []
