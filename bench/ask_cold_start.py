"""Cold start of `gpuplan ask` (goal, issue #8: the seed example in at most 0.5 s wall time),
against a bare `python -c pass`, each the median of N fresh processes.

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


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=positive_int, default=15)
    args = parser.parse_args()
    executable = Path(sys.executable).with_name("gpuplan")
    gpuplan = [str(executable)] if executable.exists() else [shutil.which("gpuplan") or "gpuplan"]
    env = {**os.environ, "GPUPLAN_STATE_DIR": tempfile.mkdtemp(prefix="gpuplan-bench-")}
    subprocess.run([*gpuplan, "ask", SEED], env=env, stdout=subprocess.DEVNULL, check=True)  # .pyc

    python_s, python_cpu_s = median_s([sys.executable, "-c", "pass"], args.runs, env)
    ask_s, ask_cpu_s = median_s([*gpuplan, "ask", SEED], args.runs, env)
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
    print("goal: gpuplan ask at most 500 ms wall")
    print("heaviest imports (cumulative µs):")
    for cols in slowest:
        print(f"  {cols[1].strip():>8}  {cols[2].rstrip()}")


if __name__ == "__main__":
    main()
