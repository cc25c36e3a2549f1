"""Reply copy has one home (bot.phrases) and a validation error becomes words in one function."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from pydantic import ValidationError

from planner.errors import invalid_field
from planner.spec import JobSpec

ROOT = Path(__file__).resolve().parents[1]
# Modules that build replies: they pass figures to bot.phrases and hold no sentence themselves.
BUILDERS = (
    *sorted(str(path.relative_to(ROOT)) for path in (ROOT / "bot" / "conversation").glob("*.py")),
    "bot/reply_builder.py",
    "bot/changes.py",
)


def _sentences(path: Path) -> list[str]:
    """String constants of three or more words that are not docstrings or log messages."""
    tree = ast.parse(path.read_text())
    skipped: set[int] = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr):
            skipped.add(id(body[0].value))
        if isinstance(node, ast.Call) and getattr(node.func, "attr", "") in (
            "exception",
            "warning",
            "info",
            "debug",
            "error",
        ):
            skipped.update(id(arg) for arg in ast.walk(node))
        if isinstance(node, ast.Raise):
            skipped.update(id(arg) for arg in ast.walk(node))
    return [
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and id(node) not in skipped
        and len(node.value.split()) >= 3
    ]


@pytest.mark.parametrize("module", BUILDERS)
def test_reply_builders_hold_no_sentence(module: str) -> None:
    assert _sentences(ROOT / module) == []


def _error(**fields: object) -> ValidationError:
    with pytest.raises(ValidationError) as caught:
        JobSpec.model_validate({"method": "lora", **fields})
    return caught.value


def test_a_bad_value_reads_as_one_sentence_naming_the_field_and_the_limit() -> None:
    name, sentence = invalid_field(_error(seq_len=0))
    assert name == "seq_len"
    assert sentence == "Context length can't be 0: it should be greater than or equal to 1."


def test_json_writers_also_get_the_key() -> None:
    _, sentence = invalid_field(_error(num_gpus=0), name_the_key=True)
    assert sentence.startswith("GPU count (num_gpus) can't be 0")


def test_a_missing_field_says_it_is_missing() -> None:
    with pytest.raises(ValidationError) as caught:
        JobSpec.model_validate({"model": "llama"})
    assert invalid_field(caught.value) == ("method", "Method is missing.")
