"""A card comparison ("compare h100 and a100") keeps its rows, picks and suggestions among the
compared cards (and the one the job names), in a question and in a thread (issue 33)."""

from __future__ import annotations

from planner.plan import Plan
from planner.planner import make_plan, parse_spec
from tests.golden import conversation

COMPARED = ("h100-sxm", "a100-80g-sxm")


def _cards(plan: Plan) -> set[str]:
    picks = plan.recommendation
    chosen = [picks.cheapest, picks.fastest, picks.best_value, picks.within_budget]
    cards = {o.gpu for o in plan.options} | {o.gpu for o in chosen if o is not None}
    for suggestion in plan.suggestions:
        gpu = suggestion.patch.get("gpu")
        if gpu is not None:
            cards.add(str(gpu))
    return cards


def test_the_market_stays_among_the_compared_cards() -> None:
    job = parse_spec(
        {"model": "mistral 7b", "method": "lora", "seq_len": 4096, "dataset_tokens": 5e7}
    )
    plan = make_plan(job, only_gpus=COMPARED)
    assert {o.gpu for o in plan.options} == set(COMPARED)
    assert plan.recommendation.cheapest is not None
    assert _cards(plan) <= set(COMPARED), _cards(plan)
    assert plan.not_rentable == []  # every other card is simply not compared
    # The whole market picks elsewhere: the comparison is what keeps it here.
    assert not _cards(make_plan(job)) <= set(COMPARED)


def test_a_named_card_stays_in_its_comparison() -> None:
    job = parse_spec(
        {"model": "llama 3 8b", "method": "qlora", "gpu": "RTX 4090", "dataset_tokens": 1e7}
    )
    plan = make_plan(job, only_gpus=COMPARED)
    assert plan.requested is not None and plan.requested.cost_usd is not None
    assert {o.gpu for o in plan.options} <= {*COMPARED, plan.requested.gpu}


def test_compare_in_a_question_and_in_a_thread_recommends_only_those_cards() -> None:
    from bot.threads import ThreadKey

    for texts in (
        ["compare h100 and a100 for mistral 7b lora 4k ctx, 50M tokens"],
        ["mistral 7b lora 4k ctx, 50M tokens", "compare h100 and a100"],
    ):
        talk = conversation()
        key = ThreadKey(platform="test", thread="compare")
        for text in texts:
            turn = talk.respond(key, text)
        reply = turn.reply
        shown = " ".join([*reply.recommendation, *reply.suggestions, reply.verdict])
        for other in ("GB200", "B200", "V100", "AMD"):  # cards of the whole market
            assert other not in shown, shown
        assert {row.gpu_name for row in reply.table} == {
            "NVIDIA H100 SXM5 80GB",
            "NVIDIA A100 80GB SXM4",
        }
        assert all(row.count == 1 for row in reply.table)  # one H100 holds it: no "4× H100"
