"""Every card's price band against the dated quotes the bundled table holds (the 2026-11 survey):
the floor sits well below the cheapest real quote and far above $0.01, the ceiling well above the
priciest; and every catalog card is priced with a dated on-demand quote or marked not rentable
with a reason, never both."""

from __future__ import annotations

import csv
from collections import defaultdict

import pytest

from planner.catalog.gpus import all_gpus, gpu_by_key
from planner.catalog.price_bands import price_band
from planner.catalog.prices import NOT_RENTABLE_CSV, PRICES_CSV, not_rentable_reasons, quote_day


def _quotes() -> dict[str, list[tuple[float, str]]]:
    quotes: dict[str, list[tuple[float, str]]] = defaultdict(list)
    with PRICES_CSV.open(encoding="utf-8", newline="") as handle:
        for row in csv.DictReader(handle):
            quotes[row["key"]].append((float(row["price_usd_per_hr"]), row["price_kind"]))
    return quotes


QUOTES = _quotes()


@pytest.mark.parametrize("key", sorted(QUOTES))
def test_the_band_holds_every_real_quote_with_room_to_spare(key: str) -> None:
    band = price_band(gpu_by_key(key))
    prices = [price for price, _ in QUOTES[key]]
    # Marketplace asks and spot bids run 30-60 % under the table's cheapest: they must pass.
    assert band.floor_usd_per_hour <= 0.4 * min(prices)
    assert band.ceiling_usd_per_hour >= 2 * max(prices)
    assert all(band.holds(price) for price in prices)


def test_every_floor_is_far_above_a_cent_and_below_every_ceiling() -> None:
    for gpu in all_gpus():
        band = price_band(gpu)
        assert 0.03 <= band.floor_usd_per_hour < band.ceiling_usd_per_hour, gpu.key
        assert not band.holds(0.01) and not band.holds(0.0001)


def test_every_catalog_card_is_priced_with_a_dated_quote_or_not_rentable_with_a_reason() -> None:
    reasons = not_rentable_reasons()
    for gpu in all_gpus():
        dated = [kind for price, kind in QUOTES.get(gpu.key, []) if kind != "spot" and price > 0]
        assert bool(dated) != (gpu.key in reasons), gpu.key
        if gpu.key in reasons:
            assert len(reasons[gpu.key]) > 20, gpu.key
    with PRICES_CSV.open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert all(quote_day(row["date_of_source"]) is not None for row in rows)
    assert all(row["source"].startswith("https://") for row in rows)
    with NOT_RENTABLE_CSV.open(encoding="utf-8", newline="") as handle:
        assert all(row["source"] and row["checked"] for row in csv.DictReader(handle))
