"""Operator metrics in Prometheus's text format (prometheus-client), served at /metrics.

Recording is a no-op until a server calls `enable()`: a one-off answer (`gpuplan ask`) never
imports prometheus_client and pays nothing. Every name is under `gpuplan_`; the labels are few
and bounded (platform, a reply kind, an error kind, a store), never a user, channel or thread.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from bot.prices.snapshot import Snapshot

# Slack and Discord allow 3 s for an ack; most acks take milliseconds.
ACK_BUCKETS_S = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.0, 3.0, 5.0)
# An answer is a plan (tens of ms) plus posting it (a Slack or Discord round trip or several).
ANSWER_BUCKETS_S = (0.05, 0.1, 0.25, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0)
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"


@dataclass(frozen=True)
class _Metrics:
    registry: Any
    answered: Any
    errors: Any
    ack_s: Any
    answer_s: Any
    store_unavailable: Any
    store_round_trips: Any


_metrics: _Metrics | None = None
_lock = threading.Lock()


def enable(snapshot: Callable[[], Snapshot | None] | None = None) -> None:
    """Start recording (once per process); `snapshot` gives the price feeds' state at scrape."""
    global _metrics
    with _lock:
        if _metrics is not None:
            return
        from prometheus_client import CollectorRegistry, Counter, Histogram

        registry = CollectorRegistry()
        _metrics = _Metrics(
            registry=registry,
            answered=Counter(
                "gpuplan_questions_answered",
                "Answers delivered, by platform and reply kind (plan, clarify, error, …)",
                ["platform", "kind"],
                registry=registry,
            ),
            errors=Counter(
                "gpuplan_errors",
                "Failures by kind: plan_failed, answer_lost, unfinished_at_exit, …",
                ["platform", "kind"],
                registry=registry,
            ),
            ack_s=Histogram(
                "gpuplan_ack_seconds",
                "From a request's arrival to its ack (HTTP answer or interaction defer)",
                ["platform"],
                buckets=ACK_BUCKETS_S,
                registry=registry,
            ),
            answer_s=Histogram(
                "gpuplan_answer_seconds",
                "From a question's ack to its answer delivered",
                ["platform"],
                buckets=ANSWER_BUCKETS_S,
                registry=registry,
            ),
            store_unavailable=Counter(
                "gpuplan_store_unavailable",
                "Times the shared store could not be used, by store and kind (connection, "
                "timeout, out_of_memory, read_only, loading, busy)",
                ["store", "kind"],
                registry=registry,
            ),
            store_round_trips=Counter(
                "gpuplan_store_round_trips",
                "Commands or pipelines sent to the shared store (one round trip each)",
                ["store"],
                registry=registry,
            ),
        )
        if snapshot is not None:
            registry.register(_FeedCollector(snapshot))


def exposition() -> bytes:
    """The current figures in Prometheus's text format (empty before `enable`)."""
    if _metrics is None:
        return b""
    from prometheus_client import generate_latest

    return generate_latest(_metrics.registry)


def answered(platform: str, kind: str) -> None:
    if _metrics is not None:
        _metrics.answered.labels(platform, kind).inc()


def error(platform: str, kind: str) -> None:
    if _metrics is not None:
        _metrics.errors.labels(platform, kind).inc()


def ack(platform: str, seconds: float) -> None:
    if _metrics is not None:
        _metrics.ack_s.labels(platform).observe(seconds)


def answer_time(platform: str, seconds: float) -> None:
    if _metrics is not None:
        _metrics.answer_s.labels(platform).observe(seconds)


def store_unavailable(store: str, kind: str) -> None:
    if _metrics is not None:
        _metrics.store_unavailable.labels(store, kind).inc()


def store_round_trip(store: str) -> None:
    if _metrics is not None:
        _metrics.store_round_trips.labels(store).inc()


class _FeedCollector:
    """Each price feed's state when scraped: whether its last fetch worked, and the age of the
    offers it serves (what the answers' "prices from …, 2 h ago" line says)."""

    def __init__(self, snapshot: Callable[[], Snapshot | None]) -> None:
        self._snapshot = snapshot

    def collect(self) -> Any:
        from prometheus_client.core import GaugeMetricFamily

        ok = GaugeMetricFamily(
            "gpuplan_price_feed_ok", "1 if the feed's last refresh worked", labels=["feed"]
        )
        age = GaugeMetricFamily(
            "gpuplan_price_feed_age_seconds",
            "Age of the offers the feed serves (its last good fetch)",
            labels=["feed"],
        )
        try:
            snapshot = self._snapshot()
        except Exception:  # a scrape must never fail on the price store
            snapshot = None
        now = datetime.now(UTC)
        for feed in snapshot.feeds if snapshot else ():
            ok.add_metric([feed.name], 1.0 if feed.ok else 0.0)
            if feed.fetched_at is not None:
                age.add_metric([feed.name], (now - feed.fetched_at).total_seconds())
        return [ok, age]
