"""The parser's two case files and the one rule for whether a read field is right.

tests/data/parse_corpus.jsonl was written alongside the parser; parse_realistic.jsonl was written
independently, from how people phrase questions in issue trackers and chat, to score how the parser
generalises. Both the tests and bench/parse_accuracy.py judge fields with `same_field`.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

from planner.parsing import parse

DATA = Path(__file__).parent / "data"
CORPUS = DATA / "parse_corpus.jsonl"
REALISTIC = DATA / "parse_realistic.jsonl"


def load_cases(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def style(case: dict[str, Any]) -> str:
    """terse (chat lines and follow-ups), prose (English questions and config dumps) or zh."""
    if "style" in case:
        return case["style"]
    if case["lang"] == "zh":
        return "zh"
    return "prose" if case["family"] in ("prose", "config") else "terse"


def same_field(field: str, expected: Any, actual: Any) -> bool:
    if isinstance(expected, float | int) and not isinstance(expected, bool):
        return isinstance(actual, float | int) and math.isclose(expected, actual, rel_tol=0.01)
    if field in ("model", "gpu") and isinstance(expected, str) and "/" not in expected:
        return _loose(expected) == _loose(str(actual))
    return expected == actual


def _loose(name: str) -> str:
    return re.sub(r"[\s_-]+", " ", name.lower()).strip()


def field_diff(expected: dict[str, Any], actual: dict[str, Any]) -> dict[str, Any]:
    """Every field read wrongly, missed or read where the text said nothing: (expected, actual)."""
    keys = expected.keys() | actual.keys()
    return {
        key: (expected.get(key), actual.get(key))
        for key in sorted(keys)
        if not same_field(key, expected.get(key), actual.get(key))
    }


def score_case(case: dict[str, Any]) -> tuple[dict[str, bool], list[str]]:
    """Right/wrong per field of one case (each expected field of a comparison's other jobs counts
    too), and a line per wrong field."""
    result = parse(case["text"])
    misses = field_diff(case["expect"], result.fields)
    verdicts = {
        field: field not in misses for field in case["expect"].keys() | result.fields.keys()
    }
    lines = [
        f"{case['id']} {field}: expected {e!r}, read {a!r}" for field, (e, a) in misses.items()
    ]
    read_alternatives = result.alternative_fields
    for index, expected in enumerate(case.get("alternatives", [])):
        actual = read_alternatives[index] if index < len(read_alternatives) else {}
        for field, value in expected.items():
            right = same_field(field, value, actual.get(field))
            verdicts[f"alternative {index + 1} {field}"] = right
            if not right:
                lines.append(
                    f"{case['id']} alternative {index + 1} {field}: "
                    f"expected {value!r}, read {actual.get(field)!r}"
                )
    return verdicts, lines
