"""make_plan: JobSpec → Plan (the memory part here; the market part is attached by
planner.market.attach)."""

from __future__ import annotations

from collections.abc import Collection

from pydantic import ValidationError

from planner.anchor import anchored
from planner.catalog.models import ModelArch
from planner.catalog.prices import PriceBook
from planner.context_curve import memory_by_context
from planner.errors import PlanningError, invalid_field
from planner.estimate.memory import estimate_memory
from planner.estimate.memory.host import host_ram_advice
from planner.job.resolved import ResolvedJob
from planner.market.attach import attach_market
from planner.market.options import read_requested_card
from planner.plan import MemoryEstimate, ModelInfo, Plan, Recommendation
from planner.resolve.defaults import resolve_on_card
from planner.spec import JobSpec


def parse_spec(data: object) -> JobSpec:
    """A JobSpec from JSON-like data; a bad field raises PlanningError naming it."""
    if not isinstance(data, dict):
        raise PlanningError("a job spec must be a JSON object", field="spec")
    try:
        return JobSpec.model_validate(data)
    except ValidationError as exc:
        field_name, sentence = invalid_field(exc, name_the_key=True)
        raise PlanningError(sentence, field=field_name) from None


def model_info(arch: ModelArch) -> ModelInfo:
    return ModelInfo(
        key=arch.key,
        name=arch.name,
        hf_id=arch.hf_id,
        params_b=round(arch.params_b, 3),
        active_params_b=round(arch.active_params / 1e9, 3) if arch.num_experts else None,
        num_layers=arch.num_layers,
        hidden_size=arch.hidden_size,
        vocab_size=arch.vocab_size,
        max_context=arch.max_context,
        source=arch.source,
        kind=arch.kind,
        vision_params_b=round(arch.vision_params / 1e9, 3) if arch.vision_params else None,
        experts=arch.num_experts,
        experts_per_token=arch.experts_per_token,
        moe_layers=arch.moe_layers or None,
    )


def memory_plan(job: ResolvedJob, memory: MemoryEstimate | None = None) -> Plan:
    """The plan's memory part; `memory` is the job's estimate on the requested card where
    resolving already made it (planner.resolve.defaults.resolve_on_card)."""
    if memory is None:
        card = read_requested_card(job).gpu
        memory = estimate_memory(job, card_gib=card.usable_gib if card is not None else None)
    # The market fields are given (empty) rather than defaulted: pydantic deep-copies defaults,
    # which costs more than building the rest of the Plan.
    return Plan(
        spec=job.to_spec(),
        model=model_info(job.arch),
        assumptions=list(job.assumptions),
        warnings=[*job.warnings, *filter(None, [_host_advice(memory)])],
        memory=memory,
        options=[],
        recommendation=Recommendation(),
        suggestions=[],
    )


def planned_job(spec: JobSpec, arch: ModelArch | None = None) -> ResolvedJob:
    """The job as the planner decides it: defaults resolved, and re-anchored on a peak the user
    measured (planner.anchor), which only a job that `needs_anchoring` enters."""
    return _planned_on_card(spec, arch)[0]


def _planned_on_card(
    spec: JobSpec, arch: ModelArch | None
) -> tuple[ResolvedJob, MemoryEstimate | None]:
    """planned_job, with resolving's estimate on the requested card (None once re-anchored: the
    anchored job is another job)."""
    job, on_card = resolve_on_card(spec, arch)
    return (anchored(job), None) if job.needs_anchoring else (job, on_card)


def make_plan(
    spec: JobSpec,
    arch: ModelArch | None = None,
    prices: PriceBook | None = None,
    *,
    context_curve: bool = False,
    only_gpus: Collection[str] | None = None,
) -> Plan:
    """Resolve defaults, estimate memory per GPU, attach the market (cards, time, cost).

    `arch` plans a custom architecture (e.g. from an HF config.json) instead of the catalog's;
    `prices` are live market prices (bot.prices builds them) instead of the bundled table.
    A measured peak in the spec re-anchors every estimate on it (planner.anchor).
    `context_curve` adds memory_by_context (a dozen more estimates: answers that draw a chart).
    `only_gpus` (catalog keys) keeps the market among the cards a question compares.
    """
    job, on_card = _planned_on_card(spec, arch)
    plan = attach_market(memory_plan(job, on_card), job, prices, only_gpus)
    if context_curve:
        plan.memory_by_context = memory_by_context(job)
    return plan


def _host_advice(memory: MemoryEstimate) -> str | None:
    return host_ram_advice(memory.host_ram_gib or 0.0, memory.host_ram_loading_gib or 0.0)
