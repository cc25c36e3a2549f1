"""RunPod's GraphQL `gpuTypes` (README §2.4): prices are USD per GPU-hour. Secure Cloud and
Community Cloud prices are on-demand; the spot prices and the minimum bid are interruptible. A
type whose `lowestPrice.stockStatus` is null has nothing to rent right now and is skipped.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from bot.prices.cards import RUNPOD_IDS, card_for, known_key
from bot.prices.feeds import Feed, FeedFetch, read_rows
from bot.prices.http import FeedError, FeedHttp
from bot.prices.offers import Offer, PricingKind, offers_at

DEFAULT_BASE_URL = "https://api.runpod.io"
PATH = "/graphql"
QUERY = """query GpuTypes {
  gpuTypes {
    id displayName memoryInGb
    securePrice communityPrice secureSpotPrice communitySpotPrice
    lowestPrice(input: {gpuCount: 1}) { minimumBidPrice uninterruptablePrice stockStatus }
  }
}"""
# (field, pricing, what the instance is called)
PRICE_FIELDS: tuple[tuple[str, PricingKind, str], ...] = (
    ("securePrice", "on_demand", "secure cloud"),
    ("communityPrice", "community", "community cloud"),
    ("secureSpotPrice", "spot", "secure cloud spot"),
    ("communitySpotPrice", "spot", "community cloud spot"),
)


async def fetch(http: FeedHttp, base_url: str, now: datetime) -> FeedFetch:
    url = base_url + PATH
    offers, skipped = parse_response(await http.post_json(url, {"query": QUERY}), now, url)
    return FeedFetch(offers=offers, skipped=skipped, answered_providers={"runpod"})


def parse_response(body: Any, now: datetime, url: str) -> tuple[list[Offer], int]:
    data = body.get("data") if isinstance(body, dict) else None
    types = data.get("gpuTypes") if isinstance(data, dict) else None
    if not isinstance(types, list):
        errors = body.get("errors") if isinstance(body, dict) else None
        first = errors[0].get("message") if errors and isinstance(errors[0], dict) else None
        raise FeedError(f"RunPod answered no gpuTypes ({first or 'unexpected shape'})")
    return read_rows(types, lambda row: _offers(row, now, url) if isinstance(row, dict) else [])


def _offers(gpu_type: dict[str, Any], now: datetime, url: str) -> list[Offer]:
    lowest = gpu_type.get("lowestPrice") or {}
    if not isinstance(lowest, dict) or lowest.get("stockStatus") is None:
        return []
    type_id = str(gpu_type.get("id") or "")
    memory = gpu_type.get("memoryInGb")
    memory_gb = float(memory) if isinstance(memory, int | float) else None
    card = known_key(RUNPOD_IDS[type_id]) if type_id in RUNPOD_IDS else None
    card = card or card_for(str(gpu_type.get("displayName") or ""), memory_gb)
    if card is None:
        return []
    prices = [
        (gpu_type.get(name), pricing, f"{type_id} ({where})")
        for name, pricing, where in PRICE_FIELDS
    ]
    prices.append((lowest.get("minimumBidPrice"), "bid", f"{type_id} (minimum bid)"))
    return offers_at(
        prices,
        feed=FEED.name,
        provider="runpod",
        gpu=card,
        gpu_vram_gb=memory_gb,
        gpu_count=1,
        region="",
        fetched_at=now,
        source_url=url,
    )


FEED = Feed(name="runpod", default_base_url=DEFAULT_BASE_URL, requests_per_minute=None, fetch=fetch)
