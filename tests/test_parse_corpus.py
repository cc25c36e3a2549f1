"""Every case in tests/data/parse_corpus.jsonl: the fields the text says, and nothing else.

Each case names its pattern family (phrasing.md) and language; `expect` is the exact `fields`
dict, `clarify` marks texts with no model or size, `alternatives` the other jobs of a comparison,
`assumptions` words that must appear in a stated assumption.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

import pytest

from planner.parsing import parse

CORPUS = Path(__file__).parent / "data" / "parse_corpus.jsonl"
CASES = [json.loads(line) for line in CORPUS.read_text(encoding="utf-8").splitlines() if line]


def _same(field: str, expected: Any, actual: Any) -> bool:
    if isinstance(expected, float | int) and not isinstance(expected, bool):
        return isinstance(actual, float | int) and math.isclose(expected, actual, rel_tol=0.01)
    if field in ("model", "gpu") and isinstance(expected, str) and "/" not in expected:
        return _loose(expected) == _loose(str(actual))
    return expected == actual


def _loose(name: str) -> str:
    return re.sub(r"[\s_-]+", " ", name.lower()).strip()


def _diff(expected: dict[str, Any], actual: dict[str, Any]) -> dict[str, Any]:
    keys = expected.keys() | actual.keys()
    return {
        key: (expected.get(key), actual.get(key))
        for key in sorted(keys)
        if not _same(key, expected.get(key), actual.get(key))
    }


def test_corpus_is_big_and_covers_both_languages() -> None:
    assert len(CASES) >= 150
    assert {case["lang"] for case in CASES} == {"en", "zh"}
    assert len({case["id"] for case in CASES}) == len(CASES)


@pytest.mark.parametrize("case", CASES, ids=[case["id"] for case in CASES])
def test_case(case: dict[str, Any]) -> None:
    result = parse(case["text"])
    assert result.error is None, result.error
    assert _diff(case["expect"], result.fields) == {}
    if case.get("clarify"):
        assert result.spec is None and result.clarify
    else:
        assert result.spec is not None and result.clarify is None
    for expected, actual in zip(
        case.get("alternatives", []), result.alternative_fields, strict=True
    ):
        assert _diff(expected, {k: actual.get(k) for k in expected}) == {}
    for word in case.get("assumptions", []):
        assert any(word.lower() in said.lower() for said in result.assumptions), word


def test_seed_line_states_its_readings() -> None:
    result = parse("13B QLoRA, 4k ctx, 20M tokens x3")
    assert result.fields == {
        "params_b": 13,
        "method": "qlora",
        "seq_len": 4096,
        "dataset_tokens": 20_000_000,
        "epochs": 3,
    }
    assert "4k read as 4096 tokens" in result.assumptions
    assert "x3 read as 3 epochs" in result.assumptions
