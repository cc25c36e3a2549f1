"""The price store and the settings store keep one contract on every backend: the SQLite state
file, memory, and a real redis-server (GPUPLAN_STATE_URL), opened the way the bots open them."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from bot.prices.offers import make_offer
from bot.prices.snapshot import FeedStatus, Snapshot
from bot.state.prices import MemoryPriceStore, PriceStore, open_price_store, refresh_store
from bot.state.settings import MemorySettings, SettingsStore, open_settings_store

FETCHED = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)


@pytest.fixture(params=["sqlite", "redis", "memory"])
def backend(request: pytest.FixtureRequest, tmp_path: Path, monkeypatch) -> str:
    monkeypatch.setenv("GPUPLAN_STATE_DIR", str(tmp_path))
    if request.param == "redis":
        monkeypatch.setenv("GPUPLAN_STATE_URL", request.getfixturevalue("redis_url"))
    else:
        monkeypatch.delenv("GPUPLAN_STATE_URL", raising=False)
    return request.param


def _price_store(backend: str) -> PriceStore:
    return MemoryPriceStore() if backend == "memory" else refresh_store()


def _settings(backend: str) -> SettingsStore:
    return MemorySettings() if backend == "memory" else open_settings_store()


def _snapshot(usd: float) -> Snapshot:
    offer = make_offer(
        feed="runpod",
        provider="runpod",
        instance="NVIDIA GeForce RTX 4090 (community cloud)",
        gpu="rtx4090",
        gpu_vram_gb=24,
        gpu_count=1,
        usd_per_hour=usd,
        pricing="community",
        region="",
        fetched_at=FETCHED,
        source_url="http://127.0.0.1/graphql",
    )
    status = FeedStatus("runpod", True, 1, FETCHED, None, 2)
    return Snapshot(
        0, FETCHED, (offer,), (status, FeedStatus("vastai", False, 0, None, "HTTP 500"))
    )


def test_snapshots_round_trip_and_versions_grow(backend: str) -> None:
    store = _price_store(backend)
    assert store.latest() is None and store.latest_version() == 0
    first = store.save(_snapshot(0.34))
    second = store.save(_snapshot(0.36))
    assert (first.version, second.version) == (1, 2) and store.latest_version() == 2
    latest = store.latest()
    assert latest == second and latest.offers[0].usd_per_gpu_hour == 0.36
    assert latest.feeds[1].error == "HTTP 500" and latest.feeds[0].skipped == 2


def test_the_refresh_lock_admits_one_holder_until_it_expires(backend: str) -> None:
    store = _price_store(backend)
    now = 1_000_000.0 if backend != "redis" else 0.0  # Redis expires the key on its own clock
    assert store.try_lock("price-refresh", "a", now + 60, now)
    assert not store.try_lock("price-refresh", "b", now + 60, now)
    assert store.try_lock("price-refresh", "a", now + 60, now)  # the holder renews


def test_settings_round_trip_per_scope(backend: str) -> None:
    settings = _settings(backend)
    settings.put("slack/T1", "providers", "runpod,vastai", by="U1")
    settings.put("discord/G1", "providers", "aws", by="U2")
    assert settings.get("slack/T1", "providers") == "runpod,vastai"
    assert settings.all("discord/G1") == {"providers": "aws"}
    settings.put("slack/T1", "providers", None)
    assert settings.get("slack/T1", "providers") is None and settings.all("slack/T1") == {}


def test_answers_find_the_snapshot_a_refresh_saved(backend: str) -> None:
    if backend == "memory":
        pytest.skip("memory is one process's own")
    refresh_store().save(_snapshot(0.34))
    store = open_price_store()
    assert store is not None and store.latest().offers[0].gpu == "rtx4090"


def test_a_one_off_answer_creates_no_state_file(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("GPUPLAN_STATE_DIR", str(tmp_path / "fresh"))
    assert open_price_store() is None and not (tmp_path / "fresh").exists()
