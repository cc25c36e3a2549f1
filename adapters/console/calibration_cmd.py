"""`gpuplan calibration`: our estimates against the peaks users reported from real runs (kept
where a workspace allows it), per framework, method and card; `--export FILE` writes them as
vram_dev.jsonl rows to review and contribute; `--forget SCOPE` deletes a workspace's reports."""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from collections import defaultdict
from pathlib import Path

from bot import format as fmt


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--scope", help="one workspace only, e.g. slack/T0123 or console/")
    parser.add_argument("--json", action="store_true", help="the table's rows as JSON")
    parser.add_argument("--export", metavar="FILE", type=Path, help="write vram_dev.jsonl rows")
    parser.add_argument("--forget", metavar="SCOPE", help="delete a workspace's kept reports")


def run(args: argparse.Namespace) -> int:
    from bot.reports import report_json_line
    from bot.state.reports import open_report_store

    store = open_report_store()
    if args.forget:
        print(f"forgot {store.forget(args.forget)} reports of {args.forget}")
        return 0
    reports = store.all(args.scope)
    if args.export is not None:
        lines = [report_json_line(report, n) for n, report in enumerate(reports, start=1)]
        args.export.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
        print(f"wrote {len(lines)} reports to {args.export}", file=sys.stderr)
        return 0
    rows = calibration_rows(reports)
    if args.json:
        print(json.dumps(rows, indent=2))
    elif not reports:
        print("No reports kept yet: a workspace keeps them once it turns keep_reports on.")
    else:
        print(_table(rows))
    return 0


def calibration_rows(reports: list) -> list[dict[str, object]]:
    """Per (framework, method, card): how many, MAPE and median of estimate vs reported, how
    often the range held the reported peak, and OOM reports our estimate also called a miss."""
    groups: dict[tuple[str, str, str], list] = defaultdict(list)
    for report in reports:
        planned = report.planned
        key = (
            planned.get("framework", "hf"),
            planned.get("method", "?"),
            planned.get("gpu") or "–",
        )
        groups[key].append(report)
    rows = []
    for (framework, method, card), group in sorted(groups.items()):
        measured = [r for r in group if r.measured_gib]
        errors = [abs(r.estimated_gib - r.measured_gib) / r.measured_gib for r in measured]
        held = sum(r.range_gib[0] <= r.measured_gib <= r.range_gib[1] for r in measured)
        ooms = [r for r in group if r.metric == "oom"]
        called = sum(r.card_gib is not None and r.estimated_gib > r.card_gib for r in ooms)
        rows.append(
            {
                "framework": framework,
                "method": method,
                "card": card,
                "reports": len(group),
                "mape_pct": round(100 * statistics.fmean(errors), 1) if errors else None,
                "median_error_pct": round(100 * statistics.median(errors), 1) if errors else None,
                "range_held": f"{held}/{len(measured)}",
                "oom_predicted": f"{called}/{len(ooms)}",
            }
        )
    return rows


def _table(rows: list[dict[str, object]]) -> str:
    header = ["framework", "method", "card", "reports", "MAPE", "median", "range held", "OOM seen"]
    cells = [
        [
            str(row["framework"]),
            str(row["method"]),
            str(row["card"]),
            str(row["reports"]),
            "–" if row["mape_pct"] is None else f"{row['mape_pct']:.1f} %",
            "–" if row["median_error_pct"] is None else f"{row['median_error_pct']:.1f} %",
            str(row["range_held"]),
            str(row["oom_predicted"]),
        ]
        for row in rows
    ]
    padded = fmt.padded_columns([header, *cells], right_aligned={3, 4, 5})
    return "\n".join("  ".join(row).rstrip() for row in padded)
