"""GPU names, counts and the VRAM written next to them.

Forms (phrasing.md): "2x3090", "8xA100 80G", "4 * NVIDIA A10G", "8 A100", "single 4090",
"dual 3090s", "a 2nd 4090", "4张4090", "8卡A800", "单卡", "8 80GB A100", "A100 40G*4", "x4 NVIDIA
A100", "3060ti6G", "12G-RTX2080Ti", "A100(40G)", "23G的A100", node products "3*8*A100", "8x8H800",
"2台8xA100", "2 nodes * 8 GPUs", and cards without a name ("8x 80GB GPUs", "4 GPUs", "8卡").
Board forms stay in the name ("h100 pcie", "A100-SXM4-80GB", "h200 nvl"); Macs by chip ("M2
macbook", "macbook air m2", "m3 max").
Two different cards ("4090 vs H100") become a comparison.
"""

from __future__ import annotations

import re
from typing import Any

from planner.messages import PARSING
from planner.parsing.numbers import whole
from planner.parsing.reading import Reading
from planner.patterns import lazy_pattern
from planner.units import convert

# Card pattern → display name. Order matters: longer names first ("a10g" before "a10").
_CARDS: list[tuple[str, str]] = [
    (r"rtx[\s-]?pro[\s-]?6000(?:\s?blackwell)?", "RTX PRO 6000"),
    (r"(?:rtx\s?)?6000\s?ada", "RTX 6000 Ada"),
    (r"rtx\s?2000\s?ada(?:\sgeneration)?", "RTX 2000 Ada"),
    (r"rtx\s?4000\s?ada(?:\sgeneration)?", "RTX 4000 Ada"),
    (r"(?:rtx\s?)?a6000", "RTX A6000"),
    (r"(?:rtx\s?)?a5000", "RTX A5000"),
    (r"(?:rtx\s?)?a4500", "RTX A4500"),
    (r"(?:rtx\s?)?a4000", "RTX A4000"),
    (r"titan\s?rtx", "Titan RTX"),
    (r"quadro\s?rtx\s?8000", "Quadro RTX 8000"),
    (r"(?:radeon\s?)?(?:rx\s?)?7900\s?xtx", "RX 7900 XTX"),
    (r"gh200", "GH200"),
    (r"gb200", "GB200"),
    (r"h200", "H200"),
    (r"h100\s?nvl", "H100 NVL"),
    (r"h100", "H100"),
    (r"h800", "H800"),
    (r"h20", "H20"),
    (r"b200", "B200"),
    (r"b300", "B300"),
    (r"a100", "A100"),
    (r"a800", "A800"),
    (r"a10g", "A10G"),
    (r"a10", "A10"),
    (r"a30", "A30"),
    (r"a40", "A40"),
    (r"l40-?s", "L40S"),
    (r"l40", "L40"),
    (r"l20", "L20"),
    (r"l4", "L4"),
    (r"t4", "T4"),
    (r"v100s?", "V100"),
    (r"p100", "P100"),
    (r"p40", "P40"),
    (r"k80", "K80"),
    (r"mi300x?", "MI300X"),
    (r"mi325x?", "MI325X"),
    (r"mi355x?", "MI355X"),
    (r"mi250x?", "MI250X"),
    (r"mi210", "MI210"),
    (r"(?:ascend\s?)?910b", "Ascend 910B"),
    (r"gaudi\s?2", "Gaudi2"),
    (r"gaudi\s?3", "Gaudi3"),
    # A chip with its tier, or a bare one ("M2") beside "apple" or a Mac word: alone, "m3" may be
    # part of a model name ("bge-m3").
    (
        r"(?:apple\s?)?m[1-4]\s?(?:pro|max|ultra)|apple\s?m[1-4]"
        r"|m[1-4](?=\s?(?:\d{1,3}\s?gb?\s?)?(?:mac|apple))",
        "Apple {apple}",
    ),
    # A Mac without its chip named ("my macbook pro 64gb"); a named chip wins (the pattern above);
    # a bare chip after the Mac word ("macbook air m2") names it.
    (
        r"(?:mac\s?book(?:\s?(?:pro|air))?|mac\s?(?:studio|mini)|apple\s?silicon)"
        r"(?!.{0,16}m[1-9]\s?(?:pro|max|ultra))(?:\s?m[1-4](?![a-z0-9]))?",
        "Mac (Apple silicon)",
    ),
]
_MAC = ("Apple", "Mac (Apple silicon)")
_CARD_DISPLAYS = [(lazy_pattern(pattern), display) for pattern, display in _CARDS]
_CONSUMER = (
    r"(?:(?:rtx|gtx)\s?-?)?(?P<consumer>[1-5]0[5-9]0|1660)(?:\s?(?P<tier>ti\s?super|ti|super))?"
)
_NAME = r"(?P<name>" + "|".join(p for p, _ in _CARDS) + "|" + _CONSUMER + r")"
# Cards sold with several memory sizes: the size goes into the name so the catalog can tell.
MEMORY_VARIANTS = {"A100", "A800", "V100", "RTX 3060", "RTX 4060 Ti", "RTX 3080"}

