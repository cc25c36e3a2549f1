"""Score the memory model on published measurements (bench/data/vram_dev.jsonl, see its README;
and the 2025–26 runs in bench/data/vram_dev_2026.jsonl).

For each measurement row the estimate of the same kind as the row's metric is compared
(max_memory_allocated → peak_allocated, max_memory_reserved or unknown → peak_reserved,
nvidia-smi → required). Fits/OOM claims are verdicts: a fits claim is right when the
reserved estimate ≤ capacity, an OOM when the required estimate ≥ 0.97 × capacity.
The seed guide's rule of thumb (full 16 B/param, LoRA 2 B/param + 1 %, QLoRA 0.5 B/param + 1 %,
+ 1.5 GB) is scored on the same rows. Prints a Markdown table; `--rows` adds every row. Then the
published preference and RL figures (bench/post_training_figures.py) as verdicts.

Then, per stack on both dev sets (the row's framework, else its source's name: verl, alst):
median error, share within 10 % and 25 %, fit/OOM verdicts right, measured peaks inside
memory.range_gib, and rows that got no plan at all (an "unknown model", a refused spec).

usage: python bench/accuracy.py [PATH/vram_dev.jsonl] [--rows] [--stacks-only]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # for bench.paths

from bench.paths import VRAM_DEV, VRAM_DEV_2026
from planner.planner import memory_plan, parse_spec
from planner.resolve.defaults import resolve

OOM_FRACTION = 0.97
GIB = 2**30


@dataclass
class Row:
    id: str
    method: str
    kind: str
    metric: str
    truth_gib: float
    ours_gib: float
    rule_gib: float
    num_gpus: int
    classes: tuple[str, ...] = ()
    in_range: bool | None = None
    moe: bool = False
    ours_right: bool | None = None
    rule_right: bool | None = None

    @property
    def ours_error(self) -> float:
        return (self.ours_gib - self.truth_gib) / self.truth_gib

    @property
    def rule_error(self) -> float:
        return (self.rule_gib - self.truth_gib) / self.truth_gib


def rule_of_thumb_gib(method: str, params_b: float) -> float:
    per_param = {"full": 16.0, "lora": 2.0 * 1.01, "qlora": 0.5 * 1.01}[method]
    return (params_b * 1e9 * per_param + 1.5e9) / GIB


PRE_AMPERE = ("t4", "v100", "p100", "p40", "2080", "1080", "titan")
LOSS_SHRINKING_STACKS = ("torchtune", "unsloth")


def row_classes(raw: dict, truth: dict) -> tuple[str, ...]:
    """The classes the memory issue names, from what a row states (a row can be in several)."""
    classes = []
    gpu = str(raw.get("gpu", "")).lower()
    precision = raw.get("precision")
    if raw.get("method") == "full" and precision != "bf16-mixed":
        classes.append("full, not fp32-master")
    if raw.get("framework") in LOSS_SHRINKING_STACKS or raw.get("loss_kernel"):
        classes.append("loss-shrinking stack")
    if any(card in gpu for card in PRE_AMPERE):
        classes.append("before Ampere")
    if raw.get("quant") == "int8":
        classes.append("8-bit base")
    if (raw.get("num_gpus") or 1) > 1:
        classes.append("multi-GPU")
        if raw.get("sharding") in ("zero3", "fsdp"):
            classes.append("ZeRO-3/FSDP")
    if not raw.get("packing"):
        classes.append("unpacked data")
    if truth.get("metric", "unknown") == "unknown":
        classes.append("metric unknown")
    return tuple(classes)


def score_row(record: dict) -> Row:
    spec = parse_spec(record["spec"])
    # The memory part of make_plan only: what is scored does not depend on the market.
    plan = memory_plan(resolve(spec))
    memory = plan.memory
    truth = record["truth"]
    params_b = record["spec"].get("params_b") or plan.model.params_b
    rule = rule_of_thumb_gib(spec.method.value, params_b)
    metric = truth.get("metric", "unknown")
    predicted = {
        "max_memory_allocated": memory.peak_allocated_gib,
        "nvidia-smi": memory.required_gib,
    }.get(metric, memory.peak_reserved_gib)
    moe = plan.model.active_params_b is not None
    row = Row(
        id=record["id"],
        method=spec.method.value,
        kind=truth["kind"],
        metric=metric,
        truth_gib=truth.get("peak_gib") or truth.get("capacity_gib"),
        ours_gib=predicted,
        rule_gib=rule,
        num_gpus=plan.memory.num_gpus,
        classes=row_classes(record["spec"], truth) + (("mixture of experts",) if moe else ()),
        moe=moe,
    )
    if truth["kind"] == "measurement":
        low_gib, high_gib = memory.range_gib
        row.in_range = low_gib <= row.truth_gib <= high_gib
    capacity = truth.get("capacity_gib")
    if truth["kind"] == "fits_claim":
        row.ours_gib = memory.peak_reserved_gib
        row.ours_right = memory.peak_reserved_gib <= capacity
        row.rule_right = rule <= capacity
    elif truth["kind"] == "oom_lower_bound":
        row.ours_gib = memory.required_gib
        row.ours_right = memory.required_gib >= OOM_FRACTION * capacity
        row.rule_right = rule >= OOM_FRACTION * capacity
    return row


def _pct(values: list[float]) -> str:
    return f"{100 * statistics.fmean(values):.1f} %" if values else "–"


def _within(errors: list[float]) -> str:
    return f"{100 * sum(abs(e) <= 0.10 for e in errors) / len(errors):.0f} %" if errors else "–"


def table(rows: list[Row]) -> str:
    measured = [r for r in rows if r.kind == "measurement"]
    lines = [
        "| rows | n | MAPE gpuplan | median error | MAPE rule of thumb | within 10 % gpuplan "
        "| within 10 % rule | range holds |",
        "|---|---|---|---|---|---|---|---|",
    ]
    groups = [("all measurements", measured)] + [
        (m, [r for r in measured if r.method == m]) for m in ("full", "lora", "qlora")
    ]
    names = sorted({name for r in measured for name in r.classes})
    groups += [(name, [r for r in measured if name in r.classes]) for name in names]
    for label, group in groups:
        ours = [abs(r.ours_error) for r in group]
        rule = [abs(r.rule_error) for r in group]
        median = f"{100 * statistics.median(ours):.1f} %" if ours else "–"
        held = sum(bool(r.in_range) for r in group)
        lines.append(
            f"| {label} | {len(group)} | {_pct(ours)} | {median} | {_pct(rule)} | "
            f"{_within(ours)} | {_within(rule)} | {held}/{len(group)} "
            f"({100 * held / len(group):.0f} %) |"
        )
    verdicts = [r for r in rows if r.ours_right is not None]
    ours_right = sum(bool(r.ours_right) for r in verdicts)
    rule_right = sum(bool(r.rule_right) for r in verdicts)
    lines.append(
        f"| fits/OOM claims | {len(verdicts)} | {ours_right}/{len(verdicts)} right "
        f"({100 * ours_right / len(verdicts):.0f} %) | {rule_right}/{len(verdicts)} right "
        f"({100 * rule_right / len(verdicts):.0f} %) | | | | |"
    )
    return "\n".join(lines)


def detail(rows: list[Row]) -> str:
    lines = ["| id | method | kind | metric | truth GiB | gpuplan GiB | error | rule GiB |"]
    lines.append("|---|---|---|---|---|---|---|---|")
    for r in rows:
        error = f"{100 * r.ours_error:+.0f} %" if r.kind == "measurement" else str(r.ours_right)
        lines.append(
            f"| {r.id} | {r.method} | {r.kind} | {r.metric} | {r.truth_gib:.2f} | "
            f"{r.ours_gib:.2f} | {error} | {r.rule_gib:.2f} |"
        )
    return "\n".join(lines)


def stack_of(record: dict) -> str:
    """The stack a row ran: its spec's framework, else its source's name (the id's prefix)."""
    return record["spec"].get("framework") or record["id"].split("-", 1)[0]


def score_all(records: list[dict]) -> list[tuple[dict, Row | str]]:
    """Each record with its scored row, or why it got no plan."""
    from pydantic import ValidationError

    from planner.errors import PlanningError

    scored: list[tuple[dict, Row | str]] = []
    for record in records:
        try:
            scored.append((record, score_row(record)))
        except (PlanningError, ValidationError, ValueError) as error:
            scored.append((record, str(error).splitlines()[0][:80]))
    return scored


def _share(hits: int, n: int) -> str:
    return f"{hits}/{n} ({100 * hits / n:.0f} %)" if n else "–"


def stack_table(scored: list[tuple[dict, Row | str]]) -> str:
    lines = [
        "| stack | rows | unplanned | median error | within 10 % | within 25 % | verdicts right "
        "| range holds |",
        "|---|---|---|---|---|---|---|---|",
    ]
    stacks = sorted({stack_of(record) for record, _ in scored})
    for label in [*stacks, "all"]:
        group = [(r, row) for r, row in scored if label in ("all", stack_of(r))]
        rows = [row for _, row in group if isinstance(row, Row)]
        measured = [abs(r.ours_error) for r in rows if r.kind == "measurement"]
        verdicts = [r.ours_right for r in rows if r.ours_right is not None]
        ranged = [r.in_range for r in rows if r.in_range is not None]
        median = f"{100 * statistics.median(measured):.1f} %" if measured else "–"
        lines.append(
            f"| {label} | {len(group)} | {len(group) - len(rows)} | {median} | "
            f"{_share(sum(e <= 0.10 for e in measured), len(measured))} | "
            f"{_share(sum(e <= 0.25 for e in measured), len(measured))} | "
            f"{_share(sum(map(bool, verdicts)), len(verdicts))} | "
            f"{_share(sum(map(bool, ranged)), len(ranged))} |"
        )
    return "\n".join(lines)


def _records(path: Path) -> list[dict]:
    with open(path, encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data", nargs="?", default=str(VRAM_DEV))
    parser.add_argument("--rows", action="store_true", help="also print every row")
    parser.add_argument("--moe", action="store_true", help="also print the MoE rows")
    parser.add_argument("--stacks-only", action="store_true", help="only the per-stack tables")
    args = parser.parse_args()
    sets = [("classic dev set", Path(args.data)), ("2025–26 dev set", VRAM_DEV_2026)]
    for label, path in sets:
        print(f"per stack, {label} ({path.name}):")
        print(stack_table(score_all(_records(path))))
        print()
    if args.stacks_only:
        return
    rows = [score_row(record) for record in _records(Path(args.data))]
    print(table(rows))
    print()
    # A sibling of this script (bench/ is on the path when it runs), not needed by its tests.
    import post_training_figures

    print(post_training_figures.table())
    print("\n" + __import__("shadow_accuracy").table())  # bench/shadow_accuracy.py
    if args.rows or args.moe:
        print()
        print(detail([r for r in rows if r.moe or args.rows]))


if __name__ == "__main__":
    main()
