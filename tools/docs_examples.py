"""Rewrite the examples in README.md and docs/*.md from the commands' real output.

A doc marks an example with the command line it shows and ends it with a closing marker:

    <!-- example: gpuplan ask "13B QLoRA, 4k ctx, 20M tokens x3" -->
    …generated: a console block with the command and what it printed…
    <!-- /example -->

Steps joined by ` && ` share one fresh state directory (a chat, then `gpuplan calibration`); a
step may read stdin from `printf '…' | gpuplan …`. Every step runs `gpuplan`'s own `main`
in-process on the bundled price table, a fresh state directory and the golden set's fixed clock
(tests/golden.py), so an example says the same thing whichever day it is regenerated.
tests/test_docs_examples.py checks that every marked block is what this script would write.

Run from the repository root: `.venv/bin/python tools/docs_examples.py` (rewrites the files).
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import shlex
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from unittest import mock

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.golden import FIXED_NOW_S  # noqa: E402  (the clock the golden answers use)

BLOCK = re.compile(r"(<!-- example: (?P<command>.+?) -->\n)(?P<body>.*?)(<!-- /example -->)", re.S)
# Variables a developer's shell may set that would change an answer (their own prices, feeds).
UNSET = ("GPUPLAN_PRICES", "GPUPLAN_PROVIDERS", "GPUPLAN_FEEDS", "GPUPLAN_STATE_URL", "NO_COLOR")


def documents() -> list[Path]:
    return [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]


@contextlib.contextmanager
def _fixed_world() -> Iterator[None]:
    """A fresh state directory, no price overrides, and MarketPrices' default clock fixed."""
    from bot.prices.market import MarketPrices

    saved = {name: os.environ.get(name) for name in (*UNSET, "GPUPLAN_STATE_DIR")}
    defaults = MarketPrices.__init__.__kwdefaults__
    with tempfile.TemporaryDirectory() as state_dir:
        try:
            for name in UNSET:
                os.environ.pop(name, None)
            os.environ["GPUPLAN_STATE_DIR"] = state_dir
            with mock.patch.dict(defaults, {"clock": lambda: FIXED_NOW_S}):
                yield
        finally:
            for name, value in saved.items():
                if value is None:
                    os.environ.pop(name, None)
                else:
                    os.environ[name] = value


def _step(line: str) -> str:
    """One `[printf '…' |] gpuplan ARGS` step: its stdout and stderr as a terminal shows them."""
    from adapters.cli import main

    stdin = ""
    if "|" in line:
        feed, line = (part.strip() for part in line.split("|", 1))
        words = shlex.split(feed)
        if words[:1] != ["printf"] or len(words) != 2:
            raise ValueError(f"only `printf '…' | gpuplan …` can feed stdin: {feed!r}")
        stdin = words[1].replace("\\n", "\n")  # the one escape the examples use
    words = shlex.split(line)
    if words[:1] != ["gpuplan"]:
        raise ValueError(f"an example runs gpuplan, not {words[:1]}")
    printed = io.StringIO()
    with (
        mock.patch.object(sys, "stdin", io.StringIO(stdin)),
        contextlib.redirect_stdout(printed),
        contextlib.redirect_stderr(printed),
    ):
        main(words[1:])
    return printed.getvalue().rstrip("\n")


def example(command: str) -> str:
    """The block a marker with `command` holds: each step's line and output, in a console fence."""
    lines = ["```console"]
    with _fixed_world():
        for step in command.split(" && "):
            lines += [f"$ {step}", _step(step)]
    return "\n".join([*lines, "```"]) + "\n"


def rewritten(text: str) -> str:
    return BLOCK.sub(lambda m: m[1] + example(m["command"]) + m[4], text)


def main() -> int:
    for path in documents():
        text = path.read_text(encoding="utf-8")
        if (new := rewritten(text)) != text:
            path.write_text(new, encoding="utf-8")
            print(f"rewrote the examples in {path.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
