"""gpuhunt's published v3 catalogs (dstack's S3 bucket, refreshed hourly): per provider, one
`version` GET and one `catalog.zip` GET holding `{provider}.csv` (README §3.1).

Rows: `price` is USD per hour for the whole instance; rows with `flags` (clusters, CPU-only,
calendar-mode capacity) are skipped, as are fractional and zero GPU counts and rows that do not
parse (each counted, never failing the catalog); RunPod's community offers are the ones located
by country code rather than data centre.

Dates: each provider's catalog is published on its own, and one whose collector fails stays in
place, as old as it is. Its version (`20260818-42`: the day and the CI run) dates it, so its
offers' `fetched_at` is that day (00:00 UTC, never later than now), not the refresh time: a
month-old catalog is a month old to the warnings and the seven-day cut-off.

Size: the zip is read as a stream and its CSV decompressed up to MAX_CSV_BYTES (the largest real
catalog is a few MB): a zip bomb is refused, and a refresh's memory stays bounded.
"""

from __future__ import annotations

import csv
import io
import re
import zipfile
from datetime import UTC, datetime
from typing import IO, Any

from bot.prices.cards import AZURE_SKUS, RUNPOD_IDS, card_for, known_key
from bot.prices.feeds.feed import Feed, FeedFetch, read_rows
from bot.prices.http import FeedError, FeedHttp, NotFound, Unreachable
from bot.prices.offers import Offer, PricingKind, offers_at

DEFAULT_BASE_URL = "https://dstack-gpu-pricing.s3.eu-west-1.amazonaws.com"
# gpuhunt's offline providers (catalog.py); one that answers 404 is skipped.
PROVIDERS = ("aws", "azure", "gcp", "lambdalabs", "nebius", "oci", "verda", "runpod", "cloudrift")
COLUMNS = ("instance_name", "location", "price", "gpu_count", "gpu_name", "gpu_memory", "spot")
GPU_VENDORS = frozenset({"nvidia", "amd"})
# "20260818-42": a date and a CI run number; anything else is not put into a URL.
_VERSION = re.compile(r"(\d{8})-\d{1,9}")
MAX_CSV_BYTES = 32 * 1024 * 1024
_READ_CHUNK_BYTES = 1 << 16
_COUNTRY_CODE = re.compile(r"[A-Z]{2}")


async def fetch(http: FeedHttp, base_url: str, now: datetime) -> FeedFetch:
    result = FeedFetch()
    for provider in PROVIDERS:
        try:
            found = await _catalog_url(http, base_url, provider)
            if found is None:
                continue
            url, dated = found
            data = await http.get_bytes(url)
            offers, skipped = parse_catalog(data, provider, min(dated, now), url)
        except Unreachable:
            raise  # every catalog is on the same host: asking for the next one would wait again
        except FeedError as error:
            result.failed_providers[provider] = str(error)
            continue
        if not offers:  # its last good offers stay (refresh carries a failed provider's)
            result.failed_providers[provider] = f"no usable offers ({skipped:,} rows skipped)"
            result.skipped += skipped
            continue
        result.offers += offers
        result.skipped += skipped
        result.answered_providers.add(provider)
    if not result.answered_providers:
        reasons = "; ".join(f"{p}: {e}" for p, e in result.failed_providers.items())
        raise FeedError(reasons or "no provider catalog published")
    return result


async def _catalog_url(http: FeedHttp, base_url: str, provider: str) -> tuple[str, datetime] | None:
    """The catalog's URL and the day its version names; None if gpuhunt does not publish it."""
    try:
        raw = await http.get_bytes(f"{base_url}/v3/{provider}/version")
    except NotFound:
        return None
    version = raw.decode("utf-8", "replace").strip()
    return f"{base_url}/v3/{provider}/{version}/catalog.zip", version_date(version)


def version_date(version: str) -> datetime:
    """The day a catalog version names (00:00 UTC); a FeedError for anything else."""
    match = _VERSION.fullmatch(version)
    try:
        if match is None:
            raise ValueError(version)
        return datetime.strptime(match.group(1), "%Y%m%d").replace(tzinfo=UTC)
    except ValueError:
        raise FeedError(f"the version file holds {version[:40]!r}, not a dated version") from None


def parse_catalog(data: bytes, provider: str, dated: datetime, url: str) -> tuple[list[Offer], int]:
    """The offers in one provider's catalog.zip, and how many rows were skipped."""
    name = f"{provider}.csv"
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            if name not in archive.namelist():
                raise FeedError(f"catalog.zip holds no {name}")
            if archive.getinfo(name).file_size > MAX_CSV_BYTES:  # said up front: refused now
                raise FeedError(f"{name} unpacks to over {MAX_CSV_BYTES:,} bytes: refused")
            with archive.open(name) as packed:  # capped as it unpacks, whatever the header says
                text = io.TextIOWrapper(_Capped(packed, name), encoding="utf-8", newline="")
                return parse_csv(text, provider, dated, url)
    except (zipfile.BadZipFile, UnicodeDecodeError, EOFError) as error:
        raise FeedError(f"catalog.zip is not a readable zip ({error})") from None


class _Capped(io.RawIOBase):
    """A decompressing stream that refuses to give more than MAX_CSV_BYTES."""

    def __init__(self, stream: IO[bytes], name: str) -> None:
        self._stream = stream
        self._name = name
        self._given = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        data = self._stream.read(min(len(buffer), _READ_CHUNK_BYTES))
        self._given += len(data)
        if self._given > MAX_CSV_BYTES:
            raise FeedError(f"{self._name} unpacks to over {MAX_CSV_BYTES:,} bytes: refused")
        buffer[: len(data)] = data
        return len(data)


def parse_csv(
    text: str | IO[str], provider: str, dated: datetime, url: str
) -> tuple[list[Offer], int]:
    reader = csv.DictReader(io.StringIO(text) if isinstance(text, str) else text)
    missing = [column for column in COLUMNS if column not in (reader.fieldnames or ())]
    if missing:
        raise FeedError(f"{provider}.csv lacks column(s) {', '.join(missing)}")
    try:
        return read_rows(reader, lambda row: _offers(row, provider, dated, url))
    except csv.Error as error:
        raise FeedError(f"{provider}.csv is not a readable CSV ({error})") from None


def _offers(row: dict[str, str], provider: str, now: datetime, url: str) -> list[Offer]:
    if (row.get("flags") or "").strip() or (row.get("gpu_vendor") or "") not in GPU_VENDORS:
        return []
    try:
        count_float = float(row["gpu_count"])
        price = float(row["price"])
        memory_gb = float(row["gpu_memory"]) if row["gpu_memory"] else None
    except (TypeError, ValueError):
        return []
    if not count_float.is_integer():
        return []  # a fractional GPU (or NaN) is not the card the planner sizes
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
    return card_for(gpu_name, memory_gb, instance, provider)


def _pricing(provider: str, spot: str, location: str) -> PricingKind:
    if spot.strip().lower() == "true":
        return "spot"
    if provider == "runpod" and _COUNTRY_CODE.fullmatch(location):
        return "community"
    return "on_demand"


FEED = Feed(
    name="gpuhunt", default_base_url=DEFAULT_BASE_URL, requests_per_minute=None, fetch=fetch
)
