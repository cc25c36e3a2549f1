"""Parser accuracy: share of fields read right, per field, per style and per language and kind.

A field counts once per case for every key the case expects or the parser read: right when the
values match (tests/parse_cases.py `same_field`), wrong when missed, misread or read from nothing.
Each expected key of a comparison's other jobs counts too. Styles: terse (chat lines, follow-ups,
comparisons), prose (English questions, logs and config dumps) and zh (Chinese). Follow-up threads
(tests/data/followup_threads.jsonl) are scored turn by turn on the job the bot keeps.
Prints Markdown tables; asserts nothing. `--misses` lists every wrong field; `--batch N` scores
only the realistic cases of that batch (batch 2: the set written for issue #21).

usage: .venv/bin/python bench/parse_accuracy.py [--misses] [--batch N]
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
from tests.thread_cases import THREADS, score_thread

STYLES = ("terse", "prose", "zh")


def _percent(right: int, total: int) -> str:
    return f"{100 * right / total:.1f} % ({right}/{total})" if total else "-"


def report(name: str, cases: list[dict[str, Any]], show_misses: bool) -> None:
    by_style: dict[str, Counter[bool]] = {s: Counter() for s in STYLES}
    by_kind: dict[tuple[str, str], Counter[bool]] = {}
    by_field: dict[str, Counter[bool]] = {}
    perfect: Counter[str] = Counter()
    misses: list[str] = []
    for case in cases:
        verdicts, lines = score_case(case)
        misses += lines
        case_style = style(case)
        perfect[case_style] += not lines
        kind = by_kind.setdefault((case["lang"], case["family"]), Counter())
        for field, right in verdicts.items():
            by_style[case_style][right] += 1
            kind[right] += 1
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
    print("\n| language | kind | fields right |")
    print("|---|---|---:|")
    for lang in sorted({lang for lang, _ in by_kind}):
        for (kind_lang, family), fields in sorted(by_kind.items()):
            if kind_lang == lang:
                print(f"| {lang} | {family} | {_percent(fields[True], fields.total())} |")
        language = sum((c for (k, _), c in by_kind.items() if k == lang), Counter())
        print(f"| {lang} | all | {_percent(language[True], language.total())} |")
    print("\n| field | fields right |")
    print("|---|---:|")
    for field, fields in sorted(by_field.items(), key=lambda item: -item[1].total()):
        print(f"| {field} | {_percent(fields[True], fields.total())} |")
    if show_misses:
        print("\n" + "\n".join(misses))


def report_threads(show_misses: bool) -> None:
    threads = load_cases(THREADS)
    by_lang: dict[str, Counter[bool]] = {}
    misses: list[str] = []
    turns = 0
    for thread in threads:
        for verdicts, lines in score_thread(thread):
            turns += 1
            misses += lines
            by_lang.setdefault(thread["lang"], Counter()).update(verdicts.values())
    print(
        f"\n### follow-up threads (tests/data/followup_threads.jsonl: {len(threads)} threads, ",
        end="",
    )
    print(f"{turns} turns)\n")
    print("| language | fields right, turn by turn |")
    print("|---|---:|")
    for lang, fields in sorted(by_lang.items()):
        print(f"| {lang} | {_percent(fields[True], fields.total())} |")
    total = sum(by_lang.values(), Counter())
    print(f"| all | {_percent(total[True], total.total())} |")
    if show_misses:
        print("\n" + "\n".join(misses))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--misses", action="store_true", help="list every wrong field")
    parser.add_argument("--batch", type=int, help="only the realistic cases of this batch")
    args = parser.parse_args()
    realistic = load_cases(REALISTIC)
    if args.batch is not None:
        realistic = [case for case in realistic if case.get("batch", 1) == args.batch]
        report(f"realistic set, batch {args.batch}", realistic, args.misses)
        report_threads(args.misses)
        return
    report("realistic set (tests/data/parse_realistic.jsonl)", realistic, args.misses)
    report_threads(args.misses)
    report("corpus (tests/data/parse_corpus.jsonl)", load_cases(CORPUS), args.misses)


if __name__ == "__main__":
    main()
