"""One refresh: every chosen feed fetched once, concurrently, into a new snapshot in the store.

A feed that fails (after its retries) keeps its last good offers in the snapshot, marked not ok
with its error; so does a feed that answers but gives no usable offer (an empty list, or rows
none of which read): "ok" with nothing would wipe what it last quoted. Feeds not chosen this time
(GPUPLAN_FEEDS) keep theirs untouched. The refresh "answered" when at least one feed did.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Sequence
from datetime import datetime

import aiohttp

from bot.prices.feeds import chosen_feeds
from bot.prices.feeds.feed import Feed, FeedFetch
from bot.prices.http import FeedError, FeedHttp, RateLimiter, Sleep
from bot.prices.offers import Offer, utc
from bot.prices.snapshot import FeedStatus, Snapshot, carried_offers
from bot.state.prices import PriceStore

logger = logging.getLogger(__name__)

# A feed that is still busy after this long is given up on (its requests have their own timeouts
# and retries; this bounds a feed that keeps paging or waiting on its rate limit).
FEED_DEADLINE_S = 300.0
SECONDS_PER_MINUTE = 60.0

Progress = Callable[[FeedStatus], None]


async def refresh(
    store: PriceStore,
    feeds: Sequence[Feed] | None = None,
    *,
    clock: Callable[[], float] = time.time,
    sleep: Sleep = asyncio.sleep,
    monotonic: Callable[[], float] = time.monotonic,
    progress: Progress | None = None,
    request_timeout_s: float | None = None,
    feed_deadline_s: float = FEED_DEADLINE_S,
) -> Snapshot:
    """Fetch `feeds` (GPUPLAN_FEEDS, else all), save and return the new snapshot."""
    feeds = tuple(feeds) if feeds is not None else chosen_feeds()
    previous = store.latest()
    now = utc(clock())
    options = {} if request_timeout_s is None else {"timeout_s": request_timeout_s}
    async with aiohttp.ClientSession() as session:

        async def one(feed: Feed) -> tuple[Feed, FeedFetch | str]:
            limiter = (
                RateLimiter(
                    feed.requests_per_minute, SECONDS_PER_MINUTE, clock=monotonic, sleep=sleep
                )
                if feed.requests_per_minute
                else None
            )
            http = FeedHttp(session, limiter=limiter, sleep=sleep, **options)
            outcome = await _fetch(feed, http, now, feed_deadline_s)
            if progress is not None:
                progress(_status(feed, outcome, previous, now)[0])
            return feed, outcome

        outcomes = await asyncio.gather(*(one(feed) for feed in feeds))
    snapshot = _snapshot(outcomes, previous, now)
    return store.save(snapshot)


async def _fetch(feed: Feed, http: FeedHttp, now: datetime, deadline_s: float) -> FeedFetch | str:
    """The feed's offers, or why it gave none."""
    try:
        fetched = await asyncio.wait_for(feed.fetch(http, feed.base_url(), now), deadline_s)
    except FeedError as error:
        return str(error)
    except TimeoutError:
        return f"still busy after {deadline_s:g} s"
    except Exception as error:  # a feed changing shape must not stop the other feeds
        logger.exception("the %s feed failed unexpectedly", feed.name)
        return f"unexpected {type(error).__name__}"
    if not fetched.offers:
        rows = f" ({fetched.skipped:,} rows, none usable)" if fetched.skipped else ""
        return f"answered with no usable offers{rows}"
    return fetched


def _status(
    feed: Feed, outcome: FeedFetch | str, previous: Snapshot | None, now: datetime
) -> tuple[FeedStatus, list[Offer]]:
    if isinstance(outcome, str):
        kept = carried_offers(previous, feed.name, None, now)
        newest = max((offer.fetched_at for offer in kept), default=None)
        return FeedStatus(feed.name, False, len(kept), newest, outcome), kept
    # Inside a feed, providers that failed this time keep their last good offers too.
    failed = set(outcome.failed_providers)
    kept = list(outcome.offers)
    if failed:
        kept += carried_offers(previous, feed.name, failed, now)
    error = "; ".join(f"{name}: {why}" for name, why in outcome.failed_providers.items())
    return FeedStatus(feed.name, True, len(kept), now, error or None, outcome.skipped), kept


def _snapshot(
    outcomes: Sequence[tuple[Feed, FeedFetch | str]], previous: Snapshot | None, now: datetime
) -> Snapshot:
    fetched = {feed.name for feed, _ in outcomes}
    statuses: list[FeedStatus] = []
    offers: list[Offer] = []
    for feed, outcome in outcomes:
        status, kept = _status(feed, outcome, previous, now)
        statuses.append(status)
        offers += kept
    if previous is not None:  # feeds not asked this time stay as they were
        statuses += [status for status in previous.feeds if status.name not in fetched]
        offers += [offer for offer in previous.offers if offer.feed not in fetched]
    return Snapshot(version=0, taken_at=now, offers=tuple(offers), feeds=tuple(statuses))
