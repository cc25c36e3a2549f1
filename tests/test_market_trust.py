"""Issue 30's "done when", served on 127.0.0.1 in the real services' shapes (tests/price_market.py
builds each answer from the recorded responses): poisoned quotes never reach `gpuplan prices
--json` or an answer, a hyperscaler's list price does not evict a marketplace's real one, an empty
feed fails and keeps its last good offers, a month-old gpuhunt catalog is a month old, and a zip
bomb or a redirect to another host is refused."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest

from adapters.cli import main
from bot.prices.feeds import vastai
from tests.fakes.price_feeds import FakeFeeds, serving
from tests.price_market import azure_item, market, runpod_type, vast_offer

SEED = "13B QLoRA, 4k ctx, 20M tokens x3"
H100_MB = 81559


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    code = main(list(argv))
    return code, capsys.readouterr().out


def _cards(capsys: pytest.CaptureFixture[str]) -> dict[str, dict]:
    code, out = _run(capsys, "prices", "--json")
    assert code == 0
    return {card["gpu"]: card for card in json.loads(out)["cards"]}


def _plan(capsys: pytest.CaptureFixture[str], question: str = SEED) -> dict:
    code, out = _run(capsys, "ask", "--json", question)
    assert code == 0
    return json.loads(out)


@pytest.fixture(autouse=True)
def _no_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("bot.prices.http.BACKOFF_S", 0.0)


def poisoned() -> FakeFeeds:
    """Twelve $0.0001 H100 listings from one Vast host beside a real $1.85 one, a lone $0.0001
    L4 and a lone $0.01 B200 on RunPod."""
    feeds = market()
    feeds.vast_offers = [
        *(vast_offer(100 + n, "H100 SXM", 1, H100_MB, 0.0001, 0.0001, host=7) for n in range(12)),
        vast_offer(200, "H100 SXM", 1, H100_MB, 1.85, 1.20),
    ]
    feeds.runpod_types = [
        runpod_type("NVIDIA L4", "L4", 24, secure=0.0001),
        runpod_type("NVIDIA B200", "B200", 180, secure=0.01),
    ]
    return feeds


def test_poisoned_quotes_never_reach_prices_or_an_answer(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    with serving(poisoned(), monkeypatch):
        code, out = _run(capsys, "prices", "refresh")
        assert code == 0, out
    cards = _cards(capsys)
    assert cards["h100-sxm"]["cheapest_usd_per_hour"] == 1.85
    assert cards["h100-sxm"]["dropped"]["implausible"] == 24  # 12 asks and their 12 bids
    assert "l4" not in cards  # its only quote was implausible: the bundled table prices it
    assert cards["b200"]["cheapest_provider"] != "RunPod"  # AWS's real quote, not the $0.01
    assert all(card["cheapest_usd_per_hour"] >= 0.03 for card in cards.values())
    plan = _plan(capsys)
    prices = [o["usd_per_hour"] for o in plan["options"]]
    assert min(prices) >= 0.03
    assert "$0.00" not in plan["recommendation"]["summary"]


def test_a_hyperscaler_list_price_does_not_evict_a_marketplace_quote(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    feeds = FakeFeeds(
        runpod_types=[
            runpod_type("NVIDIA H100 80GB HBM3", "H100 SXM", 80, secure=2.69, community=1.99)
        ],
        azure_items=[azure_item("Standard_ND96isr_H100_v5", 8 * 12.29)],
    )
    with serving(feeds, monkeypatch):
        _run(capsys, "prices", "refresh")
    h100 = _cards(capsys)["h100-sxm"]
    assert (h100["cheapest_usd_per_hour"], h100["cheapest_provider"]) == (1.99, "RunPod")
    assert h100["dropped"]["outliers"] == 0
    option = next(o for o in _plan(capsys)["options"] if o["gpu"] == "h100-sxm" and o["count"] == 1)
    assert option["usd_per_hour"] == 1.99


def test_a_feed_answering_with_no_offers_fails_and_keeps_its_last_good_ones(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    feeds = market()
    with serving(feeds, monkeypatch):
        _run(capsys, "prices", "refresh")
        feeds.modes = {"runpod": "empty", "gpuhunt": "empty"}
        code, out = _run(capsys, "prices", "refresh")
    assert code == 0  # two feeds still answered
    assert "runpod: failed — answered with no usable offers" in out
    assert "gpuhunt: failed" in out and "no usable offers" in out
    code, out = _run(capsys, "prices", "--json")
    status = {feed["name"]: feed for feed in json.loads(out)["feeds"]}
    assert not status["runpod"]["ok"] and status["runpod"]["offers"] > 0
    assert _cards(capsys)["rtx4090"]["cheapest_provider"] == "RunPod"  # its last good $0.34


def test_a_month_old_gpuhunt_catalog_is_dated_a_month_ago_and_not_used(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    month_ago = datetime.now(UTC).date() - timedelta(days=31)
    feeds = market()
    feeds.gpuhunt_version = f"{month_ago:%Y%m%d}-3"
    with serving(feeds, monkeypatch):
        _run(capsys, "prices", "refresh")
    lambda_h100 = _cards(capsys)["h100-pcie"]  # quoted only by gpuhunt's Lambda catalog
    assert lambda_h100["fetched_at"] == f"{month_ago.isoformat()}T00:00:00Z"
    assert lambda_h100["stale"] is True
    option = next(
        o for o in _plan(capsys)["options"] if o["gpu"] == "h100-pcie" and o["count"] == 1
    )
    assert not option["price_source"].startswith("Lambda")  # the bundled quote instead
    assert option["price_date"] != month_ago.isoformat()


@pytest.mark.parametrize(
    ("feed", "mode", "error"),
    [
        ("gpuhunt", "bomb", "unpacks to over"),
        ("vastai", "redirect", "redirected to another host"),
        ("gpuhunt", "redirect", "redirected to another host"),
    ],
)
def test_a_zip_bomb_and_a_cross_host_redirect_are_refused(
    monkeypatch: pytest.MonkeyPatch, feed: str, mode: str, error: str
) -> None:
    import asyncio

    from bot.prices.refresh import refresh
    from bot.state.prices import MemoryPriceStore

    feeds = market()
    feeds.modes = {feed: mode}
    with serving(feeds, monkeypatch) as server:
        snapshot = asyncio.run(refresh(MemoryPriceStore()))
    status = snapshot.feed(feed)
    assert not status.ok and error in status.error
    assert all(s.ok for s in snapshot.feeds if s.name != feed)
    if mode == "redirect":  # each URL asked once, never followed to the other host
        paths = [path for name, path in server.feeds.requests if name == feed]
        assert len(paths) == len(set(paths))


def test_vast_is_asked_for_verified_machines_before_the_cheapest_are_taken(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import asyncio

    from bot.prices.refresh import refresh
    from bot.state.prices import MemoryPriceStore

    monkeypatch.setattr(vastai, "OFFERS_PER_QUERY", 2)
    feeds = FakeFeeds(
        vast_offers=[
            *(
                vast_offer(n, "RTX 4090", 1, 24564, 0.20, 0.1, verification="unverified")
                for n in range(5)
            ),
            vast_offer(9, "RTX 4090", 1, 24564, 0.21, 0.1, external=True),
            vast_offer(10, "RTX 4090", 1, 24564, 0.39, 0.25),
        ]
    )
    with serving(feeds, monkeypatch):
        snapshot = asyncio.run(refresh(MemoryPriceStore(), vastai_only()))
    asks = [o for o in snapshot.offers if o.pricing == "community"]
    assert [(o.instance, o.usd_per_gpu_hour, o.host) for o in asks] == [
        ("offer 10", 0.39, "host 10")
    ]


def vastai_only():
    from bot.prices.feeds import chosen_feeds

    return chosen_feeds("vastai")


def test_gpuhunt_rows_that_do_not_read_are_skipped_not_fatal(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    feeds = market()
    feeds.gpuhunt_csv["aws"] += (
        "p5.48xlarge,us-east-1,98.32,192,2048,nan,H100,80,False,,nvidia,,x86,{}\n"
        "p5.huge,us-east-1,98.32,192,2048,1000000000000,H100,80,False,,nvidia,,x86,{}\n"
    )
    with serving(feeds, monkeypatch):
        code, out = _run(capsys, "prices", "refresh")
    assert code == 0 and "gpuhunt: 2 offers (2 rows skipped" in out


def test_answers_say_how_old_their_prices_are_in_english_and_chinese(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from bot.language import in_chinese
    from bot.prices.market import MarketPrices

    def label(day: datetime) -> str:
        return MarketPrices(None, clock=day.timestamp).market().book.label

    # The bundled table's oldest quote is 2026-05-18: two weeks on, nothing to say.
    assert "oldest" not in label(datetime(2026, 6, 1, tzinfo=UTC))
    assert label(datetime(2026, 6, 30, tzinfo=UTC)).endswith("; the oldest is 43 days old")
    old = label(datetime(2027, 1, 15, tzinfo=UTC))
    assert old.endswith("; the oldest is 8 months old")
    assert in_chinese(old) == "报价日期 2026-05-18 至 2026-11-09；最旧的报价已有 8 个月"
    _, out = _run(capsys, "ask", SEED)  # today, offline: the table is months old
    price_line = next(line for line in out.splitlines() if line.startswith("Prices:"))
    assert "the oldest is" in price_line and "months old" in price_line


def test_doctor_reports_a_failed_last_refresh_as_a_failure(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from adapters.doctor.common import prices

    feeds = market()
    feeds.down()
    with serving(feeds, monkeypatch):
        code, _ = _run(capsys, "prices", "refresh")
    assert code == 1
    check = prices()
    assert (
        check.status == "fail" and "the last refresh" in check.detail and "failed" in check.detail
    )


def test_a_name_that_does_not_resolve_gives_up_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Offline: the resolver says the feed's host has no address (socket.getaddrinfo, as the OS
    answers it); the feed fails on its first request, with one line, not after every retry."""
    import asyncio
    import socket

    from bot.prices.feeds import chosen_feeds
    from bot.prices.refresh import refresh
    from bot.state.prices import MemoryPriceStore

    real = socket.getaddrinfo
    asked: list[str] = []

    def offline(host, *args, **kwargs):  # type: ignore[no-untyped-def]
        if host == "feeds.example.invalid":
            asked.append(host)
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        return real(host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", offline)
    monkeypatch.setenv("GPUPLAN_FEED_GPUHUNT_URL", "http://feeds.example.invalid/gpuhunt")
    monkeypatch.setenv("GPUPLAN_FEED_RUNPOD_URL", "http://feeds.example.invalid/runpod")
    snapshot = asyncio.run(refresh(MemoryPriceStore(), chosen_feeds("gpuhunt,runpod")))
    for name in ("gpuhunt", "runpod"):
        status = snapshot.feed(name)
        assert not status.ok and status.error == "feeds.example.invalid does not resolve (offline?)"
    assert 1 <= len(asked) <= 2  # at most one lookup per feed: no retry, no other catalog
