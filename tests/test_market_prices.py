"""The price catalog: cheapest and median per card with dates, and the GPUPLAN_PRICES override."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from planner.catalog.prices import card_price, price_book, price_date_label, price_table
from planner.errors import PlanningError
from planner.planner import make_plan
from planner.spec import JobSpec

HEADER = "key,provider,price_usd_per_hr,price_kind,date_of_source,source,notes\n"


def _write(tmp_path: Path, rows: str) -> Path:
    path = tmp_path / "prices.csv"
    path.write_text(HEADER + rows, encoding="utf-8")
    return path


def test_common_cards_have_a_cheapest_and_a_median_with_dates() -> None:
    for key in ("rtx4090", "rtx5090", "rtx-a6000", "l40s", "a100-80g-sxm", "h100-sxm", "h200-sxm"):
        price = card_price(key)
        assert price is not None, key
        assert 0 < price.cheapest.usd_per_hour <= price.median_usd_per_hour
        assert price.cheapest.date and price.cheapest.provider and price.price_source


def test_every_bundled_quote_is_dated_and_the_label_spans_the_dates() -> None:
    for price in price_table().values():
        assert all(quote.date[:4] == "2026" for quote in price.quotes), price.key
    label = price_date_label()
    assert label.startswith("quotes dated 2026-") and "undated" not in label


def test_bundled_sources_are_urls_and_price_source_says_only_who_what_and_when() -> None:
    for price in price_table().values():
        assert all(quote.source.startswith("https://") for quote in price.quotes), price.key
        cheapest = price.cheapest
        assert not cheapest.spot, cheapest
        assert price.price_source == f"{cheapest.provider} ({cheapest.kind}; {cheapest.date})"
    # Spot rows price only a job that accepts spot, when cheaper: the H100's spot quotes.
    assert price_book().spot["h100-sxm"].cheapest.spot


def test_override_replaces_the_cards_it_names_and_keeps_the_rest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    built_in_h100 = card_price("h100-sxm").cheapest.usd_per_hour
    path = _write(tmp_path, "RTX 4090,Our cluster,0.11,negotiated,2026-10-01,contract 42,\n")
    monkeypatch.setenv("GPUPLAN_PRICES", str(path))
    price = card_price("rtx4090")
    assert price.cheapest.provider == "Our cluster"
    assert price.cheapest.usd_per_hour == 0.11 and price.median_usd_per_hour == 0.11
    assert price.cheapest.date == "2026-10-01"
    assert card_price("h100-sxm").cheapest.usd_per_hour == built_in_h100


def test_override_adds_prices_for_cards_without_any(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert card_price("h20") is None  # not rentable in the bundled table
    path = _write(tmp_path, "h20,Lab,0.40,owned,2026-10-01,x,\n")
    monkeypatch.setenv("GPUPLAN_PRICES", str(path))
    assert card_price("h20").cheapest.usd_per_hour == 0.40


def test_plan_costs_follow_the_override(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    spec = JobSpec(model="llama 3 8b", method="qlora", dataset_tokens=10e6)
    before = next(o for o in make_plan(spec).options if o.gpu == "rtx4090" and o.count == 1)
    path = _write(tmp_path, "4090,Lab,0.05,owned,2026-10-01,x,\n")
    monkeypatch.setenv("GPUPLAN_PRICES", str(path))
    after = next(o for o in make_plan(spec).options if o.gpu == "rtx4090" and o.count == 1)
    assert after.usd_per_hour == 0.05 and after.price_date == "2026-10-01"
    assert after.cost_usd == pytest.approx(after.hours * 0.05, abs=0.01)
    assert after.cost_usd < before.cost_usd


def test_override_is_reread_when_the_file_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _write(tmp_path, "4090,Lab,0.05,owned,2026-10-01,x,\n")
    monkeypatch.setenv("GPUPLAN_PRICES", str(path))
    assert card_price("rtx4090").cheapest.usd_per_hour == 0.05
    path.write_text(HEADER + "4090,Lab,0.07,owned,2026-10-02,x,\n", encoding="utf-8")
    # A new mtime is what tells the cache the file changed.
    stat = path.stat()

    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
    assert card_price("rtx4090").cheapest.usd_per_hour == 0.07
    monkeypatch.delenv("GPUPLAN_PRICES")
    assert card_price("rtx4090").cheapest.provider != "Lab"


@pytest.mark.parametrize(
    ("rows", "message"),
    [
        ("2060 super duper,Lab,0.1,owned,2026-10-01,x,\n", "unknown card"),
        ("4090,Lab,cheap,owned,2026-10-01,x,\n", "not a positive number"),
        ("4090,Lab,-1,owned,2026-10-01,x,\n", "not a positive number"),
    ],
)
def test_bad_override_rows_are_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, rows: str, message: str
) -> None:
    monkeypatch.setenv("GPUPLAN_PRICES", str(_write(tmp_path, rows)))
    with pytest.raises(PlanningError, match=message):
        price_table()


def test_missing_override_file_is_a_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GPUPLAN_PRICES", str(tmp_path / "nope.csv"))
    with pytest.raises(PlanningError, match="GPUPLAN_PRICES"):
        price_table()


def test_override_without_the_columns_is_a_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "prices.csv"
    path.write_text("card,price\n4090,0.1\n", encoding="utf-8")
    monkeypatch.setenv("GPUPLAN_PRICES", str(path))
    with pytest.raises(PlanningError, match="missing column"):
        price_table()


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"\xff\xfe\x00binary\x00\x9c", "not a UTF-8 CSV"),
        (
            b"key,provider,price_usd_per_hr,price_kind,date_of_source,source,notes\n",
            "no price rows",
        ),
        (b"", "no price rows"),
        (
            b"key,provider,price_usd_per_hr,price_kind,date_of_source,source,notes\n4090,lab\n",
            "price '' is not a positive",
        ),
    ],
)
def test_unreadable_or_empty_override_is_a_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, content: bytes, message: str
) -> None:
    path = tmp_path / "prices.csv"
    path.write_bytes(content)
    monkeypatch.setenv("GPUPLAN_PRICES", str(path))
    with pytest.raises(PlanningError, match=message):
        price_table()
