"""`parse(text)`: run the field readers in order, then build the JobSpec, comparison and question.

Order matters because each reader blanks what it used: model names before GPU counts ("Mixtral
8x7b"), token totals before bare sizes ("8B tokens"), GPUs before "x3" epochs ("2x3090").
"""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from planner.errors import validation_sentence
from planner.messages import PARSING
from planner.parsing import (
    budget,
    context,
    dataset,
    epochs,
    gpu,
    lora,
    method,
    model,
    objective,
    vram,
)
from planner.parsing.batch import read_batch, read_verl_micro
from planner.parsing.config import read_config
from planner.parsing.contrast import read_corrections, read_ruled_out
from planner.parsing.distributed import read_distributed
from planner.parsing.ignored import read_ignored, read_logs
from planner.parsing.inverse import read_asked, read_asked_card
from planner.parsing.normalize import fold_width, normalize
from planner.parsing.numbers import TOO_MANY_DIGITS, BadNumber, expand_powers
from planner.parsing.pricing import read_pricing
from planner.parsing.reading import Reading
from planner.parsing.relative import read_relative
from planner.parsing.report import read_report
from planner.parsing.result import ParseResult, RelativeChange
from planner.parsing.size_names import read_size_in_names
from planner.parsing.switches import read_switches
from planner.patterns import lazy_pattern
from planner.spec import JobSpec

EXAMPLE = "13B QLoRA, 4k ctx, 20M tokens x3"
MAX_INPUT_CHARS = 2_000
UNREADABLE = "Sorry, I could not read that. Try the form “" + EXAMPLE + "”."
CLARIFY = PARSING("clarify", example=EXAMPLE)

_READERS = (
    read_config,
    read_verl_micro,
    read_ignored,
    read_asked,
    read_pricing,
    read_report,
    read_logs,
    read_ruled_out,
    read_relative,
    read_switches,
    dataset.read_steps,
    objective.read_reward_model,
    model.read_model,
    read_size_in_names,
    objective.read_objective,
    method.read_method,
    budget.read_speed,
    budget.read_gpu_hours,
    context.read_context,
    dataset.read_dataset,
    epochs.read_epochs,
    gpu.read_gpus,
    vram.read_vram,
    read_batch,
    lora.read_lora,
    read_distributed,
    budget.read_budget,
    model.read_sizes,
    context.read_loose_context,
    dataset.samples_to_tokens,
    dataset.steps_to_tokens,
    epochs.read_times,
    read_asked_card,
)
# "epochs=-1", "batch size -4": a minus sign after a setting's name (value-first forms such as
# "-3 epochs" are caught by `Reading.number`).
_NEGATIVE_SETTING = lazy_pattern(
    r"(?P<key>[a-z_]{0,24}(?:epoch|batch|size|bs|rank|alpha|ctx|context|len|length|tokens|samples|"
    r"gpus|budget|accum|steps)[a-z_]{0,12})(?:\s?[=:]\s?|\s)-(?P<num>\d{1,20}(?:\.\d{1,8})?)"
    r"(?![a-z])"
)
_DIGIT = lazy_pattern(r"\d")
_MINUS_NUMBER = lazy_pattern(r"[\s=:]-\d")
_NOT_A_NUMBER = lazy_pattern(r"(?<![a-z0-9_.])[-+]?(?:nan|inf|infinity)(?![a-z0-9_])")
_HF_ID_CASED = lazy_pattern(r"[A-Za-z][A-Za-z0-9_.-]{1,38}/[A-Za-z0-9_.-]{2,96}")
# Unread pieces are echoed back, so only characters no chat platform treats as markup.
_LEFTOVER = lazy_pattern(
    r"[a-z0-9.:/+~$%()\[\]\u4e00-\u9fff-]{0,20}\d[a-z0-9.:/+~$%()\[\]\u4e00-\u9fff-]{0,20}"
)


def parse(text: str) -> ParseResult:
    """What `text` says about a fine-tuning job; never raises for any string."""
    if len(text) > MAX_INPUT_CHARS:
        return ParseResult(
            error=f"That message is {len(text):,} characters; I read up to {MAX_INPUT_CHARS:,}. "
            "Please send just the job, e.g. “" + EXAMPLE + "”."
        )
    folded = fold_width(text)
    cased = (
        {found.lower(): found for found in _HF_ID_CASED.findall(folded)} if "/" in folded else {}
    )
    r = Reading(text=normalize(text), cased=cased)
    not_a_number = ("nan" in r.text or "inf" in r.text) and _NOT_A_NUMBER.search(r.text)
    if not_a_number:
        word = not_a_number.group().strip()
        return ParseResult(error=f"“{word}” is not a number I can plan with; give a finite value.")
    if TOO_MANY_DIGITS.search(r.text):
        return ParseResult(error="That number has too many digits to plan with.")
    negative = _NEGATIVE_SETTING.search(r.text) if _MINUS_NUMBER.search(r.text) else None
    if negative:
        key, number = negative.group("key").replace("_", " "), negative.group("num")
        return ParseResult(error=f"{key} must be positive, not -{number}.")
    try:
        r.text, r.notes = expand_powers(r.text)
        r.source = r.text
        read_corrections(r, _READERS)
        for reader in _READERS:
            reader(r)
        return _result(r)
    except BadNumber as problem:
        return ParseResult(error=str(problem))
    except Exception:  # a chat message gets an answer, never a traceback
        return ParseResult(error=UNREADABLE)


def _result(r: Reading) -> ParseResult:
    fields = dict(r.fields)
    jobs = []
    for job in (fields, *(fields | alternative for alternative in r.alternatives)):
        spec = _job(job)
        if isinstance(spec, str):
            return ParseResult(error=spec)
        jobs.append(spec)
    relative = {name: RelativeChange(op=op, by=by) for name, (op, by) in r.relative.items()}
    leftovers = _LEFTOVER.findall(r.text) if _DIGIT.search(r.text) else []
    unread = [*r.notes, *leftovers]
    if r.doubt:
        return ParseResult(
            fields=fields,
            assumptions=r.assumptions,
            unread=unread,
            clarify=r.doubt,
            doubt=r.doubt,
            alternative_fields=r.alternatives,
        )
    # "The largest model I can QLoRA on a 4090?" names no model: the question is which.
    if "model" not in fields and "params_b" not in fields and fields.get("asked") != "params_b":
        return ParseResult(
            fields=fields,
            assumptions=r.assumptions,
            unread=unread,
            clarify=CLARIFY,
            alternative_fields=r.alternatives,
            relative=relative,
        )
    assumptions = list(r.assumptions)
    if "method" not in fields:
        assumptions.append(PARSING("no_method"))
    return ParseResult(
        spec=jobs[0],
        fields=fields,
        assumptions=assumptions,
        unread=unread,
        alternatives=jobs[1:],
        alternative_fields=r.alternatives,
        relative=relative,
    )


def _job(fields: dict[str, Any]) -> JobSpec | str:
    """The job the fields describe (LoRA unless a method is named), or why it cannot be planned."""
    try:
        return JobSpec(**({"method": "lora"} | fields))
    except ValidationError as invalid:
        return validation_sentence(invalid)
