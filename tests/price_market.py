"""A constructed market the price tests serve: an RTX 4090 at $0.34 on-demand (RunPod community)
and $0.29 spot, H100s from four providers, and a B200 listed at an absurd $0.01 on Vast.ai.
Values are illustrative, shaped like the recorded responses in tests/data/price_feeds/."""

from __future__ import annotations

import copy
from typing import Any

from tests.fakes.price_feeds import FakeFeeds, recorded_json

GPUHUNT_HEADER = (
    "instance_name,location,price,cpu,memory,gpu_count,gpu_name,gpu_memory,spot,disk_size,"
    "gpu_vendor,flags,cpu_arch,provider_data\n"
)


def runpod_type(type_id: str, name: str, memory_gb: int, **prices: float | None) -> dict:
    """A gpuTypes element as RunPod answers the per-tier query: `lowestPrice` asked with
    `secureCloud: true` and `false` (aliased secureLowest / communityLowest), each with its own
    stock; a tier without a price has no stock."""
    stock = prices.pop("stock", "High")
    bid = prices.pop("bid", None)

    def lowest(price: float | None, bids: bool = False) -> dict:
        stocked = stock if price is not None else None
        return {
            "minimumBidPrice": bid if stocked and bids else None,
            "uninterruptablePrice": price if stocked else None,
            "stockStatus": stocked,
        }

    secure, community = prices.get("secure"), prices.get("community")
    cheapest = min((p for p in (secure, community) if p is not None), default=None)
    return {
        "id": type_id,
        "displayName": name,
        "memoryInGb": memory_gb,
        "securePrice": secure,
        "communityPrice": community,
        "secureSpotPrice": prices.get("secure_spot"),
        "communitySpotPrice": prices.get("community_spot"),
        "lowestPrice": lowest(cheapest, bids=True),
        "secureLowest": lowest(secure),
        "communityLowest": lowest(community, bids=True),
    }


def vast_offer(
    offer_id: int,
    gpu_name: str,
    count: int,
    ram_mb: int,
    total: float,
    bid: float,
    host: int | None = None,
    **fields: object,
) -> dict[str, Any]:
    """The recorded verified offer, changed; `host` defaults to one host per offer."""
    offer = copy.deepcopy(recorded_json("vastai_bundles_response.json")["offers"][1])
    offer.update(fields)
    offer.update(
        host_id=offer_id if host is None else host,
        id=offer_id,
        gpu_name=gpu_name,
        num_gpus=count,
        gpu_ram=ram_mb,
        dph_total=total,
        dph_base=total,
        min_bid=bid,
    )
    return offer


def azure_item(sku: str, price: float, *, spot: bool = False) -> dict[str, Any]:
    item = copy.deepcopy(recorded_json("azure_retail_prices_response.json")["Items"][1])
    meter = sku.removeprefix("Standard_").replace("_", " ") + (" Spot" if spot else "")
    item.update(armSkuName=sku, retailPrice=price, unitPrice=price, meterName=meter, skuName=meter)
    return item


def market() -> FakeFeeds:
    return FakeFeeds(
        runpod_types=[
            runpod_type(
                "NVIDIA GeForce RTX 4090",
                "RTX 4090",
                24,
                secure=0.59,
                community=0.34,
                community_spot=0.29,
                bid=0.31,
            ),
            runpod_type(
                "NVIDIA H100 80GB HBM3", "H100 SXM", 80, secure=2.69, community=1.99, bid=1.75
            ),
            runpod_type("NVIDIA B200", "B200", 180, secure=5.99, stock="Low"),
            runpod_type("NVIDIA RTX A4000", "RTX A4000", 16, secure=0.35, stock=None),
        ],
        vast_offers=[
            vast_offer(1, "RTX 4090", 2, 24564, 0.88, 0.70),
            vast_offer(2, "H100 SXM", 1, 81559, 1.85, 1.20),
            vast_offer(3, "B200", 1, 183359, 0.01, 0.01),  # a listing error
        ],
        azure_items=[
            azure_item("Standard_ND96isr_H100_v5", 98.32),
            azure_item("Standard_ND96isr_H100_v5", 29.496, spot=True),
        ],
        gpuhunt_csv={
            "aws": GPUHUNT_HEADER
            + "p6-b200.48xlarge,us-east-1,113.93,192,2048,8,B200,180,False,,nvidia,,x86,{}\n",
            "lambdalabs": GPUHUNT_HEADER
            + "gpu_1x_h100_pcie,us-west-1,2.49,26,200,1,H100,80,False,,nvidia,,x86,{}\n",
        },
    )
