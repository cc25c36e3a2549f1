"""A snapshot: every offer the last refreshes got, each with its fetch time, and how each feed
fared. Offers are kept per feed (and per provider inside gpuhunt): a feed that fails keeps its
last good offers, so one feed's outage does not drop its providers from answers.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime, timedelta

from pydantic import TypeAdapter

from bot.prices.offers import Offer

# A feed down this long no longer speaks for its providers: its offers are dropped and the
# bundled table (or another feed) prices those cards.
MAX_CARRIED_AGE = timedelta(days=7)


@dataclass(frozen=True)
class FeedStatus:
    name: str
    ok: bool
    offers: int  # offers from this feed in the snapshot (its last good ones when it failed)
    fetched_at: datetime | None  # when those offers were fetched; None if never
    error: str | None = None
    skipped: int = 0  # rows the feed sent that we could not use (unknown card, flags, …)


@dataclass(frozen=True)
class Snapshot:
    version: int  # grows with every saved refresh; 0 before one is saved
    taken_at: datetime
    offers: tuple[Offer, ...]
    feeds: tuple[FeedStatus, ...]

    def feed(self, name: str) -> FeedStatus | None:
        return next((status for status in self.feeds if status.name == name), None)

    @property
    def any_ok(self) -> bool:
        return any(status.ok for status in self.feeds)


OFFERS = TypeAdapter(tuple[Offer, ...])


def carried_offers(
    previous: Snapshot | None, feed: str, providers: set[str] | None, now: datetime
) -> list[Offer]:
    """The previous snapshot's offers from `feed` (only `providers`, if given) young enough to
    keep serving."""
    if previous is None:
        return []
    return [
        offer
        for offer in previous.offers
        if offer.feed == feed
        and (providers is None or offer.provider in providers)
        and now - offer.fetched_at <= MAX_CARRIED_AGE
    ]


def with_version(snapshot: Snapshot, version: int) -> Snapshot:
    return replace(snapshot, version=version)
