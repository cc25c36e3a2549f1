"""Time, cost and a recommendation across the rental market: fills a Plan's market fields.

Options: every card at one GPU, plus, where one card cannot hold the job, the fewest GPUs (2, 4
or 8, sharded with FSDP/ZeRO-3) that can (planner/market/options.py). Recommendation: the
cheapest, the fastest, the best value, and with a budget or deadline the cheapest run that meets
it, all over the same runs: every option that fits, the requested one included (`candidates`).
Best value is the option with the smallest cost × hours (dollar-hours): a run that costs a little
more but finishes in a fraction of the time beats a marginally cheaper slow one.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import TYPE_CHECKING

from planner.catalog.prices import (
    NO_QUOTE_REASON,
    UNDATED,
    PriceBook,
    not_rentable_reasons,
    price_book,
)
from planner.market.after_training import after_training
from planner.market.managed import managed_option
from planner.market.options import (
    Footprint,
    MarketCards,
    MarketContext,
    make_option,
    market_cards,
    market_options,
    read_requested_card,
    training_tokens,
)
from planner.market.suggestions import suggest
from planner.messages import MARKET
from planner.plan import NotRentable, Option, Plan, Recommendation
from planner.spec import Pricing, Rollout, Sharding
from planner.units import hours_text
from planner.words import Listing

if TYPE_CHECKING:
    from planner.job.resolved import ResolvedJob


def _describe(option: Option) -> str:
    run = MARKET("run", count=option.count, gpu=option.gpu_name, hours=hours_text(option.hours))
    if option.cost_usd is None:
        return run
    spot = " spot" if option.pricing == "spot" else ""  # interruptible: the plan says so too
    undated = option.price_date == UNDATED
    date = MARKET("date.undated") if undated else MARKET("date.quote", date=option.price_date)
    return MARKET(
        "run.priced", run=run, cost=option.cost_usd, rate=option.usd_per_hour, spot=spot, date=date
    )


def candidates(options: list[Option], requested: Option | None) -> list[Option]:
    """Every run the answer shows that can happen (fits or tight) and has hours: the catalog's
    rows and the requested one, which the sweep may not hold (8× H100 when 2 suffice)."""
    rows = [*options]
    if requested is not None and all(
        (o.gpu, o.count, o.sharding) != (requested.gpu, requested.count, requested.sharding)
        for o in options
    ):
        rows.append(requested)
    return [o for o in rows if o.verdict != "no" and o.hours is not None]


def cheapest_of(runs: list[Option]) -> Option | None:
    """The lowest cost among priced runs; equal costs go to the shorter run."""
    priced = [o for o in runs if o.cost_usd is not None]
    return min(priced, key=lambda o: (o.cost_usd, o.hours)) if priced else None


def fastest_of(runs: list[Option]) -> Option | None:
    """The fewest hours; equal hours go to the cheaper run, then the one listed first."""
    return min(runs, key=_fastest_order) if runs else None


def best_value_of(runs: list[Option]) -> Option | None:
    """The lowest cost × hours (dollar-hours) among priced runs: a run that costs a little more
    but finishes in a fraction of the time beats a marginally cheaper slow one."""
    priced = [o for o in runs if o.cost_usd is not None]
    return min(priced, key=lambda o: (o.cost_usd * o.hours, o.cost_usd)) if priced else None


def _fastest_order(option: Option) -> tuple[float, float]:
    return (option.hours, option.cost_usd if option.cost_usd is not None else float("inf"))


def recommend(
    options: list[Option], job: ResolvedJob, requested: Option | None = None
) -> Recommendation:
    """The picks over every priced run that can happen, the requested one included (see
    candidates): a run without a price is never a pick, however fast."""
    priced = [o for o in candidates(options, requested) if o.cost_usd is not None]
    if not priced:
        return Recommendation(summary=_nothing_summary(options, job))
    cheapest = cheapest_of(priced)
    fastest = fastest_of(priced)
    best_value = best_value_of(priced)
    budget, deadline = job.budget_usd, job.deadline_hours
    both = cheapest
    if budget is not None or deadline is not None:
        within = [
            o
            for o in priced
            if (budget is None or o.cost_usd <= budget)
            and (deadline is None or o.hours <= deadline)
        ]
        both = cheapest_of(within)
    within_budget = both if budget is not None else None
    meets_deadline = both if deadline is not None else None
    if fastest is cheapest:
        lines = [MARKET("cheapest_fastest", run=_describe(cheapest))]
    else:
        lines = [
            MARKET("cheapest", run=_describe(cheapest)),
            MARKET("fastest", run=_describe(fastest)),
        ]
    if best_value is not cheapest and best_value is not fastest:
        lines.append(MARKET("best_value", run=_describe(best_value)))
    lines.append(_constraint_sentence(job, both, cheapest, fastest))
    return Recommendation(
        cheapest=cheapest,
        fastest=fastest,
        best_value=best_value,
        within_budget=within_budget,
        meets_deadline=meets_deadline,
        summary=MARKET("summary", lines=Listing([line for line in lines if line], " ", " ")),
    )


def _constraint_sentence(
    job: ResolvedJob, both: Option | None, cheapest: Option, fastest: Option
) -> str:
    budget, deadline = job.budget_usd, job.deadline_hours
    if budget is None and deadline is None:
        return ""
    wanted = (
        "both"
        if budget is not None and deadline is not None
        else "budget"
        if budget
        else "deadline"
    )
    limits = {"budget": budget, "deadline": deadline}
    limits = {name: value for name, value in limits.items() if value is not None}
    if both is not None:
        return MARKET(f"within.{wanted}", run=_describe(both), **limits)
    return MARKET(
        f"nothing.{wanted}", cost=cheapest.cost_usd, hours=hours_text(fastest.hours), **limits
    )


def _nothing_summary(options: list[Option], job: ResolvedJob) -> str:
    if any(o.verdict != "no" for o in options):
        if training_tokens(job) is None:
            return MARKET("no_tokens")
        return MARKET("no_price")
    return MARKET("no_card")


def calibrate_to_measurement(context: MarketContext, requested: Option | None) -> list[str]:
    """Scale every card by the user's measured tokens/s over our estimate for their setup."""
    measured = context.job.tokens_per_s
    if measured is None:
        return []
    if requested is None or not requested.tokens_per_s:
        context.measured_ratio = None
        return [
            f"Your measured {measured:,.0f} tokens/s was not used: say which card it was "
            "measured on."
        ]
    context.measured_ratio = measured / requested.tokens_per_s
    return [
        f"Times use your measured {measured:,.0f} tokens/s on {requested.count}× "
        f"{requested.gpu_name} (our estimate was {requested.tokens_per_s:,.0f}); other cards "
        "are scaled by the same ratio."
    ]