_GB = r"(?:gb|gib|g)(?![a-z])"
# The board form after a card name or its memory ("h100 pcie", "A100-SXM4-80GB", "a100 80gb
# pcie", "h200 nvl"): the catalog lists PCIe, SXM and NVL boards of one chip as separate cards
# (different power, bandwidth and links), so the form stays in the name the catalog reads.
_FORM = r"[\s-]?(?P<{group}>pcie|sxm[2-5]?|nvl)(?![a-z0-9])"
_FORMS = {"pcie": "PCIe", "nvl": "NVL"}
# Memory sizes cards are sold in, written after the name without a unit ("a100-80", "h100 80").
_BARE_SIZES = r"16|24|32|40|48|80|94|141"
# Units that make a number after a card something else than its memory.
_UNIT_AFTER = (
    r"(?:bits?|layers?|hours?|hrs?|h|min\w*|days?|d|epochs?|eps?|steps?|samples?|examples?|rows?|"
    r"tokens?|toks?|k|b|m|mb|tb|s|sec\w*|w|watts?|ctx|context|seq\w*|batch|bs|rank|r|alpha|"
    r"gpu[-\s]?hours?|%)(?![a-z])"
)
_COUNT_WORDS = {
    "single": 1,
    "a": 1,
    "an": 1,
    "单卡": 1,
    "单张": 1,
    "单张卡": 1,
    "dual": 2,
    "double": 2,
    "双卡": 2,
    "a 2nd": 2,
    "a second": 2,
    "pair of": 2,
    "a pair of": 2,
    "my": 1,
}
_WORD = "|".join(sorted(map(re.escape, _COUNT_WORDS), key=len, reverse=True))
# "a free Colab T4", "a spare 4090": words between the count and the card.
_ADJECTIVES = r"(?:(?:free|spare|cheap|colab|kaggle|cloud|rented|old|new|local|used|pro)\s){0,2}"
_NODES = (
    r"(?:(?P<nodes>\d{1,3})(?![\d.])\s?(?:(?:nodes?|machines?|servers?|台|机)\s?(?:x|\*|with|of)?"
    r"|x|\*)\s?|单机)?"
)
_COUNT = (
    r"(?:(?P<count>\d{1,5})(?![\d.])\s?(?:x|\*|张|卡|块|-|个)?\s?|(?<![a-z])(?P<word>"
    + _WORD
    + r")\s"
    + _ADJECTIVES
    + r"|"
    r"(?P<word_cn>单卡|双卡|单张)|(?<![a-z0-9])x(?P<xcount>\d{1,3})\s)?"
)
# First characters a card, or what may precede it, can start with: every other position fails at
# once instead of trying each alternative.
_CARD_START = r"(?=[0-9abdghklmnpqrstvx单双])"
_NAME_START = r"(?=[0-9abghklmpqrtv])"
_CARD = lazy_pattern(
    _CARD_START
    + r"(?<![a-wyz])(?<!=)(?<!=\s)"
    + _NODES
    + _COUNT
    + r"(?:(?P<vram_before>\d{1,3})\s?"
    + _GB
    + r"\s?(?:的|-)?\s?)?"
    r"(?:nvidia\s?|geforce\s?){0,2}" + _NAME + r"(?:'?s)?(?:" + _FORM.format(group="form") + ")?"
    r"(?:\s?[-(_]?\s?(?P<vram_after>\d{1,3})\s?"
    + _GB
    + r"(?!\s?(?:vram\s|gpu\smemory\s)?(?:total|in"
    r"\stotal|combined))\)?(?:'?s)?|[-_](?P<vram_bare>" + _BARE_SIZES + r")(?![a-z0-9_.])"
    # "h100 80", "use a100 80 instead": a bare size after a space, unless a number or a unit
    # follows it ("4090 24 layers", "a100 40 3 epochs", "4090 16 bit").
    r"|\s(?P<vram_spaced>" + _BARE_SIZES + r")(?![a-z0-9_.]|\s?[\d.]|\s?" + _UNIT_AFTER + r"))?"
    r"(?:" + _FORM.format(group="form_after") + ")?"
    r"(?:\s?(?:x|\*)\s?(?P<count_after>\d{1,4})(?!\d|\.\d|\s?(?:gb|g|b|k|bit)\b)|"
    r"\s?(?P<count_cn>\d{1,3})\s?(?:张|块)(?!\d))?"
    r"(?:\s?\*\s?(?P<nodes_after>\d{1,3})\s?(?:机|nodes?))?"
    r"(?![a-z0-9])"
)
# The card name anchors a _CARD match: what can precede it (nodes, count, adjectives, memory,
# "nvidia geforce") is at most 67 characters.
_CARD_NAME = lazy_pattern(_NAME_START + _NAME)
_CARD_REACH = 80
# A launcher's or trainer's GPU count: "Num GPUs = 1", "--num_processes 4", "nproc_per_node=8".
_GPU_KEY = lazy_pattern(
    r"(?:num[_\s]gpus|n_gpus|num_processes|nproc_per_node)\s?[=:]?\s?(?P<count>\d{1,5})(?![\d.])"
)
_UNNAMED = lazy_pattern(
    r"(?<![a-z0-9_.])"
    + _NODES
    + r"(?:(?P<count>\d{1,7})(?![\d.])|(?P<word>"
    + _WORD
    + r"))\s?(?:x|\*|-)?\s?"
    r"(?:(?P<vram>\d{1,3})\s?" + _GB + r"\s?)?(?:nvidia\s?)?"
    r"(?:gpus?|cards?|vcards?|devices|gpu's|卡|张卡|块卡)(?![a-z])"
    r"(?:\s?\*\s?(?P<vram_cn>\d{1,3})\s?"
    + _GB
    + r"\s?显存)?(?:\s?\*\s?(?P<nodes_after>\d{1,3})\s?(?:机|nodes?))?"
    r"|(?P<word_cn>单卡|双卡|单张卡)(?!显存)"
)
# "A100 80GB (8 of them)", "on 8 of them": a count of the card already named.
_OF_THEM = lazy_pattern(
    r"(?<![\d.])(?P<count>\d{1,4})\s(?:of\s(?:them|those|these)|such\scards)(?![a-z])"
)
_CARD_WORDS = lazy_pattern(r"gpu|card|device|卡|单张")
# "2 x 24GB": a count of cards of that size, no name needed.
_COUNT_VRAM = lazy_pattern(
    r"(?<![a-z0-9_.])(?P<count>\d{1,4})\s?[x*]\s?(?P<vram>\d{1,3})\s?"
    + _GB
    # "80gb x 8": the size first, then the count.
    + r"|(?<![a-z0-9_.])(?P<vram2>\d{1,3})\s?"
    + _GB
    + r"\s?[x*]\s?(?P<count2>\d{1,4})(?![\d.])"
)
# "5x24x8 A100 GPU hours" is days × hours × GPUs: the leading factors are not GPU counts.
_GPU_HOURS = lazy_pattern(
    r"(?<![\d.])(?P<lead>(?:\d{1,4}\s?[x*]\s?){2})(?=\d{1,4}[^.]{0,30}gpu[-\s]?h(?:ou)?rs?)"
)
# "两台机器，每台8张A800", "2 nodes, each with 8 GPUs": a node count, then the GPUs per node.
_NODES_EACH = lazy_pattern(
    r"(?<![\d.])(?P<nodes>\d{1,3})\s?(?:台|nodes?|machines?|servers?)\s?(?:机器|服务器)?\s?[,，]?\s?"
    r"(?:每台|each\s(?:with|has|having)|with\s(?=\d{1,3}\s?(?:x\s?)?\S{1,12}\seach))"
    r"(?=\s?(?P<per_node>\d{1,3})?)"
)
_NODE_WORDS = lazy_pattern(r"台|node|machine|server")
_NODE_PRODUCT = lazy_pattern(
    r"(?<![\d.])(?P<nodes>\d{1,3})\s?nodes?\s?[*x]\s?(?P<count>\d{1,3})(?![\d.])"
)


