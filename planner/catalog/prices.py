"""Rental prices per GPU-hour: the cheapest and the median quote per card, each with its date.

planner/data/prices.csv is rebuilt by tools/bundle_prices.py from the dated price survey
shared/data/gpu_prices_2026-11.csv (264 per-GPU-hour quotes from 31 providers, each with its source
URL and date; on-demand, marketplace "community" asks, and spot quotes, which price only jobs that
accept spot). A catalog card no quote prices is listed in planner/data/not_rentable.csv with the
reason: it is never an option row nor a pick (a plan lists it under `not_rentable`).

`GPUPLAN_PRICES=path` names a file with the same columns (e.g. a team's negotiated prices). For each
card it names, its rows replace the built-in quotes; every other card keeps the built-in ones. Its
`key` column may be any spelling `resolve_gpu` understands ("H100 SXM", "4090").

Live market prices (bot/prices fetches them) reach a plan as data, in a PriceBook: for every card
a fresh feed prices, the feed's figures replace the bundled quotes; the bundled table stays the
fallback for cards no feed covers; GPUPLAN_PRICES still wins over both. A quote whose kind says
"spot" (interruptible) never prices on-demand costs; it prices a job that accepts spot when it is
the cheaper one.
"""

from __future__ import annotations

import csv
import os
import statistics
from datetime import date, datetime
from functools import cache
from pathlib import Path
from typing import NamedTuple

from planner.catalog.gpus import resolve_gpu
from planner.data_files import DATA_DIR
from planner.errors import PlanningError
from planner.messages import PRICES

PRICES_CSV = DATA_DIR / "prices.csv"
NOT_RENTABLE_CSV = DATA_DIR / "not_rentable.csv"
# A card no table in use prices and the data gives no reason for (a GPUPLAN_PRICES override that
# leaves a card out cannot happen: the bundled quotes stay for cards it does not name).
NO_QUOTE_REASON = "no quote in the prices in use"
PRICES_ENV = "GPUPLAN_PRICES"
UNDATED = "undated"  # a quote's date when its source gives none
_COLUMNS = ("key", "provider", "price_usd_per_hr", "price_kind", "date_of_source", "source")


class PriceQuote(NamedTuple):
    key: str
    provider: str
    usd_per_hour: float
    kind: str
    date: str
    source: str
    notes: str = ""
    spot: bool = False  # interruptible: only for jobs that accept spot


class CardPrice(NamedTuple):
    """All kept quotes for one card; `cheapest` is the one costs are computed with."""

    key: str
    cheapest: PriceQuote
    median_usd_per_hour: float
    quotes: tuple[PriceQuote, ...]

    @property
    def price_source(self) -> str:
        """Who quoted it, what kind of price and when: never the quote's research notes."""
        return f"{self.cheapest.provider} ({self.cheapest.kind}; {self.cheapest.date})"


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
                date=row["date_of_source"].strip() or UNDATED,
                source=row["source"].strip(),
                notes=(row.get("notes") or "").strip(),
                spot=_is_spot(row["price_kind"]),
            )
        )
    return quotes


def _is_spot(kind: str) -> bool:
    words = kind.lower()
    return any(word in words for word in ("spot", "interruptible", "preemptible", "bid"))


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


def _quotes_in_use(override: str | None, covered: frozenset[str]) -> list[PriceQuote]:
    """Bundled quotes for cards outside `covered` (those live prices cover), with the override
    file's rows replacing the cards it names."""
    quotes = [quote for quote in _built_in() if quote.key not in covered]
    if override:
        extra = _read_quotes(Path(override), loose_keys=True)
        replaced = {quote.key for quote in extra}
        quotes = [quote for quote in quotes if quote.key not in replaced] + extra
    return quotes


class LivePrices(NamedTuple):
    """Per-card prices from the feeds (built by bot.prices.market), and the line that says where
    they come from and when they were fetched."""

    on_demand: dict[str, CardPrice]
    spot: dict[str, CardPrice]
    label: str


class PriceBook(NamedTuple):
    """The prices one plan reads: per card for on-demand costs and for a job that accepts spot,
    and one line saying where they come from and how old they are (Plan.price_date)."""

    on_demand: dict[str, CardPrice]
    spot: dict[str, CardPrice]
    label: str

    def table(self, spot: bool) -> dict[str, CardPrice]:
        return self.spot if spot else self.on_demand


