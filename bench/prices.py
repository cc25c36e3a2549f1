"""Live prices: what a refresh and an answer pay for them, on a market the size of the real one.

A constructed snapshot of 20,000 offers (roughly what the four feeds return: Vast's searches,
RunPod's types, Azure's GPU sizes, gpuhunt's nine catalogs) over the catalog's cards, then:
- figures: per-card cheapest / median / providers / spot / outliers over every offer;
- book: those figures as the planner's PriceBook (done once per snapshot and preference);
- store: saving and loading the snapshot in the SQLite state file;
- answer overhead: MarketPrices.market() on the answer path once the book is built (cached);
- refresh: one `refresh()` against the constructed test market served on 127.0.0.1.
Prints figures; asserts nothing. Run: .venv/bin/python bench/prices.py
"""

from __future__ import annotations

import asyncio
import os
import random
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bot.prices.figures import card_figures
from bot.prices.market import MarketPrices, live_prices
from bot.prices.offers import PROVIDER_NAMES, make_offer
from bot.prices.snapshot import FeedStatus, Snapshot
from bot.prices.store import SQLitePriceStore
from planner.catalog.gpus import all_gpus
from planner.catalog.prices import price_book

OFFERS = 20_000
NOW = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)


def _market(rng: random.Random) -> Snapshot:
    cards = [gpu.key for gpu in all_gpus()]
    providers = list(PROVIDER_NAMES)
    offers = []
    for n in range(OFFERS):
        base = 0.2 + 4.0 * (cards.index(cards[n % len(cards)]) / len(cards))
        offer = make_offer(
            feed="bench",
            provider=providers[n % len(providers)],
            instance=f"offer {n}",
            gpu=cards[n % len(cards)],
            gpu_vram_gb=None,
            gpu_count=rng.choice((1, 1, 2, 4, 8)),
            usd_per_hour=base * rng.uniform(0.8, 4.0) * 8,
            pricing=rng.choice(("on_demand", "community", "spot", "bid")),
            region="",
            fetched_at=NOW,
            source_url="http://127.0.0.1/bench",
        )
        offers.append(offer)
    return Snapshot(
        0, NOW, tuple(o for o in offers if o), (FeedStatus("bench", True, OFFERS, NOW),)
    )


def _best_of(runs: int, work) -> float:  # type: ignore[no-untyped-def]
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        work()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    snapshot = _market(random.Random(14))
    figures_s = _best_of(5, lambda: card_figures(snapshot.offers))
    figures = card_figures(snapshot.offers)
    book_s = _best_of(5, lambda: price_book(live_prices(figures)))
    with tempfile.TemporaryDirectory() as state:
        store = SQLitePriceStore(Path(state))
        save_s = _best_of(3, lambda: store.save(snapshot))
        load_s = _best_of(3, store.latest)
        prices = MarketPrices(store)
        prices.market()
        per_answer = []
        for _ in range(2000):
            start = time.perf_counter()
            prices.market()
            per_answer.append(time.perf_counter() - start)
    print(f"snapshot: {len(snapshot.offers):,} offers over {len(figures)} cards")
    print(f"figures (outliers, cheapest, median, spot): {figures_s * 1000:.1f} ms")
    print(f"planner PriceBook from the figures: {book_s * 1000:.2f} ms")
    print(f"SQLite save {save_s * 1000:.0f} ms, load {load_s * 1000:.0f} ms")
    print(
        f"answer path, MarketPrices.market() once built: median "
        f"{statistics.median(per_answer) * 1e6:.1f} µs, max {max(per_answer) * 1e6:.0f} µs"
    )
    print(f"one refresh against the test market on 127.0.0.1: {_refresh_s() * 1000:.0f} ms")


def _refresh_s() -> float:
    from bot.prices.refresh import refresh
    from tests.fakes.price_feeds import FeedServer
    from tests.price_market import market

    with FeedServer(market()) as server, tempfile.TemporaryDirectory() as state:
        os.environ.update(server.env)
        store = SQLitePriceStore(Path(state))
        start = time.perf_counter()
        asyncio.run(refresh(store))
        return time.perf_counter() - start


if __name__ == "__main__":
    main()
