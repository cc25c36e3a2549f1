"""Round 3's precomputed paths (per-card speed figures, lean memory figures, copied rows, a
placement change keeping the job's work) give what the documented functions give."""

from __future__ import annotations

import pytest

from planner.catalog.gpus import all_gpus
from planner.estimate.memory import estimate_memory
from planner.estimate.memory.estimate import required_gib
from planner.estimate.throughput import (
    ACHIEVED_BANDWIDTH_FRACTION,
    card_matmul_factor,
    card_speed,
    job_work,
    scaling_efficiency,
    sustained_clock_fraction,
    tokens_per_s_at,
    tokens_per_s_on,
)
from planner.market.attach import candidates, cheapest_of
from planner.market.options import (
    MarketContext,
    cheapest_run,
    make_option,
    market_cards,
    market_options,
    read_requested_card,
)
from planner.market.suggestions import (
    MAX_SUGGESTIONS,
    MEANINGFUL_CUT,
    _apply,
    _evaluate,
    candidate_changes,
    checkpointing_advice,
    suggest,
)
from planner.plan import Option
from planner.planner import make_plan
from planner.resolve.defaults import resolve
from planner.spec import JobSpec, Sharding

JOBS = (
    JobSpec(model="13B", method="qlora", seq_len=4096, dataset_tokens=20e6, epochs=3),
    JobSpec(params_b=70, method="full", seq_len=8192, cpu_offload=True, dataset_tokens=1e8),
    JobSpec(params_b=8, method="lora", num_gpus=2, sharding="zero3", precision="fp32"),
    JobSpec(model="mixtral 8x7b", method="lora", micro_batch=4, gradient_checkpointing=False),
)
LAYOUTS = (
    (1, Sharding.none),
    (2, Sharding.ddp),
    (4, Sharding.fsdp),
    (8, Sharding.zero3),
    (8, Sharding.zero2),
    (2, Sharding.device_map),
)


def test_a_cards_speed_figures_are_the_documented_functions_of_it() -> None:
    for gpu in all_gpus():
        speed = card_speed(gpu)
        assert speed is card_speed(gpu)
        assert speed.peak_flops_per_s == gpu.bf16_tflops * 1e12
        assert speed.matmul_factor == card_matmul_factor(gpu)
        assert speed.clock_fraction == sustained_clock_fraction(gpu)
        assert speed.achieved_bytes_per_s == gpu.bandwidth_gbs * 1e9 * ACHIEVED_BANDWIDTH_FRACTION


@pytest.mark.parametrize("spec", JOBS, ids=lambda spec: f"{spec.params_b or spec.model}")
def test_speed_from_held_figures_equals_speed_from_the_card(spec: JobSpec) -> None:
    resolved = resolve(spec)
    work = job_work(resolved)
    for gpu in all_gpus():
        if gpu.bf16_tflops <= 0:
            continue
        for count, sharding in LAYOUTS:
            held = tokens_per_s_at(work, card_speed(gpu), count, sharding)
            assert held == tokens_per_s_on(work, gpu, count, sharding)
            assert 0 < scaling_efficiency(gpu, count, sharding) <= 1.0


@pytest.mark.parametrize("spec", JOBS, ids=lambda spec: f"{spec.params_b or spec.model}")
def test_the_lean_memory_figure_is_the_estimates(spec: JobSpec) -> None:
    resolved = resolve(spec)
    for count, sharding in LAYOUTS:
        estimate = estimate_memory(resolved, count, sharding)
        assert required_gib(resolved, count, sharding) == (estimate.required_gib)


def test_every_cards_row_lists_the_option_fields_in_their_json_order() -> None:
    for card in market_cards(MarketContext(resolve(JOBS[0])).prices).every:
        assert list(card.row) == list(Option.model_fields)
        assert card.row["gpu"] == card.gpu.key and card.row["usable_gib"] == card.gpu.usable_gib