def _display(m: re.Match[str]) -> str:
    consumer = m.group("consumer")
    if consumer:
        prefix = "GTX" if int(consumer) < 2000 else "RTX"
        written_tier = (m.group("tier") or "").replace(" ", "")
        tier = {"ti": " Ti", "super": " SUPER", "tisuper": " Ti SUPER"}.get(written_tier, "")
        return f"{prefix} {consumer}{tier}"
    written, start, end = m.group("name"), m.start("name"), m.end("name")
    for pattern, display in _CARD_DISPLAYS:
        # Matched in place: a bare "m2" is a chip only with the Mac word after it in view.
        found = pattern.match(m.string, start)
        if found and found.end() == end:
            chip = re.search(r"m[1-4]\s?(?:pro|max|ultra)?$", written)
            if chip and display.startswith(("Apple", "Mac")):
                name = chip.group(0).upper().replace(" ", "")
                return "Apple " + (name[:2] + " " + name[2:].title()).strip()
            return display
    raise AssertionError(written)


def with_memory(name: str, vram_gb: float) -> str:
    """ "A100" + 40 → "A100 40GB" for cards sold in several sizes; other names unchanged."""
    return f"{name} {whole(vram_gb)}GB" if name in MEMORY_VARIANTS else name


def _vram_gb(m: re.Match[str], group: str) -> int | float | None:
    written = m.groupdict().get(group)
    if not written:
        return None
    unit = "gib" if m.string[m.end(group) : m.end(group) + 4].lstrip().startswith("gib") else "gb"
    return whole(round(convert(float(written), unit, "gb"), 1))


