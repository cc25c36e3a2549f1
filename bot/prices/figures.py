"""Per-card figures from a snapshot's offers: what answers and `gpuplan prices` show.

- outliers: a quote below a third of its card's median (over every quote of its kind, on-demand
  or spot, from every source) is dropped and counted: a B200 at $0.01/h is a listing error, and
  a third is well below the 4–5× spread real providers show for one card. A spot quote is also
  dropped below a tenth of the on-demand median (spot discounts run to 60–80 %), which catches
  a card's only spot quote being absurd;
- cheapest: the lowest on-demand price per GPU-hour left (costs use it);
- median: across providers, of each provider's cheapest on-demand quote, so one marketplace's
  hundreds of listings count once;
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
from datetime import datetime

from bot.prices.offers import ON_DEMAND_KINDS, SPOT_KINDS, Offer

OUTLIER_FRACTION_OF_MEDIAN = 1 / 3
SPOT_FLOOR_FRACTION_OF_ON_DEMAND = 1 / 10


@dataclass(frozen=True)
class CardFigures:
    gpu: str
    cheapest: Offer | None  # on-demand
    median_usd_per_hour: float | None
    providers: tuple[str, ...]  # provider keys quoting it on-demand, cheapest first
    spread_ratio: float | None
    spot: Offer | None
    spot_median_usd_per_hour: float | None  # across providers, like the on-demand median
    outliers_dropped: int
    fetched_at: datetime

    @property
    def quotes_used(self) -> tuple[Offer, ...]:
        return tuple(offer for offer in (self.cheapest, self.spot) if offer is not None)


def without_outliers(offers: Iterable[Offer]) -> tuple[list[Offer], int]:
    """The offers with each card's outliers (per kind) dropped, and how many were."""
    groups: dict[tuple[str, bool], list[Offer]] = {}
    for offer in offers:
        groups.setdefault((offer.gpu, offer.is_spot), []).append(offer)
    medians = {key: statistics.median(o.usd_per_gpu_hour for o in g) for key, g in groups.items()}
    kept: list[Offer] = []
    dropped = 0
    for (gpu, spot), group in groups.items():
        floor = medians[gpu, spot] * OUTLIER_FRACTION_OF_MEDIAN
        if spot and (gpu, False) in medians:
            floor = max(floor, medians[gpu, False] * SPOT_FLOOR_FRACTION_OF_ON_DEMAND)
        good = [offer for offer in group if offer.usd_per_gpu_hour >= floor]
        dropped += len(group) - len(good)
        kept += good
    return kept, dropped


def card_figures(
    offers: Iterable[Offer], providers: Collection[str] | None = None
) -> dict[str, CardFigures]:
    """Figures per card key; `providers` (keys) limits them to the providers a team rents from."""
    offers = list(offers)
    by_card: dict[str, list[Offer]] = {}
    for offer in offers:
        by_card.setdefault(offer.gpu, []).append(offer)
    figures = {}
    for gpu, card_offers in by_card.items():
        kept, dropped = without_outliers(card_offers)
        if providers is not None:
            kept = [offer for offer in kept if offer.provider in providers]
        figure = _figures(gpu, kept, dropped)
        if figure is not None:
            figures[gpu] = figure
    return dict(sorted(figures.items()))


def _figures(gpu: str, offers: list[Offer], dropped: int) -> CardFigures | None:
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
