"""Plan → Reply: every sentence and row a surface shows is decided here, once."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any

from bot import format as fmt
from bot import phrases, solve_reply
from bot.reply import CardRow, ContextCurve, MemoryLine, Reply, ReplyKind, WhatIf
from bot.run_configs import CONFIG_BUTTON_ID, config_button
from planner.plan import Option, Plan, Suggestion
from planner.spec import Method, Objective
from planner.words import Listing

MAX_TABLE_ROWS = 10
MAX_WHATIFS = 5  # one row of buttons on Discord
_VERDICT_ORDER = {"fits": 0, "tight": 1, "no": 2}


def plan_reply(
    plan: Plan,
    *,
    changes: Collection[str] = (),
    only_gpus: Collection[str] | None = None,
    notes: Collection[str] = (),
) -> Reply:
    """The answer to a planned job; `only_gpus` (catalog keys) narrows the table to a comparison."""
    table = card_table(plan, only_gpus)
    buttons = whatifs(plan)
    solved = plan.solve
    lead = solve_reply.lead(plan)
    return Reply(
        kind="plan",
        title=title(plan),
        verdict=phrases.lead_and_verdict(lead, verdict(plan)) if lead else verdict(plan),
        required_gib=plan.memory.required_gib,
        range_gib=plan.memory.range_gib,
        memory=memory_lines(plan),
        table=table,
        recommendation=[*solve_reply.other_cards(plan), *recommendation_lines(plan)],
        suggestions=[suggestion.change for suggestion in plan.suggestions],
        changes=list(changes),
        assumptions=[
            *notes,
            *(solved.assumptions if solved else []),
            *solve_reply.searched(plan),
            *plan.assumptions,
        ],
        warnings=list(plan.warnings),
        price_date=plan.price_date,
        followups=followup_hints(plan, buttons, can_undo=bool(changes)),
        whatifs=buttons,
        has_chart=any(row.hours is not None or row.cost_usd is not None for row in table),
        context_curve=_curve(plan),
    )


def _curve(plan: Plan) -> ContextCurve | None:
    """The memory-against-context curve and the card to draw it against: the card the user
    named, else the run the answer recommends; only at the job's GPU count (the curve is
    memory per GPU at that count), else no card line rather than one nobody asked about."""
    if len(plan.memory_by_context) < 2:
        return None
    count = plan.spec.num_gpus or 1
    named = plan.requested if plan.requested is not None else plan.recommendation.cheapest
    card = named if named is not None and named.count == count else None
    return ContextCurve(
        points=[(p.seq_len, p.required_gib) for p in plan.memory_by_context],
        asked_seq_len=plan.spec.seq_len or plan.memory_by_context[0].seq_len,
        card=fmt.card(card.gpu_name, card.count) if card else None,
        card_gib=card.usable_gib if card else None,
    )


def title(plan: Plan) -> str:
    spec = plan.spec
    rl = spec.objective is not None and spec.objective is not Objective.sft
    return phrases.title_line(
        plan.model.name,
        Method(spec.method).value,
        spec.objective.value.upper() if rl and spec.objective is not None else None,
        spec.num_generations or 1,
        spec.seq_len,
        fmt.tokens(spec.dataset_tokens) if spec.dataset_tokens else None,
        spec.epochs,
    )


def verdict(plan: Plan) -> str:
    memory = plan.memory
    low_gib, high_gib = memory.range_gib
    need = phrases.needs(memory.required_gib, low_gib, high_gib)
    if plan.requested is not None:
        option = plan.requested
        software = software_fix(plan)
        fix = phrases.fits_with(software.label, software.required_gib_after) if software else ""
        # A single-card software fix is the answer: more cards would be a second, costlier one.
        enough = _fewest_of_requested(plan) if software is None else None
        more = phrases.more_cards_hold(_layout_card(enough)) if enough is not None else ""
        card, cost = _layout_card(option), _cost(option)
        return phrases.on_requested(need, option.verdict, card, cost, fix, more)
    if not plan.options:
        return phrases.need_only(need)
    fitting = [o for o in plan.options if o.verdict != "no"]
    if not fitting:
        return phrases.no_card_holds(need)
    cheapest = plan.recommendation.cheapest
    if cheapest is None:  # no token count, so no run cost: rank by hourly price
        cheapest = min(fitting, key=_usd_per_hour_all)
        return phrases.cheapest_to_rent(need, _layout_card(cheapest))
    return phrases.cheapest_run(need, _layout_card(cheapest), _cost(cheapest))


def software_fix(plan: Plan) -> Suggestion | None:
    """The first suggested change of software or settings that makes the job fit the card and
    count the user named: the answer leads with it, before renting more cards."""
    return next((s for s in plan.suggestions if s.fits_as_asked), None)


def _layout_card(option: Option) -> str:
    """ "8× H100 with DDP (each GPU holds a full copy)": a multi-GPU run says how it is laid out."""
    card = fmt.card(option.gpu_name, option.count)
    return phrases.with_layout(card, option.sharding) if option.count > 1 else card


def comparison_lines(plans: Sequence[Plan]) -> list[str]:
    """One line per compared job: its memory and where it runs best (on the named card when one
    was named, else the cheapest run, else the fastest), with hours and cost."""
    return [_comparison_line(plan) for plan in plans]


def _comparison_line(plan: Plan) -> str:
    job = title(plan)
    picks = plan.recommendation
    parts = []
    if plan.requested is not None:
        requested = plan.requested
        parts.append(
            phrases.on_the_card(requested.verdict, _layout_card(requested), _cost(requested))
        )
    if picks.cheapest is not None:
        if picks.cheapest != plan.requested:  # else the named card is the cheapest: said once
            parts.append(phrases.best_card(_layout_card(picks.cheapest), _cost(picks.cheapest)))
    elif picks.fastest is not None:
        parts.append(phrases.fastest_card(_layout_card(picks.fastest), _cost(picks.fastest)))
    elif not any(o.verdict != "no" for o in plan.options):
        parts.append(phrases.NO_CARD_HOLDS_IT)
    else:
        fitting = [o for o in plan.options if o.verdict != "no"]
        parts.append(phrases.best_card(_layout_card(min(fitting, key=_usd_per_hour_all)), ""))
    return phrases.comparison_line(job, plan.memory.required_gib, parts)


def _fewest_of_requested(plan: Plan) -> Option | None:
    """The fewest of the named card that hold a job one of them cannot ("how many 4090s?")."""
    requested = plan.requested
    if requested is None or requested.verdict != "no":
        return None
    enough = [o for o in plan.options if o.gpu == requested.gpu and o.verdict != "no"]
    return min(enough, key=lambda o: o.count) if enough else None


def memory_lines(plan: Plan) -> list[MemoryLine]:
    breakdown = plan.memory.breakdown_gib.model_dump()
    return [
        MemoryLine(component=name, gib=round(value_gib, 2))
        for name, value_gib in breakdown.items()
        if value_gib >= 0.05
    ]


def card_table(plan: Plan, only_gpus: Collection[str] | None = None) -> list[CardRow]:
    """The rows people need, not every card × count: each card at the fewest GPUs that hold the job,
    plus every highlighted option; fitting rows first, cheapest first."""
    highlights = _highlights(plan)
    candidates = list(plan.options)
    if plan.requested is not None and plan.requested not in candidates:
        candidates.append(plan.requested)  # a count the catalog sweep does not try, e.g. 3 GPUs
    options = [o for o in candidates if only_gpus is None or o.gpu in only_gpus]
    chosen: dict[tuple[str, int], Option] = {
        (o.gpu, o.count): o for o in options if (o.gpu, o.count) in highlights
    }
    for option in _fewest_that_fit(options, keep_misses=only_gpus is not None or not chosen):
        chosen.setdefault((option.gpu, option.count), option)
    ordered = sorted(chosen.values(), key=_row_order)
    picked = [o for o in ordered if (o.gpu, o.count) in highlights]
    others = [o for o in ordered if (o.gpu, o.count) not in highlights]
    kept = picked + others[: max(0, MAX_TABLE_ROWS - len(picked))]
    return [_row(o, highlights.get((o.gpu, o.count))) for o in sorted(kept, key=_row_order)]


def recommendation_lines(plan: Plan) -> list[str]:
    """The market's own summary when it wrote one (it names the picks), else the picks."""
    summary = plan.recommendation.summary
    lines = (
        [summary]
        if summary
        else [
            phrases.pick_line(label, fmt.card(option.gpu_name, option.count), _cost(option))
            for label, option in _picks(plan)
        ]
    )
    managed = plan.managed
    if managed is not None and plan.recommendation.cheapest is not None:
        line = phrases.managed_line(
            managed.service,
            managed.model,
            managed.cost_usd,
            managed.trained_tokens,
            managed.price,
            managed.date,
            managed.caveats,
        )
        lines.append(line)
    after = plan.after_training
    if after is not None:
        lines.append(
            phrases.after_training_line(
                after.adapter_mb, after.serve_bf16_gib, after.serve_4bit_gib, after.serve_mxfp4_gib
            )
        )
    return lines


