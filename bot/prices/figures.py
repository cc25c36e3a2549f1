"""Per-card figures from a snapshot's offers: what answers and `gpuplan prices` show.

In order:
- plausible: a quote outside its card's price band (planner.catalog.price_bands: a floor from the
  card's compute and class, a ceiling from its memory and class) is dropped and counted, whatever
  the number of quotes: twelve $0.0001 listings or a lone $0.01 B200 are not prices;
- one listing: identical listings (one provider, one host, one card, one kind, one price) count
  once in the statistics below, so one host's dozen copies cannot move a median;
- outliers: among plausible quotes, a quote below a third of the median of its own provider kind
  (marketplace, neocloud or hyperscaler; on-demand and spot apart) is dropped and counted. Judged
  per kind, a hyperscaler's list price never evicts a marketplace's real ask: RunPod's $1.99 H100
  stays beside Azure's $12.29. A third is well below the 4–5× spread real providers show;
- fresh: quotes fetched (or, for gpuhunt, catalogued) over MAX_QUOTE_AGE ago are not used while a
  card has fresher ones; a card with only such quotes is kept, marked stale (answers skip it);
- cheapest: the lowest on-demand price per GPU-hour left (costs use it);
- median: across providers, of each provider's cheapest on-demand quote;
- providers: how many providers quote the card on-demand, and who;
- spread: the priciest provider's cheapest quote over the cheapest one;
- spot: the lowest interruptible price (spot or bid) per GPU-hour, for jobs that accept it;
- fetched_at: the newest fetch among the quotes used.
Provider preferences narrow the offers after outliers are found across the whole market.
"""

from __future__ import annotations

import statistics
from collections.abc import Collection, Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import cache

from bot.prices.offers import ON_DEMAND_KINDS, SPOT_KINDS, Offer, provider_kind
from planner.catalog.gpus import gpu_by_key
from planner.catalog.price_bands import PriceBand, price_band

OUTLIER_FRACTION_OF_MEDIAN = 1 / 3
# Answers warn about quotes over a day old (bot.prices.market.STALE_AFTER) and stop using them
# after this long: a week-old marketplace ask is not a price one can rent at.
MAX_QUOTE_AGE = timedelta(days=7)


@dataclass(frozen=True)
class CardFigures:
    gpu: str
    cheapest: Offer | None  # on-demand
    median_usd_per_hour: float | None
    providers: tuple[str, ...]  # provider keys quoting it on-demand, cheapest first
    spread_ratio: float | None
    spot: Offer | None
    spot_median_usd_per_hour: float | None  # across providers, like the on-demand median
    outliers_dropped: int  # implausible ones included
    fetched_at: datetime
    implausible_dropped: int = 0  # outside the card's price band
    stale: bool = False  # every quote is older than MAX_QUOTE_AGE: shown, never used

    @property
    def quotes_used(self) -> tuple[Offer, ...]:
        return tuple(offer for offer in (self.cheapest, self.spot) if offer is not None)


@cache
def _band(gpu: str) -> PriceBand | None:
    spec = gpu_by_key(gpu)
    return price_band(spec) if spec is not None else None


def plausible(offers: Iterable[Offer]) -> tuple[list[Offer], int]:
    """The offers inside their card's price band, and how many were not."""
    kept: list[Offer] = []
    dropped = 0
    for offer in offers:
        band = _band(offer.gpu)
        if band is None or band.holds(offer.usd_per_gpu_hour):
            kept.append(offer)
        else:
            dropped += 1
    return kept, dropped


def listing(offer: Offer) -> tuple[str, str, str, str, float]:
    """What makes two offers one listing: a host's identical copies are one quote."""
    return (offer.provider, offer.host, offer.gpu, offer.pricing, offer.usd_per_gpu_hour)


def without_outliers(offers: Iterable[Offer]) -> tuple[list[Offer], int]:
    """The offers with each card's outliers (per provider kind, on-demand and spot apart)
    dropped, and how many were."""
    groups: dict[tuple[str, str, bool], dict[tuple[str, str, str, str, float], Offer]] = {}
    offers = list(offers)
    for offer in offers:
        group = groups.setdefault((offer.gpu, provider_kind(offer), offer.is_spot), {})
        group.setdefault(listing(offer), offer)
    floors = {
        key: statistics.median(o.usd_per_gpu_hour for o in group.values())
        * OUTLIER_FRACTION_OF_MEDIAN
        for key, group in groups.items()
    }
    kept = [
        offer
        for offer in offers
        if offer.usd_per_gpu_hour >= floors[offer.gpu, provider_kind(offer), offer.is_spot]
    ]
    return kept, len(offers) - len(kept)


def card_figures(
    offers: Iterable[Offer],
    providers: Collection[str] | None = None,
    now: datetime | None = None,
) -> dict[str, CardFigures]:
    """Figures per card key; `providers` (keys) limits them to the providers a team rents from;
    with `now`, quotes older than MAX_QUOTE_AGE give way to fresher ones (see the module doc)."""
    by_card: dict[str, list[Offer]] = {}
    for offer in offers:
        by_card.setdefault(offer.gpu, []).append(offer)
    figures = {}
    for gpu, card_offers in by_card.items():
        believable, implausible = plausible(card_offers)
        kept, outliers = without_outliers(believable)
        stale = False
        if now is not None:
            fresh = [offer for offer in kept if now - offer.fetched_at <= MAX_QUOTE_AGE]
            stale = not fresh
            kept = fresh or kept
        if providers is not None:
            kept = [offer for offer in kept if offer.provider in providers]
        figure = _figures(gpu, kept, implausible + outliers, implausible, stale)
        if figure is not None:
            figures[gpu] = figure
    return dict(sorted(figures.items()))


def _figures(
    gpu: str, offers: list[Offer], dropped: int, implausible: int, stale: bool
) -> CardFigures | None:
    on_demand = [offer for offer in offers if offer.pricing in ON_DEMAND_KINDS]
    spot = [offer for offer in offers if offer.pricing in SPOT_KINDS]
    if not on_demand and not spot:
        return None
    provider_cheapest = _cheapest_per_provider(on_demand)
    provider_spot = _cheapest_per_provider(spot)
    cheapest = provider_cheapest[0] if provider_cheapest else None
    spot_cheapest = provider_spot[0] if provider_spot else None
    used = [*provider_cheapest, *provider_spot]
    return CardFigures(
        gpu=gpu,
        cheapest=cheapest,
        median_usd_per_hour=_median(provider_cheapest),
        providers=tuple(offer.provider for offer in provider_cheapest),
        spread_ratio=(
            round(provider_cheapest[-1].usd_per_gpu_hour / cheapest.usd_per_gpu_hour, 2)
            if cheapest is not None
            else None
        ),
        spot=spot_cheapest,
        spot_median_usd_per_hour=_median(provider_spot),
        outliers_dropped=dropped,
        fetched_at=max(offer.fetched_at for offer in used),
        implausible_dropped=implausible,
        stale=stale,
    )


def _cheapest_per_provider(offers: list[Offer]) -> list[Offer]:
    """Each provider's cheapest offer, cheapest first."""
    per_provider: dict[str, Offer] = {}
    for offer in sorted(offers, key=_price_order):
        per_provider.setdefault(offer.provider, offer)
    return list(per_provider.values())


def _median(offers: list[Offer]) -> float | None:
    return round(statistics.median(o.usd_per_gpu_hour for o in offers), 4) if offers else None


def _price_order(offer: Offer) -> tuple[float, str, str]:
    """Cheapest first; equal prices in a stable order (provider, then region)."""
    return (offer.usd_per_gpu_hour, offer.provider, offer.region)
