"""The market's fast paths agree with the slow, obvious ones they replace."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from planner.catalog.gpus import all_gpus, gpu_by_key
from planner.estimate.memory import estimate_memory
from planner.market.attach import candidates, cheapest_of
from planner.market.options import (
    MarketContext,
    cheapest_run,
    make_option,
    market_options,
    verdict_for,
)
from planner.market.suggestions import _smallest_card_holding
from planner.plan import Option
from planner.planner import make_plan
from planner.resolve.defaults import changed, resolve
from planner.spec import JobSpec

JOBS = (
    JobSpec(model="13B", method="qlora", seq_len=4096, dataset_tokens=20e6, epochs=3),
    JobSpec(params_b=70, method="full", seq_len=8192, dataset_tokens=1e8),
    JobSpec(params_b=8, method="lora", num_gpus=2, sharding="zero3", dataset_tokens=5e7),
    JobSpec(params_b=405, method="qlora", dataset_tokens=1e7),
    JobSpec(params_b=7, method="full", cpu_offload=True, dataset_tokens=3e7),
)


def _context(spec: JobSpec) -> MarketContext:
    resolved = resolve(spec)
    return MarketContext(resolved)


@pytest.mark.parametrize("spec", JOBS, ids=lambda spec: f"{spec.params_b or spec.model}")
def test_trusted_options_equal_validated_ones(spec: JobSpec) -> None:
    for option in market_options(_context(spec)):
        validated = Option.model_validate(option.model_dump())
        assert option == validated
        assert option.model_dump_json() == validated.model_dump_json()
        assert option.model_fields_set == validated.model_fields_set


def test_a_trusted_option_behaves_like_any_pydantic_model() -> None:
    option = market_options(_context(JOBS[0]))[0]
    copy = option.model_copy(update={"count": 3})
    assert copy.count == 3 and option.count == 1
    option.count = 2  # assignment works as on a constructed model
    assert json.loads(option.model_dump_json())["count"] == 2


@pytest.mark.parametrize("spec", JOBS, ids=lambda spec: f"{spec.params_b or spec.model}")
def test_cheapest_run_is_the_cheapest_row_of_the_full_market(spec: JobSpec) -> None:
    context = _context(spec)
    fast = cheapest_run(context)
    slow = cheapest_of(candidates(market_options(context), None))
    if slow is None:
        assert fast is None
        return
    assert fast is not None
    assert (fast.cost_usd, fast.count) == (slow.cost_usd, slow.count)
    assert fast == make_option(context, gpu_by_key(fast.gpu), fast.count)


def test_a_changed_price_file_reprices_every_row(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec = JOBS[0]
    before = {(o.gpu, o.count): o for o in make_plan(spec).options}
    path = tmp_path / "prices.csv"
    path.write_text(
        "key,provider,price_usd_per_hr,price_kind,date_of_source,source,notes\n"
        "H100 SXM,Lab,0.01,owned,2026-10-01,x,\n",
        encoding="utf-8",
    )
    monkeypatch.setenv("GPUPLAN_PRICES", str(path))
    plan = make_plan(spec)
    h100 = next(o for o in plan.options if o.gpu == "h100-sxm")
    assert h100.usd_per_hour == 0.01 and h100.price_source.startswith("Lab")
    assert plan.recommendation.cheapest.gpu == "h100-sxm"
    untouched = next(o for o in plan.options if o.gpu == "rtx4090" and o.count == 1)
    assert untouched == before[("rtx4090", 1)]
    monkeypatch.delenv("GPUPLAN_PRICES")
    assert make_plan(spec).options == list(before.values())


def test_a_suggestion_that_only_adds_gpus_reports_the_memory_at_that_count() -> None:
    spec = JobSpec(params_b=70, method="lora", gpu="H100", dataset_tokens=1e7)
    plan = make_plan(spec)
    more_gpus = [s for s in plan.suggestions if set(s.patch) == {"num_gpus", "sharding", "gpu"}]
    assert more_gpus, [s.change for s in plan.suggestions]
    patch = more_gpus[0].patch
    # A re-plan of the job as changed: the patch applies to what the user said.
    expected = estimate_memory(changed(resolve(spec), patch))
    assert more_gpus[0].required_gib_after == expected.required_gib


def test_the_smallest_card_holding_a_job_is_found_by_size_order() -> None:
    sizes = sorted({gpu.usable_gib for gpu in all_gpus()})
    for required_gib in [0.5, *sizes, *(size + 0.01 for size in sizes), 10_000.0]:
        holding = [gpu for gpu in all_gpus() if verdict_for(required_gib, gpu.usable_gib) != "no"]
        expected = min(holding, key=lambda gpu: gpu.usable_gib) if holding else None
        assert _smallest_card_holding(required_gib) is expected


def test_trusted_options_sharing_their_set_fields_stay_independent() -> None:
    first, second = market_options(_context(JOBS[0]))[:2]
    every_field = set(Option.model_fields)
    first.count = 5
    copy = first.model_copy(update={"verdict": "no"})
    assert first.model_fields_set == second.model_fields_set == every_field
    assert copy.model_fields_set == every_field and second.count == 1


def test_the_cards_cache_keeps_a_bounded_number_of_price_tables() -> None:
    from planner.market.options import (
        MAX_PRICE_TABLES_KEPT,
        _cards_by_table,
        market_cards,
        price_table,
    )

    for _ in range(MAX_PRICE_TABLES_KEPT + 3):
        market_cards(dict(price_table()))
    assert len(_cards_by_table) <= MAX_PRICE_TABLES_KEPT