def whatifs(plan: Plan) -> list[WhatIf]:
    """Buttons for the likeliest next questions; ids name the action so they stay stable."""
    spec = plan.spec
    buttons: list[WhatIf] = []
    window = plan.model.max_context
    # A longer context only while the model's window holds it: never "what if 684k ctx?".
    if spec.seq_len and (window is None or spec.seq_len * 2 <= window):
        longer = spec.seq_len * 2
        name = f"{longer // 1024}k" if longer % 1024 == 0 else str(longer)
        label, text = phrases.longer_context_button(name)
        buttons.append(WhatIf(id=f"ctx{name}", label=label, text=text, patch={"seq_len": longer}))
    if spec.num_gpus:
        more = spec.num_gpus * 2
        label, text = phrases.more_gpus_button(more)
        buttons.append(WhatIf(id=f"gpus{more}", label=label, text=text, patch={"num_gpus": more}))
    if spec.method == Method.full:
        label, text = phrases.LORA_BUTTON
        buttons.append(WhatIf(id="lora", label=label, text=text, patch={"method": "lora"}))
    elif spec.method == Method.lora:
        label, text = phrases.QLORA_BUTTON
        buttons.append(WhatIf(id="qlora", label=label, text=text, patch={"method": "qlora"}))
    if spec.gradient_checkpointing is False:
        label, text = phrases.CHECKPOINTING_BUTTON
        patch = {"gradient_checkpointing": True}
        buttons.append(WhatIf(id="gc_on", label=label, text=text, patch=patch))
    cheapest = plan.recommendation.cheapest
    if cheapest is not None:  # without a cheapest run the button could only say "none"
        label, text = phrases.CHEAPEST_BUTTON
        patch = move_to(cheapest)
        buttons.append(WhatIf(id="cheapest", label=label, text=text, patch=patch))
    buttons = buttons[:MAX_WHATIFS]
    config = config_button(plan)
    if config is not None and len(buttons) < MAX_WHATIFS:  # the what-ifs keep their row
        buttons.append(config)
    return buttons


