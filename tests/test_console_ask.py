"""`gpuplan ask` and `gpuplan render`: text, Plan JSON, a chart, payloads, and a light start."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from adapters.cli import main
from adapters.console.text import render_text, wants_colour
from bot.conversation import answer_once

REPO_ROOT = Path(__file__).resolve().parents[1]
SEED = "13B QLoRA, 4k ctx, 20M tokens x3"


def test_ask_prints_a_readable_answer_without_colour_when_piped(capsys) -> None:
    assert main(["ask", SEED]) == 0
    out = capsys.readouterr().out
    assert "\033[" not in out
    lines = out.splitlines()
    header = next(line for line in lines if line.startswith("card"))
    # Every row has its verdict right under the header's "fit".
    rows = lines[lines.index(header) + 1 :][: len(answer_once(SEED).reply.table)]
    column = header.index(" fit ") + 1
    assert rows and all(row[column:].startswith(("fits", "tight", "no ")) for row in rows)
    assert "Memory per GPU" in out and "Try:" in out


def test_ask_json_prints_the_plan(capsys) -> None:
    assert main(["ask", "--json", SEED]) == 0
    plan = json.loads(capsys.readouterr().out)
    assert plan["spec"]["seq_len"] == 4096 and plan["memory"]["required_gib"] > 0
    assert plan["options"]


def test_ask_json_of_a_comparison_adds_every_compared_plan_in_order(capsys) -> None:
    assert main(["ask", "--json", "Qwen3-8B lora vs qlora"]) == 0
    plan = json.loads(capsys.readouterr().out)
    assert [p["spec"]["method"] for p in plan["alternatives"]] == ["lora", "qlora"]
    assert plan["alternatives"][0]["memory"] == plan["memory"]
    assert all(p["options"] and p["recommendation"] for p in plan["alternatives"])
    assert main(["ask", "--json", SEED]) == 0
    assert "alternatives" not in json.loads(capsys.readouterr().out)


def test_ask_shows_a_comparison_side_by_side(capsys) -> None:
    assert main(["ask", "7B or 13B qlora on a 4090"]) == 0
    out = capsys.readouterr().out
    side = out[out.index("Side by side") :].splitlines()[1:3]
    assert "Llama-2-7B" in side[0] and "Llama-2-13B" in side[1]


def test_ask_with_bad_input_answers_briefly_and_fails(capsys) -> None:
    assert main(["ask", "--json", "hello there"]) == 1
    assert set(json.loads(capsys.readouterr().out)) == {"error", "kind"}
    assert main(["ask", "x" * 5_000]) == 1
    assert "too long" in capsys.readouterr().out


def test_ask_chart_writes_a_png(tmp_path: Path, capsys) -> None:
    target = tmp_path / "plan.png"
    assert main(["ask", "--chart", str(target), SEED]) == 0
    assert target.read_bytes().startswith(b"\x89PNG")


def test_colour_only_on_a_terminal_and_never_with_no_color(monkeypatch) -> None:
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("TERM", "xterm-256color")
    assert wants_colour(Terminal()) and not wants_colour(io.StringIO())
    monkeypatch.setenv("NO_COLOR", "1")
    assert not wants_colour(Terminal())
    reply = answer_once(SEED).reply
    coloured, plain = render_text(reply, colour=True), render_text(reply, colour=False)
    assert "\033[32mfits\033[0m" in coloured and "\033[" not in plain


def test_ask_imports_no_chart_or_chat_platform_libraries() -> None:
    check = (
        f"import sys; from adapters.cli import main; main(['ask', {SEED!r}]);"
        "heavy = [m for m in ('matplotlib', 'discord', 'slack_bolt', 'slack_sdk', 'aiohttp')"
        " if m in sys.modules]; sys.exit(f'imported {heavy}' if heavy else 0)"
    )
    result = subprocess.run(
        [sys.executable, "-c", check], cwd=REPO_ROOT, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize("platform", ["slack", "discord"])
def test_render_prints_the_platform_payloads(platform: str, capsys) -> None:
    assert main(["render", platform, SEED]) == 0
    payloads = json.loads(capsys.readouterr().out)
    assert isinstance(payloads, list) and payloads
    if platform == "slack":
        assert all(payload["text"] and payload["blocks"] for payload in payloads)
    else:
        assert all(payload["allowed_mentions"] == {"parse": []} for payload in payloads)
        assert payloads[0]["embeds"]


def test_ask_chart_without_the_chart_extra_says_how_to_install_it(
    tmp_path: Path, capsys, monkeypatch
) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # as if the extra were not installed
    assert main(["ask", "--chart", str(tmp_path / "plan.png"), SEED]) == 1
    err = capsys.readouterr().err
    assert "--chart needs matplotlib" in err and "pip install -q -e '.[chart]'" in err
