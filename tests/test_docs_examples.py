"""The docs cannot go stale: every marked example is what tools/docs_examples.py writes from the
command's real output, and README.md stays a front door that fits on a screen."""

from __future__ import annotations

import difflib
import importlib.util
import re
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
README = REPO / "README.md"
# Issue 33: the README is the overview; topics live in docs/.
README_MAX_LINES, README_MAX_BYTES = 600, 45 * 1024


def _tool():
    spec = importlib.util.spec_from_file_location("docs_examples", REPO / "tools/docs_examples.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


TOOL = _tool()


@pytest.mark.parametrize("path", TOOL.documents(), ids=lambda path: path.name)
def test_every_example_is_the_commands_output(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    expected = TOOL.rewritten(text)
    if expected != text:
        diff = difflib.unified_diff(text.splitlines(), expected.splitlines(), lineterm="", n=1)
        pytest.fail(
            f"{path.name}: an example is stale; run `.venv/bin/python tools/docs_examples.py`\n"
            + "\n".join(list(diff)[:40])
        )


def test_the_readme_and_the_topic_guides_carry_examples() -> None:
    marked = {path.name for path in TOOL.documents() if TOOL.BLOCK.search(path.read_text("utf-8"))}
    assert {"README.md", "reference.md"} <= marked


def test_the_readme_fits_on_a_screen() -> None:
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= README_MAX_LINES
    assert len(text.encode("utf-8")) <= README_MAX_BYTES


def test_every_docs_link_in_the_readme_resolves() -> None:
    text = README.read_text(encoding="utf-8")
    links = re.findall(r"\]\((docs/[^)#\s]+)(?:#([^)\s]+))?\)", text)
    assert links, "the README links its topic guides"
    for target, anchor in links:
        path = REPO / target
        assert path.is_file(), target
        if anchor:
            headings = re.findall(r"^#+ (.+)$", path.read_text("utf-8"), re.M)
            slugs = {re.sub(r"[^\w\- ]", "", h.lower()).strip().replace(" ", "-") for h in headings}
            assert anchor in slugs, f"{target}#{anchor}"


def test_the_serve_commands_name_their_extra() -> None:
    text = README.read_text(encoding="utf-8")
    for extra in ("slack", "discord", "mcp", "chart", "redis"):
        assert re.search(rf"pip install [^\n]*\.\[[a-z,]*\b{extra}\b", text), extra


def test_tests_tools_and_benches_name_no_folder_outside_the_repository() -> None:
    """Issue 33: data tools read the repository, or ../shared only by an explicit option."""
    named = re.compile(r"""["']\.\./|/work/|shared["'] ?/""")
    climbs = re.compile(r"parents\[(\d)\]|((?:\.parent\b)+)")

    def leaves_the_repository(path: Path, line: str) -> bool:
        # A file n folders deep reaches the root with parents[n] (or n+1 `.parent`s): no further.
        depth = len(path.relative_to(REPO).parts) - 1
        for match in climbs.finditer(line):
            steps = int(match[1]) if match[1] else match[2].count(".parent") - 1
            if steps > depth:
                return True
        return bool(named.search(line))

    offenders = [
        f"{path.relative_to(REPO)}:{number}"
        for folder in ("tests", "tools", "bench")
        for path in (REPO / folder).rglob("*.py")
        for number, line in enumerate(path.read_text("utf-8").splitlines(), start=1)
        if leaves_the_repository(path, line)
        and not line.lstrip().startswith("#")
        and path != Path(__file__).resolve()  # the patterns above
    ]
    assert offenders == []
