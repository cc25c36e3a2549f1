"""Provider names, one test per provider mapping, with the names each provider really sends:
Vast.ai's gpu_name values, RunPod's GPU type ids and display names, Azure's armSkuName sizes and
regions, and gpuhunt's compact names with Lambda's instance names."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from bot.prices.cards import RUNPOD_IDS, card_for
from bot.prices.feeds import azure, gpuhunt, runpod
from tests.fakes.price_feeds import recorded_json
from tests.price_market import GPUHUNT_HEADER, azure_item, runpod_type

NOW = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("name", "ram_mb", "card"),
    [
        ("H200 NVL", 143771, "h200-nvl"),
        ("H200", 143771, "h200-sxm"),
        ("B300", 275040, "b300"),
        ("RTX A4500", 20470, "rtx-a4500"),
        ("RTX PRO 6000 S", 97887, "rtx-pro-6000-ws"),
        ("RTX PRO 6000 WS", 97887, "rtx-pro-6000-ws"),
        ("RTX 3090 Ti", 24564, "rtx3090ti"),
        ("H100 NVL", 95830, "h100-nvl"),
    ],
)
def test_vast_names(name: str, ram_mb: int, card: str) -> None:
    from bot.prices.feeds.vastai import QUERY_GROUPS

    assert any(name in group for group in QUERY_GROUPS)  # asked for, not only understood
    assert card_for(name, ram_mb / 1024) == card


@pytest.mark.parametrize(
    ("type_id", "display", "memory_gb", "card"),
    [
        (
            "NVIDIA RTX PRO 6000 Blackwell Workstation Edition",
            "RTX PRO 6000 WK",
            96,
            "rtx-pro-6000-ws",
        ),
        ("NVIDIA RTX PRO 6000 Blackwell Server Edition", "RTX PRO 6000", 96, "rtx-pro-6000-ws"),
        ("NVIDIA A100-SXM4-40GB", "A100 SXM 40GB", 40, "a100-40g-sxm"),
        ("Tesla V100-PCIE-16GB", "Tesla V100", 16, "v100-16g-pcie"),
        ("Tesla V100-SXM2-16GB", "Tesla V100", 16, "v100-16g-sxm2"),
        ("Tesla V100-SXM2-32GB", "Tesla V100", 32, "v100-32g-sxm2"),
        ("NVIDIA H100 PCIe", "H100 PCIe", 80, "h100-pcie"),
    ],
)
def test_runpod_names(type_id: str, display: str, memory_gb: int, card: str) -> None:
    gpu_type = runpod_type(type_id, display, memory_gb, secure=1.0)
    offers, _ = runpod.parse_response({"data": {"gpuTypes": [gpu_type]}}, NOW, "u")
    assert {o.gpu for o in offers} == {card}
    assert type_id in RUNPOD_IDS


def test_runpod_display_names_without_an_id_we_know() -> None:
    assert card_for("RTX PRO 6000 WK", 96) == "rtx-pro-6000-ws"
    assert card_for("RTX PRO 6000 MaxQ", 96) is None  # a slower card the catalog lacks


def test_azure_sizes_regions_and_duplicate_meters() -> None:
    gb200 = azure_item("Standard_ND128isr_NDR_GB200_v6", 4 * 10.5)
    gov = {**azure_item("Standard_ND96isr_H100_v5", 8 * 15.0), "armRegionName": "usgovvirginia"}
    dod = {**azure_item("Standard_ND96isr_H100_v5", 8 * 15.0), "armRegionName": "usdodeast"}
    meter = azure_item("Standard_ND96isr_H100_v5", 98.32)
    duplicate = {**meter, "meterId": "another-meter", "isPrimaryMeterRegion": False}
    offers, skipped = azure.parse_items([gb200, gov, dod, meter, duplicate], NOW, "u")
    assert sorted((o.gpu, o.gpu_count, o.region) for o in offers) == [
        ("gb200", 4, "eastus"),
        ("h100-sxm", 8, "eastus"),
    ]
    assert skipped == 3  # two government regions, one duplicate meter
    assert recorded_json("azure_retail_prices_response.json")["Items"]  # the shape used


@pytest.mark.parametrize(
    ("instance", "gpu_name", "memory", "card"),
    [
        ("gpu_1x_a100", "A100", 40, "a100-40g-pcie"),  # Lambda: "1x A100 (40 GB PCIe)"
        ("gpu_1x_a100_sxm4", "A100", 40, "a100-40g-sxm"),
        ("gpu_8x_a100_80gb_sxm4", "A100", 80, "a100-80g-sxm"),
        ("gpu_1x_h100_pcie", "H100", 80, "h100-pcie"),
        ("gpu_8x_h100_sxm5", "H100", 80, "h100-sxm"),
        ("gpu_8x_v100", "V100", 16, "v100-16g-sxm2"),
        ("gpu_1x_gh200", "GH200", 96, "gh200-96g"),
    ],
)
def test_gpuhunt_lambda_names(instance: str, gpu_name: str, memory: int, card: str) -> None:
    count = 8 if instance.startswith("gpu_8x") else 1
    price = count * 2.0
    row = (
        f"{instance},us-east-1,{price},26,200,{count},{gpu_name},{memory},False,,nvidia,,x86,{{}}\n"
    )
    offers, _ = gpuhunt.parse_csv(GPUHUNT_HEADER + row, "lambdalabs", NOW, "u")
    assert [o.gpu for o in offers] == [card]


def test_gpuhunt_names_elsewhere_keep_their_reading() -> None:
    # Outside Lambda an A100 without "sxm" in the instance is still the SXM card gpuhunt means.
    row = "a2-ultragpu-1g,us-central1,5.07,12,170,1,A100,80,False,,nvidia,,x86,{}\n"
    offers, _ = gpuhunt.parse_csv(GPUHUNT_HEADER + row, "gcp", NOW, "u")
    assert [o.gpu for o in offers] == ["a100-80g-sxm"]
