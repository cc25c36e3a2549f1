"""Plans across the market: options, requested row, recommendation, suggestions, after training."""

from __future__ import annotations

import pytest

from planner.catalog.gpus import all_gpus
from planner.plan import Plan
from planner.planner import make_plan
from planner.spec import JobSpec

SEED = {"model": "13B", "method": "qlora", "seq_len": 4096, "dataset_tokens": 20e6, "epochs": 3}


@pytest.fixture(scope="module")
def seed() -> Plan:
    return make_plan(JobSpec(**SEED))


def _row(plan: Plan, gpu: str, count: int = 1):
    return next(o for o in plan.options if o.gpu == gpu and o.count == count)


def test_seed_job_fits_a_24_gb_card(seed: Plan) -> None:
    fitting = [o for o in seed.options if o.count == 1 and o.verdict != "no"]
    assert any(o.usable_gib < 24.5 for o in fitting), (
        f"'13B' planned as {seed.model.name}: {seed.memory.required_gib} GiB per GPU"
    )


def test_seed_hours_are_within_a_factor_of_two_of_the_guide(seed: Plan) -> None:
    # The seed guide: ~17 h on an RTX 4090, ~2.8 h on an H100.
    assert 17 / 2 <= _row(seed, "rtx4090").hours <= 17 * 2
    assert 2.8 / 2 <= _row(seed, "h100-sxm").hours <= 2.8 * 2


def test_every_option_carries_cost_price_and_date(seed: Plan) -> None:
    assert all(o.usd_per_hour is not None for o in seed.options)  # the others: not_rentable
    priced = [o for o in seed.options if o.verdict != "no"]
    assert len(priced) >= 20
    for option in priced:
        assert option.cost_usd is not None and option.cost_usd_median is not None
        assert option.price_source and option.price_date
        assert option.cost_usd <= option.cost_usd_median
    assert seed.price_date and "2026" in seed.price_date


def test_cost_is_hours_times_price_times_gpus(seed: Plan) -> None:
    for option in seed.options:
        if option.cost_usd is None:
            continue
        expected = option.hours * option.usd_per_hour * option.count
        assert option.cost_usd == pytest.approx(expected, abs=0.01)


def test_hours_include_a_stated_overhead(seed: Plan) -> None:
    for option in seed.options:
        if option.hours is not None:
            assert 0.2 <= option.overhead_hours / (option.hours - option.overhead_hours) <= 0.3


def test_verdicts_follow_headroom(seed: Plan) -> None:
    for option in seed.options:
        assert option.headroom_gib == pytest.approx(
            option.usable_gib - option.required_gib, abs=0.01
        )
        if option.verdict == "no":
            assert option.required_gib > option.usable_gib
        elif option.verdict == "tight":
            assert 0 <= option.headroom_gib < 0.1 * option.usable_gib
        else:
            assert option.headroom_gib >= 0.1 * option.usable_gib


def test_one_row_per_card_and_the_fewest_gpus_where_one_is_too_small(seed: Plan) -> None:
    singles = [o for o in seed.options if o.count == 1]
    assert len({o.gpu for o in singles}) == len(singles) >= 25
    for option in seed.options:
        if option.count > 1:
            assert _row(seed, option.gpu).verdict == "no"
            assert option.verdict != "no" and option.sharding in ("fsdp", "zero3")


def test_cheapest_and_fastest_are_named(seed: Plan) -> None:
    recommendation = seed.recommendation
    fitting = [o for o in seed.options if o.verdict != "no" and o.hours is not None]
    priced = [o for o in fitting if o.cost_usd is not None]
    assert recommendation.cheapest.cost_usd == min(o.cost_usd for o in priced)
    # Fastest is over every run that fits, priced or not (a card you own has no rental price).
    assert recommendation.fastest.hours == min(o.hours for o in fitting)
    assert recommendation.best_value is not None
    assert recommendation.cheapest.gpu_name in recommendation.summary
    assert recommendation.fastest.gpu_name in recommendation.summary


