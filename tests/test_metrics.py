"""GET /metrics: Prometheus text from prometheus-client, with the figures an operator watches."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import aiohttp
import pytest
from prometheus_client.parser import text_string_to_metric_families

from adapters.metrics_http import METRICS_PATH, METRICS_PORT_ENV, serve_metrics_from_env
from bot import metrics
from bot.conversation import Conversation
from bot.prices.snapshot import FeedStatus, Snapshot
from bot.state.errors import StoreUnavailable
from bot.state.redis_link import RedisLink
from bot.state.threads import MemoryStore
from tests.fakes.slack_api import FakeSlack
from tests.redis_server import RedisServer
from tests.test_slack_app import Bot


def _samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


async def test_the_slack_server_serves_metrics_in_prometheus_text(slack: FakeSlack) -> None:
    metrics.enable()
    async with Bot(slack, Conversation(MemoryStore(), limit_rate=False)) as bot:
        await bot.slash("7B LoRA on a 4090", trigger="m.1")
        await slack.wait_for(lambda: slack.responses)
        async with aiohttp.ClientSession() as http:
            base = bot.url.rsplit("/slack/", 1)[0]
            async with http.get(base + METRICS_PATH) as response:
                assert response.status == 200
                assert response.content_type == "text/plain"
                samples = _samples(await response.text())
    on_slack = (("platform", "slack"),)
    assert samples[("gpuplan_questions_answered_total", (("kind", "plan"), *on_slack))] >= 1
    assert samples[("gpuplan_ack_seconds_count", on_slack)] >= 1
    assert samples[("gpuplan_answer_seconds_count", on_slack)] >= 1


def test_store_unavailability_is_counted_by_kind(tmp_path: Path) -> None:
    metrics.enable()
    server = RedisServer(tmp_path / "redis").start()
    link = RedisLink(server.url)
    server.kill()
    with pytest.raises(StoreUnavailable):
        link.run(lambda client: client.get("gpuplan:probe"))
    samples = _samples(metrics.exposition().decode())
    labels = (("kind", "connection"), ("store", "redis"))
    assert samples[("gpuplan_store_unavailable_total", labels)] >= 1
    assert samples[("gpuplan_store_round_trips_total", (("store", "redis"),))] >= 1


def test_feed_freshness_is_read_from_the_price_snapshot_at_scrape() -> None:
    now = datetime.now(UTC)
    snapshot = Snapshot(
        version=3,
        taken_at=now,
        offers=(),
        feeds=(
            FeedStatus("runpod", ok=True, offers=12, fetched_at=now - timedelta(hours=2)),
            FeedStatus("vastai", ok=False, offers=0, fetched_at=None, error="HTTP 503"),
        ),
    )
    collected = {
        (sample.name, sample.labels["feed"]): sample.value
        for family in metrics._FeedCollector(lambda: snapshot).collect()
        for sample in family.samples
    }
    assert collected[("gpuplan_price_feed_ok", "runpod")] == 1.0
    assert collected[("gpuplan_price_feed_ok", "vastai")] == 0.0
    assert 7100 < collected[("gpuplan_price_feed_age_seconds", "runpod")] < 7300
    assert ("gpuplan_price_feed_age_seconds", "vastai") not in collected


async def test_bots_without_an_http_server_serve_metrics_on_their_own_port(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    metrics.enable()
    monkeypatch.setenv(METRICS_PORT_ENV, "0")  # any free port
    runner = await serve_metrics_from_env("discord")
    assert runner is not None
    try:
        port = runner.addresses[0][1]
        assert f":{port}{METRICS_PATH}" in capsys.readouterr().out
        async with (
            aiohttp.ClientSession() as http,
            http.get(f"http://127.0.0.1:{port}{METRICS_PATH}") as response,
        ):
            assert response.status == 200 and "gpuplan_ack_seconds" in await response.text()
    finally:
        await runner.cleanup()
    monkeypatch.setenv(METRICS_PORT_ENV, "http")
    assert await serve_metrics_from_env("discord") is None
    assert "GPUPLAN_METRICS_PORT is not a port" in capsys.readouterr().err
