"""The price feeds, one small module each: where it lives, how to ask it, how to read its answer.

Each module has a pure `parse_*` that turns one answer into Offers (tested on the recorded
samples) and an async `fetch(http, base_url, now)` that does the requests.
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import TypeVar

from bot.prices.http import FeedHttp
from bot.prices.offers import Offer


@dataclass
class FeedFetch:
    """What one fetch of a feed got: its offers, how many rows it could not use, and the
    providers inside the feed that failed (gpuhunt publishes one catalog per provider)."""

    offers: list[Offer] = field(default_factory=list)
    skipped: int = 0
    failed_providers: dict[str, str] = field(default_factory=dict)
    # Providers the feed covers that answered this time (their older offers are replaced).
    answered_providers: set[str] = field(default_factory=set)


Row = TypeVar("Row")


def read_rows(rows: Iterable[Row], read: Callable[[Row], list[Offer]]) -> tuple[list[Offer], int]:
    """The offers `read` finds in each row, and how many rows gave none (skipped). A row that
    does not read (a NaN or absurd number, a field of the wrong type) is skipped and counted:
    one bad row never fails a feed."""
    offers: list[Offer] = []
    skipped = 0
    for row in rows:
        try:
            found = read(row)
        except (ValueError, TypeError, ArithmeticError, KeyError, AttributeError):
            found = []  # pydantic's ValidationError is a ValueError
        offers += found
        skipped += not found
    return offers, skipped


Fetch = Callable[[FeedHttp, str, datetime], Awaitable[FeedFetch]]


@dataclass(frozen=True)
class Feed:
    name: str
    default_base_url: str
    # Published request limit per minute (None: none published).
    requests_per_minute: int | None
    fetch: Fetch

    @property
    def url_env(self) -> str:
        return f"GPUPLAN_FEED_{self.name.upper()}_URL"

    def base_url(self) -> str:
        """The scheme, host and any path prefix the feed's own paths follow (tests point it at
        127.0.0.1)."""
        return (os.environ.get(self.url_env) or self.default_base_url).rstrip("/")


def all_feeds() -> tuple[Feed, ...]:
    from bot.prices.feeds import azure, gpuhunt, runpod, vastai

    return (gpuhunt.FEED, azure.FEED, runpod.FEED, vastai.FEED)


FEEDS_ENV = "GPUPLAN_FEEDS"


def chosen_feeds(names: str | None = None) -> tuple[Feed, ...]:
    """The feeds GPUPLAN_FEEDS (or `names`) picks, comma-separated; all when unset."""
    feeds = all_feeds()
    raw = names if names is not None else os.environ.get(FEEDS_ENV, "")
    wanted = [name.strip().lower() for name in raw.split(",") if name.strip()]
    if not wanted:
        return feeds
    known = {feed.name: feed for feed in feeds}
    unknown = [name for name in wanted if name not in known]
    if unknown:
        raise ValueError(
            f"{FEEDS_ENV}: unknown feed(s) {', '.join(unknown)}; the feeds are " + ", ".join(known)
        )
    return tuple(known[name] for name in dict.fromkeys(wanted))
