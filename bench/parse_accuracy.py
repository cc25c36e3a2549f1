"""Parser accuracy: share of fields read right, per field and per style, on both case files.

A field counts once per case for every key the case expects or the parser read: right when the
values match (tests/parse_cases.py `same_field`), wrong when missed, misread or read from nothing.
Each expected key of a comparison's other jobs counts too. Styles: terse (chat lines, follow-ups,
comparisons), prose (English questions, logs and config dumps) and zh (Chinese).
Prints Markdown tables; asserts nothing. `--misses` lists every wrong field.

usage: .venv/bin/python bench/parse_accuracy.py [--misses]
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.parse_cases import (
    CORPUS,
    REALISTIC,
    load_cases,
    score_case,
    style,
)

STYLES = ("terse", "prose", "zh")


def _percent(right: int, total: int) -> str:
    return f"{100 * right / total:.1f} % ({right}/{total})" if total else "-"


def report(name: str, cases: list[dict[str, Any]], show_misses: bool) -> None:
    by_style: dict[str, Counter[bool]] = {s: Counter() for s in STYLES}
    by_field: dict[str, Counter[bool]] = {}
    perfect: Counter[str] = Counter()
    misses: list[str] = []
    for case in cases:
        verdicts, lines = score_case(case)
        misses += lines
        case_style = style(case)
        perfect[case_style] += not lines
        for field, right in verdicts.items():
            by_style[case_style][right] += 1
            by_field.setdefault(field.split(" ")[-1], Counter())[right] += 1
    counts = Counter(style(case) for case in cases)
    print(f"\n### {name} ({len(cases)} cases)\n")
    print("| style | cases | fields right | cases fully right |")
    print("|---|---:|---:|---:|")
    for s in STYLES:
        fields = by_style[s]
        print(
            f"| {s} | {counts[s]} | {_percent(fields[True], fields.total())} | "
            f"{_percent(perfect[s], counts[s])} |"
        )
    total = sum((c for c in by_style.values()), Counter())
    print(
        f"| all | {len(cases)} | {_percent(total[True], total.total())} | "
        f"{_percent(sum(perfect.values()), len(cases))} |"
    )
    print("\n| field | fields right |")
    print("|---|---:|")
    for field, fields in sorted(by_field.items(), key=lambda item: -item[1].total()):
        print(f"| {field} | {_percent(fields[True], fields.total())} |")
    if show_misses:
        print("\n" + "\n".join(misses))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--misses", action="store_true", help="list every wrong field")
    args = parser.parse_args()
    report("realistic set (tests/data/parse_realistic.jsonl)", load_cases(REALISTIC), args.misses)
    report("corpus (tests/data/parse_corpus.jsonl)", load_cases(CORPUS), args.misses)


if __name__ == "__main__":
    main()
