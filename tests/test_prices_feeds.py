"""Each feed's reader on the recorded responses, and its fetch against a fake on 127.0.0.1:
units, per-GPU prices, pricing kinds, and the rows each feed's notes say to drop."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from bot.prices.cards import card_for
from bot.prices.feeds import azure, gpuhunt, runpod, vastai
from tests.fakes.price_feeds import RECORDED, recorded_json
from tests.price_market import GPUHUNT_HEADER

NOW = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)


def _by_kind(offers) -> dict[str, float]:
    return {offer.pricing: offer.usd_per_gpu_hour for offer in offers}


def test_azure_keeps_linux_pay_as_you_go_and_divides_the_vm_by_its_gpus() -> None:
    items = recorded_json("azure_retail_prices_response.json")["Items"]
    offers, skipped = azure.parse_items(items, NOW, "http://azure")
    # Dropped: the documented DevTest Windows F16s row and the Windows H100 row.
    assert skipped == 2
    h100 = [o for o in offers if o.gpu == "h100-sxm"]
    assert _by_kind(h100) == {"on_demand": 14.748, "spot": 3.687}
    assert all(o.gpu_count == 8 and o.region == "eastus" for o in h100)
    (a100,) = [o for o in offers if o.gpu == "a100-80g-pcie"]
    assert (a100.gpu_count, a100.usd_per_gpu_hour) == (1, 3.673)


@pytest.mark.parametrize(
    ("change", "why"),
    [
        ({"retailPrice": 0.0}, "zero price"),
        ({"meterName": "ND96isr H100 v5 Low Priority"}, "low priority"),
        ({"productName": "Virtual Machines NDsr H100 v5 Srs Win"}, "Windows spelled 'Srs Win'"),
        ({"type": "Reservation"}, "reservation"),
        ({"armSkuName": "Standard_NV6ads_A10_v5"}, "a sixth of a GPU"),
        ({"currencyCode": "EUR"}, "not dollars"),
    ],
)
def test_azure_drops_rows_no_one_rents_on_demand(change: dict, why: str) -> None:
    item = {**recorded_json("azure_retail_prices_response.json")["Items"][1], **change}
    assert azure.parse_items([item], NOW, "http://azure") == ([], 1), why


def test_runpod_prices_are_per_gpu_and_sold_out_types_are_skipped() -> None:
    body = recorded_json("runpod_gpu_types_response.json")
    offers, skipped = runpod.parse_response(body, NOW, "http://runpod")
    assert skipped == 1  # the H100 has stockStatus null
    assert {o.gpu for o in offers} == {"rtx-a4000"}
    # The recorded shape has only the combined lowestPrice: its uninterruptablePrice (0.35) is
    # the secure tier's, the one tier known to have stock; community's 0.2 is not quoted.
    assert _by_kind(offers) == {"on_demand": 0.35, "spot": 0.18, "bid": 0.2}


def test_runpod_graphql_errors_are_a_feed_error() -> None:
    with pytest.raises(runpod.FeedError, match="rate limited"):
        runpod.parse_response({"errors": [{"message": "rate limited"}]}, NOW, "u")


def test_vast_prices_whole_offers_and_skips_cards_it_does_not_know() -> None:
    body = recorded_json("vastai_bundles_response.json")
    offers, skipped = vastai.parse_response(body, NOW, "http://vast")
    assert skipped == 1  # "Imaginary RTX 9999"
    assert {o.gpu for o in offers} == {"rtx4090"}
    assert _by_kind(offers) == {"community": 0.35082, "bid": 0.21}
    assert {o.region for o in offers} == {"CA"} and {o.gpu_count for o in offers} == {2}


def test_vast_keeps_only_verified_rentable_offers() -> None:
    offer = recorded_json("vastai_bundles_response.json")["offers"][1]
    for change in ({"verification": "unverified"}, {"rentable": False}, {"rented": True}):
        assert vastai.parse_response({"offers": [{**offer, **change}]}, NOW, "u") == ([], 1)


def test_gpuhunt_skips_flagged_cpu_and_cluster_rows_and_reads_runpod_community() -> None:
    text = (RECORDED / "gpuhunt_catalog_v3_runpod.csv").read_text()
    offers, skipped = gpuhunt.parse_csv(text, "runpod", NOW, "http://gpuhunt")
    assert skipped == 2  # the CPU row and the runpod-cluster H100 row
    kinds = sorted((o.pricing, o.region, o.gpu_count, o.usd_per_gpu_hour) for o in offers)
    assert kinds == [
        ("community", "US", 1, 0.2),
        ("on_demand", "CA-MTL-1", 1, 0.35),
        ("on_demand", "CA-MTL-1", 2, 0.35),
    ]


def test_gpuhunt_tells_a100_sizes_and_pcie_apart_and_drops_fractional_gpus() -> None:
    rows = (
        GPUHUNT_HEADER
        + "a2-highgpu-1g,us-central1-a,3.67,12,85,1,A100,40,False,,nvidia,,x86,{}\n"
        + "a2-ultragpu-1g,us-central1-a,5.07,12,170,1,A100,80,True,,nvidia,,x86,{}\n"
        + "gpu_1x_h100_pcie,us-west-1,2.49,26,200,1,H100,80,False,,nvidia,,x86,{}\n"
        + "g6f.xlarge,us-east-1,0.25,4,16,0.125,L4,24,False,,nvidia,,x86,{}\n"
        + "tpu-v5,us-central1,1.2,1,1,1,v5e,16,False,,google,,x86,{}\n"
    )
    offers, skipped = gpuhunt.parse_csv(rows, "gcp", NOW, "u")
    assert [(o.gpu, o.pricing) for o in offers] == [
        ("a100-40g-sxm", "on_demand"),
        ("a100-80g-sxm", "spot"),
        ("h100-pcie", "on_demand"),
    ]
    assert skipped == 2


def test_gpuhunt_zip_without_its_csv_is_an_error() -> None:
    import io
    import zipfile

    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("other.csv", "x")
    with pytest.raises(gpuhunt.FeedError, match=r"holds no aws\.csv"):
        gpuhunt.parse_catalog(buffer.getvalue(), "aws", NOW, "u")
    with pytest.raises(gpuhunt.FeedError, match="not a readable zip"):
        gpuhunt.parse_catalog(b"PK\x03\x04 junk", "aws", NOW, "u")


@pytest.mark.parametrize(
    ("name", "vram_gb", "instance", "key"),
    [
        ("RTX 4090", 23.99, "", "rtx4090"),
        ("NVIDIA GeForce RTX 4090", None, "", "rtx4090"),
        ("RTX 4090", 48.0, "", None),  # a modded 48 GB card is not the catalog's 4090
        ("A100 SXM4", 80.0, "", "a100-80g-sxm"),
        ("A100", 40.0, "a2-highgpu-1g", "a100-40g-sxm"),
        ("A100", 80.0, "NVIDIA A100 80GB PCIe", "a100-80g-pcie"),
        ("H100 NVL", 94.0, "", "h100-nvl"),
        ("RTX A6000", 48.0, "", "rtx-a6000"),
        ("Imaginary RTX 9999", 24.0, "", None),
    ],
)
def test_feed_names_map_to_catalog_cards(
    name: str, vram_gb: float | None, instance: str, key: str | None
) -> None:
    assert card_for(name, vram_gb, instance) == key
