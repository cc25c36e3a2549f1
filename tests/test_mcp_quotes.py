"""The `prices` tool's quotes: a card the live snapshot covers is quoted from it, the others
from the bundled table, and each quote says which (adapters/mcp/quotes.py)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from adapters.mcp.answers import MAX_QUOTES_PER_CARD, Refusal
from adapters.mcp.quotes import price_quotes
from bot.prices.market import MarketPrices
from bot.prices.offers import make_offer
from bot.prices.snapshot import Snapshot
from bot.state.prices import MemoryPriceStore

FETCHED = datetime(2026, 12, 1, 9, 30, tzinfo=UTC)


def _market_with_h100s(prices_usd: list[float]) -> MarketPrices:
    offers = tuple(
        make_offer(
            feed="runpod",
            provider="runpod",
            instance=f"1x H100 #{number}",
            gpu="h100-sxm",
            gpu_vram_gb=80,
            gpu_count=1,
            usd_per_hour=price,
            pricing="on_demand",
            region="us",
            fetched_at=FETCHED,
            source_url="https://www.runpod.io/pricing",
        )
        for number, price in enumerate(prices_usd)
    )
    store = MemoryPriceStore()
    store.save(Snapshot(version=0, taken_at=FETCHED, offers=offers, feeds=()))
    return MarketPrices(store)


def test_a_card_the_snapshot_covers_is_quoted_from_it_cheapest_first() -> None:
    market = _market_with_h100s([3.0, 2.1, 2.5, 4.0, 2.2, 2.9, 5.0])
    document = price_quotes(market, "H100 SXM").structured
    quotes = document["quotes"]
    assert [q["usd_per_gpu_hour"] for q in quotes] == [2.1, 2.2, 2.5, 2.9, 3.0]
    assert len(quotes) == MAX_QUOTES_PER_CARD
    assert {q["origin"] for q in quotes} == {"snapshot"}
    assert quotes[0]["source_url"] == "https://www.runpod.io/pricing"
    assert quotes[0]["fetched_at"].startswith("2026-12-01T09:30")
    assert document["snapshot_taken_at"].startswith("2026-12-01")


def test_cards_no_feed_covers_come_from_the_bundled_table() -> None:
    quotes = price_quotes(_market_with_h100s([2.0]), None).structured["quotes"]
    origins = {q["gpu"]: q["origin"] for q in quotes}
    assert origins["h100-sxm"] == "snapshot" and origins["rtx4090"] == "bundled"


def test_an_unknown_card_is_refused_in_a_sentence() -> None:
    with pytest.raises(Refusal, match="I don't know a card called “flux capacitor”"):
        price_quotes(MarketPrices(None), "flux capacitor")
