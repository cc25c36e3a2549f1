"""Parser speed: cold import, per-parse latency on the corpus and on hostile 2,000-character input.

Prints figures; asserts nothing (tests assert behaviour, this measures it).
Run: .venv/bin/python bench/parse_speed.py
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

from adapters.console.bench_cmd import percentile

ROOT = Path(__file__).resolve().parents[1]
SEED = "13B QLoRA, 4k ctx, 20M tokens x3"
COLD = f"from planner.parsing import parse; parse({SEED!r})"


def _cold_start_s(runs: int = 7) -> tuple[float, float]:
    """Median wall time of a fresh interpreter that imports the parser and parses the seed line,
    minus a bare interpreter's start, so the figure is what the parser adds."""

    def wall(code: str) -> float:
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)
        return time.perf_counter() - start

    bare = statistics.median(wall("pass") for _ in range(runs))
    parser = statistics.median(wall(COLD) for _ in range(runs))
    return parser - bare, parser


def _pint_imported(text: str) -> str:
    code = (
        "import sys; "
        + f"from planner.parsing import parse; parse({text!r}); print('pint' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    return done.stdout.strip()


def _latencies_ms(texts: list[str], repeats: int = 1) -> list[float]:
    """Per-text parse time; with repeats, the fastest of them, which leaves out the pauses of a
    shared machine and measures what the parser itself costs."""
    from planner.parsing import parse

    timings = []
    for text in texts:
        fastest = float("inf")
        for _ in range(repeats):
            start = time.perf_counter()
            parse(text)
            fastest = min(fastest, time.perf_counter() - start)
        timings.append(fastest * 1000)
    return timings


def _report(name: str, path: Path) -> None:
    texts = [json.loads(line)["text"] for line in path.read_text(encoding="utf-8").splitlines()]
    once_ms = _latencies_ms(texts)
    best_ms = _latencies_ms(texts, repeats=5)
    print(
        f"{name} ({len(texts)} texts): median {statistics.median(once_ms):.3f} ms once, "
        f"{statistics.median(best_ms):.3f} ms best of 5; p99 {percentile(best_ms, 0.99):.2f} ms, "
        f"max {max(best_ms):.2f} ms; {len(texts) / (sum(best_ms) / 1000):,.0f} parses/s"
    )


def main() -> None:
    added_s, total_s = _cold_start_s()
    print(
        f"cold start (import + parse seed line): {total_s * 1000:.0f} ms wall, "
        f"{added_s * 1000:.0f} ms over a bare interpreter"
    )
    for text in (SEED, "13B on 24GiB, done in 5.5 days"):
        print(f"pint imported to parse {text!r}: {_pint_imported(text)}")

    from planner import units

    start = time.perf_counter()
    units.registry()
    first_ms = (time.perf_counter() - start) * 1000
    print(f"first unit conversion in a process (pint import + registry): {first_ms:.0f} ms, once")

    data = ROOT / "tests" / "data"
    _report("corpus", data / "parse_corpus.jsonl")
    _report("realistic set", data / "parse_realistic.jsonl")
    hostile = [
        "9**9**9 tokens " * 130,
        "1" * 2000,
        "8x" * 1000,
        "1," * 1000,
        "a100 " * 400,
        "llama" * 400,
        "13b/" * 500,
        "-" * 2000,
        "显存24G，" * 300,
        "x3 " * 666,
    ]
    hostile_ms = _latencies_ms(hostile)
    print(
        f"hostile 2,000-char inputs ({len(hostile)}): max {max(hostile_ms):.2f} ms "
        f"(target < 20 ms each)"
    )


if __name__ == "__main__":
    main()
