"""`gpuplan chat`: one message per line, answers in order, and the thread persists across runs."""

from __future__ import annotations

import json
import os
import pty
import select
import subprocess
import sys
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]


def _chat(state_dir: Path, stdin: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "adapters.cli", "chat", *args],
        input=stdin,
        env={**os.environ, "GPUPLAN_STATE_DIR": str(state_dir)},
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_piped_chat_answers_each_line_and_continues_the_thread_later(tmp_path: Path) -> None:
    first = _chat(tmp_path, "13B QLoRA, 4k ctx, 20M tokens x3\nwhat if 8k ctx?\n", "--thread", "t1")
    assert first.returncode == 0, first.stderr
    question, followup = first.stdout.split("> what if 8k ctx?")
    assert "4,096 ctx" in question and "What changed" not in question
    assert "What changed" in followup and "context length: 4096 → 8192" in followup
    assert "gpuplan>" not in first.stdout  # no prompt when piped

    later = _chat(tmp_path, "and 2 epochs?\n", "--thread", "t1")
    assert later.returncode == 0, later.stderr
    assert "8,192 ctx" in later.stdout and "epochs: 3 → 2" in later.stdout
    assert "context:" not in later.stdout


def test_chat_json_prints_one_line_per_message(tmp_path: Path) -> None:
    messages = "13B QLoRA, 4k ctx, 20M tokens x3\n\nwhat if 8k ctx?\npurple monkey dishwasher\n"
    result = _chat(tmp_path, messages, "--thread", "j", "--json")
    assert result.returncode == 0, result.stderr
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    assert len(lines) == 3  # the blank line is not a message
    assert lines[0]["changes"] == {} and lines[0]["plan"]["spec"]["seq_len"] == 4096
    assert lines[1]["changes"] == {"seq_len": [4096, 8192]}
    assert set(lines[2]) == {"error", "kind"} and lines[2]["kind"] == "clarify"


def test_threads_are_separate(tmp_path: Path) -> None:
    _chat(tmp_path, "13B QLoRA, 4k ctx\n", "--thread", "a")
    other = _chat(tmp_path, "what if 8k ctx?\n", "--thread", "b", "--json")
    assert "error" in json.loads(other.stdout)


def test_interactive_chat_prompts_and_colours_on_a_terminal(tmp_path: Path) -> None:
    main_fd, terminal_fd = pty.openpty()
    env = {**os.environ, "GPUPLAN_STATE_DIR": str(tmp_path), "TERM": "xterm"}
    env.pop("NO_COLOR", None)
    chat = subprocess.Popen(
        [sys.executable, "-m", "adapters.cli", "chat", "--thread", "tty"],
        stdin=terminal_fd,
        stdout=terminal_fd,
        stderr=terminal_fd,
        env=env,
        cwd=REPO_ROOT,
    )
    os.close(terminal_fd)
    try:
        assert "gpuplan> " in _read_until(main_fd, "gpuplan> ")
        os.write(main_fd, b"13B QLoRA, 4k ctx, 20M tokens x3\n")
        answer = _read_until(main_fd, "gpuplan> ")
        assert "\033[32mfits\033[0m" in answer and "4,096 ctx" in answer
        os.write(main_fd, b"\x04")  # Ctrl-D leaves
        assert chat.wait(timeout=30) == 0
    finally:
        if chat.poll() is None:
            chat.kill()
        os.close(main_fd)


def _read_until(fd: int, marker: str, timeout_s: float = 30.0) -> str:
    """Read a pty until `marker` shows up (or the deadline passes, so a hang fails the test)."""
    seen = b""
    deadline = time.monotonic() + timeout_s
    while marker.encode() not in seen and time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.5)
        if ready:
            seen += os.read(fd, 65536)
    return seen.decode(errors="replace")
