"""The price feeds, one small module each: where it lives, how to ask it, how to read its answer.

Each module has a pure `parse_*` that turns one answer into Offers (tested on the recorded
samples) and an async `fetch(http, base_url, now)` that does the requests.
"""

from __future__ import annotations

import os

from bot.prices.feeds.feed import Feed


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
