"""The bots' scheduled refresh, on an injected clock: one refresh per interval across processes
sharing a store (the store's lock), jitter, a failure logged once per run of failures while the
last snapshot keeps serving, and answers that never wait on a feed."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterator

import pytest

from bot.prices.market import MarketPrices
from bot.prices.schedule import PriceRefresher, interval_from_env
from bot.state.prices import SQLitePriceStore
from tests.fakes.price_feeds import FeedServer, serving
from tests.price_market import market
from tests.test_prices_refresh import FakeTime


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[FeedServer]:
    with serving(market(), monkeypatch) as running:
        yield running


def _refresher(store, clock: FakeTime, name: str, unit: float = 0.5) -> PriceRefresher:
    return PriceRefresher(
        store,
        interval_s=3600,
        clock=clock,
        sleep=clock.sleep,
        random_unit=lambda: unit,
        holder=name,
    )


def _refreshes(server: FeedServer) -> int:
    return [path for _, path in server.feeds.requests].count("/runpod/graphql")


async def test_processes_sharing_a_store_refresh_once_per_interval(server) -> None:
    clock = FakeTime()
    one, two = (
        _refresher(SQLitePriceStore(), clock, "a"),
        _refresher(SQLitePriceStore(), clock, "b"),
    )
    assert (await one.tick()).version == 1
    assert await two.tick() is None  # "a" holds this interval
    assert _refreshes(server) == 1
    clock.now += 3600 * 0.95  # the earliest a jittered next tick comes
    assert (await two.tick()).version == 2
    assert await one.tick() is None
    assert _refreshes(server) == 2


def test_the_interval_is_jittered_by_ten_percent() -> None:
    clock = FakeTime()
    store = SQLitePriceStore()
    delays = [_refresher(store, clock, "a", unit).next_delay_s() for unit in (0.0, 0.5, 1.0)]
    assert delays == pytest.approx([3240.0, 3600.0, 3960.0])


async def test_a_failure_run_is_logged_once_and_the_last_snapshot_keeps_serving(
    server, caplog
) -> None:
    clock, store = FakeTime(), SQLitePriceStore()
    refresher = _refresher(store, clock, "a")
    prices = MarketPrices(store, clock=clock, check_every_s=0)
    await refresher.tick()
    server.feeds.down()
    caplog.set_level(logging.INFO, logger="bot.prices.schedule")
    for _ in range(3):
        clock.now += 3600
        assert not (await refresher.tick()).any_ok
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and "serving the snapshot of" in warnings[0].getMessage()
    figures = prices.market().book.on_demand["rtx4090"]
    assert figures.cheapest.usd_per_hour == 0.34
    server.feeds.modes.clear()
    clock.now += 3600
    assert (await refresher.tick()).any_ok
    assert any("feeds answer again" in r.getMessage() for r in caplog.records)


async def test_run_ticks_on_its_schedule_until_stopped(server) -> None:
    clock = FakeTime()
    stop = asyncio.Event()
    ticks: list[float] = []

    async def sleep(seconds: float) -> None:
        ticks.append(seconds)
        clock.now += seconds
        if len(ticks) == 3:
            stop.set()

    refresher = PriceRefresher(
        SQLitePriceStore(), interval_s=3600, clock=clock, sleep=sleep, random_unit=lambda: 1.0
    )
    await asyncio.wait_for(refresher.run(stop), 30)
    assert ticks == pytest.approx([3960.0] * 3) and _refreshes(server) == 3


@pytest.mark.parametrize(("raw", "seconds"), [("", 3600.0), ("900", 900.0), ("0", None)])
def test_gpuplan_prices_refresh_s(raw: str, seconds, monkeypatch) -> None:
    monkeypatch.setenv("GPUPLAN_PRICES_REFRESH_S", raw)
    assert interval_from_env() == seconds


def test_a_bad_interval_is_named(monkeypatch) -> None:
    monkeypatch.setenv("GPUPLAN_PRICES_REFRESH_S", "hourly")
    with pytest.raises(ValueError, match="GPUPLAN_PRICES_REFRESH_S"):
        interval_from_env()
