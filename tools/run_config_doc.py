"""Regenerate the example in docs/run-configs.md from the command itself: runs
`gpuplan config EXAMPLE --stack axolotl --out DIR` in-process and writes what it printed and the
files it wrote between the doc's `<!-- example:begin -->` and `<!-- example:end -->` markers.

Run from the repository root: `.venv/bin/python tools/run_config_doc.py`.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import io
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from adapters.cli import main  # noqa: E402

DOC = REPO / "docs" / "run-configs.md"
EXAMPLE = "llama 3.1 8b qlora 4k ctx on a 4090, 20M tokens"
STACK = "axolotl"
BEGIN, END = "<!-- example:begin -->", "<!-- example:end -->"


def example() -> str:
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "d"
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed):
            code = main(["config", EXAMPLE, "--stack", STACK, "--out", str(out)])
        if code != 0:
            sys.exit(f"gpuplan config exited {code}")
        shown = printed.getvalue().replace(str(out), "d")
        parts = [
            f'`gpuplan config "{EXAMPLE}" --stack {STACK} --out d/` '
            f"({dt.date.today().isoformat()}):",
            "",
            "```text",
            shown.rstrip(),
            "```",
        ]
        for path in sorted(out.iterdir(), key=lambda p: (p.name == "README.txt", p.name)):
            language = {".yaml": "yaml", ".json": "json", ".py": "python", ".sh": "bash"}
            parts += ["", f"`d/{path.name}`:", "", f"```{language.get(path.suffix, 'text')}"]
            parts += [path.read_text(encoding="utf-8").rstrip(), "```"]
    return "\n".join(parts)


def main_doc() -> None:
    text = DOC.read_text(encoding="utf-8")
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    DOC.write_text(f"{head}{BEGIN}\n{example()}\n{END}{tail}", encoding="utf-8")
    print(f"wrote the example into {DOC}")


if __name__ == "__main__":
    main_doc()
