"""Renting vs managed fine-tuning: which services can run a job (model, method, objective,
context), what the cheapest costs for the job's trained tokens, and what the answer says."""

from __future__ import annotations

import pytest

from bot.language import in_chinese
from bot.reply_builder import recommendation_lines
from planner.market.managed import _STATUS, managed_rows
from planner.planner import make_plan
from planner.spec import JobSpec

SEED = {"model": "13B", "method": "qlora", "seq_len": 4096, "dataset_tokens": 20e6, "epochs": 3}


def test_the_seed_job_is_priced_per_training_token_beside_the_rental() -> None:
    plan = make_plan(JobSpec(**SEED))
    managed = plan.managed
    # Llama-2-13B in Together's "up to 16B" LoRA SFT tier, the cheapest that runs it.
    assert (managed.service, managed.price) == ("Together AI fine-tuning", 0.48)
    assert managed.trained_tokens == 60e6 and managed.cost_usd == pytest.approx(28.8)
    assert managed.unit == "USD per 1M training tokens"
    assert managed.date == "2026-02-13" and managed.source.startswith("https://")
    assert managed.caveats[0].startswith("no choice of card")
    assert any("per training token" in caveat for caveat in managed.caveats)
    dumped = plan.model_dump(mode="json")["managed"]
    assert {"service", "price", "unit", "date", "source", "cost_usd"} <= set(dumped)


def test_a_named_model_row_needs_the_model_and_a_context_it_holds() -> None:
    job = {"model": "Qwen/Qwen3-8B", "method": "lora", "dataset_tokens": 50e6, "epochs": 1}
    short = make_plan(JobSpec(**job, seq_len=8192)).managed
    assert short.service == "Thinking Machines Tinker" and "Qwen3-8B (32K)" in short.model
    assert "context up to 32K tokens" in short.caveats
    long = make_plan(JobSpec(**job, seq_len=65536)).managed
    assert long is None or long.service != "Thinking Machines Tinker"


def test_method_and_objective_must_match() -> None:
    full = make_plan(JobSpec(model="70B", method="full", dataset_tokens=10e6)).managed
    assert full.method == "full" and full.model == "size tier 70-100B"
    dpo = make_plan(JobSpec(**{**SEED, "model": "8B", "objective": "dpo"})).managed
    assert "DPO" in dpo.objective
    # Online RL also pays for sampling, which no training-token price covers.
    grpo = JobSpec(**{**SEED, "model": "8B", "method": "lora", "objective": "grpo"})
    assert make_plan(grpo).managed is None
    assert make_plan(JobSpec(model="8B", method="lora")).managed is None  # no token count


def test_wind_downs_and_promotions_are_read_from_the_data() -> None:
    notes = {row.service: row.notes for row in managed_rows()}
    openai = dict(_STATUS.findall(notes["OpenAI fine-tuning API"]))
    assert "winding down" in openai["STATUS"]
    mistral = dict(_STATUS.findall(notes["Mistral fine-tuning API"]))
    assert "deprecated" in mistral["STATUS"]
    assert all(row.price_usd > 0 and row.date.startswith("20") for row in managed_rows())


def test_the_answer_line_in_english_and_chinese() -> None:
    plan = make_plan(JobSpec(**SEED))
    line = next(line for line in recommendation_lines(plan) if "Managed" in line)
    assert line.startswith("Managed instead: Together AI fine-tuning (size tier Up to 16B)")
    assert "≈ $28.80 for 60M training tokens at $0.48 per 1M (2026-02-13)" in line
    assert line.endswith("no choice of card, billed per token")
    chinese = in_chinese(line)
    assert chinese.startswith("托管微调：") and "不能选卡，按 token 计费" in chinese
