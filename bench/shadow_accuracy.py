"""The planner's allocated peak against shadow runs (bench/data/shadow_peaks.jsonl).

Each row is a real training step (transformers, PEFT, TRL) traced on fake tensors
(docs/shadow-runs.md); the planner plans the row's exact job on the row's config.json. Prints
the agreement of `peak_allocated_gib` overall and by class, each category's agreement, and the
worst configs. bench/accuracy.py prints this section after the published measurements.

usage: python bench/shadow_accuracy.py [PATH/shadow_peaks.jsonl] [--worst N]
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # for tools.shadow

from bench.paths import SHADOW_PEAKS
from tools.shadow.compare import GROUPS, Comparison, compare, read_rows

WITHIN = 0.05


def _classes(c: Comparison, spec: dict) -> list[str]:
    method = "full" if spec["method"] == "full" else "LoRA"
    names = [
        method,
        "checkpointing" if spec["gradient_checkpointing"] else "no checkpointing",
        f"{method} {spec['precision']}",
        f"optimizer {spec['optimizer']}",
        f"loss {spec['loss_kernel']}",
        f"objective {spec['objective']}",
        "seq ≥ 16K" if spec["seq_len"] >= 16384 else "seq < 16K",
    ]
    if c.moe:
        names.append("mixture of experts")
    return names


def _line(label: str, group: list[Comparison]) -> str:
    errors = [abs(c.error) for c in group]
    within = sum(e <= WITHIN for e in errors)
    signed = statistics.median(c.error for c in group)
    return (
        f"| {label} | {len(group)} | {100 * within / len(group):.0f} % | "
        f"{100 * statistics.median(errors):.1f} % | {100 * signed:+.1f} % | "
        f"{100 * statistics.fmean(errors):.1f} % | {100 * max(errors):.1f} % |"
    )


def table(path: Path = SHADOW_PEAKS, worst: int = 8) -> str:
    """The shadow section: agreement, per category, worst configs (Markdown)."""
    if not path.exists():
        return f"Shadow runs: no dataset at {path}"
    rows = list(read_rows(path))
    pairs = [(compare(row), row["spec"]) for row in rows]
    comparisons = [c for c, _ in pairs]
    lines = [
        f"Shadow runs ({len(rows)} configs, {path.name}): planner peak_allocated_gib against the "
        "traced peak",
        "",
        "| configs | n | within 5 % | median abs error | median signed | MAPE | worst |",
        "|---|---|---|---|---|---|---|",
        _line("all", comparisons),
    ]
    by_class: dict[str, list[Comparison]] = {}
    for c, spec in pairs:
        for name in _classes(c, spec):
            by_class.setdefault(name, []).append(c)
    lines += [_line(name, by_class[name]) for name in sorted(by_class)]
    lines += ["", _categories(comparisons), "", _worst(comparisons, worst)]
    return "\n".join(lines)


def _categories(comparisons: list[Comparison]) -> str:
    """Each category's difference at the traced peak, in GiB and as a share of that peak."""
    lines = [
        "| category (at the traced peak) | median planner − trace GiB | within 2 % of the peak |",
        "|---|---|---|",
    ]
    for name in GROUPS:
        diffs = [c.planner[name] - c.shadow[name] for c in comparisons]
        close = sum(abs(d) <= 0.02 * c.shadow_gib for d, c in zip(diffs, comparisons, strict=True))
        lines.append(
            f"| {name} | {statistics.median(diffs):+.3f} | {100 * close / len(comparisons):.0f} % |"
        )
    return "\n".join(lines)


def _worst(comparisons: list[Comparison], count: int) -> str:
    lines = [
        "| worst configs | trace GiB | planner GiB | error | traced peak in |",
        "|---|---|---|---|---|",
    ]
    for c in sorted(comparisons, key=lambda c: abs(c.error), reverse=True)[:count]:
        lines.append(
            f"| {c.id} | {c.shadow_gib:.2f} | {c.planner_gib:.2f} | {100 * c.error:+.1f} % | "
            f"{c.peak_phase} |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data", nargs="?", default=str(SHADOW_PEAKS))
    parser.add_argument("--worst", type=int, default=8, help="how many worst configs to list")
    args = parser.parse_args()
    print(table(Path(args.data), args.worst))


if __name__ == "__main__":
    main()
