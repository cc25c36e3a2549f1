"""Throughput model vs measured tokens/s on the dev rows that carry it, and planning speed.

Prints, per dev row with `truth.throughput_tokens_per_s`: predicted and measured tokens/s (whole
job) and the error factor max(pred/meas, meas/pred); the median error and the worst rows, beside a
flat 25 %-utilisation rule; the utilisation each row implies (what planner/estimate/throughput.py's
constants are fitted on); and the time to plan every card for one job in-process.

Then the 2025–26 speed rows (bench/data/throughput_dev_2026.jsonl: NeMo AutoModel and NeMo RL
tables, ms-swift, Unsloth, axolotl, TRL) per stack: every row's planned tokens/s where it gets a
plan, the measured figure where the row gives one (tokens/s, or a step's tokens over its
seconds), the error factor, and the utilisation per stack and for MoE.

Run: .venv/bin/python bench/throughput.py [--dev PATH] [--repeat 200] [--stacks-only]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # for bench.paths

from bench.paths import THROUGHPUT_DEV_2026, VRAM_DEV
from planner.catalog.gpus import GpuSpec, resolve_gpu
from planner.estimate.throughput import (
    CARD_CLASS_FACTOR,
    UTILISATION,
    estimate_throughput,
    flops_per_token,
    job_work,
    memory_seconds_per_token,
    sustained_clock_fraction,
)
from planner.job.resolved import ResolvedJob
from planner.resolve.defaults import resolve
from planner.spec import JobSpec, Sharding

FLAT_UTILISATION = 0.25
# HF Trainer reports train_tokens_per_second per device; torchtune reports the whole job.
PER_DEVICE_FRAMEWORKS = frozenset({"hf"})


@dataclass(frozen=True)
class DevRow:
    row_id: str
    job: ResolvedJob
    gpu: GpuSpec
    count: int
    sharding: Sharding | None
    measured_tokens_per_s: float


def load_rows(path: Path = VRAM_DEV) -> list[DevRow]:
    """Dev rows with a measured throughput, resolved the way the planner resolves a job."""
    rows = []
    for line in path.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        measured = record["truth"].get("throughput_tokens_per_s")
        if not measured:
            continue
        job = resolve(JobSpec(**record["spec"]))
        # "A100 (memory size not stated)" is still an A100.
        gpu = resolve_gpu(record["spec"]["gpu"].split("(")[0])
        if gpu is None:
            continue
        count = job.num_gpus
        if record["spec"].get("framework", "hf") in PER_DEVICE_FRAMEWORKS:
            measured *= count
        rows.append(DevRow(record["id"], job, gpu, count, job.sharding, measured))
    return rows


def predicted_tokens_per_s(row: DevRow) -> float:
    return estimate_throughput(row.job, row.gpu, row.count, row.sharding).tokens_per_s


def flat_rule_tokens_per_s(row: DevRow) -> float:
    peak_flops = row.gpu.bf16_tflops * 1e12 * row.count
    return peak_flops * FLAT_UTILISATION / flops_per_token(row.job)


def error_factor(predicted: float, measured: float) -> float:
    return max(predicted / measured, measured / predicted)


def implied_utilisation(row: DevRow) -> float:
    """The method utilisation (UTILISATION's unit: a dense GEMM's share of the sustained peak,
    before the job's kernel mix) that would reproduce this row exactly, with the memory-bound
    time taken out."""
    prediction = estimate_throughput(row.job, row.gpu, row.count, row.sharding)
    work = job_work(row.job)
    per_gpu_s = row.count * prediction.scaling_efficiency / row.measured_tokens_per_s
    compute_s = per_gpu_s - memory_seconds_per_token(work, row.gpu, row.count)
    sustained_flops = row.gpu.bf16_tflops * 1e12 * sustained_clock_fraction(row.gpu)
    job_share = work.method_utilisation / UTILISATION[row.job.method]
    return work.flops_per_token / (sustained_flops * compute_s) / job_share


def print_accuracy(rows: list[DevRow]) -> None:
    print(f"{'row':<28} {'card':<13} {'n':>2} {'measured':>9} {'model':>8} {'×err':>5} {'25%':>8}")
    model_errors, flat_errors = [], []
    for row in rows:
        model = predicted_tokens_per_s(row)
        flat = flat_rule_tokens_per_s(row)
        model_errors.append((error_factor(model, row.measured_tokens_per_s), row.row_id))
        flat_errors.append(error_factor(flat, row.measured_tokens_per_s))
        print(
            f"{row.row_id:<28} {row.gpu.key:<13} {row.count:>2} {row.measured_tokens_per_s:>9.0f}"
            f" {model:>8.0f} {model_errors[-1][0]:>5.2f} {flat:>8.0f}"
        )
    print(
        f"\nmedian error factor over {len(rows)} rows: model ×"
        f"{statistics.median(e for e, _ in model_errors):.2f}, "
        f"flat {FLAT_UTILISATION:.0%} utilisation ×{statistics.median(flat_errors):.2f}"
    )
    worst = sorted(model_errors, reverse=True)[:4]
    print("worst rows: " + ", ".join(f"{row_id} ×{error:.2f}" for error, row_id in worst))


def peak_share(row: DevRow) -> float:
    """Measured FLOP rate per GPU as a share of the card's datasheet peak."""
    flops_per_s = row.measured_tokens_per_s * flops_per_token(row.job) / row.count
    return flops_per_s / (row.gpu.bf16_tflops * 1e12)


def print_fit(rows: list[DevRow]) -> None:
    """Refit the constants: method medians on datacenter rows, then class factors.

    A class factor is the geometric mean over (source, card) groups of each group's median
    implied-to-method ratio, so that near-duplicate rows of one experiment count once. A row
    whose measured speed needs more FLOP/s than the card's datasheet peak cannot be right as
    labelled and is left out of the fit (it stays in the error table above).
    """
    impossible = [row for row in rows if peak_share(row) > 1.0]
    for row in impossible:
        share = f"{peak_share(row):.0%}"
        print(f"\nleft out of the fit: {row.row_id} needs {share} of {row.gpu.name}'s peak")
    fit_rows = [row for row in rows if row not in impossible]
    datacenter = [row for row in fit_rows if row.gpu.card_class == "datacenter"]
    print("\nimplied utilisation vs planner/estimate/throughput.py constants:")
    for method, constant in UTILISATION.items():
        values = [implied_utilisation(row) for row in datacenter if row.job.method == method]
        if values:
            fitted = statistics.median(values)
            print(f"  {method.value:<11} {fitted:.2f} median of {len(values)} rows ({constant})")
    for card_class, constant in CARD_CLASS_FACTOR.items():
        groups: dict[tuple[str, str], list[float]] = {}
        for row in fit_rows:
            if row.gpu.card_class == card_class and card_class != "datacenter":
                ratio = implied_utilisation(row) / UTILISATION[row.job.method]
                groups.setdefault((row.row_id.rsplit("-", 1)[0], row.gpu.key), []).append(ratio)
        if groups:
            fitted = statistics.geometric_mean(statistics.median(g) for g in groups.values())
            where = f"{len(groups)} source×card groups"
            print(f"  {card_class:<11} ×{fitted:.2f} over {where} ({constant})")


SEED_JOB = JobSpec(model="13B", method="qlora", seq_len=4096, dataset_tokens=20e6, epochs=3)
SEED_GUIDE_HOURS = {"rtx4090": 17.0, "h100-sxm": 2.8}
SEED_CARDS = ("rtx4090", "h100-sxm", "a100-80g-sxm", "rtx3090", "l40s", "a10g", "l4", "t4")


def print_seed_hours() -> None:
    """The seed example's hours (with the planner's setup/evaluation overhead) per card."""
    from planner.market.options import OVERHEAD_FRACTION

    resolved = resolve(SEED_JOB)
    tokens = SEED_JOB.dataset_tokens * SEED_JOB.epochs
    print("\nseed example (13B QLoRA, 4k ctx, 20M tokens × 3), hours with overhead:")
    for key in SEED_CARDS:
        gpu = resolve_gpu(key)
        speed = estimate_throughput(resolved, gpu, 1, None)
        hours = tokens / speed.tokens_per_s / 3600 * (1 + OVERHEAD_FRACTION)
        guide = SEED_GUIDE_HOURS.get(key)
        versus = f"  (guide ~{guide:g} h)" if guide else ""
        clock = sustained_clock_fraction(gpu)
        print(f"  {gpu.name:<26} {hours:6.1f} h  sustained clock {clock:.2f}{versus}")


def _mean_ms(action: Callable[[], object], repeat: int) -> float:
    action()
    start = time.perf_counter()
    for _ in range(repeat):
        action()
    return (time.perf_counter() - start) * 1000 / repeat


def print_planning_speed(repeat: int) -> None:
    from planner.market.attach import attach_market
    from planner.market.options import MarketContext, market_options
    from planner.planner import make_plan, memory_plan

    spec = JobSpec(model="13B", method="qlora", seq_len=4096, dataset_tokens=20e6, epochs=3)
    resolved = resolve(spec)
    plan = memory_plan(resolved)
    rows = len(market_options(MarketContext(resolved)))
    every_card = _mean_ms(lambda: market_options(MarketContext(resolved)), repeat)
    market = _mean_ms(lambda: attach_market(plan, resolved), repeat)
    whole = _mean_ms(lambda: make_plan(spec), repeat)
    print(f"\nplanning the seed job in-process (mean of {repeat}):")
    print(f"  every card ({rows} options: memory, speed, hours, cost): {every_card:.2f} ms")
    print(f"  attach_market (options, recommendation, suggestions, after): {market:.2f} ms")
    print(f"  make_plan (resolve, memory, market): {whole:.2f} ms")


@dataclass(frozen=True)
class SpeedRow:
    row_id: str
    stack: str
    moe: bool
    planned_tokens_per_s: float | None  # None: no plan (the reason is in `unplanned`)
    utilisation: float | None
    measured_tokens_per_s: float | None
    unplanned: str = ""


def _measured_2026(record: dict) -> float | None:
    """Whole-job tokens/s from what the row gives: the figure, or a step's tokens (stated, or
    samples × the stated sequence length) over its seconds."""
    truth, spec = record["truth"], record["spec"]
    if truth.get("tokens_per_s_job"):
        return float(truth["tokens_per_s_job"])
    if truth.get("tokens_per_step") and truth.get("s_per_step"):
        return truth["tokens_per_step"] / truth["s_per_step"]
    if truth.get("samples_per_step") and truth.get("s_per_step") and spec.get("seq_len"):
        return truth["samples_per_step"] * spec["seq_len"] / truth["s_per_step"]
    return None


def load_2026(path: Path = THROUGHPUT_DEV_2026) -> list[SpeedRow]:
    from pydantic import ValidationError

    from planner.errors import PlanningError

    rows = []
    for line in path.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        spec = record["spec"]
        stack = spec.get("framework") or record["id"].split("-", 1)[0]
        measured = _measured_2026(record)
        try:
            job = resolve(JobSpec(**spec))
            gpu = resolve_gpu(str(spec.get("gpu") or "h100").split("(")[0])
            if gpu is None:
                raise ValueError(f"unknown card {spec.get('gpu')!r}")
        except (PlanningError, ValidationError, ValueError) as error:
            reason = str(error).splitlines()[0][:60]
            rows.append(SpeedRow(record["id"], stack, False, None, None, measured, reason))
            continue
        speed = estimate_throughput(job, gpu, job.num_gpus, job.sharding)
        rows.append(
            SpeedRow(
                record["id"],
                stack,
                job.arch.is_moe,
                speed.tokens_per_s,
                speed.utilisation,
                measured,
            )
        )
    return rows


def print_2026(rows: list[SpeedRow]) -> None:
    print(
        f"{'2025–26 row':<52} {'stack':<9} {'measured':>9} {'planned':>9} {'×err':>5} {'util':>5}"
    )
    for row in rows:
        measured = f"{row.measured_tokens_per_s:9.0f}" if row.measured_tokens_per_s else " " * 9
        if row.planned_tokens_per_s is None:
            print(f"{row.row_id[:52]:<52} {row.stack:<9} {measured} unplanned: {row.unplanned}")
            continue
        error = (
            f"{error_factor(row.planned_tokens_per_s, row.measured_tokens_per_s):5.2f}"
            if row.measured_tokens_per_s
            else "    –"
        )
        print(
            f"{row.row_id[:52]:<52} {row.stack:<9} {measured} {row.planned_tokens_per_s:9.0f}"
            f" {error} {row.utilisation:5.2f}"
        )
    print("\n| stack | rows | planned | median ×error (n) | median utilisation |")
    print("|---|---|---|---|---|")
    groups = sorted({row.stack for row in rows})
    for label in [*groups, "MoE", "all"]:
        group = [
            r for r in rows if label == "all" or r.stack == label or (label == "MoE" and r.moe)
        ]
        planned = [r for r in group if r.planned_tokens_per_s is not None]
        errors = [
            error_factor(r.planned_tokens_per_s, r.measured_tokens_per_s)
            for r in planned
            if r.measured_tokens_per_s and r.planned_tokens_per_s
        ]
        median = f"×{statistics.median(errors):.2f} ({len(errors)})" if errors else "–"
        utilisation = statistics.median(r.utilisation for r in planned) if planned else None
        util = f"{utilisation:.2f}" if utilisation is not None else "–"
        print(f"| {label} | {len(group)} | {len(planned)} | {median} | {util} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dev", type=Path, default=VRAM_DEV)
    parser.add_argument("--repeat", type=int, default=200)
    parser.add_argument("--stacks-only", action="store_true", help="only the 2025–26 rows")
    args = parser.parse_args()
    print_2026(load_2026())
    print()
    if args.stacks_only:
        return
    rows = load_rows(args.dev)
    print_accuracy(rows)
    print_fit(rows)
    print_seed_hours()
    print_planning_speed(args.repeat)


if __name__ == "__main__":
    main()