def test_seed_after_training(seed: Plan) -> None:
    after = seed.after_training
    assert 20 < after.adapter_mb < 1000
    assert 22 < after.merged_model_gib < 27
    assert after.serve_4bit_gib < after.serve_bf16_gib
    assert any("16-bit base" in note for note in after.notes)


def test_more_tokens_or_epochs_take_longer_and_faster_cards_less() -> None:
    base = make_plan(JobSpec(**SEED))
    more_tokens = make_plan(JobSpec(**{**SEED, "dataset_tokens": 40e6}))
    more_epochs = make_plan(JobSpec(**{**SEED, "epochs": 4}))
    for gpu in ("rtx4090", "a100-80g-sxm", "h100-sxm"):
        assert _row(more_tokens, gpu).hours > _row(base, gpu).hours
        assert _row(more_epochs, gpu).hours > _row(base, gpu).hours
    hours = [_row(base, gpu).hours for gpu in ("rtx3090", "rtx4090", "a100-80g-sxm", "h100-sxm")]
    assert hours == sorted(hours, reverse=True)


def test_70b_full_fine_tune_on_one_4090_says_no_with_suggestions() -> None:
    plan = make_plan(JobSpec(model="70B", method="full", seq_len=8192, gpu="4090"))
    assert plan.requested.gpu == "rtx4090" and plan.requested.count == 1
    assert plan.requested.verdict == "no"
    assert len(plan.suggestions) >= 3
    changes = " ".join(s.change for s in plan.suggestions)
    assert "QLoRA" in changes and "LoRA instead of full" in changes
    for suggestion in plan.suggestions:
        assert suggestion.patch
        assert suggestion.required_gib_after < suggestion.required_gib_before
    # Re-planning with a suggestion's patch gives the memory it promised.
    first = plan.suggestions[0]
    replanned = make_plan(JobSpec(**{**plan.spec.model_dump(), **first.patch}))
    assert replanned.memory.required_gib == pytest.approx(first.required_gib_after, rel=0.01)


def test_checkpointing_is_suggested_when_it_makes_the_named_card_fit() -> None:
    job = {"model": "llama 3 8b", "method": "lora", "seq_len": 4096, "dataset_tokens": 10e6}
    without = make_plan(JobSpec(**job, gradient_checkpointing=False))
    with_it = make_plan(JobSpec(**job, gradient_checkpointing=True))
    # A card between the two footprints: only checkpointing makes the job fit there.
    card = next(
        o
        for o in with_it.options
        if o.count == 1
        and o.verdict == "fits"
        and o.usable_gib < without.memory.required_gib
        and o.usd_per_hour is not None
    )
    plan = make_plan(JobSpec(**job, gradient_checkpointing=False, gpu=card.gpu))
    assert plan.requested.verdict == "no"
    checkpointing = next(s for s in plan.suggestions if "gradient_checkpointing" in s.patch)
    assert checkpointing.patch == {"gradient_checkpointing": True}
    assert checkpointing.required_gib_after < plan.requested.usable_gib
    assert checkpointing.hours_change_pct > 10
    assert "fits" in checkpointing.change


def test_checkpointing_only_costs_time_for_a_small_model() -> None:
    plan = make_plan(
        JobSpec(
            model="qwen2.5 0.5b",
            method="lora",
            seq_len=1024,
            gpu="h100",
            gradient_checkpointing=True,
            dataset_tokens=50e6,
        )
    )
    advice = next(s for s in plan.suggestions if s.patch == {"gradient_checkpointing": False})
    assert advice.hours_change_pct < 0
    assert "only costs time" in advice.change


def _prices(tmp_path, monkeypatch: pytest.MonkeyPatch, rows: str) -> None:
    """Pin the market for a test whose point is a price relation, not today's prices."""
    path = tmp_path / "prices.csv"
    header = "key,provider,price_usd_per_hr,price_kind,date_of_source,source,notes\n"
    path.write_text(header + rows, encoding="utf-8")
    monkeypatch.setenv("GPUPLAN_PRICES", str(path))


