"""`explain` reads every figure from the function that computes it (planner/explain.py)."""

from __future__ import annotations

from bot.conversation import answer_once
from planner.explain import FIGURES, explain
from planner.plan import MemoryBreakdown

QUESTION = "13B QLoRA, 4k ctx, 20M tokens x3 on a 4090"


def test_every_memory_component_has_its_function() -> None:
    # A component added to the breakdown without an explanation fails here.
    assert set(MemoryBreakdown.model_fields) <= set(FIGURES)


def test_each_figure_is_the_plans_value_with_its_functions_docstring() -> None:
    plan = answer_once(QUESTION).plan
    for name in FIGURES:
        explanation = explain(plan, name)
        assert explanation is not None and explanation.formula and explanation.background
        path, line = explanation.where.rsplit(":", 1)
        assert path.startswith("planner/") and int(line) > 0
    weights = explain(plan, "Weights")
    assert weights.value == plan.memory.breakdown_gib.weights
    assert weights.function == "planner.estimate.memory.components.weights_bytes"
    assert "base_weight_bytes_per_param" in weights.details
    assert explain(plan, "cost").value == plan.requested.cost_usd
    assert explain(plan, "range").value == list(plan.memory.range_gib)


def test_an_unknown_figure_is_none() -> None:
    assert explain(answer_once(QUESTION).plan, "vibes") is None
