"""Plan → Reply on real plans: a compact, ordered card table, stable what-ifs, diffs and a chart."""

from __future__ import annotations

import pytest

from bot.changes import diff_plans
from bot.chart import chart_png
from bot.reply_builder import MAX_TABLE_ROWS, help_reply, plan_reply
from planner.parsing import parse
from planner.planner import make_plan

SEED = "llama 3.1 8b QLoRA, 4k ctx, 20M tokens x3"


def _plan(text: str):
    result = parse(text)
    assert result.spec is not None, result
    return make_plan(result.spec)


def test_the_table_is_short_ordered_and_highlights_the_picks() -> None:
    plan = _plan(SEED)
    reply = plan_reply(plan)
    assert 0 < len(reply.table) <= MAX_TABLE_ROWS < len(plan.options)
    order = {"fits": 0, "tight": 1, "no": 2}
    verdicts = [order[row.verdict] for row in reply.table]
    assert verdicts == sorted(verdicts)
    costs = [row.cost_usd for row in reply.table if row.verdict == "fits" and row.cost_usd]
    assert costs == sorted(costs)
    highlights = " ".join(row.highlight or "" for row in reply.table)
    assert "cheapest" in highlights and "fastest" in highlights
    # Each card appears once, at the fewest GPUs that hold the job, unless it is a named pick.
    plain = [(row.gpu_name, row.count) for row in reply.table if not row.highlight]
    assert len({name for name, _ in plain}) == len(plain)


def test_a_named_card_is_shown_even_when_it_does_not_fit() -> None:
    plan = _plan("70B full fine-tune, 8k ctx on an RTX 4090")
    reply = plan_reply(plan)
    requested = [row for row in reply.table if row.highlight and "requested" in row.highlight]
    assert len(requested) == 1 and requested[0].verdict == "no"
    assert "does not fit" in reply.verdict


def test_only_gpus_narrows_the_table_to_a_comparison() -> None:
    plan = _plan(SEED)
    keys = {plan.options[0].gpu}
    reply = plan_reply(plan, only_gpus=keys)
    assert {row.gpu_name for row in reply.table} == {plan.options[0].gpu_name}


def test_whatif_ids_name_their_action() -> None:
    reply = plan_reply(_plan(SEED))
    ids = [whatif.id for whatif in reply.whatifs]
    assert "ctx8k" in ids and "cheapest" in ids and len(ids) == len(set(ids)) <= 5
    assert "qlora" not in ids  # already QLoRA
    assert "qlora" in [w.id for w in plan_reply(_plan("13B LoRA, 4k ctx")).whatifs]


def test_diff_reports_fields_memory_and_flips() -> None:
    before, after = _plan(SEED), _plan("llama 3.1 8b QLoRA, 32k ctx, 20M tokens x3")
    changes = diff_plans(before, after)
    assert changes.spec["seq_len"] == (4096, 32768)
    lines = changes.lines()
    assert lines[0] == "context length: 4096 → 32768"
    assert any(line.startswith("memory per GPU:") and "(+" in line for line in lines)
    assert diff_plans(before, before).lines() == []


def test_chart_is_a_png_and_needs_a_table() -> None:
    png = chart_png(plan_reply(_plan(SEED)))
    assert png.startswith(b"\x89PNG\r\n\x1a\n") and len(png) > 5_000
    with pytest.raises(ValueError):
        chart_png(help_reply())


def test_follow_up_hints_fit_the_plan() -> None:
    hints = plan_reply(_plan(SEED)).followups
    assert "what if 8k ctx?" in hints and "undo" not in hints
    assert any(hint.startswith("cheapest under $") for hint in hints)
    longer = plan_reply(
        _plan("llama 3.1 8b QLoRA, 8k ctx, 20M tokens"), changes=["context length: 4096 → 8192"]
    )
    assert "what if 8k ctx?" not in longer.followups and "undo" in longer.followups


def test_how_many_of_my_card_is_answered_in_the_verdict_and_the_table() -> None:
    reply = plan_reply(_plan("全参微调 7B 需要几张4090"))
    assert "does not fit on 1× NVIDIA GeForce RTX 4090" in reply.verdict
    assert "× NVIDIA GeForce RTX 4090 with FSDP (the model sharded across the GPUs) hold it" in (
        reply.verdict
    )
    assert "but it fits with" not in reply.verdict  # LoRA is another result, not a setting
    fewest = [row for row in reply.table if row.highlight == "fewest of your card"]
    assert len(fewest) == 1 and fewest[0].count > 1 and fewest[0].verdict != "no"


def test_without_a_token_count_the_verdict_names_the_cheapest_card_to_rent() -> None:
    plan = _plan("7B lora")
    assert plan.recommendation.cheapest is None  # no run cost without tokens
    reply = plan_reply(plan)
    assert "Cheapest to rent:" in reply.verdict
    assert "no card" not in reply.verdict
    hourly = [row.usd_per_hour * row.count for row in reply.table if row.usd_per_hour]
    assert hourly == sorted(hourly)


def test_a_job_no_card_holds_says_so() -> None:
    reply = plan_reply(_plan("700B full fine-tune 32k ctx"))
    assert "no card in the catalog holds it" in reply.verdict


def test_a_model_at_its_context_window_gets_no_longer_context_button() -> None:
    # Llama-2-13B's window is 4,096 tokens: an 8k button would offer what the model cannot read.
    ids = [whatif.id for whatif in plan_reply(_plan("13B QLoRA, 4k ctx")).whatifs]
    assert not any(button.startswith("ctx") for button in ids)
