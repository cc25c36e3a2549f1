"""The MCP tools, free of the SDK: each is one function (service, caller, validated input) →
Answer, listed in TOOLS with its description and its input and output models.

Adding a tool is one more function and one more ToolSpec line; adapters/mcp/server.py serves
whatever TOOLS lists. Every answer comes from the conversation the bots use (bot.conversation),
so a question reads, plans and fails here exactly as it does in a chat.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from adapters.console.text import render_text
from adapters.mcp import answers as a
from adapters.mcp.answers import Answer, Refusal, refusal
from adapters.mcp.quotes import price_quotes
from adapters.mcp.sessions import Caller, Sessions, UnknownPlan
from bot.conversation import Conversation, Turn
from bot.phrases import mcp_refusal
from bot.reply import Reply
from bot.reply_builder import comparison_lines
from bot.threads import ThreadKey
from planner.plan import Plan
from planner.spec import JobSpec
from planner.words import Listing

NO_QUESTION = mcp_refusal("no_question")
QUESTION_OR_SPEC = mcp_refusal("question_or_spec")
UNKNOWN_PLAN = mcp_refusal("unknown_plan")
NOT_A_LIMIT = mcp_refusal("not_a_limit")
NOTHING_TO_COMPARE = mcp_refusal("nothing_to_compare")
NOTHING_TO_EXPLAIN = mcp_refusal("nothing_to_explain")


@dataclass(frozen=True)
class Gpuplan:
    """What the tools share: the bots' conversation (planner, thread store, price store) and the
    sessions' plans."""

    conversation: Conversation
    sessions: Sessions

    def ask(self, thread: ThreadKey, message: str | JobSpec) -> Turn:
        turn = self.conversation.respond(thread, message)
        if turn.plan is None:  # a question it cannot read or plan, as the chat says it
            raise Refusal(render_text(turn.reply))
        return turn

    def thread(self, caller: Caller, plan_id: str | None, asked: str | None) -> ThreadKey:
        try:
            return self.sessions.thread(caller, plan_id)
        except UnknownPlan:
            raise refusal(UNKNOWN_PLAN, asked) from None

    def kept_plan(self, caller: Caller, plan_id: str) -> Plan:
        try:
            return self.sessions.plan(caller, plan_id).plan
        except UnknownPlan:
            raise refusal(UNKNOWN_PLAN) from None


# Lines of "what changed" the short text keeps (the structured `changes` has every field).
MAX_CHANGE_LINES = 4


def _summary(reply: Reply, plan_id: str) -> str:
    """The short text beside the structured answer: headline, verdict, changes, picks."""
    changes = reply.changes[:MAX_CHANGE_LINES]
    lines = [reply.title, reply.verdict, *changes, *reply.recommendation]
    return "\n".join([line for line in lines if line] + [f"plan_id: {plan_id}"])


def _plan_document(plan: Plan, **extra: object) -> dict[str, Any]:
    """The Plan as `gpuplan ask --json` prints it, with keys added (never wrapped)."""
    return plan.model_dump(mode="json") | {k: v for k, v in extra.items() if v is not None}


def plan(gpuplan: Gpuplan, caller: Caller, asked: a.PlanInput) -> Answer:
    if asked.question is None and asked.spec is None:
        raise refusal(NO_QUESTION)
    if asked.question is not None and asked.spec is not None:
        raise refusal(QUESTION_OR_SPEC, asked.question)
    thread = gpuplan.thread(caller, asked.plan_id, asked.question)
    turn = gpuplan.ask(thread, asked.spec if asked.spec is not None else asked.question or "")
    plan_id = gpuplan.sessions.keep(caller, thread, turn.plan)
    alternatives = [p.model_dump(mode="json") for p in turn.alternatives] or None
    changes = {name: list(pair) for name, pair in turn.changes.items()} or None
    document = _plan_document(
        turn.plan, plan_id=plan_id, alternatives=alternatives, changes=changes
    )
    return Answer(document, _summary(turn.reply, plan_id))


