"""Follow-up fragments patch a thread's job, comparisons become alternatives, and a question with
no model or size gets a clarifying answer instead of a guess."""

from __future__ import annotations

import pytest

from planner.parsing import parse
from planner.spec import JobSpec


@pytest.mark.parametrize(
    ("text", "patch"),
    [
        ("what if 8k ctx?", {"seq_len": 8192}),
        ("2 epochs", {"epochs": 2}),
        ("and on 2x4090?", {"gpu": "RTX 4090", "num_gpus": 2}),
        ("without checkpointing", {"gradient_checkpointing": False}),
        ("qlora instead", {"method": "qlora"}),
        ("rank 64", {"lora_rank": 64}),
        ("batch 4", {"micro_batch": 4}),
        ("budget $20", {"budget_usd": 20}),
        ("with unsloth", {"framework": "unsloth"}),
        ("8-bit adam", {"optimizer": "adamw_8bit"}),
        ("zero3", {"sharding": "zero3"}),
        ("by tomorrow", {"deadline_hours": 24}),
    ],
)
def test_fragment_is_a_patch_onto_the_previous_job(text: str, patch: dict) -> None:
    result = parse(text)
    assert result.fields == patch
    assert result.spec is None and result.clarify
    previous = parse("13B QLoRA, 4k ctx, 20M tokens x3").spec
    patched = JobSpec(**(previous.model_dump() | result.fields))
    for name, value in patch.items():
        assert getattr(patched, name) == value


def test_clarify_asks_for_the_model_with_an_example() -> None:
    result = parse("how much memory do I need for lora?")
    assert result.spec is None
    assert result.fields == {"method": "lora"}
    assert "model" in result.clarify and "13B QLoRA" in result.clarify


def test_unknown_model_with_a_size_plans_from_the_size() -> None:
    result = parse("fine-tune my zorblax-13b with qlora")
    assert result.spec is not None
    assert result.spec.params_b == 13


def test_missing_method_is_lora_and_says_so() -> None:
    result = parse("13b, 4k ctx")
    assert result.spec.method == "lora"
    assert "method" not in result.fields
    assert any("LoRA" in said for said in result.assumptions)


@pytest.mark.parametrize(
    ("text", "first", "others"),
    [
        ("7B/13B qlora", {"params_b": 7}, [{"params_b": 13}]),
        ("llama7/13/70b", {"params_b": 7}, [{"params_b": 13}, {"params_b": 70}]),
        ("13b lora on 4090 vs H100", {"gpu": "RTX 4090"}, [{"gpu": "H100"}]),
        (
            "7b: 2x4090 or 1xA100 80GB?",
            {"gpu": "RTX 4090", "num_gpus": 2},
            [{"gpu": "A100 80GB", "num_gpus": 1}],
        ),
    ],
)
def test_comparison_becomes_alternatives(text: str, first: dict, others: list[dict]) -> None:
    result = parse(text)
    for name, value in first.items():
        assert getattr(result.spec, name) == value
    assert len(result.alternatives) == len(others)
    for alternative, expected in zip(result.alternatives, others, strict=True):
        for name, value in expected.items():
            assert getattr(alternative, name) == value
        assert alternative.method == result.spec.method


def test_comparison_without_a_model_is_kept_for_a_follow_up() -> None:
    result = parse("4090 vs H100?")
    assert result.spec is None
    assert result.fields == {"gpu": "RTX 4090"}
    assert result.alternative_fields == [{"gpu": "H100"}]


def test_unread_lists_what_was_not_understood() -> None:
    result = parse("13b lora, 120+k steps at 12$/h")
    assert any("120+k" in left for left in result.unread)
    assert any("price per hour" in left for left in result.unread)


def test_sizes_after_a_named_model_compare_the_same_family() -> None:
    result = parse("llama 3 8b vs 70b with lora")
    assert result.spec.model == "llama3 8b"
    assert [(a.model, a.params_b) for a in result.alternatives] == [("llama3 70b", 70)]
