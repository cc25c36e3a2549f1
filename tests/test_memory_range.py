"""The plan-with range: a calibrated 90 % interval for the measured peak, however it is read."""

from __future__ import annotations

import json
import math

import pytest

from bench.paths import VRAM_DEV
from planner.estimate.memory import estimate_memory
from planner.estimate.memory.estimate import (
    ABOVE_REQUIRED_LOG,
    BELOW_ALLOCATED_LOG,
    UNSTATED_INPUT_LOG,
)
from planner.planner import memory_plan, parse_spec
from planner.resolve.defaults import resolve
from planner.spec import JobSpec

PINNED = {"framework": "hf", "gradient_checkpointing": True, "micro_batch": 1, "packing": True}


def test_a_pinned_job_gets_the_calibrated_interval() -> None:
    memory = estimate_memory(resolve(JobSpec(model="llama 3.1 8b", method="lora", **PINNED)))
    low, high = memory.range_gib
    assert low == pytest.approx(memory.peak_allocated_gib * math.exp(-BELOW_ALLOCATED_LOG), 0.01)
    assert high == pytest.approx(memory.required_gib * math.exp(ABOVE_REQUIRED_LOG), 0.01)


def test_unstated_inputs_and_unpacked_data_widen_the_range() -> None:
    pinned = estimate_memory(resolve(JobSpec(model="llama 3.1 8b", method="lora", **PINNED)))
    said = estimate_memory(resolve(JobSpec(model="llama 3.1 8b", method="lora")))
    assert said.required_gib == pytest.approx(pinned.required_gib, rel=0.2)
    widened = math.log(said.range_gib[1] / said.required_gib) - ABOVE_REQUIRED_LOG
    assert widened == pytest.approx(3 * UNSTATED_INPUT_LOG, abs=0.01)
    assert said.range_gib[0] / said.peak_allocated_gib < pinned.range_gib[0] / (
        pinned.peak_allocated_gib
    )


def test_the_range_holds_about_nine_measured_peaks_in_ten() -> None:
    held = total = 0
    for line in VRAM_DEV.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        if record["truth"]["kind"] != "measurement":
            continue
        low, high = memory_plan(resolve(parse_spec(record["spec"]))).memory.range_gib
        total += 1
        held += low <= record["truth"]["peak_gib"] <= high
    assert 0.85 <= held / total <= 0.95
