"""Every case in tests/data/parse_corpus.jsonl: the fields the text says, and nothing else.

Each case names its pattern family (phrasing.md) and language; `expect` is the exact `fields`
dict, `clarify` marks texts with no model or size, `alternatives` the other jobs of a comparison,
`assumptions` words that must appear in a stated assumption.
"""

from __future__ import annotations

from typing import Any

import pytest

from planner.parsing import parse
from tests.parse_cases import CORPUS, field_diff, load_cases

CASES = load_cases(CORPUS)


def test_corpus_is_big_and_covers_both_languages() -> None:
    assert len(CASES) >= 150
    assert {case["lang"] for case in CASES} == {"en", "zh"}
    assert len({case["id"] for case in CASES}) == len(CASES)


@pytest.mark.parametrize("case", CASES, ids=[case["id"] for case in CASES])
def test_case(case: dict[str, Any]) -> None:
    result = parse(case["text"])
    assert result.error is None, result.error
    assert field_diff(case["expect"], result.fields) == {}
    if case.get("clarify"):
        assert result.spec is None and result.clarify
    else:
        assert result.spec is not None and result.clarify is None
    for expected, actual in zip(
        case.get("alternatives", []), result.alternative_fields, strict=True
    ):
        assert field_diff(expected, {k: actual.get(k) for k in expected}) == {}
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