def _count(m: re.Match[str], r: Reading) -> int | None:
    found = m.groupdict()
    count: int | None = None
    for group in ("count", "xcount", "count_after", "count_cn"):
        if found.get(group):
            count = int(found[group])
    word = found.get("word") or found.get("word_cn")
    if word and not count and not (word == "my" and m.group(0).endswith("s")):
        count = _COUNT_WORDS[word]  # "my 4090s" is more than one, "my 4090" is one
    nodes, nodes_after = found.get("nodes"), found.get("nodes_after")
    if nodes and not count:
        # "2x3090": the only count sits where a node count could be.
        nodes, count = None, int(nodes)
    if nodes and count:
        if " with" in m.group(0) and "each" not in r.text[m.end() : m.end() + 12]:
            r.assume(PARSING("nodes_with", nodes=nodes, count=count))
        else:
            r.assume(PARSING("nodes_times", nodes=nodes, count=count, total=int(nodes) * count))
            count *= int(nodes)
    if nodes_after and count:
        total = count * int(nodes_after)
        r.assume(PARSING("machines_times", count=count, machines=nodes_after, total=total))
        count *= int(nodes_after)
    return count


def read_gpus(r: Reading) -> None:
    nodes = per_node_written = None
    for m in r.matches_at_numbers(_NODES_EACH) if _NODE_WORDS.search(r.text) else ():
        nodes = int(m.group("nodes"))
        per_node_written = m.group("per_node")
        r.take(m)
    _read_cards(r)
    total = r.fields.get("num_gpus")
    if nodes and per_node_written and total == nodes * int(per_node_written):
        # "16张A100（两台机器，每台8张）": the count before the nodes was already the total.
        r.assume(PARSING("nodes_total", nodes=nodes, per_node=per_node_written, total=total))
        per_node = re.search(rf"(?<![\d.]){per_node_written}\s?(?:张|卡|gpus?)", r.text)
        if per_node:
            r.take(per_node)
    elif nodes and total:
        per_node = total
        r.fields["num_gpus"] = per_node * nodes
        r.assume(PARSING("nodes_each", nodes=nodes, per_node=per_node, total=per_node * nodes))


