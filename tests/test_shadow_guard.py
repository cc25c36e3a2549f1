"""The planner against the committed shadow runs (bench/data/shadow_peaks.jsonl).

Each row is the allocation trace of a real training step (transformers, PEFT, TRL) on fake
tensors (docs/shadow-runs.md). No torch here: the rows are read as JSON and the planner plans each
row's job on its config.json, so a change to a memory formula that breaks agreement with the real
code fails this test.
"""

from __future__ import annotations

import statistics

import pytest

from planner.spec import JobSpec
from tools.shadow.compare import Comparison, compare, read_rows
from tools.shadow.grid import arch_of, by_id, spec_of

# The issue's targets: within 5 % of the traced peak on ≥ 90 % of the configs, median ≤ 3 %.
WITHIN = 0.05
SHARE_WITHIN = 0.90
MEDIAN_ERROR = 0.03
# Per category, as a share of the traced peak: weights and optimizer state are counted exactly;
# what the peak holds of gradients and transients depends on where it falls. At a tied model's
# backward-end peak the LM head's gradient still waits in autograd's input buffer (not yet a
# .grad, so the trace files it with the transients): one V×h moves between the two.
CATEGORY_TOLERANCE = {"parameters": 0.01, "optimizer": 0.01, "gradients": 0.07, "transients": 0.10}
# Classes the planner does not model like the traced code, each with its reason
# (docs/shadow-runs.md, "Where the planner and the traces differ"): Phi-3 fuses q/k/v and
# gate/up into one linear each, which PEFT's all-linear adapts as one (the catalog splits them);
# Gemma 3's 512-token sliding window hands SDPA an s×s mask (the catalog omits the window).
KNOWN_APART = ("phi-3-mini-4k.lora", "gemma-3-1b.")


@pytest.fixture(scope="module")
def rows() -> list[dict]:
    return list(read_rows())


@pytest.fixture(scope="module")
def comparisons(rows: list[dict]) -> list[Comparison]:
    return [compare(row) for row in rows]


def test_every_row_is_a_grid_job_reproducible_by_its_id(rows: list[dict]) -> None:
    jobs = by_id()
    assert len({row["id"] for row in rows}) == len(rows)
    for row in rows:
        job = jobs[row["id"]]
        expected = {**spec_of(job), "params_b": row["spec"]["params_b"]}
        assert row["spec"] == expected, row["id"]
        assert row["arch"] == arch_of(job), row["id"]
        JobSpec.model_validate(row["spec"])
        assert row["arch"]["model_type"]
        assert set(row["versions"]) == {"torch", "transformers", "peft", "trl"}
        assert row["shadow"]["peak_allocated_gib"] > 0
        # The kernel that ran keeps no s×s scores, as the spec's flash_attention says.
        assert row["spec"]["flash_attention"] is True
        assert row["shadow"]["attention_kernel"] == "sdpa-flash-cpu"


def test_the_dataset_spans_the_grid_the_issue_asks_for(rows: list[dict]) -> None:
    specs = [row["spec"] for row in rows]
    assert len(rows) >= 300
    assert len({row["arch"]["model_type"] + str(row["spec"]["params_b"]) for row in rows}) >= 15
    assert {s["method"] for s in specs} == {"full", "lora"}
    assert min(s["seq_len"] for s in specs) <= 512
    assert max(s["seq_len"] for s in specs) >= 16384
    small_lora = [
        s
        for s in specs
        if s["method"] == "lora" and s["params_b"] <= 2 and s["optimizer"] == "adamw"
    ]
    assert small_lora
    assert any(s["objective"] == "dpo" and s.get("reference_model") for s in specs)
    assert {s["optimizer"] for s in specs} >= {"adamw", "sgd"}
    assert {s["precision"] for s in specs} >= {"bf16", "bf16-mixed"}
    assert {s["gradient_checkpointing"] for s in specs} == {True, False}


def test_the_allocated_peak_agrees_with_the_traces(comparisons: list[Comparison]) -> None:
    errors = [abs(c.error) for c in comparisons]
    share = sum(e <= WITHIN for e in errors) / len(errors)
    assert share >= SHARE_WITHIN, f"{100 * share:.0f} % within 5 %"
    assert statistics.median(errors) <= MEDIAN_ERROR


@pytest.mark.parametrize("category", sorted(CATEGORY_TOLERANCE))
def test_each_category_agrees_with_the_traces(comparisons: list[Comparison], category: str) -> None:
    tolerance = CATEGORY_TOLERANCE[category]
    apart = [
        (c.id, round(c.planner[category] - c.shadow[category], 3))
        for c in comparisons
        if not any(mark in c.id for mark in KNOWN_APART)
        and abs(c.planner[category] - c.shadow[category]) > tolerance * c.shadow_gib
    ]
    assert not apart, apart[:5]


def test_a_config_that_cannot_be_built_is_skipped_with_its_reason(tmp_path, monkeypatch) -> None:
    """The grid logs the reason and goes on (no torch needed: the failure is the trace's)."""
    from tools.shadow import __main__ as shadow
    from tools.shadow.trace import SkipConfig

    def unbuildable(job):
        raise SkipConfig("transformers cannot build 'no_such_arch'")

    monkeypatch.setattr(shadow, "trace_row", unbuildable)
    monkeypatch.setattr(shadow, "SHADOW_SKIPPED", tmp_path / "skipped.jsonl")
    out = tmp_path / "rows.jsonl"
    job = next(iter(by_id().values()))
    assert shadow.run_one(job, out) is False
    assert not out.exists()
    assert "no_such_arch" in (tmp_path / "skipped.jsonl").read_text()
