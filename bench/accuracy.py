"""Score the memory model on published measurements (../shared/data/vram_dev.jsonl).

For each measurement row the estimate of the same kind as the row's metric is compared
(max_memory_allocated → peak_allocated, max_memory_reserved or unknown → peak_reserved,
nvidia-smi → required). Fits/OOM claims are verdicts: a fits claim is right when the
reserved estimate ≤ capacity, an OOM when the required estimate ≥ 0.97 × capacity.
The seed guide's rule of thumb (full 16 B/param, LoRA 2 B/param + 1 %, QLoRA 0.5 B/param + 1 %,
+ 1.5 GB) is scored on the same rows. Prints a Markdown table; `--rows` adds every row. Then the
published preference and RL figures (bench/post_training_figures.py) as verdicts.

usage: python bench/accuracy.py [PATH/vram_dev.jsonl] [--rows]
"""

from __future__ import annotations

import argparse
import json
import statistics
from dataclasses import dataclass
from pathlib import Path

from planner.defaults import resolve
from planner.planner import memory_plan, parse_spec

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "vram_dev.jsonl"
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data", nargs="?", default=str(DEFAULT_DATA))
    parser.add_argument("--rows", action="store_true", help="also print every row")
    parser.add_argument("--moe", action="store_true", help="also print the MoE rows")
    args = parser.parse_args()
    with open(args.data, encoding="utf-8") as handle:
        rows = [score_row(json.loads(line)) for line in handle if line.strip()]
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
