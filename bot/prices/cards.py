"""Which planner card a feed's GPU name means.

Feeds spell one card many ways ("RTX 4090", "RTX4090", "NVIDIA GeForce RTX 4090") and some
collapse variants the planner keeps apart (gpuhunt's "H100" is SXM or PCIe; its "A100" is 40 or
80 GB). Names are compared in a compact form (upper case, letters and digits only); where a name
covers several cards, the reported memory and a "PCIe" in the instance name pick one. A name not
in these tables is skipped and counted, never guessed.

Sources: the names are those the feeds use (shared/data/price_feeds/README.md §3.1 for gpuhunt's
compact names, §2.5 for Vast's, §5.4 for RunPod's ids, §5.1 for Azure's SKUs).
"""

from __future__ import annotations

import re
from functools import cache

from planner.catalog.gpus import gpu_by_key

# A reported size within this fraction of a card's marketed size is that card (Vast reports
# 24,564 MB for a 24 GB 4090; an 80 GB A100 shows as 81,920 MiB).
VRAM_TOLERANCE_FRACTION = 0.15

# Compact name → the cards it can mean; the first is taken when no size or hint tells them apart.
_NAMES: dict[str, tuple[str, ...]] = {
    "T4": ("t4",),
    "TESLAT4": ("t4",),
    "V100": ("v100-16g-sxm2", "v100-32g-sxm2"),
    "TESLAV100": ("v100-16g-sxm2", "v100-32g-sxm2"),
    "V100SXM2": ("v100-16g-sxm2", "v100-32g-sxm2"),
    "V100PCIE": ("v100-16g-pcie", "v100-32g-pcie"),
    "RTX3090": ("rtx3090",),
    "RTX3090TI": ("rtx3090ti",),
    "RTX4080": ("rtx4080",),
    "RTX4090": ("rtx4090",),
    "RTX5090": ("rtx5090",),
    "A4000": ("rtx-a4000",),
    "RTXA4000": ("rtx-a4000",),
    "A4500": ("rtx-a4500",),
    "RTXA4500": ("rtx-a4500",),
    "A5000": ("rtx-a5000",),
    "RTXA5000": ("rtx-a5000",),
    "A6000": ("rtx-a6000",),
    "RTXA6000": ("rtx-a6000",),
    "RTX6000ADA": ("rtx6000-ada",),
    "RTX6000ADAGENERATION": ("rtx6000-ada",),
    "RTXPRO6000": ("rtx-pro-6000-ws",),
    "RTXPRO6000WS": ("rtx-pro-6000-ws",),
    "RTXPRO6000BLACKWELL": ("rtx-pro-6000-ws",),
    "RTXPRO6000WK": ("rtx-pro-6000-ws",),  # RunPod's "RTX PRO 6000 WK" (workstation)
    # The Server Edition has the Workstation Edition's GB202, 96 GB and 600 W board (NVIDIA's RTX
    # PRO 6000 Blackwell datasheets: 4,000 AI TOPS each), so the catalog's card is both. The
    # Max-Q (300 W, 3,511 AI TOPS) is slower: not a catalog card, so its quotes are skipped.
    "RTXPRO6000S": ("rtx-pro-6000-ws",),  # Vast's "RTX PRO 6000 S"
    "RTXPRO6000SERVER": ("rtx-pro-6000-ws",),
    "RTXPRO6000SERVEREDITION": ("rtx-pro-6000-ws",),
    "RTXPROSERVER6000": ("rtx-pro-6000-ws",),  # AWS g7e (README §5.2)
    "L4": ("l4",),
    "L40": ("l40",),
    "L40S": ("l40s",),
    "A10": ("a10",),
    "A10G": ("a10g",),
    "A40": ("a40",),
    "A100": ("a100-40g-sxm", "a100-80g-sxm"),
    "A100SXM4": ("a100-40g-sxm", "a100-80g-sxm"),
    "A100SXM": ("a100-40g-sxm", "a100-80g-sxm"),
    "A100SXM440GB": ("a100-40g-sxm",),
    "A100SXM480GB": ("a100-80g-sxm",),
    "A100PCIE": ("a100-40g-pcie", "a100-80g-pcie"),
    "A100X": ("a100-80g-pcie",),
    "H100": ("h100-sxm",),
    "H100SXM": ("h100-sxm",),
    "H100SXM5": ("h100-sxm",),
    "H100PCIE": ("h100-pcie",),
    "H100NVL": ("h100-nvl",),
    "H200": ("h200-sxm",),
    "H200SXM": ("h200-sxm",),
    "H200NVL": ("h200-nvl",),
    "GH200": ("gh200-96g", "gh200-144g"),
    "B200": ("b200",),
    "B300": ("b300",),
    "MI250X": ("mi250x",),
    "MI300X": ("mi300x",),
    "MI325X": ("mi325x",),
}
# A generic name whose PCIe twin is a different card.
_PCIE_TWIN = {"H100": "H100PCIE", "A100": "A100PCIE", "V100": "V100PCIE"}
# Providers whose instance names say "sxm" for every SXM A100 and H100 they rent, so one of those
# in an instance without it is the PCIe card: Lambda's gpu_1x_a100 is "1x A100 (40 GB PCIe)", its
# SXM ones gpu_1x_a100_sxm4, gpu_8x_a100_80gb_sxm4, gpu_8x_h100_sxm5 (README §2.6; Lambda's
# instance-types API). Its gpu_8x_v100 is SXM2 and says nothing, so V100 is not read this way.
SXM_NAMED_PROVIDERS = frozenset({"lambdalabs"})
SXM_NAMED_CARDS = frozenset({"A100", "H100"})

