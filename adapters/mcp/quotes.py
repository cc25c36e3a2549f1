"""The `prices` tool's quotes: the latest live snapshot's offers where a feed covers the card (the
prices answers use), else the bundled dated table's; each quote says which it came from."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from adapters.mcp.answers import (
    MAX_QUOTES_PER_CARD,
    Answer,
    PricesAnswer,
    Quote,
    refusal,
)
from bot.phrases import mcp_refusal

if TYPE_CHECKING:
    from bot.prices.market import MarketPrices
    from bot.prices.offers import Offer
    from planner.catalog.prices import PriceQuote


def price_quotes(market: MarketPrices, card: str | None) -> Answer:
    from planner.catalog.gpus import resolve_gpu
    from planner.catalog.prices import price_date_label, price_table

    wanted = None
    if card:
        gpu = resolve_gpu(card)
        if gpu is None:
            raise refusal(mcp_refusal("unknown_card", card=card), card)
        wanted = gpu.key
    snapshot = market.snapshot()
    live: dict[str, list[Offer]] = {}
    for offer in snapshot.offers if snapshot else ():
        if wanted in (None, offer.gpu):
            live.setdefault(offer.gpu, []).append(offer)
    quotes = [q for offers in live.values() for q in _cheapest(map(_live, offers))]
    bundled = price_table()
    for key, price in bundled.items():
        if wanted in (None, key) and key not in live:
            quotes += _cheapest(_bundled(quote) for quote in price.quotes)
    answer = PricesAnswer(
        quotes=quotes,
        snapshot_taken_at=snapshot.taken_at.isoformat() if snapshot else None,
        bundled_table=price_date_label(),
    )
    cards = len({quote.gpu for quote in quotes})
    origin = "live snapshot and bundled table" if live else "bundled table"
    text = f"{len(quotes)} quotes for {cards} card(s), from the {origin}"
    if quotes:
        best = min(quotes, key=lambda quote: quote.usd_per_gpu_hour)
        text += f"; cheapest ${best.usd_per_gpu_hour:.2f}/GPU-h ({best.gpu}, {best.provider})"
    return Answer(answer.model_dump(mode="json"), text)


def _cheapest(quotes: Iterable[Quote]) -> list[Quote]:
    return sorted(quotes, key=lambda quote: quote.usd_per_gpu_hour)[:MAX_QUOTES_PER_CARD]


def _live(offer: Offer) -> Quote:
    return Quote(
        gpu=offer.gpu,
        provider=offer.provider_name,
        kind=offer.pricing,
        usd_per_gpu_hour=offer.usd_per_gpu_hour,
        source_url=offer.source_url,
        fetched_at=offer.fetched_at.isoformat(),
        origin="snapshot",
        region=offer.region,
        instance=offer.instance,
    )


def _bundled(quote: PriceQuote) -> Quote:
    return Quote(
        gpu=quote.key,
        provider=quote.provider,
        kind=quote.kind,
        usd_per_gpu_hour=quote.usd_per_hour,
        source_url=quote.source,
        fetched_at=quote.date,
        origin="bundled",
    )
