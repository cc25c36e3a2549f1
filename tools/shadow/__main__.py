"""Shadow runs: the real training code on fake tensors (docs/shadow-runs.md).

usage:
  python -m tools.shadow run ID [--print]     trace one job of the grid and (re)write its row
  python -m tools.shadow grid --part K/N      trace the K-th of N parts, skipping ids done
  python -m tools.shadow list                 the grid's ids, cheapest first

Rows are appended to bench/data/shadow_peaks.jsonl (one JSON object per line); a job that cannot
be built here is logged to bench/data/shadow_skipped.jsonl with its reason, and the grid goes on.
Needs the `shadow` extra (torch, transformers, peft, trl): pip install -e '.[shadow]'.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import time
import warnings
from pathlib import Path
from typing import Any

from bench.paths import SHADOW_PEAKS, SHADOW_SKIPPED
from planner.catalog.models import get_model
from tools.shadow.grid import Job, arch_of, by_id, grid, part, spec_of

# The trace's model must be the planner's: a config transformers counts differently (another
# architecture under the same model_type) is skipped rather than compared.
PARAM_COUNT_TOLERANCE = 0.005

log = logging.getLogger("shadow")


def trace_row(job: Job) -> dict[str, Any]:
    """One dataset row; raises SkipConfig for a job that cannot be built or run here."""
    from tools.shadow.trace import SkipConfig, count_params, run_trace, versions

    arch = arch_of(job)
    spec = spec_of(job)
    planner_params = get_model(job.model).total_params
    traced_params = count_params(arch, spec)
    if abs(traced_params - planner_params) > PARAM_COUNT_TOLERANCE * planner_params:
        raise SkipConfig(
            f"transformers builds {traced_params:,} parameters, the catalog counts "
            f"{planner_params:,}"
        )
    spec["params_b"] = round(traced_params / 1e9, 4)
    started = time.monotonic()
    shadow = run_trace(spec, arch)
    shadow["trace_s"] = round(time.monotonic() - started, 1)
    return {"id": job.id, "spec": spec, "arch": arch, "shadow": shadow, "versions": versions()}


def done_ids(path: Path) -> set[str]:
    if not path.exists():
        return set()
    with path.open(encoding="utf-8") as handle:
        return {json.loads(line)["id"] for line in handle if line.strip()}


def append(path: Path, record: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a", encoding="utf-8") as handle:
        handle.write(json.dumps(record, separators=(",", ":")) + "\n")


def replace(path: Path, record: dict[str, Any]) -> None:
    """`record` in place of the row with its id (not while a grid appends to the same file)."""
    kept = []
    if path.exists():
        with path.open(encoding="utf-8") as handle:
            kept = [
                line for line in handle if line.strip() and json.loads(line)["id"] != record["id"]
            ]
    path.write_text("".join(kept), encoding="utf-8")
    append(path, record)


def run_one(job: Job, out: Path, regenerate: bool = False) -> bool:
    """Trace `job` and append its row (replace it: `regenerate`); a job that cannot be built is
    logged, not raised."""
    from tools.shadow.trace import SkipConfig

    started = time.monotonic()
    try:
        row = trace_row(job)
    except SkipConfig as exc:
        log.warning("skip %s: %s", job.id, exc)
        append(SHADOW_SKIPPED, {"id": job.id, "reason": str(exc)})
        return False
    except (RuntimeError, ValueError, TypeError, AttributeError, NotImplementedError) as exc:
        # An op without a fake/CPU path, a shape the code refuses: this config only.
        log.warning("skip %s: %s: %s", job.id, type(exc).__name__, exc)
        append(SHADOW_SKIPPED, {"id": job.id, "reason": f"{type(exc).__name__}: {exc}"[:500]})
        return False
    (replace if regenerate else append)(out, row)
    log.info(
        "%s: %.2f GiB at %s (%.0f s)",
        job.id,
        row["shadow"]["peak_allocated_gib"],
        row["shadow"]["peak_phase"],
        time.monotonic() - started,
    )
    return True


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.shadow", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="trace one job by id")
    run.add_argument("id")
    run.add_argument("--print", action="store_true", help="print the row instead of saving it")
    grid_cmd = sub.add_parser("grid", help="trace a part of the grid (resumable)")
    grid_cmd.add_argument("--part", default="1/1", help="K/N: the K-th of N parts")
    grid_cmd.add_argument("--limit", type=int, default=0, help="stop after this many jobs")
    sub.add_parser("list", help="print the grid's ids")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s", stream=sys.stderr)
    warnings.filterwarnings("ignore")

    if args.command == "list":
        for job in grid():
            print(job.id)
        return 0
    if args.command == "run":
        job = by_id().get(args.id)
        if job is None:
            print(f"unknown id {args.id!r}: see python -m tools.shadow list", file=sys.stderr)
            return 2
        if args.print:
            print(json.dumps(trace_row(job), indent=1))
            return 0
        return 0 if run_one(job, SHADOW_PEAKS, regenerate=True) else 1
    k, _, n = args.part.partition("/")
    done = done_ids(SHADOW_PEAKS) | done_ids(SHADOW_SKIPPED)
    todo = [job for job in part(grid(), int(k), int(n)) if job.id not in done]
    if args.limit:
        todo = todo[: args.limit]
    log.info("part %s: %d jobs to trace", args.part, len(todo))
    for job in todo:
        run_one(job, SHADOW_PEAKS)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