def move_to(option: Option) -> dict[str, Any]:
    """The patch that moves a job onto `option`'s run: its card, count and, on several GPUs,
    the layout it was planned with (a LoRA job re-resolved on 2 GPUs would default to DDP)."""
    patch: dict[str, Any] = {"gpu": option.gpu_name, "num_gpus": option.count}
    if option.count > 1:
        patch["sharding"] = option.sharding
    return patch


def followup_hints(plan: Plan, buttons: list[WhatIf], *, can_undo: bool) -> list[str]:
    """Example follow-ups that make sense for this plan (never "8k" when it is already 8k)."""
    changes = [b for b in buttons if not b.id.startswith(("gpus", "cheapest", CONFIG_BUTTON_ID))]
    hints = [b.text for b in changes][:2]
    named_4090 = plan.requested is not None and "4090" in plan.requested.gpu_name
    hints.append(phrases.other_card_hint(named_4090))
    cheapest = plan.recommendation.cheapest
    if cheapest is not None and cheapest.cost_usd:
        hints.append(phrases.budget_hint(_round_up_nicely(cheapest.cost_usd * 1.5)))
    if can_undo:
        hints.append(phrases.UNDO_HINT)
    return hints


def _round_up_nicely(value: float) -> int:
    """1, 2 or 5 times a power of ten, at or above `value`: 31.4 → 50."""
    scale = 1
    while True:
        for step in (1, 2, 5):
            if step * scale >= value:
                return step * scale
        scale *= 10


def nothing_cheaper_reply(plan: Plan) -> Reply:
    """ "cheapest …?" with nothing to move to: within a budget, the cheapest run and its price
    (the reader learns what it would take); without one, that no card has a known price."""
    title, body = phrases.nothing_cheaper(within_budget=plan.spec.budget_usd is not None)
    return message_reply("clarify", title, solve_reply.over_budget(plan) or body)