def not_rentable(cards: MarketCards, only_gpus: Collection[str] | None = None) -> list[NotRentable]:
    """The catalog's cards (or the compared ones) no price in use covers, each with the reason
    the data gives."""
    reasons = not_rentable_reasons()
    return [
        NotRentable(
            gpu=card.gpu.key,
            gpu_name=card.gpu.name,
            reason=reasons.get(card.gpu.key, NO_QUOTE_REASON),
        )
        for card in cards.every
        if card.price is None and (only_gpus is None or card.gpu.key in only_gpus)
    ]


SPOT_ADVICE = (
    "Spot prices: the job accepts interruptions, so each card is priced at its cheapest spot or "
    "bid rate where one is cheaper (marked spot). A spot run can be stopped at any moment: save a "
    "checkpoint at least every 30 minutes and resume from the latest one."
)


def attach_market(
    plan: Plan,
    job: ResolvedJob,
    prices: PriceBook | None = None,
    only_gpus: Collection[str] | None = None,
) -> Plan:
    """Fill options, requested, recommendation, suggestions, after_training and price_date;
    `prices` are the live market's (the bundled table when None). `only_gpus` (catalog keys)
    is a comparison ("h100 or a100?"): rows, picks and suggestions stay among those cards and
    the one the job names, as if only they were for rent."""
    book = prices if prices is not None else price_book()
    spot = job.pricing is Pricing.spot
    table = book.table(spot)
    card = read_requested_card(job)
    if only_gpus is not None:
        kept = frozenset({*only_gpus, *([card.gpu.key] if card.gpu else [])})
        context = MarketContext(
            job, prices={k: v for k, v in table.items() if k in kept}, among=kept
        )
    else:
        context = MarketContext(job, prices=table)
    count = job.num_gpus
    sharding = job.sharding if count > 1 else Sharding.none
    if job.rollout is not Rollout.vllm_colocate:  # else the plan's figure holds a card's pool
        host_gib = (plan.memory.host_ram_gib or 0.0) if job.cpu_offload else 0.0
        context.known[(count, sharding)] = Footprint(
            plan.memory.required_gib, plan.memory.sharding, host_ram_gib=host_gib
        )
    requested = make_option(context, card.gpu, count, sharding) if card.gpu else None
    notes = calibrate_to_measurement(context, requested)
    if requested is not None and context.measured_ratio is not None:
        requested = make_option(context, card.gpu, count, sharding)
    options = market_options(context)
    recommendation = recommend(options, job, requested)
    suggestions = suggest(context, card.gpu, requested, options, recommendation.cheapest)
    chosen = recommendation.cheapest or requested
    return plan.model_copy(
        update={
            "options": options,
            "not_rentable": not_rentable(market_cards(table), only_gpus),
            "managed": managed_option(job),
            "requested": requested,
            "recommendation": recommendation,
            "suggestions": suggestions,
            "after_training": after_training(job, chosen.hours if chosen else None),
            "price_date": book.label,
            "assumptions": [
                *plan.assumptions,
                *card.assumptions,
                *notes,
                *([SPOT_ADVICE] if spot else []),
            ],
            "warnings": [*plan.warnings, *card.warnings],
        }
    )
