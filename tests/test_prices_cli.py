"""`gpuplan prices refresh | [CARD] | --json` and the issue's "done when": after a refresh against
feeds that price an RTX 4090 at $0.34 on-demand and $0.29 spot, `gpuplan ask --json` prices the
4090 at $0.34 dated today, at $0.29 when spot is fine, and with every feed down the next refresh
exits 1 while answers keep $0.34."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime

import pytest

from adapters.cli import main
from tests.fakes.price_feeds import FeedServer, serving
from tests.price_market import market

SEED = "13B QLoRA, 4k ctx, 20M tokens x3"
CARD_KEYS = [
    "gpu",
    "cheapest_usd_per_hour",
    "cheapest_provider",
    "median_usd_per_hour",
    "providers",
    "provider_names",
    "spot_usd_per_hour",
    "fetched_at",
    "stale",
    "source_url",
    "dropped",
]
FEED_KEYS = ["name", "ok", "offers", "fetched_at", "error", "skipped"]


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[FeedServer]:
    monkeypatch.setattr("bot.prices.http.BACKOFF_S", 0.0)  # retries without waiting
    with serving(market(), monkeypatch) as running:
        yield running


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _rtx4090(capsys: pytest.CaptureFixture[str], question: str):
    code, out, _ = _run(capsys, "ask", "--json", question)
    assert code == 0
    plan = json.loads(out)
    return plan, next(o for o in plan["options"] if o["gpu"] == "rtx4090" and o["count"] == 1)


def test_done_when(server: FeedServer, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(capsys, "prices", "refresh")
    assert code == 0, out
    assert "gpuhunt: 2 offers" in out and "4 of 4 feeds answered" in out
    today = datetime.now(UTC).date().isoformat()

    plan, rtx4090 = _rtx4090(capsys, SEED)
    assert rtx4090["usd_per_hour"] == 0.34 and rtx4090["pricing"] == "on_demand"
    assert rtx4090["price_date"].startswith(today)
    # Who, what kind and when: never a feed's URL or a research note.
    assert rtx4090["price_source"].startswith(f"RunPod (community, on-demand; {today}")
    assert plan["price_date"].startswith("live quotes from 5 providers")

    plan, spot = _rtx4090(capsys, SEED + ", spot is fine")
    assert plan["spec"]["pricing"] == "spot"
    assert spot["usd_per_hour"] == 0.29 and spot["pricing"] == "spot"
    assert any("checkpoint" in line for line in plan["assumptions"])
    cheapest = plan["recommendation"]["cheapest"]
    spot_said = f"${cheapest['usd_per_hour']:.2f}/GPU-h spot" in plan["recommendation"]["summary"]
    assert spot_said == (cheapest["pricing"] == "spot")

    server.feeds.down()
    code, out, err = _run(capsys, "prices", "refresh")
    assert code == 1
    assert "0 of 4 feeds answered" in out and "failed — HTTP 500" in out
    assert "answers keep the last good prices" in err
    _, rtx4090 = _rtx4090(capsys, SEED)
    assert rtx4090["usd_per_hour"] == 0.34


def test_prices_json_has_the_documented_shape(
    server: FeedServer, capsys: pytest.CaptureFixture[str]
) -> None:
    server.feeds.modes["azure"] = "500"
    assert _run(capsys, "prices", "refresh")[0] == 0
    code, out, _ = _run(capsys, "prices", "--json")
    document = json.loads(out)
    assert code == 0 and list(document) == ["cards", "feeds", "source"]
    assert all(list(card) == CARD_KEYS for card in document["cards"])
    assert all(list(feed) == FEED_KEYS for feed in document["feeds"])
    rtx4090 = next(card for card in document["cards"] if card["gpu"] == "rtx4090")
    assert rtx4090 | {"fetched_at": None, "source_url": None} == {
        "gpu": "rtx4090",
        "cheapest_usd_per_hour": 0.34,
        "cheapest_provider": "RunPod",
        "median_usd_per_hour": 0.39,
        "providers": 2,
        "provider_names": ["RunPod", "Vast.ai"],
        "spot_usd_per_hour": 0.29,
        "fetched_at": None,
        "stale": False,
        "source_url": None,
        "dropped": {"implausible": 0, "outliers": 0},
    }
    azure = next(feed for feed in document["feeds"] if feed["name"] == "azure")
    assert azure == {
        "name": "azure",
        "ok": False,
        "offers": 0,
        "fetched_at": None,
        "error": azure["error"],
        "skipped": 0,
    }
    assert "HTTP 500" in azure["error"]


def test_prices_table_for_one_card_and_for_all(
    server: FeedServer, capsys: pytest.CaptureFixture[str]
) -> None:
    _run(capsys, "prices", "refresh")
    code, out, _ = _run(capsys, "prices", "4090")
    assert code == 0
    lines = out.splitlines()
    assert lines[0].split() == [
        "card",
        "cheapest",
        "provider",
        "median",
        "providers",
        "spot",
        "age",
    ]
    assert lines[1].split()[:6] == ["GeForce", "RTX", "4090", "$0.34", "RunPod", "$0.39"]
    assert len([line for line in lines if line.startswith("GeForce")]) == 1
    code, out, _ = _run(capsys, "prices")
    assert "H100 SXM5 80GB" in out and "B200" in out and "just now" in out


def test_prices_says_what_to_do_before_any_refresh(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(capsys, "prices")
    assert code == 0 and "gpuplan prices refresh" in out
    code, _, err = _run(capsys, "prices", "no such card")
    assert code == 2 and "unknown card" in err


def test_unknown_feed_name_is_refused(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("GPUPLAN_FEEDS", "azure,nosuch")
    code, _, err = _run(capsys, "prices", "refresh")
    assert code == 2 and "unknown feed(s) nosuch" in err


def test_doctor_reports_the_live_snapshot(
    server: FeedServer, capsys: pytest.CaptureFixture[str]
) -> None:
    from adapters.doctor import common

    assert "no live feeds yet" in common.prices().detail
    _run(capsys, "prices", "refresh")
    check = common.prices()
    assert check.detail.startswith(
        "live feeds: 18 offers from 5 providers, newest fetched just now"
    )
    assert "vastai ok" in check.detail
    server.feeds.modes["vastai"] = "500"
    _run(capsys, "prices", "refresh")
    assert "vastai failed" in common.prices().detail and common.prices().fix
