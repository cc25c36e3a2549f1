"""Managed fine-tuning: the other way to buy the same job. A service trains the model on its own
GPUs and bills per training token; this module decides which services can run a job and what the
cheapest would cost for its trained tokens.

Data: planner/data/managed_finetune_prices.csv, a copy of
shared/data/managed_finetune_prices_2026.csv (153 dated rows with each price's source URL, its
token definition and the service's caveats: Tinker, Together, Fireworks, Prime Intellect, HF
Jobs, Vertex, OpenAI, Bedrock, Mistral …).

A row can run the job when:
- it is a rate per 1M training tokens (per-hour rows are rentals, storage and minimum fees are
  not training prices), dated, current (not a "historical" rate or a "range" across tiers);
- its objective names the job's (SFT, or DPO for a DPO job); online RL also pays for sampling,
  which a training-token price does not cover, so RL jobs get no managed line;
- its method is the job's: LoRA (a QLoRA job is trained as LoRA) or full;
- its model is the job's: a size tier ("0-16", "17-69", "300+" billion parameters) holding the
  model's size, or a named model (org prefix, "-Instruct"/"-Base" suffixes aside);
- the job's context fits the row's ("(64K)").
Cost = price × trained tokens (dataset tokens × epochs) ÷ 1M, at least the row's minimum charge.
"""

from __future__ import annotations

import csv
import re
from functools import cache
from typing import TYPE_CHECKING, NamedTuple

from planner.data_files import DATA_DIR
from planner.plan import ManagedOption
from planner.spec import Method, Objective

if TYPE_CHECKING:
    from planner.job.resolved import ResolvedJob

MANAGED_CSV = DATA_DIR / "managed_finetune_prices.csv"
PER_TRAINING_TOKENS_UNIT = "USD per 1M training tokens"
TOKENS_PER_PRICE_UNIT = 1e6
_RANGE = re.compile(r"^(\d+(?:\.\d+)?)(?:-(\d+(?:\.\d+)?)|(\+))$")
_CONTEXT = re.compile(r"\((\d+)K\b")
_MIN_CHARGE = re.compile(r"min_charge_usd=(\d+(?:\.\d+)?)")
# The sentences of a row's notes that an answer must repeat: a service winding down (OpenAI,
# Mistral) or a price that is a limited-time promotion (Tinker).
_STATUS = re.compile(r"\b(STATUS|PROMO): (.+?)(?:\.(?:\s|$)|$)")
_NOT_ALNUM = re.compile(r"[^a-z0-9]")
_ALTERNATIVES = re.compile(r"\s*/\s*|\s+and\s+")
_NAME_SUFFIXES = ("instruct", "base", "hf")


class ManagedRow(NamedTuple):
    service: str
    model: str
    params_b: tuple[float, float] | None  # a size tier's bounds, in billions
    names: tuple[str, ...]  # a named model's spellings, compacted
    method: str
    objective: str
    price_usd: float
    token_definition: str
    date: str
    source: str
    context_tokens: int | None
    min_charge_usd: float | None
    notes: str


def _compact(name: str) -> str:
    return _NOT_ALNUM.sub("", name.lower())


def _bounds(params: str) -> tuple[float, float] | None:
    match = _RANGE.match(params.strip())
    if match is None or not (match.group(2) or match.group(3)):
        return None
    low = float(match.group(1))
    return low, float("inf") if match.group(3) else float(match.group(2))


def _names(model: str) -> tuple[str, ...]:
    """A named row's model spellings: "Qwen/Qwen3.5-9B and -Base (64K)" → qwen359b, base."""
    head = model.split("(")[0]
    return tuple(
        _compact(part.split("/")[-1] if "/" in part else part)
        for part in _ALTERNATIVES.split(head)
        if part.strip()
    )


