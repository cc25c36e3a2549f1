"""Rental prices per GPU-hour: the cheapest and the median quote per card, each with its date.

planner/data/prices.csv is curated from shared/data/gpu_prices.csv: only on-demand per-GPU quotes a
renter can actually take are kept. Dropped: spot/interruptible bids, serverless per-second rates,
reserved and multi-year commitments, cluster-only offers, aggregated "tier" ranges, marketplace
floor listings from unverified hosts, rows the source itself marks stale or as outliers, rows whose
card variant is not stated ("H100" without PCIe/SXM), and the one source's "on-demand" column its
own notes call unreliable.

`GPUPLAN_PRICES=path` names a file with the same columns (e.g. a team's negotiated prices). For each
card it names, its rows replace the built-in quotes; every other card keeps the built-in ones. Its
`key` column may be any spelling `resolve_gpu` understands ("H100 SXM", "4090").
"""

from __future__ import annotations

import csv
import os
import statistics
from functools import cache
from pathlib import Path
from typing import NamedTuple

from planner.catalog.gpus import resolve_gpu
from planner.errors import PlanningError

PRICES_CSV = Path(__file__).resolve().parents[1] / "data" / "prices.csv"
PRICES_ENV = "GPUPLAN_PRICES"
_COLUMNS = ("key", "provider", "price_usd_per_hr", "price_kind", "date_of_source", "source")


class PriceQuote(NamedTuple):
    key: str
    provider: str
    usd_per_hour: float
    kind: str
    date: str
    source: str
    notes: str = ""


class CardPrice(NamedTuple):
    """All kept quotes for one card; `cheapest` is the one costs are computed with."""

    key: str
    cheapest: PriceQuote
    median_usd_per_hour: float
    quotes: tuple[PriceQuote, ...]

    @property
    def price_source(self) -> str:
        return f"{self.cheapest.provider} ({self.cheapest.kind}; {self.cheapest.source})"


def _read_quotes(path: Path, *, loose_keys: bool) -> list[PriceQuote]:
    try:
        with path.open(encoding="utf-8", newline="") as handle:
            rows = list(csv.DictReader(handle))
    except OSError as error:
        raise PlanningError(f"{PRICES_ENV}={path}: cannot read it ({error.strerror})") from error
    except (UnicodeDecodeError, csv.Error) as error:
        raise PlanningError(f"{PRICES_ENV}={path}: not a UTF-8 CSV file ({error})") from error
    if not rows:
        # Silently falling back to the built-in prices would hide a team's broken override.
        raise PlanningError(f"{PRICES_ENV}={path}: no price rows under the header")
    if not set(_COLUMNS) <= set(rows[0]):
        missing = ", ".join(column for column in _COLUMNS if column not in rows[0])
        raise PlanningError(f"{PRICES_ENV}={path}: missing column(s) {missing}")
    quotes = []
    for line_number, cells in enumerate(rows, start=2):
        row = {column: (value or "") for column, value in cells.items() if column is not None}
        key = row["key"].strip()
        if loose_keys:
            gpu = resolve_gpu(key)
            if gpu is None:
                raise PlanningError(f"{path} line {line_number}: unknown card '{key}'")
            key = gpu.key
        try:
            usd_per_hour = float(row["price_usd_per_hr"])
        except ValueError:
            usd_per_hour = -1.0
        if not usd_per_hour > 0:
            raise PlanningError(
                f"{path} line {line_number}: price '{row['price_usd_per_hr']}' is not a positive "
                "number of USD per GPU-hour"
            )
        quotes.append(
            PriceQuote(
                key=key,
                provider=row["provider"].strip(),
                usd_per_hour=usd_per_hour,
                kind=row["price_kind"].strip(),
                date=row["date_of_source"].strip() or "undated",
                source=row["source"].strip(),
                notes=(row.get("notes") or "").strip(),
            )
        )
    return quotes


def _table(quotes: list[PriceQuote]) -> dict[str, CardPrice]:
    by_card: dict[str, list[PriceQuote]] = {}
    for quote in quotes:
        by_card.setdefault(quote.key, []).append(quote)
    return {
        key: CardPrice(
            key=key,
            cheapest=min(card_quotes, key=lambda quote: quote.usd_per_hour),
            median_usd_per_hour=statistics.median(quote.usd_per_hour for quote in card_quotes),
            quotes=tuple(card_quotes),
        )
        for key, card_quotes in by_card.items()
    }


@cache
def _built_in() -> list[PriceQuote]:
    return _read_quotes(PRICES_CSV, loose_keys=False)


@cache
def _prices_for(override: str | None, override_mtime_ns: int) -> dict[str, CardPrice]:
    quotes = _built_in()
    if override:
        extra = _read_quotes(Path(override), loose_keys=True)
        replaced = {quote.key for quote in extra}
        quotes = [quote for quote in quotes if quote.key not in replaced] + extra
    return _table(quotes)


def _table_key() -> tuple[str | None, int]:
    """Which table is in use: the override file named by GPUPLAN_PRICES (if any) and its mtime."""
    override = os.environ.get(PRICES_ENV) or None
    mtime_ns = 0
    if override:
        try:
            mtime_ns = Path(override).stat().st_mtime_ns
        except OSError as error:
            message = f"{PRICES_ENV}={override}: cannot read it ({error.strerror})"
            raise PlanningError(message) from error
    return override, mtime_ns


def price_table() -> dict[str, CardPrice]:
    """Prices by card key; re-read only when GPUPLAN_PRICES or that file changes."""
    return _prices_for(*_table_key())


def card_price(key: str) -> CardPrice | None:
    return price_table().get(key)


def price_date_label() -> str:
    """The span of dates behind the prices in use, said plainly (some quotes carry no date)."""
    return _date_label_for(*_table_key())


@cache
def _date_label_for(override: str | None, override_mtime_ns: int) -> str:
    quotes = [
        q for price in _prices_for(override, override_mtime_ns).values() for q in price.quotes
    ]
    # Dates are ISO-like ("2026-09-09", "2026-05", "2026-03 ('Data as of March 2026')").
    dated = sorted(quote.date[:10].split(" ")[0] for quote in quotes if quote.date[:2] == "20")
    some_undated = len(dated) < len(quotes)
    if not dated:
        return "undated quotes"
    span = dated[0] if dated[0] == dated[-1] else f"{dated[0]} to {dated[-1]}"
    return f"quotes dated {span}" + (", some undated" if some_undated else "")
