"""gpuhunt's published v3 catalogs (dstack's S3 bucket, refreshed hourly): per provider, one
`version` GET and one `catalog.zip` GET holding `{provider}.csv` (README §3.1).

Rows: `price` is USD per hour for the whole instance; rows with `flags` (clusters, CPU-only,
calendar-mode capacity) are skipped, as are fractional and zero GPU counts; RunPod's community
offers are the ones located by country code rather than data centre.
"""

from __future__ import annotations

import csv
import io
import re
import zipfile
from datetime import datetime

from bot.prices.cards import AZURE_SKUS, RUNPOD_IDS, card_for, known_key
from bot.prices.feeds import Feed, FeedFetch, read_rows
from bot.prices.http import FeedError, FeedHttp, NotFound
from bot.prices.offers import Offer, PricingKind, offers_at

DEFAULT_BASE_URL = "https://dstack-gpu-pricing.s3.eu-west-1.amazonaws.com"
# gpuhunt's offline providers (catalog.py); one that answers 404 is skipped.
PROVIDERS = ("aws", "azure", "gcp", "lambdalabs", "nebius", "oci", "verda", "runpod", "cloudrift")
COLUMNS = ("instance_name", "location", "price", "gpu_count", "gpu_name", "gpu_memory", "spot")
GPU_VENDORS = frozenset({"nvidia", "amd"})
# "20260818-42": a date and a CI run number; anything else is not put into a URL.
_VERSION = re.compile(r"[A-Za-z0-9._-]{1,64}")
_COUNTRY_CODE = re.compile(r"[A-Z]{2}")


async def fetch(http: FeedHttp, base_url: str, now: datetime) -> FeedFetch:
    result = FeedFetch()
    for provider in PROVIDERS:
        try:
            url = await _catalog_url(http, base_url, provider)
            if url is None:
                continue
            offers, skipped = parse_catalog(await http.get_bytes(url), provider, now, url)
        except FeedError as error:
            result.failed_providers[provider] = str(error)
            continue
        result.offers += offers
        result.skipped += skipped
        result.answered_providers.add(provider)
    if not result.answered_providers:
        reasons = "; ".join(f"{p}: {e}" for p, e in result.failed_providers.items())
        raise FeedError(reasons or "no provider catalog published")
    return result


async def _catalog_url(http: FeedHttp, base_url: str, provider: str) -> str | None:
    try:
        raw = await http.get_bytes(f"{base_url}/v3/{provider}/version")
    except NotFound:
        return None
    version = raw.decode("utf-8", "replace").strip()
    if not _VERSION.fullmatch(version):
        raise FeedError(f"the version file holds {version[:40]!r}, not a version")
    return f"{base_url}/v3/{provider}/{version}/catalog.zip"


def parse_catalog(data: bytes, provider: str, now: datetime, url: str) -> tuple[list[Offer], int]:
    """The offers in one provider's catalog.zip, and how many rows were skipped."""
    name = f"{provider}.csv"
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            if name not in archive.namelist():
                raise FeedError(f"catalog.zip holds no {name}")
            text = archive.read(name).decode("utf-8")
    except (zipfile.BadZipFile, UnicodeDecodeError) as error:
        raise FeedError(f"catalog.zip is not a readable zip ({error})") from None
    return parse_csv(text, provider, now, url)


def parse_csv(text: str, provider: str, now: datetime, url: str) -> tuple[list[Offer], int]:
    reader = csv.DictReader(io.StringIO(text))
    missing = [column for column in COLUMNS if column not in (reader.fieldnames or ())]
    if missing:
        raise FeedError(f"{provider}.csv lacks column(s) {', '.join(missing)}")
    return read_rows(reader, lambda row: _offers(row, provider, now, url))


def _offers(row: dict[str, str], provider: str, now: datetime, url: str) -> list[Offer]:
    if (row.get("flags") or "").strip() or (row.get("gpu_vendor") or "") not in GPU_VENDORS:
        return []
    try:
        count_float = float(row["gpu_count"])
        price = float(row["price"])
        memory_gb = float(row["gpu_memory"]) if row["gpu_memory"] else None
    except (TypeError, ValueError):
        return []
    if count_float != int(count_float):
        return []  # a fractional GPU is not the card the planner sizes
    instance, location = row["instance_name"] or "", row["location"] or ""
    card = _card(provider, instance, row["gpu_name"] or "", memory_gb)
    if card is None:
        return []
    return offers_at(
        [(price, _pricing(provider, row["spot"], location), instance)],
        feed=FEED.name,
        provider=provider,
        gpu=card,
        gpu_vram_gb=memory_gb,
        gpu_count=int(count_float),
        region=location,
        fetched_at=now,
        source_url=url,
    )


def _card(provider: str, instance: str, gpu_name: str, memory_gb: float | None) -> str | None:
    # RunPod ids and Azure sizes tell SXM from PCIe where gpuhunt's compact names do not.
    if provider == "runpod" and instance in RUNPOD_IDS:
        return known_key(RUNPOD_IDS[instance])
    if provider == "azure" and instance in AZURE_SKUS:
        return known_key(AZURE_SKUS[instance][0])
    return card_for(gpu_name, memory_gb, instance)


def _pricing(provider: str, spot: str, location: str) -> PricingKind:
    if spot.strip().lower() == "true":
        return "spot"
    if provider == "runpod" and _COUNTRY_CODE.fullmatch(location):
        return "community"
    return "on_demand"


FEED = Feed(
    name="gpuhunt", default_base_url=DEFAULT_BASE_URL, requests_per_minute=None, fetch=fetch
)
