"""Cold start of `gpuplan ask` (goals: issue #8, the seed example in at most 0.5 s wall time;
issue 33, at most 12 times a bare `python -c pass` from the same venv), each the median of N
fresh processes, and the median ratio of N paired runs (a bare python, then an ask, one after the
other, so that both see the same load on a shared machine).

Bytecode caches are written first and used (PYTHONDONTWRITEBYTECODE is dropped for the runs):
a user's installed gpuplan has them, and compiling the sources would otherwise dominate.

Run: .venv/bin/python bench/ask_cold_start.py [--runs 15]
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from adapters.cli import positive_int

SEED = "13B QLoRA, 4k ctx, 20M tokens x3"


def median_s(command: list[str], runs: int, env: dict[str, str]) -> tuple[float, float]:
    """Median wall and CPU (user + system) seconds; on a shared machine the CPU figure is the
    steadier one."""
    wall_s, cpu_s = [], []
    for _ in range(runs):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        subprocess.run(command, env=env, stdout=subprocess.DEVNULL, check=True)
        wall_s.append(time.perf_counter() - started)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu_s.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return statistics.median(wall_s), statistics.median(cpu_s)


def paired_ratio(bare: list[str], ask: list[str], runs: int, env: dict[str, str]) -> float:
    """Median over `runs` pairs of ask's wall time ÷ the bare python's just before it."""
    ratios = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run(bare, env=env, stdout=subprocess.DEVNULL, check=True)
        bare_s = time.perf_counter() - started
        started = time.perf_counter()
        subprocess.run(ask, env=env, stdout=subprocess.DEVNULL, check=True)
        ratios.append((time.perf_counter() - started) / bare_s)
    return statistics.median(ratios)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=positive_int, default=15)
    args = parser.parse_args()
    executable = Path(sys.executable).with_name("gpuplan")
    gpuplan = [str(executable)] if executable.exists() else [shutil.which("gpuplan") or "gpuplan"]
    env = {**os.environ, "GPUPLAN_STATE_DIR": tempfile.mkdtemp(prefix="gpuplan-bench-")}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    subprocess.run([*gpuplan, "ask", SEED], env=env, stdout=subprocess.DEVNULL, check=True)  # .pyc

    python_s, python_cpu_s = median_s([sys.executable, "-c", "pass"], args.runs, env)
    ask_s, ask_cpu_s = median_s([*gpuplan, "ask", SEED], args.runs, env)
    ratio = paired_ratio([sys.executable, "-c", "pass"], [*gpuplan, "ask", SEED], args.runs, env)
    imports = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "adapters.cli", "ask", SEED],
        env=env,
        capture_output=True,
        text=True,
        cwd=Path(__file__).resolve().parents[1],
    ).stderr
    slowest = sorted(
        (line.split("|") for line in imports.splitlines() if line.startswith("import time:")),
        key=lambda cols: -int(cols[1]) if cols[1].strip().isdigit() else 0,
    )[:5]
    print(f"runs: {args.runs} fresh processes each; medians      wall        CPU")
    rows = (
        ("python -c pass", python_s, python_cpu_s),
        ("gpuplan ask (seed)", ask_s, ask_cpu_s),
        ("gpuplan's own share", ask_s - python_s, ask_cpu_s - python_cpu_s),
    )
    for label, wall, cpu in rows:
        print(f"{label:<40}{wall * 1000:7.1f} ms {cpu * 1000:7.1f} ms")
    print(f"paired runs: gpuplan ask = {ratio:.1f} × python -c pass (median of {args.runs} pairs)")
    print("goals: gpuplan ask at most 500 ms wall, and at most 12 × python -c pass")
    print("heaviest imports (cumulative µs):")
    for cols in slowest:
        print(f"  {cols[1].strip():>8}  {cols[2].rstrip()}")


if __name__ == "__main__":
    main()