def test_checkpointing_verdict_when_a_bigger_card_without_it_is_cheaper_per_run(
    tmp_path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The seed job: checkpointing lets a 24 GB card hold it, but an 80 GB card without the
    # recompute finishes the run for less; the advice must say that, not "it only costs time".
    # Every other card is priced out of the way, so the relation is the test's, not the market's.
    others = "".join(
        f"{gpu.key},Test,50,on-demand,2026-12-01,test,\n"
        for gpu in all_gpus()
        if gpu.key not in ("rtx4090", "h100-sxm")
    )
    rows = (
        "4090,Test,0.30,on-demand,2026-12-01,test,\nH100 SXM,Test,1.65,on-demand,2026-12-01,test,\n"
    )
    _prices(tmp_path, monkeypatch, rows + others)
    plan = make_plan(
        JobSpec(model="13B", method="qlora", seq_len=4096, dataset_tokens=20e6, epochs=3)
    )
    advice = next(s for s in plan.suggestions if s.patch == {"gradient_checkpointing": False})
    cheapest = plan.recommendation.cheapest
    assert advice.cheapest_option.gpu != cheapest.gpu
    assert advice.cheapest_option.cost_usd < cheapest.cost_usd
    assert "costs less per run" in advice.change
    assert "only costs time" not in advice.change


def test_a_poor_value_card_gets_a_cheaper_alternative(
    tmp_path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _prices(tmp_path, monkeypatch, "B200,Test,6.99,on-demand,2026-12-01,test,\n")
    plan = make_plan(JobSpec(**{**SEED, "gpu": "B200"}))
    assert plan.requested.verdict == "fits"
    switch = next(s for s in plan.suggestions if "gpu" in s.patch)
    assert switch.cheapest_option.cost_usd < plan.requested.cost_usd


def test_requested_row_for_a_count_of_cards() -> None:
    plan = make_plan(
        JobSpec(
            model="llama 3 8b",
            method="lora",
            gpu="3090",
            num_gpus=2,
            sharding="fsdp",
            dataset_tokens=10e6,
        )
    )
    assert plan.requested.count == 2 and plan.requested.gpu == "rtx3090"
    assert plan.requested.cost_usd == pytest.approx(
        plan.requested.hours * plan.requested.usd_per_hour * 2, abs=0.01
    )


def test_only_a_size_gives_a_generic_card() -> None:
    plan = make_plan(JobSpec(model="70b", method="qlora", gpu_vram_gb=48))
    assert plan.requested.gpu.startswith("generic-")
    assert 46 < plan.requested.usable_gib <= 48
    assert plan.requested.verdict in ("fits", "tight", "no")


def test_unknown_card_names_the_closest_known_cards() -> None:
    plan = make_plan(JobSpec(**{**SEED, "gpu": "RTX 2060"}))
    assert plan.requested is None
    warning = " ".join(plan.warnings)
    assert "RTX 2060" in warning


def test_a_bare_family_name_is_stated_as_an_assumption() -> None:
    plan = make_plan(JobSpec(**{**SEED, "gpu": "A100"}))
    assert plan.requested.gpu == "a100-80g-sxm"
    assert any("A100 40GB" in line for line in plan.assumptions)


def test_a_measured_throughput_overrides_the_estimate() -> None:
    plan = make_plan(JobSpec(**{**SEED, "gpu": "h100 sxm", "tokens_per_s": 1000}))
    assert plan.requested.tokens_per_s == pytest.approx(1000)
    train_hours = plan.requested.hours - plan.requested.overhead_hours
    assert train_hours == pytest.approx(60e6 / 1000 / 3600, rel=0.01)
    # Other cards move by the same ratio.
    plain = make_plan(JobSpec(**{**SEED, "gpu": "h100 sxm"}))
    ratio = 1000 / plain.requested.tokens_per_s
    assert _row(plan, "a100-80g-sxm").tokens_per_s == pytest.approx(
        _row(plain, "a100-80g-sxm").tokens_per_s * ratio, rel=0.01
    )


def test_budget_and_deadline_pick_the_cheapest_run_that_meets_them(seed: Plan) -> None:
    fastest_hours = seed.recommendation.fastest.hours
    deadline = make_plan(JobSpec(**{**SEED, "deadline_hours": fastest_hours * 1.5}))
    chosen = deadline.recommendation.meets_deadline
    assert chosen.hours <= fastest_hours * 1.5
    assert all(
        o.cost_usd >= chosen.cost_usd
        for o in deadline.options
        if o.verdict != "no"
        and o.hours is not None
        and o.cost_usd is not None
        and o.hours <= fastest_hours * 1.5
    )
    broke = make_plan(JobSpec(**{**SEED, "budget_usd": 0.01}))
    assert broke.recommendation.within_budget is None
    assert "Nothing meets" in broke.recommendation.summary


def test_without_a_dataset_size_there_are_speeds_but_no_hours() -> None:
    plan = make_plan(JobSpec(model="llama 3 8b", method="lora"))
    assert all(o.hours is None and o.cost_usd is None for o in plan.options)
    assert any(o.tokens_per_s for o in plan.options)
    assert "tokens" in plan.recommendation.summary


def test_long_runs_advise_checkpointing_to_storage_you_control() -> None:
    plan = make_plan(JobSpec(**{**SEED, "dataset_tokens": 500e6}))
    assert any("storage you control" in note for note in plan.after_training.notes)


def test_unsloth_is_suggested_when_its_fused_loss_makes_a_lora_job_fit() -> None:
    # 70B QLoRA on one 48 GB card: Unsloth's published claim; and a 128k-context LoRA whose
    # HF loss would hold the whole vocabulary's logits in fp32.
    for job in (
        JobSpec(model="70B", method="qlora", gpu_vram_gb=48),
        JobSpec(model="llama 3 8b", method="lora", seq_len=131_072),
    ):
        plan = make_plan(job)
        unsloth = next(s for s in plan.suggestions if s.patch == {"framework": "unsloth"})
        assert unsloth.required_gib_after < 0.85 * unsloth.required_gib_before
        assert "fits" in unsloth.change


@pytest.mark.parametrize(
    "job",
    [
        SEED,
        {**SEED, "model": "70B", "method": "full"},
        {**SEED, "model": "8B", "method": "lora", "budget_usd": 5, "deadline_hours": 3},
        {**SEED, "gpu": "H20"},
        {**SEED, "model": "671B", "method": "qlora"},
    ],
)
def test_offline_every_pick_has_a_price_and_every_card_is_priced_or_not_rentable(
    job: dict,
) -> None:
    plan = make_plan(JobSpec(**job))
    picks = plan.recommendation
    for pick in (
        picks.cheapest,
        picks.fastest,
        picks.best_value,
        picks.within_budget,
        picks.meets_deadline,
    ):
        if pick is not None:
            assert pick.cost_usd is not None and pick.price_date, pick
    shown = {o.gpu for o in plan.options} | {o.gpu for o in plan.not_rentable}
    assert shown == {gpu.key for gpu in all_gpus()}
    assert not {o.gpu for o in plan.options} & {o.gpu for o in plan.not_rentable}
    assert all(o.usd_per_hour and o.price_date for o in plan.options)
    assert all(row.reason for row in plan.not_rentable)


def test_a_named_card_no_one_rents_is_still_the_requested_row() -> None:
    plan = make_plan(JobSpec(**{**SEED, "gpu": "H20"}))
    assert plan.requested.gpu == "h20" and plan.requested.cost_usd is None
    assert "h20" in {row.gpu for row in plan.not_rentable}
    assert plan.recommendation.fastest.gpu != "h20"  # fast, but not rentable: never a pick