def solve(gpuplan: Gpuplan, caller: Caller, asked: a.SolveInput) -> Answer:
    from planner.parsing import parse

    # Checked before answering, so a question that asks for no limit leaves the job as it is.
    if not parse(asked.question).asked:
        raise refusal(NOT_A_LIMIT, asked.question)
    thread = gpuplan.thread(caller, None, asked.question)
    turn = gpuplan.ask(thread, asked.question)
    answer = turn.plan.solve
    if answer is None:
        raise refusal(NOT_A_LIMIT, asked.question)
    plan_id = gpuplan.sessions.keep(caller, thread, turn.plan)
    document = answer.model_dump(mode="json") | {
        "plan": turn.plan.model_dump(mode="json"),
        "plan_id": plan_id,
    }
    return Answer(document, _summary(turn.reply, plan_id))


def compare(gpuplan: Gpuplan, caller: Caller, asked: a.CompareInput) -> Answer:
    questions = asked.questions or []
    if asked.question is not None:
        # A new question beside the session's job: inside it, "7B vs 13B" would read as a change.
        thread = gpuplan.sessions.fresh(caller)
        plans = list(gpuplan.ask(thread, asked.question).alternatives)
        threads = [thread] * len(plans)
    elif len(questions) >= 2:  # separate jobs: each its own thread beside the session's
        threads = [gpuplan.sessions.fresh(caller) for _ in questions]
        plans = []
        for number, (thread, question) in enumerate(zip(threads, questions, strict=True), 1):
            try:
                plans.append(gpuplan.ask(thread, question).plan)
            except Refusal as refused:  # say which job it was
                raise Refusal(f"{number}. {question[:80]}\n{refused.text}") from None
    else:
        plans, threads = [], []
    if len(plans) < 2:
        raise refusal(NOTHING_TO_COMPARE, asked.question)
    plan_ids = [gpuplan.sessions.keep(caller, t, p) for t, p in zip(threads, plans, strict=True)]
    lines = comparison_lines(plans)
    document = {
        "alternatives": [p.model_dump(mode="json") for p in plans],
        "plan_ids": plan_ids,
        "comparison": lines,
    }
    text = "\n".join(f"{line} (plan_id {pid})" for line, pid in zip(lines, plan_ids, strict=True))
    return Answer(document, text)


def prices(gpuplan: Gpuplan, caller: Caller, asked: a.PricesInput) -> Answer:
    return price_quotes(gpuplan.conversation.prices, asked.card)


def models(gpuplan: Gpuplan, caller: Caller, asked: a.ModelsInput) -> Answer:
    from planner.catalog.model_table import model_rows

    rows = model_rows(asked.filter or "")
    document = {"models": [row.as_dict() for row in rows]}
    shown = ", ".join(row.name for row in rows[:20]) + (" …" if len(rows) > 20 else "")
    return Answer(document, f"{len(rows)} models: {shown}" if rows else "no model matches")


def explain(gpuplan: Gpuplan, caller: Caller, asked: a.ExplainInput) -> Answer:
    from planner.explain import FIGURES, explain

    if asked.plan_id:
        plan_id, plan = asked.plan_id, gpuplan.kept_plan(caller, asked.plan_id)
    elif asked.question:  # planned beside the session's job, which stays as it is
        thread = gpuplan.sessions.fresh(caller)
        plan = gpuplan.ask(thread, asked.question).plan
        plan_id = gpuplan.sessions.keep(caller, thread, plan)
    else:
        raise refusal(NOTHING_TO_EXPLAIN)
    explanation = explain(plan, asked.component)
    if explanation is None:
        known = mcp_refusal("no_such_figure", figures=Listing(FIGURES))
        raise refusal(known, asked.question)
    document = explanation.model_dump(mode="json") | {"plan_id": plan_id}
    value = explanation.value
    text = f"{explanation.component} = {value} {explanation.unit}\n{explanation.formula}"
    return Answer(document, f"{text}\n— {explanation.function} ({explanation.where})")


