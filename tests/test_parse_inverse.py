"""Inverse questions (tests/data/parse_inverse.jsonl): the limit asked for and the job's fields,
exactly, in English and Chinese; a limit phrase followed by a value is a setting, not a question."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from planner.parsing import parse
from tests.parse_cases import field_diff, load_cases

CASES = load_cases(Path(__file__).resolve().parent / "data" / "parse_inverse.jsonl")


def test_both_languages_and_every_kind_of_limit_are_covered() -> None:
    assert {case["lang"] for case in CASES} == {"en", "zh"}
    asked = {case["expect"].get("asked") for case in CASES}
    assert asked >= {"seq_len", "micro_batch", "params_b", "num_gpus", "gpu", None}


@pytest.mark.parametrize("case", CASES, ids=[case["id"] for case in CASES])
def test_case(case: dict[str, Any]) -> None:
    result = parse(case["text"])
    assert result.error is None, result.error
    assert field_diff(case["expect"], result.fields) == {}
    assert result.spec is not None and result.asked == case["expect"].get("asked")