def help_reply() -> Reply:
    return Reply(
        kind="help",
        title=phrases.HELP_TITLE,
        body=phrases.HELP_BODY,
        followups=list(phrases.HELP_HINTS),
    )


def message_reply(kind: ReplyKind, title: str, body: str) -> Reply:
    """A short answer with no plan: clarify, error or rate_limited."""
    return Reply(kind=kind, title=title, body=body)


def providers_reply(
    providers: Collection[str] | None,
    process_default: Collection[str] | None,
    quoted: Collection[str],
    *,
    changed: bool,
) -> Reply:
    """What `/gpuplan providers` answers: the providers answers here price from."""
    from bot.prices.market import provider_names

    unquoted = [key for key in providers or () if key not in quoted] if quoted else []
    body = phrases.providers_in_use(
        provider_names(providers) if providers else None,
        provider_names(unquoted) if unquoted else None,
        is_default=bool(process_default)
        and not changed
        and providers == frozenset(process_default),
    )
    title = phrases.PROVIDERS_SAVED_TITLE if changed else phrases.PROVIDERS_TITLE
    return Reply(kind="help", title=title, body=body)


def _picks(plan: Plan) -> list[tuple[str, Option]]:
    recommendation = plan.recommendation
    labelled = (
        (phrases.CHEAPEST, recommendation.cheapest),
        (phrases.FASTEST, recommendation.fastest),
        (phrases.BEST_VALUE, recommendation.best_value),
        (phrases.WITHIN_BUDGET, recommendation.within_budget),
        (phrases.MEETS_DEADLINE, recommendation.meets_deadline),
    )
    return [(label, option) for label, option in labelled if option is not None]


def _highlights(plan: Plan) -> dict[tuple[str, int], str]:
    requested = [(phrases.REQUESTED, plan.requested)] if plan.requested is not None else []
    enough = _fewest_of_requested(plan)
    if enough is not None:
        requested.append((phrases.FEWEST_OF_YOUR_CARD, enough))
    names: dict[tuple[str, int], list[str]] = {}
    for label, option in [*requested, *_picks(plan)]:
        names.setdefault((option.gpu, option.count), []).append(label)
    return {key: ", ".join(labels) for key, labels in names.items()}


def _fewest_that_fit(options: list[Option], *, keep_misses: bool) -> list[Option]:
    """Per card, the option with the fewest GPUs that holds the job; with `keep_misses`, a card that
    never fits shows at its largest count, so the reader sees by how much it misses."""
    best: dict[str, Option] = {}
    for option in sorted(options, key=lambda o: o.count):
        current = best.get(option.gpu)
        if current is None or current.verdict == "no":
            best[option.gpu] = option
    return [o for o in best.values() if keep_misses or o.verdict != "no"]


def _row_order(option: Option) -> tuple[int, float, float, str]:
    """Cards that hold the job cheapest first; cards that do not, closest miss first."""
    if option.verdict == "no":
        return (_VERDICT_ORDER["no"], -option.headroom_gib, 0.0, option.gpu_name)
    cost = option.cost_usd if option.cost_usd is not None else _usd_per_hour_all(option)
    hours = option.hours if option.hours is not None else float("inf")
    return (_VERDICT_ORDER[option.verdict], cost, hours, option.gpu_name)


def _usd_per_hour_all(option: Option) -> float:
    """Without a token count there is no run cost; the hourly price of all its GPUs ranks rows."""
    return option.usd_per_hour * option.count if option.usd_per_hour is not None else float("inf")


def _row(option: Option, highlight: str | None) -> CardRow:
    if option.pricing == "spot":  # an interruptible price is marked wherever the row is shown
        highlight = f"{highlight}, {phrases.SPOT}" if highlight else phrases.SPOT
    return CardRow(
        gpu_name=option.gpu_name,
        count=option.count,
        verdict=option.verdict,
        headroom_gib=round(option.headroom_gib, 1),
        hours=option.hours,
        cost_usd=option.cost_usd,
        cost_usd_median=option.cost_usd_median,
        usd_per_hour=option.usd_per_hour,
        highlight=highlight,
    )


def _cost(option: Option) -> str:
    parts = [fmt.hours(option.hours)] if option.hours is not None else []
    if option.cost_usd is not None:
        parts.append(fmt.usd(option.cost_usd))
    return phrases.PLAN_LINES("cost", parts=Listing(parts, ", ", ", ")) if parts else ""
