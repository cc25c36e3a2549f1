"""`gpuplan bench`: parse + plan throughput and latency, in-process, on a fixed set of questions."""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Iterable

from adapters.cli import positive_int

# Representative of what chat users type: terse lines, prose, Chinese, multi-GPU, config-ish.
QUESTIONS: tuple[str, ...] = (
    "13B QLoRA, 4k ctx, 20M tokens x3",
    "70b qlora 48gb?",
    "can I lora llama 3 8b with 8k context on 2x3090?",
    "全参微调 7B 需要几张4090",
    "full fine-tune mistral 7b, 2k ctx, batch 4, on an A100 80GB",
    "qwen2.5-32b lora rank 64 all-linear, seq 4096, 8xH100 zero3, 1B tokens, 2 epochs",
    "mixtral 8x7b qlora 4k on h100",
    "llama 3.1 70b full finetune 8k ctx fsdp on 8 H100, budget $2000",
    "phi-3 mini lora on a T4, 512 tokens, 50k samples",
    "gemma 2 9b qlora, unsloth, 16k context, 4090",
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--json", action="store_true", help="print {plans_per_s, p50_ms, p99_ms, parse_ms, plan_ms}"
    )
    parser.add_argument(
        "--rounds", type=positive_int, default=200, help="passes over the question set"
    )


def percentile(values: Iterable[float], fraction: float) -> float:
    """Nearest-rank percentile (`fraction` 0.99 for p99): every speed figure we print uses it."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


def measure(rounds: int) -> dict[str, float]:
    """Time parse + make_plan per question; the first pass warms caches and is not counted.

    Also returns the mean parse and plan shares (`parse_ms`, `plan_ms`), to show where time goes.
    """
    from planner import make_plan, parse

    for text in QUESTIONS:
        result = parse(text)
        if result.spec is not None:
            make_plan(result.spec)
    latencies_ms: list[float] = []
    parse_s = 0.0
    started = time.perf_counter()
    for _ in range(rounds):
        for text in QUESTIONS:
            t0 = time.perf_counter()
            result = parse(text)
            t1 = time.perf_counter()
            if result.spec is not None:
                make_plan(result.spec)
            t2 = time.perf_counter()
            parse_s += t1 - t0
            latencies_ms.append((t2 - t0) * 1000)
    elapsed_s = time.perf_counter() - started
    answers = len(latencies_ms)
    total_ms = sum(latencies_ms)
    latencies_ms.sort()
    return {
        "plans_per_s": round(answers / elapsed_s, 1),
        "p50_ms": round(percentile(latencies_ms, 0.50), 3),
        "p99_ms": round(percentile(latencies_ms, 0.99), 3),
        "parse_ms": round(parse_s * 1000 / answers, 3),
        "plan_ms": round((total_ms - parse_s * 1000) / answers, 3),
    }


def run(args: argparse.Namespace) -> int:
    figures = measure(args.rounds)
    if args.json:
        print(json.dumps(figures))
    else:
        print(f"questions: {len(QUESTIONS)} × {args.rounds} rounds, parse + plan, one core")
        print(f"plans/s  {figures['plans_per_s']:>10,.1f}   (goal ≥ 2,000)")
        print(f"p50      {figures['p50_ms']:>10.3f} ms")
        print(f"p99      {figures['p99_ms']:>10.3f} ms (goal ≤ 5 ms)")
        print(f"mean     {figures['parse_ms']:>10.3f} ms parse + {figures['plan_ms']:.3f} ms plan")
    return 0
