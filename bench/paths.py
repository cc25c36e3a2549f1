"""The bench's data files (bench/data; README.md and SOURCES.md there say what each holds and
where it comes from): one place names each, for the bench scripts, the tests and tools/shadow
that read or append to them."""

from __future__ import annotations

from pathlib import Path

BENCH_DATA = Path(__file__).resolve().parent / "data"
VRAM_DEV = BENCH_DATA / "vram_dev.jsonl"
VRAM_DEV_2026 = BENCH_DATA / "vram_dev_2026.jsonl"
THROUGHPUT_DEV_2026 = BENCH_DATA / "throughput_dev_2026.jsonl"
SHADOW_PEAKS = BENCH_DATA / "shadow_peaks.jsonl"
SHADOW_SKIPPED = BENCH_DATA / "shadow_skipped.jsonl"
GPU_PEAKS = BENCH_DATA / "gpu_peaks.jsonl"
