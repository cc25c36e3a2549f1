"""An inverse answer's lead ("Up to 6,400 tokens fit one RTX 3090 …") and its other cards: which
sentence of bot.phrases to say, with which figures. The figures come from planner.solve; nothing
here searches or estimates."""

from __future__ import annotations

from bot import format as fmt
from bot import phrases
from planner.catalog.gpus import gpu_by_key
from planner.market.solve import GPU_COUNT_LADDER, counts_searched
from planner.plan import Option, Plan, Solve, SolvedCard


def _tokens(value: float) -> str:
    """Context lengths as people say them: 8k for 8,192, else the exact count."""
    whole = int(value)
    return f"{whole // 1024}k" if whole % 1024 == 0 and whole >= 4096 else f"{whole:,}"


def _main_card(solve: Solve, plan: Plan) -> SolvedCard:
    if solve.cards:
        return next((c for c in solve.cards if c.gpu == solve.gpu), solve.cards[0])
    return SolvedCard(
        gpu=solve.gpu or "",
        gpu_name=plan.requested.gpu_name if plan.requested else (solve.gpu or ""),
        count=solve.count or 1,
        value=solve.value if not isinstance(solve.value, str) else None,
        comfortable=solve.comfortable,
        binding=solve.binding or "memory",
        model=solve.model,
        model_name=solve.model_name,
        comfortable_model=solve.comfortable_model,
        sharding=solve.sharding,
        cpu_offload=solve.cpu_offload,
    )


def _smallest_holding(plan: Plan) -> str:
    """The smallest single card that holds the job as asked (from its forward plan)."""
    holding = [o for o in plan.options if o.count == 1 and o.verdict != "no"]
    if not holding:
        return ""
    smallest = min(holding, key=lambda o: (o.usable_gib, o.cost_usd or 0))
    return phrases.smallest_card_holding(plan.spec.seq_len or 0, smallest.gpu_name)


def _headroom(value: float | None, render) -> str:
    return phrases.with_headroom(render(value)) if value else ""


def _limit_sentence(solve: Solve, card: SolvedCard, plan: Plan) -> str:
    where = phrases.on_cards(card.count, card.gpu_name)
    stack = phrases.STACK_NAMES[str(plan.spec.framework)]
    method = phrases.METHOD_NOUNS[str(plan.spec.method)]
    value, seq_len = card.value, plan.spec.seq_len or 0
    if solve.asked == "seq_len":
        if value is None:
            smallest = _smallest_holding(plan)
            return phrases.no_context_fits(where, plan.model.name, method, stack, smallest)
        if card.binding == "context_window":
            return phrases.context_window_fits(_tokens(value), where, stack)
        headroom = _headroom(card.comfortable, _tokens)
        return phrases.context_limit(_tokens(value), where, stack, headroom)
    if solve.asked == "micro_batch":
        if value is None:
            return phrases.no_batch_fits(where, seq_len, stack, _smallest_holding(plan))
        headroom = _headroom(card.comfortable, lambda b: f"{b:g}")
        return phrases.batch_limit(f"{value:g}", where, seq_len, stack, headroom)
    if solve.asked == "params_b":
        if value is None or card.model_name is None:
            return phrases.no_model_fits(where, method, stack)
        easy = ""
        if card.comfortable_model and card.comfortable_model != card.model_name:
            easy = phrases.comfortable_model(card.comfortable_model)
        return phrases.largest_model(where, method, stack, card.model_name, value, easy)
    if value is None:
        gpu = gpu_by_key(card.gpu)
        most = counts_searched(gpu)[-1] if gpu is not None else GPU_COUNT_LADDER[-1]
        return phrases.no_count_holds(card.gpu_name, most)
    layout = phrases.LAYOUT_PHRASES.get(card.sharding or "none", "")
    sharded = card.sharding in ("fsdp", "zero3")
    return phrases.fewest_cards(card.count, card.gpu_name, layout, card.cpu_offload, sharded)


def _run(option: Option) -> str:
    card = fmt.card(option.gpu_name, option.count)
    return phrases.run_line(card, fmt.hours(option.hours), fmt.usd(option.cost_usd))


def _constraint_sentence(solve: Solve, plan: Plan) -> str:
    spec = plan.spec
    deadline = solve.binding == "deadline"
    kind = "deadline" if deadline else "budget"
    limit = fmt.hours(spec.deadline_hours) if deadline else fmt.usd(spec.budget_usd)
    pick = plan.recommendation.meets_deadline or plan.recommendation.within_budget
    if pick is not None:
        return phrases.constraint_met(kind, limit, _run(pick))
    miss = solve.closest_miss
    if miss is None or miss.hours is None or miss.cost_usd is None:
        return phrases.constraint_missed(kind, limit)
    if deadline and spec.deadline_hours:
        over = fmt.hours(miss.hours - spec.deadline_hours)
        return phrases.constraint_missed(kind, limit, _run(miss), over)
    over = fmt.usd(miss.cost_usd - (spec.budget_usd or 0))
    return phrases.constraint_missed(kind, limit, _run(miss), over)


def over_budget(plan: Plan) -> str | None:
    """ "cheapest under $5?" with no run that cheap: the cheapest run there is and by how much
    it is over the budget; None without a budget or a priced run."""
    budget_usd, cheapest = plan.spec.budget_usd, plan.recommendation.cheapest
    if budget_usd is None or cheapest is None or cheapest.cost_usd is None:
        return None
    over = fmt.usd(cheapest.cost_usd - budget_usd)
    return phrases.constraint_missed("budget", fmt.usd(budget_usd), _run(cheapest), over)


def lead(plan: Plan) -> str:
    """The answer's first sentence: the number asked for, where, and what binds it."""
    solve = plan.solve
    if solve is None:
        return ""
    if solve.asked == "gpu":
        return _constraint_sentence(solve, plan)
    sentence = _limit_sentence(solve, _main_card(solve, plan), plan)
    render = _tokens if solve.asked == "seq_len" else (lambda v: f"{v:g}")
    moved = [
        phrases.lever_moved(render(lever.value), lever.change)
        for lever in solve.levers
        if lever.value is not None and lever.value != solve.value
    ]
    if moved:
        sentence = phrases.levers_line(sentence, moved)
    if solve.asked == "micro_batch" and solve.value:
        sentence = phrases.with_accumulation_note(sentence)
    return sentence


def other_cards(plan: Plan) -> list[str]:
    """With no card named, the limit on each reference card."""
    solve = plan.solve
    if solve is None or not solve.cards:
        return []
    return [_limit_sentence(solve, card, plan) for card in solve.cards if card.gpu != solve.gpu]


def searched(plan: Plan) -> list[str]:
    solve = plan.solve
    return [phrases.searched_over(solve.tolerance)] if solve and solve.tolerance else []
