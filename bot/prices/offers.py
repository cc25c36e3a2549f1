"""One record per offer, whatever feed it came from (the shared research notes' §6 record)."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

# "on_demand" is a list price; "community" a marketplace host's ask you can rent now (RunPod
# community, Vast.ai); both are on-demand for costs. "spot" is interruptible at a list price,
# "bid" the current minimum bid of an interruptible market (it moves with demand).
PricingKind = Literal["on_demand", "community", "spot", "bid"]
ON_DEMAND_KINDS: frozenset[str] = frozenset({"on_demand", "community"})
SPOT_KINDS: frozenset[str] = frozenset({"spot", "bid"})
# No GPU rents for more than this per GPU-hour (a B300 lists near $10): a larger figure is a
# unit slip (cents read as dollars) or a whole-cluster price, not a quote.
MAX_USD_PER_GPU_HOUR = 100.0
# The most GPUs one rentable offer holds: a GB200 NVL72 rack. More is a bad row (gpuhunt once
# listed 10^12), not an offer.
MAX_GPUS_PER_OFFER = 72

PROVIDER_NAMES = {
    "aws": "AWS",
    "azure": "Azure",
    "gcp": "GCP",
    "lambdalabs": "Lambda",
    "nebius": "Nebius",
    "oci": "OCI",
    "verda": "Verda",
    "runpod": "RunPod",
    "cloudrift": "CloudRift",
    "vastai": "Vast.ai",
}

# Who a quote comes from, for judging outliers among like sellers: a marketplace host's ask
# (Vast.ai, RunPod community, any minimum bid), a GPU cloud's list price, or a hyperscaler's
# list price (several times a marketplace's for the same card).
ProviderKind = Literal["marketplace", "neocloud", "hyperscaler"]
HYPERSCALERS = frozenset({"aws", "azure", "gcp", "oci"})
MARKETPLACES = frozenset({"vastai"})


class Offer(BaseModel):
    """One rentable configuration at one price: `gpu_count` × the catalog card `gpu`."""

    model_config = ConfigDict(frozen=True)

    feed: str = Field(description="the feed that reported it (gpuhunt, azure, runpod, vastai)")
    provider: str = Field(description="who rents it out: a PROVIDER_NAMES key")
    instance: str = Field(description="the provider's name for the configuration")
    gpu: str = Field(description="planner catalog key")
    gpu_vram_gb: float | None
    gpu_count: int = Field(ge=1)
    usd_per_hour: float = Field(gt=0, description="the whole instance, per hour")
    usd_per_gpu_hour: float = Field(gt=0)
    pricing: PricingKind
    region: str
    fetched_at: datetime = Field(
        description="when the price was read: the fetch, or the day gpuhunt catalogued it"
    )
    source_url: str
    host: str = Field("", description="the marketplace host listing it (Vast.ai's host_id)")

    @property
    def is_spot(self) -> bool:
        return self.pricing in SPOT_KINDS

    @property
    def provider_name(self) -> str:
        return provider_name(self.provider)


def provider_kind(offer: Offer) -> ProviderKind:
    if offer.provider in MARKETPLACES or offer.pricing in ("community", "bid"):
        return "marketplace"
    return "hyperscaler" if offer.provider in HYPERSCALERS else "neocloud"


def provider_name(provider: str) -> str:
    return PROVIDER_NAMES.get(provider, provider)


def make_offer(
    *,
    feed: str,
    provider: str,
    instance: str,
    gpu: str,
    gpu_vram_gb: float | None,
    gpu_count: int,
    usd_per_hour: float,
    pricing: PricingKind,
    region: str,
    fetched_at: datetime,
    source_url: str,
    host: str = "",
) -> Offer | None:
    """An Offer from an instance price, or None for a row no one can rent at that price: no
    whole GPU, a zero or negative price, or one beyond MAX_USD_PER_GPU_HOUR."""
    if not 1 <= gpu_count <= MAX_GPUS_PER_OFFER or not usd_per_hour > 0:
        return None
    usd_per_gpu_hour = usd_per_hour / gpu_count
    if not usd_per_gpu_hour <= MAX_USD_PER_GPU_HOUR:  # NaN and inf too
        return None
    return Offer(
        feed=feed,
        provider=provider,
        instance=instance,
        gpu=gpu,
        gpu_vram_gb=gpu_vram_gb,
        gpu_count=gpu_count,
        usd_per_hour=round(usd_per_hour, 6),
        usd_per_gpu_hour=round(usd_per_gpu_hour, 6),
        pricing=pricing,
        region=region,
        fetched_at=fetched_at,
        source_url=source_url,
        host=host,
    )


def offers_at(prices: Iterable[tuple[object, PricingKind, str]], **common: Any) -> list[Offer]:
    """One offer per (price per instance, pricing, instance name) whose price is a number; the
    other make_offer fields are `common`."""
    offers = []
    for price, pricing, instance in prices:
        if isinstance(price, int | float) and not isinstance(price, bool):
            offer = make_offer(
                usd_per_hour=float(price), pricing=pricing, instance=instance, **common
            )
            if offer is not None:
                offers.append(offer)
    return offers


def utc(epoch_s: float) -> datetime:
    return datetime.fromtimestamp(epoch_s, UTC)
