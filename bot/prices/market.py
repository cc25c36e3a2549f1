"""The prices answers use: the store's latest snapshot as a planner PriceBook, per provider
preference, rebuilt only when a refresh saved a newer snapshot; and the freshness line answers
show ("Prices from 4 providers, 2 h ago.").

Nothing here fetches: answers read what the scheduled refresh (bot.prices.schedule) stored.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
import time
from collections.abc import Callable, Collection
from dataclasses import dataclass
from datetime import datetime, timedelta

from bot.prices.figures import CardFigures, card_figures
from bot.prices.offers import Offer, provider_name, utc
from bot.prices.snapshot import Snapshot
from bot.state.errors import StoreUnavailable
from bot.state.prices import PriceStore
from planner.catalog.prices import (
    CardPrice,
    LivePrices,
    PriceBook,
    PriceQuote,
    price_age_note,
    price_book,
    price_table_key,
)
from planner.messages import PRICES
from planner.words import Listing

logger = logging.getLogger(__name__)

# How often an answer looks for a snapshot another process saved (a cheap MAX(version) query).
CHECK_EVERY_S = 30.0
STALE_AFTER = timedelta(days=1)
KIND_TEXT = {
    "on_demand": "on-demand",
    "community": "community, on-demand",
    "spot": "spot, interruptible",
    "bid": "minimum bid, interruptible",
}
Providers = frozenset[str] | None


def when(moment: datetime) -> str:
    return moment.astimezone(utc(0).tzinfo).strftime("%Y-%m-%d %H:%M UTC")


def quote(offer: Offer) -> PriceQuote:
    fetched = when(offer.fetched_at)
    return PriceQuote(
        key=offer.gpu,
        provider=offer.provider_name,
        usd_per_hour=offer.usd_per_gpu_hour,
        kind=KIND_TEXT[offer.pricing],
        date=fetched,
        source=f"{offer.feed} feed, {offer.source_url}, fetched {fetched}",
        notes=f"{offer.gpu_count}× {offer.instance}"
        + (f" in {offer.region}" if offer.region else ""),
        spot=offer.is_spot,
    )


def live_prices(figures: dict[str, CardFigures]) -> LivePrices | None:
    """The planner's per-card prices for these figures; None when they price nothing."""
    on_demand: dict[str, CardPrice] = {}
    spot: dict[str, CardPrice] = {}
    for gpu, figure in figures.items():
        if figure.cheapest is not None and figure.median_usd_per_hour is not None:
            on_demand[gpu] = CardPrice(
                gpu, quote(figure.cheapest), figure.median_usd_per_hour, (quote(figure.cheapest),)
            )
        if figure.spot is not None and figure.spot_median_usd_per_hour is not None:
            spot[gpu] = CardPrice(
                gpu, quote(figure.spot), figure.spot_median_usd_per_hour, (quote(figure.spot),)
            )
    if not on_demand and not spot:
        return None
    return LivePrices(on_demand=on_demand, spot=spot, label=live_label(figures))


def _providers(figures: dict[str, CardFigures]) -> set[str]:
    """Every provider whose quotes the figures weigh (on-demand or spot)."""
    return {p for figure in figures.values() for p in figure.providers} | {
        figure.spot.provider for figure in figures.values() if figure.spot is not None
    }


def live_label(figures: dict[str, CardFigures]) -> str:
    """Plan.price_date for live prices: who quoted them and when they were fetched."""
    names = sorted(provider_name(p) for p in _providers(figures))
    oldest = min(figure.fetched_at for figure in figures.values())
    newest = max(figure.fetched_at for figure in figures.values())
    span = (
        when(newest)
        if oldest == newest
        else PRICES("live.span", oldest=when(oldest), newest=when(newest))
    )
    return PRICES(
        "live.one" if len(names) == 1 else "live.many",
        count=len(names),
        names=Listing(names),
        span=span,
    )