def price_book(live: LivePrices | None = None) -> PriceBook:
    """The bundled table, live prices replacing it for every card they price, GPUPLAN_PRICES
    replacing both for the cards it names. Without `live` the book is built once per override;
    with it, the caller keeps the book as long as its snapshot (options pair cards with prices
    once per table)."""
    if live is None:
        return _default_book(*price_table_key())
    return _book_for(price_table_key()[0], live)


@cache
def _default_book(override: str | None, override_mtime_ns: int) -> PriceBook:
    """`override_mtime_ns` is part of the cache key: an edited override file is read again."""
    return _book_for(override, None)


def _book_for(override: str | None, live: LivePrices | None) -> PriceBook:
    covered = frozenset(live.on_demand) | frozenset(live.spot) if live else frozenset()
    quotes = _quotes_in_use(override, covered)
    overridden = {quote.key for quote in quotes if quote.key in covered}
    on_demand = _table([quote for quote in quotes if not quote.spot])
    spot = _table([quote for quote in quotes if quote.spot])
    if live is not None:
        on_demand |= {k: v for k, v in live.on_demand.items() if k not in overridden}
        spot |= {k: v for k, v in live.spot.items() if k not in overridden}
    cheaper = {
        key: min(
            (price for price in (spot.get(key), on_demand.get(key)) if price is not None),
            key=lambda price: price.cheapest.usd_per_hour,
        )
        for key in on_demand.keys() | spot.keys()
    }
    bundled_label = _date_label(quotes)
    if live is None:
        label = bundled_label
    elif quotes:
        label = PRICES("live.and_bundled", live=live.label, bundled=bundled_label)
    else:
        label = live.label
    return PriceBook(on_demand=on_demand, spot=cheaper, label=label)


def price_table_key() -> tuple[str | None, int]:
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
    return _default_book(*price_table_key()).on_demand


def card_price(key: str) -> CardPrice | None:
    return price_table().get(key)


def price_date_label() -> str:
    """The span of dates behind the prices in use, said plainly (some quotes carry no date)."""
    return _default_book(*price_table_key()).label


def _date_label(quotes: list[PriceQuote]) -> str:
    # Dates are ISO-like ("2026-09-09", "2026-05", "2026-03 ('Data as of March 2026')").
    dated = sorted(quote.date[:10].split(" ")[0] for quote in quotes if quote.date[:2] == "20")
    some_undated = len(dated) < len(quotes)
    if not dated:
        return PRICES("dates.none")
    undated = PRICES("dates.some_undated") if some_undated else ""
    if dated[0] == dated[-1]:
        return PRICES("dates.one", first=dated[0], undated=undated)
    return PRICES("dates.span", first=dated[0], last=dated[-1], undated=undated)


@cache
def not_rentable_reasons() -> dict[str, str]:
    """Catalog key → why no one rents it (planner/data/not_rentable.csv, each row with source)."""
    with NOT_RENTABLE_CSV.open(encoding="utf-8", newline="") as handle:
        return {row["key"]: row["reason"] for row in csv.DictReader(handle)}


def quote_day(text: str) -> date | None:
    """'2026-09-09' or '2026-05' (the first of the month) as a date; None when undated."""
    head = text[:10].split(" ")[0]
    for form in ("%Y-%m-%d", "%Y-%m"):
        try:
            return datetime.strptime(head, form).date()
        except ValueError:
            continue
    return None


# Prices older than this are said to be old in the answer's price line.
OLD_PRICES_DAYS = 30
DAYS_PER_MONTH = 30.44  # 365.25 / 12


def price_age_note(book: PriceBook, today: date) -> str | None:
    """ "the oldest is 7 months old" when a price the book costs with (each card's cheapest
    quote) is over OLD_PRICES_DAYS old on `today`; None otherwise."""
    days = [quote_day(price.cheapest.date) for price in book.on_demand.values()]
    known = [day for day in days if day is not None]
    if not known:
        return None
    age_days = (today - min(known)).days
    if age_days <= OLD_PRICES_DAYS:
        return None
    if age_days < 2 * OLD_PRICES_DAYS:
        return PRICES("age.days", days=age_days)
    return PRICES("age.months", months=round(age_days / DAYS_PER_MONTH))
