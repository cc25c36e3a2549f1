"""`gpuplan estimate`: plan JobSpec JSON — one (--spec) or a stream of lines (--jsonl)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import IO

from adapters.console.lines import open_lines
from bot import json_limits
from bot.json_limits import JsonRefused
from planner.catalog.models import ModelArch, arch_from_hf_config
from planner.errors import PlanningError
from planner.planner import make_plan, parse_spec
from planner.spec import JobSpec, Method

# Input lines past this are refused rather than parsed: no real spec comes near it.
MAX_LINE_CHARS = 100_000


def add_arguments(parser: argparse.ArgumentParser) -> None:
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--spec", metavar="FILE|-", help="one JobSpec JSON; prints the Plan JSON")
    source.add_argument(
        "--jsonl",
        metavar="FILE|-",
        help='lines {"id", "spec"}; writes one line {"id", "plan"} or {"id", "error"} each',
    )
    parser.add_argument(
        "--config",
        metavar="config.json",
        help="an HF config.json: plan this custom model offline (a LoRA job unless --spec says)",
    )


def _read_text(path: str, field: str) -> str:
    """The whole file (or stdin for "-"); an unreadable or non-UTF-8 file is a PlanningError."""
    try:
        return sys.stdin.read() if path == "-" else Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise PlanningError(f"cannot read {path}: {exc.strerror or exc}", field) from None
    except UnicodeDecodeError:
        source = "standard input" if path == "-" else path
        raise PlanningError(f"{source} is not UTF-8 text", field) from None


def _open_lines(path: str) -> IO[str]:
    try:
        return open_lines(path)
    except OSError as exc:
        raise PlanningError(f"cannot read {path}: {exc.strerror or exc}", "jsonl") from None


def _describe(exc: Exception) -> str:
    if isinstance(exc, PlanningError):
        named = exc.field and not exc.message.startswith(exc.field)
        return f"{exc.field}: {exc.message}" if named else exc.message
    return f"cannot plan this job ({type(exc).__name__})"


def _plan_json(data: object, arch: ModelArch | None) -> dict:
    return make_plan(parse_spec(data), arch).model_dump(mode="json")


def _read_config(path: str) -> ModelArch:
    try:
        config = json_limits.loads(_read_text(path, "config"))
    except JsonRefused as exc:
        raise PlanningError(f"{path} is not JSON ({exc})", "config") from None
    name = Path(path).resolve().parent.name or Path(path).stem
    return arch_from_hf_config(config, name)


def _one_line(line: str, arch: ModelArch | None) -> dict:
    if len(line) > MAX_LINE_CHARS:
        return {"id": None, "error": f"line longer than {MAX_LINE_CHARS:,} characters"}
    try:
        record = json_limits.loads(line)
    except JsonRefused as exc:
        return {"id": None, "error": f"not JSON ({exc})"}
    if not isinstance(record, dict):
        return {"id": None, "error": 'each line must be an object {"id", "spec"}'}
    line_id = record.get("id")
    if "spec" not in record:
        return {"id": line_id, "error": "spec: missing"}
    try:
        return {"id": line_id, "plan": _plan_json(record["spec"], arch)}
    except Exception as exc:  # one bad line must never stop the stream
        return {"id": line_id, "error": _describe(exc)}


def _run_jsonl(path: str, arch: ModelArch | None) -> int:
    with _open_lines(path) as lines:
        for line in lines:
            if not line.strip():
                continue
            print(json.dumps(_one_line(line, arch)), flush=True)
    return 0


def run(args: argparse.Namespace) -> int:
    try:
        arch = _read_config(args.config) if args.config else None
        if args.jsonl:
            return _run_jsonl(args.jsonl, arch)
        if args.spec:
            try:
                data = json_limits.loads(_read_text(args.spec, "spec"))
            except JsonRefused as exc:
                raise PlanningError(f"not JSON ({exc})", "spec") from None
        elif arch is not None:
            data = JobSpec(method=Method.lora).model_dump(exclude_none=True)
        else:
            print(
                "gpuplan estimate: give --spec FILE|-, --jsonl FILE|- or --config", file=sys.stderr
            )
            return 2
        print(json.dumps(_plan_json(data, arch), indent=2))
        return 0
    except BrokenPipeError:
        raise
    except Exception as exc:
        print(f"gpuplan estimate: {_describe(exc)}", file=sys.stderr)
        return 1