def _read_cards(r: Reading) -> None:
    for m in r.matches_at_numbers(_GPU_HOURS) if "gpu" in r.text else ():
        # Days × hours a day is the wall-clock time the run may take (as "3天x24 GPU 小时").
        days, per_day = (int(factor) for factor in re.findall(r"\d+", m.group("lead")))
        hours = days * per_day
        said = PARSING("day_hours", days=days, per_day=per_day, hours=hours)
        r.put("deadline_hours", hours, said)
        r.take(m, "lead")
    cards: list[dict[str, Any]] = []
    bases: list[str] = []
    for m in r.matches_near(_CARD, _CARD_NAME, _CARD_REACH):
        name = _display(m)
        card: dict[str, Any] = {"gpu": name}
        written_form = m.group("form") or m.group("form_after")
        form = _FORMS.get(written_form, written_form.upper()) if written_form else None
        if form and name.endswith(form):
            form = None  # "h100 nvl" is the card name itself
        vram = next(
            (
                size
                for group in ("vram_before", "vram_after", "vram_bare", "vram_spaced")
                if (size := _vram_gb(m, group))
            ),
            None,
        )
        if vram:
            card["gpu_vram_gb"] = vram
            card["gpu"] = with_memory(name, vram)
        if form:
            card["gpu"] += " " + form
        count = _count(m, r)
        if count:
            card["num_gpus"] = count
        r.take(m)
        name = card["gpu"] if form else name  # "h100 pcie vs h100 sxm" are two cards
        if name.startswith(_MAC):
            # "M2 macbook", "M2 Pro mac mini": the chip and the Mac word are one machine.
            name = _MAC[0]
            if name in bases and cards[bases.index(name)]["gpu"] == _MAC[1]:
                cards[bases.index(name)]["gpu"] = card["gpu"]
        if name in bases:
            for key, value in card.items():
                cards[bases.index(name)].setdefault(key, value)
        else:
            bases.append(name)
            cards.append(card)
    for m in r.matches(_UNNAMED) if _CARD_WORDS.search(r.text) else ():
        count = _count(m, r)
        if count:
            r.put("num_gpus", count)
        vram = _vram_gb(m, "vram") or _vram_gb(m, "vram_cn")
        if vram:
            r.put("gpu_vram_gb", vram)
        r.take(m)
    for m in r.matches_if(("of th", "such"), _OF_THEM):
        r.put("num_gpus", int(m.group("count")))
        r.take(m)
    for m in r.matches_if(("gpus", "proc"), _GPU_KEY):
        r.put("num_gpus", int(m.group("count")))
        r.take(m)
    for m in r.matches_at_numbers(_COUNT_VRAM):
        first = bool(m.group("count"))
        r.put("num_gpus", int(m.group("count" if first else "count2")))
        r.put("gpu_vram_gb", _vram_gb(m, "vram" if first else "vram2"))
        r.take(m)
    for m in r.matches_at_numbers(_NODE_PRODUCT) if "node" in r.text else ():
        total = int(m.group("nodes")) * int(m.group("count"))
        r.put("num_gpus", total, PARSING("gpu_count", written=m.group(0).strip(), total=total))
        r.take(m)
    if not cards:
        return
    first, *others = cards
    for key, value in first.items():
        r.put(key, value)
    r.alternatives.extend(others)
