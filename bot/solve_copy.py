"""The sentences of an inverse answer ("max context?", "how many 4090s?"): the lead that says
the number first, and the levers that move it. Numbers come from planner.solve; nothing here
searches or estimates."""

from __future__ import annotations

from bot import format as fmt
from planner.plan import Option, Plan, Solve, SolvedCard
from planner.spec import Framework, Method

_STACKS = {
    Framework.hf: "HF + PEFT",
    Framework.unsloth: "Unsloth",
    Framework.torchtune: "torchtune",
    Framework.litgpt: "LitGPT",
    Framework.axolotl: "axolotl",
    Framework.llama_factory: "LLaMA-Factory",
    Framework.ms_swift: "ms-swift",
}
_METHODS = {Method.full: "a full fine-tune", Method.lora: "LoRA", Method.qlora: "QLoRA"}
_LAYOUTS = {
    "none": "",
    "ddp": " with DDP (each GPU holds a full copy)",
    "zero2": " with ZeRO-2 (optimizer state and gradients sharded)",
    "fsdp": " with FSDP/ZeRO-3 (everything sharded)",
    "zero3": " with ZeRO-3 (everything sharded)",
    "device_map": " split layer by layer (device_map)",
}


def _tokens(value: float) -> str:
    """Context lengths as people say them: 8k for 8,192, else the exact count."""
    whole = int(value)
    return f"{whole // 1024}k" if whole % 1024 == 0 and whole >= 4096 else f"{whole:,}"


def _where(card: SolvedCard, plan: Plan) -> str:
    count = "one" if card.count == 1 else f"{card.count}×"
    return f"{count} {card.gpu_name}"


def _stack(plan: Plan) -> str:
    return _STACKS[Framework(plan.spec.framework)]


def _card(solve: Solve, plan: Plan) -> SolvedCard:
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


def _limit_sentence(solve: Solve, card: SolvedCard, plan: Plan) -> str:
    where = _where(card, plan)
    value = card.value
    comfortable = card.comfortable
    stack = _stack(plan)
    method = _METHODS[Method(plan.spec.method)]
    if solve.asked == "seq_len":
        if value is None:
            return (
                f"No context of even 256 tokens fits {where} for {plan.model.name} {method} "
                f"with {stack}{_smallest_holding(plan)}."
            )
        if card.binding == "context_window":
            return (
                f"The model's whole context window, {_tokens(value)} tokens, fits {where} with "
                f"{stack}."
            )
        easy = f" ({_tokens(comfortable)} with 10 % headroom)" if comfortable else ""
        return f"Up to {_tokens(value)} tokens fit {where} with {stack}{easy}."
    if solve.asked == "micro_batch":
        if value is None:
            return (
                f"Not even micro-batch 1 fits {where} at {plan.spec.seq_len:,} tokens with "
                f"{stack}{_smallest_holding(plan)}."
            )
        easy = f" ({comfortable:g} with 10 % headroom)" if comfortable else ""
        return (
            f"Up to micro-batch {value:g} fits {where} at {plan.spec.seq_len:,} tokens with "
            f"{stack}{easy}."
        )
    if solve.asked == "params_b":
        if value is None:
            return f"No catalog model fits {where} for {method} with {stack}."
        easy = ""
        if card.comfortable_model and card.comfortable_model != card.model_name:
            easy = f"; with 10 % headroom, {card.comfortable_model}"
        return (
            f"The largest catalog model that fits {where} for {method} with {stack}: "
            f"{card.model_name} ({value:g}B){easy}."
        )
    if solve.asked == "num_gpus":
        if value is None:
            return f"Even {card.gpu_name} × 64 does not hold this job."
        layout = _LAYOUTS.get(card.sharding or "none", "")
        offload = " and the optimizer state offloaded to CPU RAM" if card.cpu_offload else ""
        fewer = "" if card.count == 1 else "; fewer do not"
        return f"{card.count}× {card.gpu_name}{layout}{offload} hold it{fewer}."
    return ""


def _constraint_sentence(solve: Solve, plan: Plan) -> str:
    spec = plan.spec
    limit = (
        f"a {fmt.hours(spec.deadline_hours)} deadline"
        if solve.binding == "deadline"
        else f"a {fmt.usd(spec.budget_usd)} budget"
    )
    pick = plan.recommendation.meets_deadline or plan.recommendation.within_budget
    if pick is not None:
        return f"The cheapest run that meets {limit}: {_run(pick)}."
    miss = solve.closest_miss
    if miss is None:
        return f"Nothing meets {limit}: no priced card holds this job."
    if solve.binding == "deadline" and miss.hours is not None and spec.deadline_hours:
        over = fmt.hours(miss.hours - spec.deadline_hours)
        return f"Nothing meets {limit}: the fastest run, {_run(miss)}, is {over} over."
    if miss.cost_usd is not None and spec.budget_usd is not None:
        over = fmt.usd(miss.cost_usd - spec.budget_usd)
        return f"Nothing meets {limit}: the cheapest run, {_run(miss)}, is {over} over."
    return f"Nothing meets {limit}."


def _smallest_holding(plan: Plan) -> str:
    """ "; the smallest card that holds …": from the forward plan of the job as asked."""
    holding = [o for o in plan.options if o.count == 1 and o.verdict != "no"]
    if not holding:
        return ""
    smallest = min(holding, key=lambda o: (o.usable_gib, o.cost_usd or 0))
    return f"; the smallest card that holds {plan.spec.seq_len:,} tokens is {smallest.gpu_name}"


def _run(option: Option) -> str:
    return (
        f"{fmt.card(option.gpu_name, option.count)}, {fmt.hours(option.hours)}, "
        f"{fmt.usd(option.cost_usd)}"
    )


def lead(plan: Plan) -> str:
    """The answer's first sentence: the number asked for, where, and what binds it."""
    solve = plan.solve
    if solve is None:
        return ""
    if solve.asked == "gpu":
        return _constraint_sentence(solve, plan)
    sentence = _limit_sentence(solve, _card(solve, plan), plan)
    moved = [
        f"{_tokens(lever.value) if solve.asked == 'seq_len' else f'{lever.value:g}'} {lever.change}"
        for lever in solve.levers
        if lever.value is not None and lever.value != solve.value
    ]
    if moved:
        sentence = sentence.removesuffix(".") + "; " + ", ".join(moved) + "."
    if solve.asked == "micro_batch" and solve.value:
        sentence += " Gradient accumulation gives a larger effective batch at no memory cost."
    return sentence


def other_cards(plan: Plan) -> list[str]:
    """With no card named, the limit on each reference card."""
    solve = plan.solve
    if solve is None or not solve.cards:
        return []
    return [_limit_sentence(solve, card, plan) for card in solve.cards if card.gpu != solve.gpu]
