"""GPU memory written apart from a card name: "48gb?", "24G card", "with 24GB", "24GB VRAM",
"显存24G", "单卡显存24G，总显存只有96G", "2x3090 (48GB VRAM total)".

Traps (phrasing.md): host RAM ("32g内存", "600G RAM", "744G CPU memory", "48GB of RAM and 16GB of
GPU") is not VRAM; "24GB of RAM" with no other memory figure usually is, and says so; a size of
weights ("20B about 40G", "size of it is 13GB") and memory a run used ("uses 17GB") are not the
card's capacity.
"""

from __future__ import annotations

import re

from planner.messages import PARSING
from planner.parsing.gpu import MEMORY_VARIANTS, with_memory
from planner.parsing.numbers import NUM, whole
from planner.parsing.reading import Reading
from planner.patterns import lazy_pattern
from planner.units import convert

# Every amount below is a number then a unit starting with "g": text without one is not scanned.
_NUMBER_THEN_GB = lazy_pattern(r"\d\s?g")
_UNIT = r"(?P<unit>gib|gb|g)(?![a-z])"
_AMOUNT = r"(?P<num>" + NUM + r")\s?" + _UNIT
_VRAM_WORDS = r"(?:of\s)?(?:vram|gpu\smem(?:ory)?|graphics\smemory|video\smemory|显存|gpu|card|卡)"
_TOTAL = r"(?:total|in\stotal|总共|总显存|combined)"
_HOST = [
    lazy_pattern(
        _AMOUNT
        + r"\s?(?:of\s)?(?:(?:system|cpu|host)\s(?:ram|memory)|内存|dram|ddr\d?|ram(?=\s(?:and|\+)"
        r"\s" + NUM + r"\s?" + r"(?:gb|g)\s(?:of\s)?(?:gpu|vram|显存)))"
    ),
    # "内存128G" as "128G内存": the host's, like the same words after the amount.
    lazy_pattern(
        r"(?:(?:cpu|system|host)\s(?:ram|memory)|(?:系统|主机|cpu)?内存)\s?(?:of\s|为|是|有|:)?\s?"
        + _AMOUNT
    ),
]
_NOT_CAPACITY = lazy_pattern(
    r"(?:use[sd]?|using|takes?|took|need(?:s|ed)?|requires?|consum\w{0,4}|peak\w{0,3}|allocat\w{0,4}|"
    r"reserved|occup\w{0,6}|about|around|size\sof\s(?:it|the\smodel)\sis|model\sis|weights?\s(?:are|"
    r"is|take)|占用|需要|oom\w{0,4}\s(?:at|with)|up\sto|over|more\sthan|fill\w{0,3})\s?~?" + _AMOUNT
)
_TOTAL_AMOUNT = [
    lazy_pattern(_TOTAL + r"\s?" + _VRAM_WORDS + r"?\s?(?:只有|of|is|=|:)?\s?" + _AMOUNT),
    lazy_pattern(_AMOUNT + r"\s?" + _VRAM_WORDS + r"?\s?" + _TOTAL),
]
_PER_CARD = [
    lazy_pattern(r"(?:单卡显存|每张卡?显存?|显存)\s?(?:为|是|:)?\s?" + _AMOUNT),
    lazy_pattern(_AMOUNT + r"\s?(?:的)?" + _VRAM_WORDS + r"(?![a-z])"),
    lazy_pattern(_AMOUNT + r"\s?(?:each|per\s(?:gpu|card)|/gpu)"),
    lazy_pattern(r"(?<![a-z])(?:with|has|have|on\sa|a)\s" + _AMOUNT),
]
_RAM = lazy_pattern(_AMOUNT + r"\s?(?:of\s)?ram\b")
# Above this, "RAM" is the host's: no single accelerator has more.
MAX_CARD_GB = 192
_ENOUGH = lazy_pattern(r"\s?(?:\?|is\s|be\s)?\s?(?:enough|sufficient|total|in\stotal|combined)")
_BARE = lazy_pattern(
    r"(?<![a-z0-9_.])" + _AMOUNT + r"(?!\s?(?:of\s)?(?:data|text|dataset|disk|ssd))"
)


def _gb(r: Reading, m: re.Match[str]) -> float:
    value = r.number(m, "num", "GPU memory")
    return whole(round(convert(value, m.group("unit"), "gb"), 1))


def read_vram(r: Reading) -> None:
    if _NUMBER_THEN_GB.search(r.text):
        _read_amounts(r)
    card = r.fields.get("gpu")
    if card and "gpu_vram_gb" in r.fields:
        r.fields["gpu"] = with_memory(card, r.fields["gpu_vram_gb"])


def _read_amounts(r: Reading) -> None:
    for pattern in (*_HOST, _NOT_CAPACITY):
        for m in r.matches(pattern):
            r.take(m)
    total = None
    for pattern in _TOTAL_AMOUNT:
        for m in r.matches(pattern):
            total = total or _gb(r, m)
            r.take(m)
    # "A100 with 40GB RAM" is the card's memory unless the text gives that some other way.
    rams = r.matches_at_numbers(_RAM)
    ram_numbers = {m.start("num") for m in rams}
    # ... but beside a card sold in one memory size ("a 4090"), RAM is the host's.
    fixed_card = r.fields.get("gpu") and r.fields["gpu"] not in MEMORY_VARIANTS
    other_figure = (
        fixed_card
        or total is not None
        or any(m.start("num") not in ram_numbers for p in _PER_CARD for m in r.matches(p))
    )
    for m in rams:
        value = _gb(r, m)
        if not other_figure and value <= MAX_CARD_GB and r.put("gpu_vram_gb", value):
            r.assume(PARSING("gpu_memory", written=m.group(0).strip()))
        r.take(m)
    for pattern in _PER_CARD:
        for m in r.matches(pattern):
            r.put("gpu_vram_gb", _gb(r, m))
            r.take(m)
    if total is not None:
        count = r.fields.get("num_gpus")
        per_card = r.fields.get("gpu_vram_gb")
        if count:
            r.put(
                "gpu_vram_gb",
                whole(round(total / count, 1)),
                PARSING("total_per_card", total=total),
            )
        elif per_card:
            r.put("num_gpus", max(1, round(total / per_card)), f"{total} GB total read as a count")
        else:
            r.put("gpu_vram_gb", total)
    for m in r.matches_at_numbers(_BARE):
        value, count = _gb(r, m), r.fields.get("num_gpus", 1)
        if count > 1 and _ENOUGH.match(r.text, m.end()):
            # "2 L40S, is 96GB enough?" asks about the cards together.
            per_card = whole(round(value / count, 1))
            r.put("gpu_vram_gb", per_card, f"{value} GB read as the total of {count} cards")
        else:
            r.put("gpu_vram_gb", value)
        r.take(m)
