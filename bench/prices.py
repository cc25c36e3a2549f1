"""Live prices: what a refresh and an answer pay for them, on a market the size of the real one.

A constructed snapshot of 20,000 offers (roughly what the four feeds return: Vast's searches,
RunPod's types, Azure's GPU sizes, gpuhunt's nine catalogs) over the catalog's cards, then:
- figures: per-card cheapest / median / providers / spot / outliers over every offer;
- book: those figures as the planner's PriceBook (done once per snapshot and preference);
- store: saving and loading the snapshot in the SQLite state file;
- answer overhead: MarketPrices.market() on the answer path once the book is built (cached);
- refresh: one `refresh()` of a realistic market served on 127.0.0.1 in the real shapes, about
  20,000 offers (Vast.ai's five searches of 1,000, nine gpuhunt catalogs of 900 rows, Azure's GPU
  sizes in 60 regions paged by 1,000, RunPod's types), run in a child process so that its wall
  time and peak RSS are the refresh's alone (the fake feeds live in this process).
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
from bot.state.prices import SQLitePriceStore
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
    refresh_s, before_mb, peak_mb, offers = _refresh_figures()
    print(
        f"one refresh of a {offers:,}-offer market on 127.0.0.1: {refresh_s:.2f} s, peak RSS "
        f"{peak_mb:.0f} MB ({before_mb:.0f} MB before it started)"
    )


def _big_market():  # type: ignore[no-untyped-def]
    """About 20,000 offers in the feeds' real shapes (tests/price_market.py builds each from
    the recorded responses)."""
    from bot.prices.cards import AZURE_SKUS, card_for
    from bot.prices.feeds import gpuhunt, vastai
    from planner.catalog.gpus import gpu_by_key
    from tests.fakes.price_feeds import FakeFeeds
    from tests.price_market import GPUHUNT_HEADER, azure_item, runpod_type, vast_offer

    rng = random.Random(30)

    def ram_mb(name: str) -> int:
        key = card_for(name)
        spec = gpu_by_key(key) if key else None
        return int((spec.marketed_gb if spec else 24) * 1024)

    vast = [
        vast_offer(
            n, name, rng.choice((1, 2, 4, 8)), ram_mb(name), rng.uniform(0.3, 20), 0.2, n % 700
        )
        for group in vastai.QUERY_GROUPS
        for n, name in enumerate((group * 1000)[:1000])
    ]
    regions = [f"region{n}" for n in range(60)]
    azure = [
        {**azure_item(sku, count * rng.uniform(1, 12)), "armRegionName": region}
        for sku, (_, count) in AZURE_SKUS.items()
        for region in regions
    ]
    cards = (("H100", 80), ("A100", 80), ("L4", 24), ("L40S", 48), ("RTX4090", 24), ("B200", 180))
    rows = "".join(
        f"inst{n},loc{n % 30},{rng.uniform(0.5, 40):.2f},16,64,{rng.choice((1, 2, 4, 8))},"
        "{},{},False,,nvidia,,x86,{{}}\n".format(*cards[n % len(cards)])
        for n in range(900)
    )
    runpod = [
        runpod_type(f"type {n}", name, 80, secure=rng.uniform(1, 6), community=rng.uniform(0.5, 3))
        for n, name in enumerate(("H100 SXM", "A100 SXM", "L40S", "RTX 4090", "B200") * 8)
    ]
    return FakeFeeds(
        azure_items=azure,
        runpod_types=runpod,
        vast_offers=vast,
        gpuhunt_csv=dict.fromkeys(gpuhunt.PROVIDERS, GPUHUNT_HEADER + rows),
    )


def _refresh_figures() -> tuple[float, float, float, int]:
    """(seconds, RSS before, peak RSS in MB, offers) of one refresh in a child process."""
    import json
    import subprocess

    from tests.fakes.price_feeds import FeedServer

    with FeedServer(_big_market()) as server, tempfile.TemporaryDirectory() as state:
        env = {**os.environ, **server.env, "GPUPLAN_STATE_DIR": state}
        child = subprocess.run(
            [sys.executable, __file__, "--refresh-child"],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
    figures = json.loads(child.stdout.strip().splitlines()[-1])
    return figures["s"], figures["before_mb"], figures["peak_mb"], figures["offers"]


def _refresh_child() -> None:
    """In the child: one refresh into the state directory, then its figures as JSON."""
    import json
    import resource

    from bot.prices.refresh import refresh

    store = SQLitePriceStore()
    before_mb = _rss_mb()
    start = time.perf_counter()
    snapshot = asyncio.run(refresh(store))
    seconds = time.perf_counter() - start
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    failed = [status.name for status in snapshot.feeds if not status.ok]
    figures = {"s": seconds, "before_mb": before_mb, "peak_mb": peak_mb}
    print(json.dumps({**figures, "offers": len(snapshot.offers), "failed": failed}))


def _rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


if __name__ == "__main__":
    if sys.argv[1:] == ["--refresh-child"]:
        _refresh_child()
    else:
        main()
