"""`gpuplan parse TEXT`: the JobSpec read from free text, with the assumptions behind it.

`--jsonl FILE|-` reads lines {"id", "text"} and writes one line per input, in order: {"id", "spec",
"assumptions"} or {"id", "error"}. A bad line gets an error line; the run goes on.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import IO, Any


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "text", nargs="*", help='the question, e.g. "13B QLoRA, 4k ctx, 20M tokens"'
    )
    parser.add_argument("--jsonl", metavar="FILE", help='lines of {"id", "text"}; "-" for stdin')


def run(args: argparse.Namespace) -> int:
    if args.jsonl:
        from adapters.console.lines import open_lines

        try:
            lines = open_lines(args.jsonl)
        except OSError as problem:
            print(f"gpuplan parse: cannot read {args.jsonl}: {problem.strerror}", file=sys.stderr)
            return 2
        with lines:
            return _run_jsonl(lines, sys.stdout)
    if not args.text:
        print("usage: gpuplan parse TEXT  (or --jsonl FILE|-)", file=sys.stderr)
        return 2
    return _run_text(" ".join(args.text))


def _run_text(text: str) -> int:
    from planner.parsing import parse

    result = parse(text)
    if result.error:
        print(result.error, file=sys.stderr)
        return 1
    if result.spec is None:
        print(json.dumps({"fields": result.fields}, indent=2, ensure_ascii=False))
        print(result.clarify)
    else:
        print(result.spec.model_dump_json(indent=2, exclude_none=True))
        for alternative in result.alternatives:
            print("compared with:", alternative.model_dump_json(exclude_none=True))
    if result.asked:
        print(f"asks for: {result.asked}")
    for assumption in result.assumptions:
        print(f"assumed: {assumption}")
    for text_left in result.unread:
        print(f"not read: {text_left}")
    return 0


def _answer(line: str, number: int) -> dict[str, Any]:
    from bot import json_limits
    from planner.parsing import parse

    try:
        item = json_limits.loads(line)
    except ValueError:  # json_limits.JsonRefused: bad syntax, too deep, a number too long
        return {"id": None, "error": f"line {number} is not JSON"}
    if not isinstance(item, dict):
        return {"id": None, "error": f"line {number} is not a JSON object"}
    ident, text = item.get("id"), item.get("text")
    if not isinstance(text, str):
        return {"id": ident, "error": 'no "text" string on this line'}
    result = parse(text)
    if result.error:
        return {"id": ident, "error": result.error}
    if result.spec is None:
        return {"id": ident, "error": result.clarify, "fields": result.fields}
    answer = {
        "id": ident,
        "spec": result.spec.model_dump(mode="json", exclude_none=True),
        "assumptions": result.assumptions,
    }
    return answer | ({"asked": result.asked} if result.asked else {})


def _run_jsonl(lines: IO[str], out: IO[str]) -> int:
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        out.write(json.dumps(_answer(line, number), ensure_ascii=False) + "\n")
        out.flush()
    return 0
