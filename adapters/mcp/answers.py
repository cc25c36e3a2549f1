"""The MCP tools' inputs and outputs as pydantic models: their JSON schemas are the tools' input
and output schemas, built from the project's own JobSpec, Plan and Solve.

`plan` answers with the Plan itself, as `gpuplan ask --json` prints it, plus `plan_id`; inputs are
validated here (not by the SDK) so a bad one gets the chat's sentence, not pydantic's report.
An Answer is what a tool returns; a Refusal is a tool error, worded as the chat words it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, Field

from adapters.console.text import render_text
from bot.configs import MAX_CONFIG_CHARS
from bot.language import localize, reply_language
from bot.phrases import Message
from bot.reply_builder import message_reply
from planner.catalog.model_table import ModelRow
from planner.explain import Explanation
from planner.plan import Plan, Solve
from planner.spec import JobSpec

# A question may carry a pasted config.json (bot/configs.py), so it is capped where a config is;
# the conversation refuses a longer job text itself, with the chat's sentence.
QUESTION_MAX_CHARS = MAX_CONFIG_CHARS
# Jobs one `compare` plans side by side: each is a full plan (~0.1 s), and past a handful a side
# by side stops being readable.
MAX_COMPARED = 6
# Quotes `prices` lists per card, cheapest first: enough to see the spread, not a feed dump.
MAX_QUOTES_PER_CARD = 5
PLAN_ID_MAX_CHARS = 64
# Stack names are short words ("llama-factory" is the longest).
STACK_MAX_CHARS = 40


@dataclass(frozen=True)
class Answer:
    """A tool's answer: the structured content (its output schema's JSON) and a short text."""

    structured: dict[str, Any]
    text: str


class Refusal(Exception):
    """No answer: `text` is what the chat would say (title and sentence), in the asker's
    language."""

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.text = text


def refusal(message: Message, asked: str | None = None) -> Refusal:
    reply = localize(message_reply("error", *message), reply_language(asked or "", None))
    return Refusal(render_text(reply))


class PlanInput(BaseModel):
    question: str | None = Field(
        None,
        max_length=QUESTION_MAX_CHARS,
        description='the job or a follow-up in plain English or Chinese, e.g. "13B QLoRA, 4k ctx, '
        '20M tokens x3", "will Llama 3.1 70B LoRA fit on 2 H100s?", "what if 8k ctx?"',
    )
    spec: JobSpec | None = Field(
        None, description="the job as a JobSpec (every field but method optional)"
    )
    plan_id: str | None = Field(
        None,
        max_length=PLAN_ID_MAX_CHARS,
        description="continue the job of this earlier answer (a follow-up such as 'what if 8k "
        "ctx?'); without it a follow-up continues this session's last job",
    )


class PlanAnswer(Plan):
    """The Plan as `gpuplan ask --json` prints it, plus the id to refer to it later."""

    plan_id: str = Field(description="refers to this plan in `explain` and follow-ups")
    alternatives: list[Plan] | None = Field(
        None, description="a comparison ('7B or 13B'): one full Plan per job, in the order asked"
    )
    changes: dict[str, list[Any]] | None = Field(
        None, description="a follow-up: {field: [before, after]} of the job"
    )


class ConfigInput(BaseModel):
    stack: str = Field(
        max_length=STACK_MAX_CHARS,
        description="the stack to write for: trl, axolotl, llama-factory, ms-swift, unsloth or "
        "torchtune ('hf' = trl)",
    )
    question: str | None = Field(
        None,
        max_length=QUESTION_MAX_CHARS,
        description="the job in plain words; without it (and without `spec`) the config is for "
        "this session's last job, or the job of `plan_id`",
    )
    spec: JobSpec | None = Field(None, description="the job as a JobSpec")
    plan_id: str | None = Field(
        None, max_length=PLAN_ID_MAX_CHARS, description="the job of this earlier answer"
    )


class ConfigAnswer(BaseModel):
    """The files that realise the plan in the stack, as `gpuplan config` writes them."""

    title: str
    summary: str = Field(description="what the files are and the command that launches them")
    files: dict[str, str] = Field(description="file name → contents, in reading order")
    not_expressed: list[str] = Field(description="plan settings the stack's files cannot say")
    plan_id: str = Field(description="the plan the files realise (planned on the stack)")


class SolveInput(BaseModel):
    question: str = Field(
        max_length=QUESTION_MAX_CHARS,
        description='an inverse question, e.g. "max context for 8B LoRA on a 24 GB card?", '
        '"largest model I can QLoRA on an RTX 4090?", "how many H100s for 70B full fine-tune?", '
        '"cheapest card to finish 13B LoRA on 1B tokens in 10 hours?"',
    )


class SolveAnswer(Solve):
    """The limit, what binds it, and the forward plan at the answer."""

    plan: Plan = Field(description="the plan at the answer (its `solve` is this answer)")
    plan_id: str


class CompareInput(BaseModel):
    question: str | None = Field(
        None,
        max_length=QUESTION_MAX_CHARS,
        description='one question naming the alternatives, e.g. "7B vs 13B QLoRA on a 4090", '
        '"LoRA or QLoRA for Llama 3 8B?"',
    )
    questions: list[str] | None = Field(
        None,
        max_length=MAX_COMPARED,
        description=f"up to {MAX_COMPARED} separate jobs to plan side by side",
    )


class CompareAnswer(BaseModel):
    alternatives: list[Plan] = Field(description="one full Plan per job, in the order asked")
    plan_ids: list[str]
    comparison: list[str] = Field(description="one line per job: memory, where it runs, cost")


class PricesInput(BaseModel):
    card: str | None = Field(
        None, max_length=100, description='a card, e.g. "H100", "RTX 4090"; all cards if left out'
    )


class Quote(BaseModel):
    gpu: str = Field(description="catalog key")
    provider: str
    kind: str = Field(description="on_demand, community, spot or bid (snapshot), or as listed")
    usd_per_gpu_hour: float
    source_url: str = Field(description="where the price was read")
    fetched_at: str = Field(description="when it was read (ISO time, or the listing's date)")
    origin: str = Field(description="'snapshot' (live feeds) or 'bundled' (the dated table)")
    region: str | None = None
    instance: str | None = None


class PricesAnswer(BaseModel):
    quotes: list[Quote] = Field(description=f"up to {MAX_QUOTES_PER_CARD} per card, cheapest first")
    snapshot_taken_at: str | None = Field(description="the live snapshot's time; null if none")
    bundled_table: str = Field(description="the bundled table's date label")


class ModelsInput(BaseModel):
    filter: str | None = Field(
        None, max_length=100, description='part of a name, id, family or kind ("qwen", "moe")'
    )


class ModelsAnswer(BaseModel):
    models: list[ModelRow]


class ExplainInput(BaseModel):
    component: str = Field(
        max_length=40,
        description="a memory component (weights, adapter, gradients, optimizer, activations, "
        "logits, overhead, reference, value, reward, rollout), or required, range, host_ram, "
        "tokens_per_s, hours, cost",
    )
    plan_id: str | None = Field(
        None,
        max_length=PLAN_ID_MAX_CHARS,
        description="a plan_id an earlier answer in this session returned",
    )
    question: str | None = Field(
        None, max_length=QUESTION_MAX_CHARS, description="a job to plan and explain instead"
    )


class ExplainAnswer(Explanation):
    plan_id: str
