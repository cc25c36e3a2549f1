"""The memory model keeps its accuracy on the published dev measurements (bench/data)."""

from __future__ import annotations

import importlib.util
import json
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _rows() -> list:
    spec = importlib.util.spec_from_file_location("accuracy", ROOT / "bench" / "accuracy.py")
    assert spec and spec.loader
    accuracy = importlib.util.module_from_spec(spec)
    sys.modules["accuracy"] = accuracy  # dataclasses look their module up while being built
    spec.loader.exec_module(accuracy)
    lines = accuracy.VRAM_DEV.read_text(encoding="utf-8").splitlines()
    return [accuracy.score_row(json.loads(line)) for line in lines if line.strip()]


def test_dev_set_mape_and_verdicts_meet_the_bar() -> None:
    rows = _rows()
    measured = [r for r in rows if r.kind == "measurement"]
    assert statistics.fmean(abs(r.ours_error) for r in measured) <= 0.12
    for method in ("full", "lora", "qlora"):
        errors = [abs(r.ours_error) for r in measured if r.method == method]
        assert statistics.fmean(errors) <= 0.15, method
    verdicts = [r.ours_right for r in rows if r.ours_right is not None]
    assert sum(verdicts) / len(verdicts) >= 0.90