def age_text(seconds: float) -> str:
    if seconds < 90:
        return PRICES("fetched.now")
    minutes = seconds / 60
    if minutes < 90:
        return PRICES("fetched.min", minutes=minutes)
    hours = minutes / 60
    if hours < 48:
        return PRICES("fetched.h", hours=hours)
    return PRICES("fetched.days", days=hours / 24)


@dataclass(frozen=True)
class Market:
    """The prices one answer uses, and what it says about them."""

    book: PriceBook
    key: tuple[object, ...]  # what the answer cache keys on besides the job
    freshness: str | None  # "Prices from 4 providers, 2 h ago."; None without live prices
    stale_warning: str | None


class MarketPrices:
    """The latest snapshot of `store` as PriceBooks, one per provider preference."""

    def __init__(
        self,
        store: PriceStore | None,
        *,
        clock: Callable[[], float] = time.time,
        check_every_s: float = CHECK_EVERY_S,
    ) -> None:
        self._store = store
        self._clock = clock
        self._check_every_s = check_every_s
        self._checked_at = -float("inf")
        self._snapshot: Snapshot | None = None
        self._books: dict[tuple[object, ...], tuple[PriceBook, dict[str, CardFigures]]] = {}
        self._lock = threading.Lock()

    def snapshot(self) -> Snapshot | None:
        """The latest snapshot, looked for again at most every `check_every_s`."""
        with self._lock:
            now = self._clock()
            if self._store is not None and now - self._checked_at >= self._check_every_s:
                self._checked_at = now
                try:
                    version = self._store.latest_version()
                    if version != (self._snapshot.version if self._snapshot else 0):
                        self._snapshot = self._store.latest()
                        self._books.clear()
                except (sqlite3.Error, StoreUnavailable) as error:  # keep the one we have
                    logger.warning("reading price snapshots failed: %s", error)
            return self._snapshot

    def saved(self, snapshot: Snapshot) -> None:
        """Use `snapshot` now (this process just saved it)."""
        with self._lock:
            self._snapshot, self._checked_at = snapshot, self._clock()
            self._books.clear()

    def market(self, providers: Providers = None) -> Market:
        snapshot = self.snapshot()
        now = utc(self._clock())
        # The day is part of the key: how old the prices are, and which are past the cut-off,
        # change with it.
        key = (snapshot.version if snapshot else 0, providers, price_table_key(), now.date())
        with self._lock:
            known = self._books.get(key)
            if known is None:
                # A new day's books replace the old days' (a bot runs for weeks).
                self._books = {k: v for k, v in self._books.items() if k[3] == now.date()}
                figures = card_figures(snapshot.offers, providers, now) if snapshot else {}
                fresh = {gpu: figure for gpu, figure in figures.items() if not figure.stale}
                book = price_book(live_prices(fresh))
                note = price_age_note(book, now.date())
                if note is not None:
                    book = book._replace(label=PRICES("dates.aged", label=book.label, note=note))
                known = self._books[key] = (book, fresh)
        book, figures = known
        return Market(book, key, *self._freshness(figures))

    def _freshness(self, figures: dict[str, CardFigures]) -> tuple[str | None, str | None]:
        if not figures:
            return None, None
        now = utc(self._clock())
        providers = _providers(figures)
        newest = max(figure.fetched_at for figure in figures.values())
        oldest = min(figure.fetched_at for figure in figures.values())
        age = age_text((now - newest).total_seconds())
        line = PRICES(
            "fresh.one" if len(providers) == 1 else "fresh.many", count=len(providers), age=age
        )
        warning = None
        if now - oldest > STALE_AFTER:
            warning = PRICES(
                "stale", age=age_text((now - oldest).total_seconds()), when=when(oldest)
            )
        return line, warning


def provider_names(providers: Collection[str]) -> str:
    return ", ".join(sorted(provider_name(p) for p in providers))