# RunPod's GPU type ids (RunPod docs references/gpu-types.mdx; README §5.4) that its display
# names do not settle (SXM vs PCIe).
RUNPOD_IDS: dict[str, str] = {
    "NVIDIA H100 80GB HBM3": "h100-sxm",
    "NVIDIA H100 PCIe": "h100-pcie",
    "NVIDIA H100 NVL": "h100-nvl",
    "NVIDIA H200": "h200-sxm",
    "NVIDIA H200 NVL": "h200-nvl",
    "NVIDIA B200": "b200",
    "NVIDIA A100-SXM4-80GB": "a100-80g-sxm",
    "NVIDIA A100-SXM4-40GB": "a100-40g-sxm",
    "Tesla V100-PCIE-16GB": "v100-16g-pcie",
    "Tesla V100-FHHL-16GB": "v100-16g-pcie",  # full-height half-length: a PCIe board
    "Tesla V100-SXM2-16GB": "v100-16g-sxm2",
    "Tesla V100-SXM2-32GB": "v100-32g-sxm2",
    "NVIDIA RTX PRO 6000 Blackwell Workstation Edition": "rtx-pro-6000-ws",
    "NVIDIA RTX PRO 6000 Blackwell Server Edition": "rtx-pro-6000-ws",
    "NVIDIA B300 SXM6 AC": "b300",
    "NVIDIA A100 80GB PCIe": "a100-80g-pcie",
    "NVIDIA GeForce RTX 4090": "rtx4090",
    "NVIDIA GeForce RTX 5090": "rtx5090",
    "NVIDIA GeForce RTX 3090": "rtx3090",
    "NVIDIA RTX A4000": "rtx-a4000",
    "NVIDIA RTX A4500": "rtx-a4500",
    "NVIDIA RTX A5000": "rtx-a5000",
    "NVIDIA RTX A6000": "rtx-a6000",
    "NVIDIA RTX 6000 Ada Generation": "rtx6000-ada",
    "NVIDIA L40S": "l40s",
    "NVIDIA L40": "l40",
    "NVIDIA L4": "l4",
    "NVIDIA A40": "a40",
    "AMD Instinct MI300X OAM": "mi300x",
}

