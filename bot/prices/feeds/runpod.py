"""RunPod's GraphQL `gpuTypes` (README §2.4): prices are USD per GPU-hour. Secure Cloud and
Community Cloud prices are on-demand; the spot prices and the minimum bid are interruptible.

A tier is priced only when it has stock. `lowestPrice` asked per tier (`secureCloud: true` and
`false`, aliased secureLowest / communityLowest) says which tiers have some: a tier whose
`stockStatus` is null has nothing to rent now and is not quoted (a third-party read of the API in
2026-08 showed B200 and B300 community prices with no community capacity). A response with only
the combined `lowestPrice` (the recorded shape) tells only that the cheapest stocked tier costs
its `uninterruptablePrice`: that tier alone is priced. A spot price or minimum bid that equals
its tier's on-demand price is not a spot discount (RunPod's interruptible rate often repeats it)
and is not quoted as one.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from bot.prices.cards import RUNPOD_IDS, card_for, known_key
from bot.prices.feeds.feed import Feed, FeedFetch, read_rows
from bot.prices.http import FeedError, FeedHttp
from bot.prices.offers import Offer, PricingKind, offers_at

DEFAULT_BASE_URL = "https://api.runpod.io"
PATH = "/graphql"
_STOCK = "minimumBidPrice uninterruptablePrice stockStatus"
QUERY = f"""query GpuTypes {{
  gpuTypes {{
    id displayName memoryInGb
    securePrice communityPrice secureSpotPrice communitySpotPrice
    lowestPrice(input: {{gpuCount: 1}}) {{ {_STOCK} }}
    secureLowest: lowestPrice(input: {{gpuCount: 1, secureCloud: true}}) {{ {_STOCK} }}
    communityLowest: lowestPrice(input: {{gpuCount: 1, secureCloud: false}}) {{ {_STOCK} }}
  }}
}}"""


# (price field, spot field, per-tier lowestPrice alias, pricing, what the instance is called)
TIERS: tuple[tuple[str, str, str, PricingKind, str], ...] = (
    ("securePrice", "secureSpotPrice", "secureLowest", "on_demand", "secure cloud"),
    ("communityPrice", "communitySpotPrice", "communityLowest", "community", "community cloud"),
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
    type_id = str(gpu_type.get("id") or "")
    memory = gpu_type.get("memoryInGb")
    memory_gb = float(memory) if isinstance(memory, int | float) else None
    card = known_key(RUNPOD_IDS[type_id]) if type_id in RUNPOD_IDS else None
    card = card or card_for(str(gpu_type.get("displayName") or ""), memory_gb)
    if card is None:
        return []
    prices: list[tuple[object, PricingKind, str]] = []
    for price_field, spot_field, _, pricing, where in TIERS:
        stock = _stocked(gpu_type, price_field)
        if stock is None:
            continue
        on_demand = gpu_type.get(price_field)
        prices.append((on_demand, pricing, f"{type_id} ({where})"))
        for spot, kind, name in (
            (gpu_type.get(spot_field), "spot", f"{where} spot"),
            (stock.get("minimumBidPrice"), "bid", f"{where} minimum bid"),
        ):
            if spot != on_demand:
                prices.append((spot, kind, f"{type_id} ({name})"))
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


def _stocked(gpu_type: dict[str, Any], price_field: str) -> dict[str, Any] | None:
    """The lowestPrice that says the tier of `price_field` has stock now; None when it has none
    or the response cannot tell."""
    alias = next(tier[2] for tier in TIERS if tier[0] == price_field)
    if any(tier[2] in gpu_type for tier in TIERS):  # asked per tier
        per_tier = gpu_type.get(alias)
        return per_tier if _has_stock(per_tier) else None
    combined = gpu_type.get("lowestPrice")
    if not _has_stock(combined):
        return None
    price = gpu_type.get(price_field)
    return combined if price is not None and combined.get("uninterruptablePrice") == price else None


def _has_stock(lowest: object) -> bool:
    return isinstance(lowest, dict) and lowest.get("stockStatus") is not None


FEED = Feed(name="runpod", default_base_url=DEFAULT_BASE_URL, requests_per_minute=None, fetch=fetch)