def config(gpuplan: Gpuplan, caller: Caller, asked: a.ConfigInput) -> Answer:
    if asked.question is not None and asked.spec is not None:
        raise refusal(QUESTION_OR_SPEC, asked.question)
    thread = gpuplan.thread(caller, asked.plan_id, asked.question)
    if asked.question is not None or asked.spec is not None:
        gpuplan.ask(thread, asked.spec if asked.spec is not None else asked.question or "")
    # The chat's own turn: the job is re-planned on the stack, then its files are written.
    turn = gpuplan.ask(thread, f"config {asked.stack}")
    reply = turn.reply
    if not reply.files:
        raise Refusal(render_text(reply))
    plan_id = gpuplan.sessions.keep(caller, thread, turn.plan)
    document = {
        "title": reply.title,
        "summary": reply.body,
        "files": {file.name: file.text for file in reply.files},
        "not_expressed": list(reply.warnings),
        "plan_id": plan_id,
    }
    return Answer(document, f"{reply.title}\n{reply.body}\nplan_id: {plan_id}")


@dataclass(frozen=True)
class ToolSpec:
    name: str
    description: str
    input: type[BaseModel]
    output: type[BaseModel]
    answer: Callable[[Gpuplan, Caller, Any], Answer]


TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec(
        "plan",
        "Plan an LLM fine-tuning job (SFT, LoRA/QLoRA, DPO, GRPO/PPO; dense or MoE): per-GPU "
        "memory with a calibrated range and its breakdown, which GPUs it fits, hours and cost "
        "on each, the cheapest and fastest picks, changes that make it fit, and the "
        "assumptions made. Ask in plain words or pass a JobSpec. Follow-ups ('what if 8k "
        "ctx?', 'on 2 GPUs?') change this session's last job, or the job of `plan_id`.",
        a.PlanInput,
        a.PlanAnswer,
        plan,
    ),
    ToolSpec(
        "solve",
        "Answer an inverse question about a fine-tuning job: the max context, max batch, "
        "largest model, fewest GPUs, or cheapest card for a deadline or budget; returns the "
        "limit, what binds it (memory, context window, budget, deadline), levers that move it, "
        "and the plan at the answer.",
        a.SolveInput,
        a.SolveAnswer,
        solve,
    ),
    ToolSpec(
        "compare",
        "Plan alternative fine-tuning jobs side by side ('7B vs 13B', 'LoRA or QLoRA', or a "
        "list of jobs): a full plan for each and one line each with memory, where it runs "
        "best and what it costs.",
        a.CompareInput,
        a.CompareAnswer,
        compare,
    ),
    ToolSpec(
        "prices",
        "GPU rental prices per GPU-hour that gpuplan costs jobs with: dated quotes with "
        "provider, kind, source URL and fetch time, from the live feeds' snapshot where one "
        "covers the card, else from the bundled dated table (each quote says which).",
        a.PricesInput,
        a.PricesAnswer,
        prices,
    ),
    ToolSpec(
        "models",
        "The models gpuplan knows: total and active parameters (MoE), context window, source.",
        a.ModelsInput,
        a.ModelsAnswer,
        models,
    ),
    ToolSpec(
        "config",
        "Write the files that run a planned fine-tuning job in the user's stack (TRL, axolotl, "
        "LLaMA-Factory, ms-swift, Unsloth, torchtune) with the plan's values, each commented "
        "with the assumption it realises, plus a SkyPilot task (sky.yaml) for the plan's card "
        "and a README with the commands in order. Refused, with the reason, when the job does "
        "not fit its card or the stack cannot train it.",
        a.ConfigInput,
        a.ConfigAnswer,
        config,
    ),
    ToolSpec(
        "explain",
        "Where a plan's number comes from: the formula and source of a memory component "
        "(weights, optimizer, activations, ...) or of the total, range, speed, hours or cost, "
        "with the plan's value, so it can be justified to a user.",
        a.ExplainInput,
        a.ExplainAnswer,
        explain,
    ),
)
