"""The Azure Retail Prices API (no credentials; README §2.1): one filtered query per GPU VM size
Azure rents, paged by NextPageLink (or `$skip` when a full page comes without one).

`retailPrice` is USD per hour for the whole VM; the GPU count comes from cards.AZURE_SKUS, since
the API does not say it. Kept: Linux pay-as-you-go rows, spot when the meter or SKU name says
"Spot". Dropped: Windows (" Win" catches "Srs Win" too), Low Priority, DevTest and reservation
rows, dedicated hosts, zero prices, anything not per hour in USD, regions outside Azure's public
commercial cloud (US Government and DoD regions price separately and rent only to government
customers: armRegionName usgov*/usdod*/ussec*/usnat*), and duplicate meters: the API can list one
size in one region at one pricing under several meters (a non-primary meter region, a renamed
meter), which are one offer.
"""

from __future__ import annotations

import asyncio
from datetime import datetime
from typing import Any
from urllib.parse import urlsplit

from bot.prices.cards import AZURE_SKUS, known_key
from bot.prices.feeds.feed import Feed, FeedFetch, read_rows
from bot.prices.http import FeedError, FeedHttp
from bot.prices.offers import Offer, offers_at

DEFAULT_BASE_URL = "https://prices.azure.com"
PATH = "/api/retail/prices"
API_VERSION = "2023-01-01-preview"
PAGE_ITEMS = 1000
MAX_PAGES = 20  # one VM size has a few hundred rows across regions; more means a broken walk
PARALLEL_QUERIES = 4
_DROPPED_PRODUCT_WORDS = (" Win", "Dedicated", "Cloud Services", "CloudServices")


async def fetch(http: FeedHttp, base_url: str, now: datetime) -> FeedFetch:
    gate = asyncio.Semaphore(PARALLEL_QUERIES)

    async def one(sku: str) -> list[dict[str, Any]]:
        async with gate:
            return await _items(http, base_url, sku)

    pages = await asyncio.gather(*(one(sku) for sku in AZURE_SKUS))
    offers, skipped = parse_items([item for items in pages for item in items], now, base_url + PATH)
    return FeedFetch(offers=offers, skipped=skipped, answered_providers={"azure"})


async def _items(http: FeedHttp, base_url: str, sku: str) -> list[dict[str, Any]]:
    query = (
        "serviceName eq 'Virtual Machines' and priceType eq 'Consumption' "
        f"and armSkuName eq '{sku}'"
    )
    url: str | None = base_url + PATH
    params: dict[str, str] | None = {"$filter": query, "api-version": API_VERSION}
    items: list[dict[str, Any]] = []
    for page in range(MAX_PAGES):
        body = await http.get_json(url, params) if url else None
        if not isinstance(body, dict) or not isinstance(body.get("Items"), list):
            raise FeedError("Azure answered without an Items list")
        page_items = [item for item in body["Items"] if isinstance(item, dict)]
        items += page_items
        link = body.get("NextPageLink")
        if isinstance(link, str) and link:
            url, params = _same_host(link, base_url), None
        elif len(page_items) >= PAGE_ITEMS:
            # NextPageLink has come back empty on full pages before (README §2.1): step $skip.
            url = base_url + PATH
            params = {
                "$filter": query,
                "api-version": API_VERSION,
                "$skip": str((page + 1) * PAGE_ITEMS),
            }
        else:
            return items
    raise FeedError(f"Azure kept paging past {MAX_PAGES} pages for {sku}")


def _same_host(link: str, base_url: str) -> str:
    """The next page on the configured host: only the link's path and query are used."""
    parts = urlsplit(link)
    if not parts.path.endswith(PATH):
        raise FeedError(f"Azure's NextPageLink points elsewhere ({parts.path[:60]})")
    return f"{base_url}{PATH}?{parts.query}"


# armRegionName prefixes of the sovereign clouds the Retail Prices API also lists.
NOT_PUBLIC_REGION_PREFIXES = ("usgov", "usdod", "ussec", "usnat")


def parse_items(items: list[dict[str, Any]], now: datetime, url: str) -> tuple[list[Offer], int]:
    offers, skipped = read_rows(items, lambda item: _offers(item, now, url))
    merged: dict[tuple[str, str, str], Offer] = {}
    for offer in offers:  # the cheapest of a size's duplicate meters in one region
        key = (offer.instance, offer.region, offer.pricing)
        if key not in merged or offer.usd_per_hour < merged[key].usd_per_hour:
            merged[key] = offer
    return list(merged.values()), skipped + len(offers) - len(merged)


def _offers(item: dict[str, Any], now: datetime, url: str) -> list[Offer]:
    text = {name: str(item.get(name) or "") for name in ("meterName", "skuName", "productName")}
    if (
        item.get("currencyCode") != "USD"
        or item.get("unitOfMeasure") != "1 Hour"
        or item.get("type") != "Consumption"
        or any(word in text["productName"] for word in _DROPPED_PRODUCT_WORDS)
        or "Low Priority" in text["meterName"] + text["skuName"]
        or str(item.get("armRegionName") or "").startswith(NOT_PUBLIC_REGION_PREFIXES)
    ):
        return []
    sku = str(item.get("armSkuName") or "")
    if sku not in AZURE_SKUS:
        return []
    card, count = AZURE_SKUS[sku]
    price = item.get("retailPrice")
    if known_key(card) is None:
        return []
    spot = "Spot" in text["meterName"] + text["skuName"]
    return offers_at(
        [(price, "spot" if spot else "on_demand", sku)],
        feed=FEED.name,
        provider="azure",
        gpu=card,
        gpu_vram_gb=None,
        gpu_count=count,
        region=str(item.get("armRegionName") or ""),
        fetched_at=now,
        source_url=url,
    )


FEED = Feed(name="azure", default_base_url=DEFAULT_BASE_URL, requests_per_minute=None, fetch=fetch)
