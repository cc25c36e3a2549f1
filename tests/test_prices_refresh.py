"""Refreshing against the four feeds faked on 127.0.0.1: the snapshot, per-card figures, what a
failing feed (500s, a timeout, malformed JSON, a zip without its CSV) leaves, retries with
backoff and the Vast.ai rate limit, all on injected clocks."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime

import aiohttp
import pytest

from bot.prices.feeds import chosen_feeds
from bot.prices.figures import card_figures
from bot.prices.http import ATTEMPTS, FeedError, FeedHttp, RateLimiter
from bot.prices.refresh import refresh
from bot.state.prices import MemoryPriceStore, SQLitePriceStore
from tests.fakes.price_feeds import FeedServer, serving
from tests.price_market import market

T0 = datetime(2026, 12, 1, 9, 0, tzinfo=UTC).timestamp()


class FakeTime:
    """A clock that only moves when something sleeps on it."""

    def __init__(self, start: float = T0) -> None:
        self.now = start
        self.slept: list[float] = []

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[FeedServer]:
    with serving(market(), monkeypatch) as running:
        yield running


async def _refresh(store, clock: FakeTime, **options):
    return await refresh(store, clock=clock, sleep=clock.sleep, monotonic=clock, **options)


async def test_a_refresh_keeps_every_feeds_offers_with_their_fetch_time(server) -> None:
    store, clock = SQLitePriceStore(), FakeTime()
    snapshot = await _refresh(store, clock)
    assert [(s.name, s.ok) for s in snapshot.feeds] == [
        ("gpuhunt", True),
        ("azure", True),
        ("runpod", True),
        ("vastai", True),
    ]
    assert {o.feed for o in snapshot.offers} == {"gpuhunt", "azure", "runpod", "vastai"}
    # gpuhunt's offers carry their catalog's date (version 20261201-7), the others the fetch's.
    catalogued = datetime(2026, 12, 1, tzinfo=UTC).timestamp()
    assert {o.fetched_at.timestamp() for o in snapshot.offers if o.feed != "gpuhunt"} == {T0}
    assert {o.fetched_at.timestamp() for o in snapshot.offers if o.feed == "gpuhunt"} == {
        catalogued
    }
    assert all(o.source_url.startswith("http://127.0.0.1:") for o in snapshot.offers)
    assert store.latest() == snapshot and snapshot.version == store.latest_version() == 1
    # gpuhunt: a 404 for every provider it does not publish, one version and one zip for the rest.
    zips = [path for feed, path in server.feeds.requests if path.endswith("catalog.zip")]
    assert sorted(zips) == [
        "/gpuhunt/v3/aws/20261201-7/catalog.zip",
        "/gpuhunt/v3/lambdalabs/20261201-7/catalog.zip",
    ]


async def test_per_card_figures_drop_the_absurd_quote_and_median_across_providers(
    server,
) -> None:
    snapshot = await _refresh(MemoryPriceStore(), FakeTime())
    figures = card_figures(snapshot.offers)
    rtx4090 = figures["rtx4090"]
    assert (rtx4090.cheapest.usd_per_gpu_hour, rtx4090.cheapest.provider) == (0.34, "runpod")
    assert rtx4090.spot.usd_per_gpu_hour == 0.29
    assert rtx4090.providers == ("runpod", "vastai")
    assert rtx4090.median_usd_per_hour == pytest.approx((0.34 + 0.44) / 2)
    b200 = figures["b200"]
    assert b200.outliers_dropped == 2  # Vast's $0.01 ask and its $0.01 bid
    assert b200.cheapest.usd_per_gpu_hour == 5.99
    h100 = figures["h100-sxm"]
    assert set(h100.providers) == {"runpod", "vastai", "azure"}
    assert h100.spread_ratio == pytest.approx(12.29 / 1.85, abs=0.01)
    assert figures["h100-pcie"].providers == ("lambdalabs",)
    assert card_figures(snapshot.offers, {"vastai"})["rtx4090"].cheapest.usd_per_gpu_hour == 0.44


async def test_a_feed_answering_500_is_retried_with_backoff_then_keeps_its_last_offers(
    server,
) -> None:
    store, clock = MemoryPriceStore(), FakeTime()
    first = await _refresh(store, clock)
    vast_before = [o for o in first.offers if o.feed == "vastai"]
    server.feeds.modes["vastai"] = "500"
    server.feeds.requests.clear()
    clock.now += 3600
    second = await _refresh(store, clock)
    status = second.feed("vastai")
    assert not status.ok and "HTTP 500" in status.error
    assert status.offers == len(vast_before) and status.fetched_at.timestamp() == T0
    assert [o for o in second.offers if o.feed == "vastai"] == vast_before
    assert [f for f, _ in server.feeds.requests].count("vastai") == ATTEMPTS
    assert clock.slept[:2] == [2.0, 4.0]  # exponential backoff on the injected clock


@pytest.mark.parametrize(
    ("feed", "mode", "error"),
    [
        ("runpod", "timeout", "no answer"),
        ("azure", "malformed", "did not answer JSON"),
        ("gpuhunt", "malformed", "not a readable zip"),
        ("gpuhunt", "no_csv", "holds no aws.csv"),
    ],
)
async def test_a_broken_feed_fails_alone(server, feed: str, mode: str, error: str) -> None:
    server.feeds.modes[feed] = mode
    server.feeds.delay_s = 2.0
    snapshot = await _refresh(MemoryPriceStore(), FakeTime(), request_timeout_s=0.2)
    failed = snapshot.feed(feed)
    assert not failed.ok and error in failed.error
    assert all(s.ok for s in snapshot.feeds if s.name != feed)
    assert not [o for o in snapshot.offers if o.feed == feed]


async def test_every_feed_down_keeps_the_last_good_snapshot(server) -> None:
    store, clock = MemoryPriceStore(), FakeTime()
    good = await _refresh(store, clock)
    server.feeds.down()
    clock.now += 3600
    down = await _refresh(store, clock)
    assert not down.any_ok
    assert sorted(down.offers, key=repr) == sorted(good.offers, key=repr)
    assert card_figures(down.offers)["rtx4090"].cheapest.usd_per_gpu_hour == 0.34


async def test_gpuplan_feeds_picks_feeds_and_the_others_keep_theirs(
    server, monkeypatch: pytest.MonkeyPatch
) -> None:
    store, clock = MemoryPriceStore(), FakeTime()
    await _refresh(store, clock)
    monkeypatch.setenv("GPUPLAN_FEEDS", "runpod")
    server.feeds.requests.clear()
    clock.now += 60
    snapshot = await _refresh(store, clock)
    assert {feed for feed, _ in server.feeds.requests} == {"runpod"}
    assert snapshot.feed("vastai").fetched_at.timestamp() == T0
    assert snapshot.feed("runpod").fetched_at.timestamp() == T0 + 60
    with pytest.raises(ValueError, match="unknown feed"):
        chosen_feeds("runpod,nosuch")


async def test_azure_pages_stay_on_the_configured_host(server) -> None:
    server.feeds.azure_page_items = 1  # two H100 rows: two pages
    snapshot = await _refresh(MemoryPriceStore(), FakeTime(), feeds=chosen_feeds("azure"))
    assert len([o for o in snapshot.offers if o.feed == "azure"]) == 2


async def test_vast_requests_keep_to_ten_a_minute() -> None:
    clock = FakeTime()
    limiter = RateLimiter(10, 60.0, clock=clock, sleep=clock.sleep)
    for _ in range(25):
        await limiter.wait()
    assert clock.now - T0 == pytest.approx(120.0)  # requests 11 and 21 waited a minute each


async def test_a_connection_refused_is_a_clear_error() -> None:
    clock = FakeTime()
    async with aiohttp.ClientSession() as session:
        http = FeedHttp(session, sleep=clock.sleep, timeout_s=1)
        with pytest.raises(FeedError, match=r"127\.0\.0\.1:9/x: ClientConnectorError"):
            await http.get_bytes("http://127.0.0.1:9/x")
    assert len(clock.slept) == ATTEMPTS - 1
