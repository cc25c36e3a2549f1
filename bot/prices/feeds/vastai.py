"""Vast.ai's `bundles` search (README §2.5): each offer is one host's machine, priced for all its
GPUs. `dph_total` (compute plus the default storage) is the on-demand ask, `min_bid` the current
minimum interruptible bid. Only verified, rentable, unrented offers on Vast's own machines are
kept: an unverified host's floor listing is not a price a team can count on. The search asks for
them as the Vast CLI's default query does (`verified=true external=false rentable=true`), so the
cheapest 1,000 it returns are already the offers we keep, not unverified ones crowding them out;
the answer is checked again row by row. Vast publishes 10 requests per minute.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from bot.prices.cards import card_for
from bot.prices.feeds.feed import Feed, FeedFetch, read_rows
from bot.prices.http import FeedError, FeedHttp
from bot.prices.offers import Offer, offers_at

DEFAULT_BASE_URL = "https://console.vast.ai"
PATH = "/api/v0/bundles/"
MB_PER_GB = 1024
OFFERS_PER_QUERY = 1000
# One query per group of cards, cheapest first: a single search ordered by price would fill its
# limit with cheap consumer cards and never reach an H100.
# Names as Vast spells them (its gpu_name values; README §2.5).
QUERY_GROUPS = (
    ("RTX 3090", "RTX 3090 Ti", "RTX 4090", "RTX 5090", "RTX 4080"),
    (
        "RTX A4000",
        "RTX A4500",
        "RTX A5000",
        "RTX A6000",
        "RTX 6000Ada",
        "RTX PRO 6000 WS",
        "RTX PRO 6000 S",
        "A40",
    ),
    ("L4", "L40", "L40S", "Tesla T4", "Tesla V100", "A10"),
    ("A100 PCIE", "A100 SXM4", "A100X", "H100 PCIE", "H100 SXM", "H100 NVL"),
    ("H200", "H200 NVL", "B200", "B300"),
)


def query(names: tuple[str, ...]) -> dict[str, Any]:
    return {
        "gpu_name": {"in": list(names)},
        "num_gpus": {"gte": 1},
        "verified": {"eq": True},
        "external": {"eq": False},
        "rentable": {"eq": True},
        "rented": {"eq": False},
        "order": [["dph_total", "asc"]],
        "limit": OFFERS_PER_QUERY,
    }


async def fetch(http: FeedHttp, base_url: str, now: datetime) -> FeedFetch:
    url = base_url + PATH
    result = FeedFetch(answered_providers={"vastai"})
    for names in QUERY_GROUPS:
        offers, skipped = parse_response(await http.post_json(url, query(names)), now, url)
        result.offers += offers
        result.skipped += skipped
    return result


def parse_response(body: Any, now: datetime, url: str) -> tuple[list[Offer], int]:
    found = body.get("offers") if isinstance(body, dict) else None
    if isinstance(found, dict):  # Vast's own docs show a single offer as an object
        found = [found]
    if not isinstance(found, list):
        raise FeedError("Vast.ai answered without an offers list")
    return read_rows(found, lambda row: _offers(row, now, url) if isinstance(row, dict) else [])


def _offers(item: dict[str, Any], now: datetime, url: str) -> list[Offer]:
    if (
        item.get("rentable") is not True
        or item.get("rented") is True
        or item.get("verification") != "verified"
        or item.get("external") is True
    ):
        return []
    count, ram_mb = item.get("num_gpus"), item.get("gpu_ram")
    if not isinstance(count, int) or count < 1:
        return []
    vram_gb = ram_mb / MB_PER_GB if isinstance(ram_mb, int | float) else None
    card = card_for(str(item.get("gpu_name") or ""), vram_gb)
    if card is None:
        return []
    instance = f"offer {item.get('id')}"
    region = str(item.get("geolocation") or "").rsplit(",", 1)[-1].strip()
    prices = [
        (item.get("dph_total"), "community", instance),
        (item.get("min_bid"), "bid", instance),
    ]
    return offers_at(
        prices,
        feed=FEED.name,
        provider="vastai",
        gpu=card,
        gpu_vram_gb=vram_gb,
        gpu_count=count,
        region=region,
        fetched_at=now,
        source_url=url,
        host=f"host {item['host_id']}" if item.get("host_id") is not None else "",
    )


FEED = Feed(name="vastai", default_base_url=DEFAULT_BASE_URL, requests_per_minute=10, fetch=fetch)
