"""The independent realistic set (tests/data/parse_realistic.jsonl): how the parser generalises.

Unlike the corpus, not every case must be read perfectly: the set holds questions as people really
write them, traps included, and the parser must read enough of their fields (issue #4's aims:
terse chat lines >= 95 %, English prose >= 90 %, Chinese >= 90 %).
"""

from __future__ import annotations

from collections import Counter

import pytest

from planner.parsing import parse
from tests.parse_cases import REALISTIC, load_cases, score_case, style

CASES = load_cases(REALISTIC)
FLOORS = {"terse": 0.95, "prose": 0.90, "zh": 0.90}


def test_set_is_big_and_covers_every_style() -> None:
    assert len(CASES) >= 150
    assert len({case["id"] for case in CASES}) == len(CASES)
    assert {case["lang"] for case in CASES} == {"en", "zh"}
    families = {case["family"] for case in CASES}
    assert {"terse", "prose", "config", "zh", "followup", "compare"} <= families


@pytest.mark.parametrize("case_style", sorted(FLOORS))
def test_fields_read_right_per_style(case_style: str) -> None:
    tally: Counter[bool] = Counter()
    misses: list[str] = []
    for case in CASES:
        if style(case) == case_style:
            verdicts, lines = score_case(case)
            tally.update(verdicts.values())
            misses += lines
    share = tally[True] / tally.total()
    assert share >= FLOORS[case_style], "\n".join(misses)


@pytest.mark.parametrize("case", CASES, ids=[case["id"] for case in CASES])
def test_case_never_errors_and_asks_only_when_no_model(case: dict) -> None:
    result = parse(case["text"])
    assert result.error is None
    assert (result.clarify is not None) == bool(case.get("clarify"))
