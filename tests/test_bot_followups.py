"""Reading follow-ups: the conversation's own intents, budgets, and patches with linked fields."""

from __future__ import annotations

import pytest

from bot.followups import (
    Cheapest,
    Help,
    Question,
    Reset,
    Undo,
    apply_patch,
    compared_cards,
    patch_from_fields,
    read_intent,
)


@pytest.mark.parametrize("text", ["help", "HELP", "/help", "?", "how does this work?"])
def test_help(text: str) -> None:
    assert read_intent(text) == Help()


@pytest.mark.parametrize("text", ["undo", "Undo!", "go back", "revert"])
def test_undo(text: str) -> None:
    assert read_intent(text) == Undo()


def test_reset_with_and_without_a_new_question() -> None:
    assert read_intent("reset") == Reset(question="")
    assert read_intent("start over") == Reset(question="")
    assert read_intent("new: 7B LoRA 2k ctx") == Reset(question="7B LoRA 2k ctx")


def test_cheapest_leaves_the_budget_to_the_parser() -> None:
    assert read_intent("cheapest under $20?") == Cheapest(text="cheapest under $20?")
    assert read_intent("what's the cheapest card?") == Cheapest(text="what's the cheapest card?")
    # The Chinese of the cheapest-card button and the budget hint (bot/phrases.py BUTTONS).
    assert read_intent("最便宜的卡，$20以内？") == Cheapest(text="最便宜的卡，$20以内？")


def test_a_comparison_of_cards_only_is_a_card_comparison() -> None:
    assert compared_cards({"gpu": "H100"}, [{"gpu": "A100"}]) == ["H100", "A100"]
    assert compared_cards({"gpu": "RTX 4090", "num_gpus": 2}, [{"gpu": "A100", "num_gpus": 1}]) == [
        "RTX 4090",
        "A100",
    ]
    assert compared_cards({"params_b": 7}, [{"params_b": 13}]) == []  # jobs, not cards
    assert compared_cards({"gpu": "H100"}, []) == []


def test_everything_else_goes_to_the_parser() -> None:
    assert read_intent("what if 8k ctx?") == Question("what if 8k ctx?")


def test_a_patch_keeps_only_job_fields() -> None:
    assert patch_from_fields({"seq_len": 8192, "nonsense": 1}) == {"seq_len": 8192}


def test_linked_fields_do_not_outlive_the_field_they_belong_to() -> None:
    job = {"params_b": 13.0, "method": "qlora", "quant": "nf4", "gpu": "a100", "gpu_vram_gb": 40}
    assert apply_patch(job, {"model": "llama-3-70b"}) == {
        "model": "llama-3-70b",
        "method": "qlora",
        "quant": "nf4",
        "gpu": "a100",
        "gpu_vram_gb": 40,
    }
    assert "quant" not in apply_patch(job, {"method": "lora"})
    assert apply_patch(job, {"method": "qlora", "quant": "int8"})["quant"] == "int8"
    assert "gpu_vram_gb" not in apply_patch(job, {"gpu": "h100"})
    assert apply_patch(job, {"seq_len": 8192}) == {**job, "seq_len": 8192}