# Azure VM sizes → (card, GPUs per VM) (README §5.1). Older series carry no model in the name, so
# only this table knows them; fractional A10 sizes (NV6/12/18ads_A10_v5) are not whole GPUs and
# are left out. NCv3 is V100 16 GB PCIe and ND40rs_v2 V100 32 GB SXM2 (Azure's size pages).
AZURE_SKUS: dict[str, tuple[str, int]] = {
    "Standard_ND96isr_H100_v5": ("h100-sxm", 8),
    "Standard_ND96isr_H200_v5": ("h200-sxm", 8),
    "Standard_NC40ads_H100_v5": ("h100-nvl", 1),
    "Standard_NC80adis_H100_v5": ("h100-nvl", 2),
    "Standard_NC24ads_A100_v4": ("a100-80g-pcie", 1),
    "Standard_NC48ads_A100_v4": ("a100-80g-pcie", 2),
    "Standard_NC96ads_A100_v4": ("a100-80g-pcie", 4),
    "Standard_ND96asr_v4": ("a100-40g-sxm", 8),
    "Standard_ND96amsr_A100_v4": ("a100-80g-sxm", 8),
    "Standard_ND96is_MI300X_v5": ("mi300x", 8),
    "Standard_ND96isr_MI300X_v5": ("mi300x", 8),
    "Standard_NC4as_T4_v3": ("t4", 1),
    "Standard_NC8as_T4_v3": ("t4", 1),
    "Standard_NC16as_T4_v3": ("t4", 1),
    "Standard_NC64as_T4_v3": ("t4", 4),
    "Standard_NC6s_v3": ("v100-16g-pcie", 1),
    "Standard_NC12s_v3": ("v100-16g-pcie", 2),
    "Standard_NC24s_v3": ("v100-16g-pcie", 4),
    "Standard_NC24rs_v3": ("v100-16g-pcie", 4),
    "Standard_ND40rs_v2": ("v100-32g-sxm2", 8),
    "Standard_NV36ads_A10_v5": ("a10", 1),
    "Standard_NV72ads_A10_v5": ("a10", 2),
    # Per Blackwell GPU, as the catalog's GB200 is (SkyPilot AZURE_MISSING_GPU_COUNT, README §5.1).
    "Standard_ND128isr_NDR_GB200_v6": ("gb200", 4),
}

_NOT_ALNUM = re.compile(r"[^A-Z0-9]")
_VENDOR_WORDS = re.compile(r"^(?:NVIDIA|GEFORCE|AMD|INSTINCT)+")


def compact(name: str) -> str:
    return _VENDOR_WORDS.sub("", _NOT_ALNUM.sub("", name.upper()))


def card_for(
    name: str, vram_gb: float | None = None, instance: str = "", provider: str = ""
) -> str | None:
    """The catalog key `name` means at `vram_gb` (per GPU), or None when it is not a card we
    know or its size does not match the card's."""
    key = compact(name)
    instance_name = compact(instance)
    if key in _PCIE_TWIN and (
        "PCIE" in instance_name
        or (
            provider in SXM_NAMED_PROVIDERS
            and key in SXM_NAMED_CARDS
            and instance
            and "SXM" not in instance_name
        )
    ):
        key = _PCIE_TWIN[key]
    candidates = _known(_NAMES.get(key, ()))
    if not candidates:
        return None
    if vram_gb is None or vram_gb <= 0:
        return candidates[0][0]
    best_key, best_gb = min(candidates, key=lambda card: abs(card[1] - vram_gb))
    return best_key if abs(best_gb - vram_gb) <= VRAM_TOLERANCE_FRACTION * best_gb else None


@cache
def _known(keys: tuple[str, ...]) -> tuple[tuple[str, float], ...]:
    """The cards among `keys` that the catalog has, with their marketed sizes."""
    return tuple((key, gpu.marketed_gb) for key in keys if (gpu := gpu_by_key(key)) is not None)


def known_key(key: str) -> str | None:
    """`key` if the catalog has it (a table may name a card the catalog has not got)."""
    return key if gpu_by_key(key) is not None else None