@cache
def managed_rows() -> tuple[ManagedRow, ...]:
    """The dated, current per-training-token rows."""
    with MANAGED_CSV.open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    kept = []
    for row in rows:
        model = row["model_or_tier"]
        if (
            row["unit"] != PER_TRAINING_TOKENS_UNIT
            or not row["date_of_source"].startswith("20")
            or "historical" in model
            or "range" in model
            or not float(row["price_usd"]) > 0
        ):
            continue
        bounds = _bounds(row["params_b"])
        context = _CONTEXT.search(model)
        charge = _MIN_CHARGE.search(row["notes"])
        kept.append(
            ManagedRow(
                service=row["service"],
                model=model,
                params_b=bounds,
                names=() if bounds else _names(model),
                method=row["method"],
                objective=row["objective"],
                price_usd=float(row["price_usd"]),
                token_definition=row["token_definition"],
                date=row["date_of_source"],
                source=row["source_url"],
                context_tokens=int(context.group(1)) * 1024 if context else None,
                min_charge_usd=float(charge.group(1)) if charge else None,
                notes=row["notes"],
            )
        )
    return tuple(kept)


def _objective_fits(row: ManagedRow, objective: Objective) -> bool:
    words = set(re.findall(r"[A-Z]+", row.objective))
    if "classifier" in row.objective:
        return False
    return {"sft": "SFT", "dpo": "DPO"}.get(objective.value, "") in words


def _method_fits(row: ManagedRow, method: Method) -> bool:
    text = row.method.lower()
    if method is Method.full:
        return "full" in text
    return "lora" in text or "adapter" in text


def _model_fits(row: ManagedRow, params_b: float, own: frozenset[str]) -> bool:
    """Whether the row prices a model of `params_b` known by the compact names `own`."""
    if row.params_b is not None:
        low, high = row.params_b
        return low < params_b <= high or (low == 0 and params_b <= high)
    return any(
        name in own or any(name == known + suffix for known in own for suffix in _NAME_SUFFIXES)
        for name in row.names
    )


def _own_names(name: str, hf_id: str) -> frozenset[str]:
    own = {_compact(name), _compact(hf_id.split("/")[-1])}
    return frozenset(
        own | {known.removesuffix(suffix) for known in own for suffix in _NAME_SUFFIXES}
    )


@cache
def _rows_for(
    objective: Objective, method: Method, name: str, hf_id: str, params_b: float, seq_len: int
) -> tuple[ManagedRow, ...]:
    """The rows that can run a job of this kind (cached: chat users ask about a few models)."""
    own = _own_names(name, hf_id)
    return tuple(
        row
        for row in managed_rows()
        if _objective_fits(row, objective)
        and _method_fits(row, method)
        and _model_fits(row, params_b, own)
        and (row.context_tokens is None or seq_len <= row.context_tokens)
    )


def managed_option(job: ResolvedJob) -> ManagedOption | None:
    """The cheapest managed service that can run `job`, costed for its trained tokens; None when
    none can or the job does not say how many tokens it trains on."""
    if job.dataset_tokens is None or job.arch.hf_id is None:
        return None
    tokens = job.dataset_tokens * job.epochs
    rows = _rows_for(
        job.objective, job.method, job.arch.name, job.arch.hf_id, job.arch.params_b, job.seq_len
    )
    costed = [
        (max(row.price_usd * tokens / TOKENS_PER_PRICE_UNIT, row.min_charge_usd or 0.0), row)
        for row in rows
    ]
    if not costed:
        return None
    cost, row = min(costed, key=lambda pair: (pair[0], pair[1].service))
    return ManagedOption(
        service=row.service,
        model=row.model,
        method=row.method,
        objective=row.objective,
        price=row.price_usd,
        unit=PER_TRAINING_TOKENS_UNIT,
        trained_tokens=tokens,
        cost_usd=round(cost, 2),
        min_charge_usd=row.min_charge_usd,
        date=row.date,
        source=row.source,
        caveats=_caveats(row, job),
    )


def _caveats(row: ManagedRow, job: ResolvedJob) -> list[str]:
    caveats = [
        "no choice of card: the service trains on its own GPUs",
        f"billed per training token ({row.token_definition})",
    ]
    if job.method is Method.qlora:
        caveats.append("trained as LoRA: the service picks the base weights' precision")
    if row.params_b is not None:
        caveats.append("priced by model size: the service must offer this model")
    if row.context_tokens is not None:
        caveats.append(f"context up to {row.context_tokens // 1024}K tokens")
    if row.min_charge_usd:
        caveats.append(f"a ${row.min_charge_usd:,.2f} minimum per job")
    caveats += [f"{kind.lower()}: {text}" for kind, text in _STATUS.findall(row.notes)]
    return caveats
