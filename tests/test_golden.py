"""The golden answers (tests/golden.py) are what every surface says today: a change that alters
one on purpose regenerates them (`.venv/bin/python -m tests.golden`) and says why."""

from __future__ import annotations

import difflib

import pytest

from tests.golden import GOLDEN, answers


@pytest.fixture(scope="module")
def produced() -> dict[str, str]:
    return answers()


def test_every_golden_answer_is_unchanged(produced: dict[str, str]) -> None:
    kept = {str(path.relative_to(GOLDEN)): path for path in GOLDEN.rglob("*") if path.is_file()}
    assert sorted(produced) == sorted(kept), "cases added or removed: regenerate the golden set"
    changed = [name for name, body in produced.items() if kept[name].read_text("utf-8") != body]
    if changed:
        first = changed[0]
        diff = difflib.unified_diff(
            kept[first].read_text("utf-8").splitlines(),
            produced[first].splitlines(),
            "golden",
            "now",
            lineterm="",
            n=1,
        )
        listed = ", ".join(changed[:8])
        raise AssertionError(
            f"{len(changed)} golden answers changed ({listed}…); first:\n"
            + "\n".join(list(diff)[:40])
        )


def test_the_set_is_large_and_bilingual(produced: dict[str, str]) -> None:
    assert len(produced) >= 200
    assert any("每张GPU" in body for body in produced.values())
