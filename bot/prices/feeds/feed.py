"""What every price feed is: where it lives, how to fetch it, and what one fetch got (the shared
shapes the feed modules build on, kept apart from the package so the feeds and the list of them
do not import each other)."""

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