@pytest.mark.parametrize("spec", JOBS, ids=lambda spec: f"{spec.params_b or spec.model}")
def test_a_placement_change_keeps_the_jobs_work_and_another_change_recomputes_it(
    spec: JobSpec,
) -> None:
    context = MarketContext(resolve(spec))
    more_gpus = context.patched({"num_gpus": 8, "sharding": Sharding.fsdp})
    assert more_gpus.work == job_work(more_gpus.job)
    assert more_gpus.known is context.known
    shorter = context.patched({"seq_len": 512})
    assert shorter.work == job_work(shorter.job) != context.work
    assert shorter.known is not context.known


SEARCH_JOBS = (
    *JOBS,
    JobSpec(params_b=70, method="full", seq_len=8192, dataset_tokens=1e8),
    JobSpec(params_b=405, method="qlora", dataset_tokens=1e7),
    JobSpec(params_b=8, method="lora", dataset_tokens=5e7, tokens_per_s=900, gpu="A10G"),
    JobSpec(params_b=14, method="full", dataset_tokens=2e8, precision="fp32"),
    JobSpec(params_b=1, method="lora", seq_len=512, dataset_tokens=1e6),
    # Eight changes each shown or cutting memory: more than the six suggestions shown.
    JobSpec(
        params_b=7,
        method="full",
        seq_len=4096,
        micro_batch=2,
        gradient_checkpointing=False,
        gpu="4090",
        dataset_tokens=1e8,
    ),
)


@pytest.mark.parametrize("spec", SEARCH_JOBS, ids=lambda spec: f"{spec.params_b or spec.model}")
def test_the_bounded_cheapest_run_search_finds_the_cheapest_row_of_a_full_scan(
    spec: JobSpec,
) -> None:
    resolved = resolve(spec)
    context = MarketContext(resolved, measured_ratio=spec.tokens_per_s and 1.3)
    for changed in (context, context.patched({"gradient_checkpointing": False})):
        fast = cheapest_run(changed)
        # A full scan in catalog order, keeping the first of equal costs in cents.
        rows = [
            make_option(changed, card.gpu, count)
            for card in changed.cards.priced
            if (count := changed.fewest_gpus(card.gpu)) is not None
        ]
        if changed.total_tokens is None:
            assert fast is None  # no token count, no cost
            continue
        assert fast == min(rows, key=lambda row: row.cost_usd, default=None)


UNCALIBRATED_JOBS = [spec for spec in SEARCH_JOBS if spec.tokens_per_s is None]


@pytest.mark.parametrize(
    "spec", UNCALIBRATED_JOBS, ids=lambda spec: f"{spec.params_b or spec.model}"
)
def test_suggestions_price_only_the_changes_they_show(spec: JobSpec) -> None:
    resolved = resolve(spec)
    context = MarketContext(resolved)
    card = read_requested_card(resolved).gpu
    requested = make_plan(spec).requested
    options = market_options(context)
    expected = _every_change_priced(context, card, requested, options)
    cheapest = cheapest_of(candidates(options, None))
    assert suggest(context, card, requested, options, cheapest) == expected


def _every_change_priced(context, card, requested, options):
    """suggest as round 2 wrote it: every candidate change evaluated, then the top six."""
    cheapest = cheapest_of(candidates(options, None))
    suggestions = []
    single_fits = any(o.count == 1 and o.verdict != "no" for o in options)
    if (requested is not None and requested.verdict != "fits") or not single_fits:
        helpful, partial = [], []
        for change in candidate_changes(context, card):
            after = _apply(context, change, card)
            suggestion, cost = _evaluate(context, change, after, requested, cheapest)
            if after.fits:
                rank = ("gpu" in change.patch, change.changes_the_job, cost or float("inf"))
                helpful.append((*rank, suggestion))
            elif suggestion.required_gib_after < MEANINGFUL_CUT * suggestion.required_gib_before:
                partial.append((suggestion.required_gib_after, suggestion))
        suggestions.extend(item[-1] for item in sorted(helpful, key=lambda item: item[:3]))
        suggestions.extend(item[-1] for item in sorted(partial, key=lambda item: item[0]))
    if not any("gradient_checkpointing" in shown.patch for shown in suggestions):
        advice = checkpointing_advice(context, card, requested, cheapest)
        if advice is not None:
            suggestions.append(advice)
    return suggestions[:MAX_SUGGESTIONS]
