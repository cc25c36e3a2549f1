"""`gpuplan models [FILTER]`: the models gpuplan knows, with total / active parameters, context
and source. `--json` prints the rows as JSON; `--markdown` as docs/method.md's table."""

from __future__ import annotations

import argparse
import json

from planner.catalog.model_table import ModelRow, markdown_table, model_rows

SOURCE_WIDTH = 60


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("filter", nargs="*", help='part of a name, id, family or kind ("moe")')
    output = parser.add_mutually_exclusive_group()
    output.add_argument("--json", action="store_true", help="the rows as a JSON list")
    output.add_argument("--markdown", action="store_true", help="a Markdown table")


def _line(row: ModelRow, name_width: int) -> str:
    total = f"{row.total_params_b:>9,.2f}" if row.total_params_b is not None else "out of scope"
    active = f"{row.active_params_b:>8,.2f}" if row.active_params_b is not None else " " * 8
    context = f"{row.max_context:>10,}" if row.max_context else " " * 10
    source = row.source[:SOURCE_WIDTH]
    return f"{row.name:<{name_width}}  {row.kind:<9}{total:>12}  {active}  {context}  {source}"


def run(args: argparse.Namespace) -> int:
    words = " ".join(args.filter)
    rows = model_rows(words)
    if args.json:
        print(json.dumps([row.as_dict() for row in rows], indent=1, ensure_ascii=False))
        return 0
    if args.markdown:
        print(markdown_table(rows))
        return 0
    if not rows:
        print(f"no model in the catalog matches {words!r}")
        return 1
    width = max(len(row.name) for row in rows)
    header = f"{'model':<{width}}  {'kind':<9}{'total (B)':>12}  {'active B':>8}  {'context':>10}"
    print(header + "  source")
    for row in rows:
        print(_line(row, width))
    return 0
