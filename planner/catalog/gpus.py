"""The GPU catalog: what each rentable card holds and computes, read from planner/data/gpus.csv.

Memory is stored as the nvidia-smi total in MiB and exposed as `usable_gib` (MiB / 1024): that is
what a renter sees and what the memory model's `required_gib` is compared against. Marketed "GB"
are binary-sized on GDDR cards (a "24 GB" RTX 4090 reports 24,564 MiB = 23.99 GiB) and a little
under on HBM cards (an "80 GB" H100 reports about 81,559 MiB = 79.65 GiB); ECC-enabled cards
(L4, L40S, A40, A10) lose a further ~6 %.

Names resolve loosely: "4090", "RTX4090", "a100-80gb", "A100 80G", "H100 SXM", "mi300x". A bare
family name that several cards share ("A100", "H100") resolves to the variant rental markets list
most and `read_gpu` says which one it picked.
"""

from __future__ import annotations

import csv
import difflib
import re
import statistics
from dataclasses import dataclass
from functools import cache, lru_cache
from typing import Literal, NamedTuple

from planner.data_files import DATA_DIR
from planner.messages import CARDS, NAMES
from planner.words import Listing

CardClass = Literal["consumer", "workstation", "datacenter"]
Link = Literal["nvlink", "pcie"]

GPUS_CSV = DATA_DIR / "gpus.csv"
MIB_PER_GIB = 1024
MAX_NAME_CHARS = 40
# Words that carry no identity: "NVIDIA GeForce RTX 4090 GPU" and "4090" are the same card.
_NOISE_WORDS = frozenset(
    {"nvidia", "geforce", "rtx", "tesla", "amd", "instinct", "gpu", "gpus", "card", "the", "a"}
)
_MEMORY_TOKEN = re.compile(r"^(\d+(?:\.\d+)?)(?:gb|g|gib)$")
_VARIANT_SPELLINGS = {"sxm2": "sxm", "sxm4": "sxm", "sxm5": "sxm", "nvlink": "nvl"}


# Chip families with FP8 tensor cores that the FP8 training stacks (Transformer Engine, torchao
# float8) support for training: Hopper and Blackwell.
FP8_CHIP_FAMILIES = frozenset({"hopper", "blackwell-gb100", "blackwell-gb20x"})


@dataclass(frozen=True, slots=True)
class GpuSpec:
    """One card. Compute is dense BF16 tensor TFLOPS with FP32 accumulate (FP16 where no BF16)."""

    key: str
    name: str
    vendor: str
    usable_gib: float
    bf16_tflops: float
    bandwidth_gbs: float
    interconnect: str
    supports_bf16: bool
    form: str
    source: str
    marketed_gb: float = 0.0
    link: Link = "pcie"
    card_class: CardClass = "datacenter"
    memory_note: str = ""
    checked: str = ""
    notes: str = ""
    aliases: tuple[str, ...] = ()
    # Board power (W) and chip family: what the card can sustain under a long matmul load depends
    # on both (planner/estimate/throughput.py). None where the catalog has no trustworthy TDP.
    tdp_w: float | None = None
    chip_family: str = ""


@dataclass(frozen=True, slots=True)
class GpuMatch:
    """What a loosely written card name was read as; `note` says so when the reading was a guess."""

    gpu: GpuSpec
    note: str | None = None


def _row_to_spec(row: dict[str, str]) -> GpuSpec:
    return GpuSpec(
        key=row["key"],
        name=row["name"],
        vendor=row["vendor"],
        usable_gib=round(float(row["nvidia_smi_mib"]) / MIB_PER_GIB, 2),
        bf16_tflops=float(row["bf16_tflops"]),
        bandwidth_gbs=float(row["bandwidth_gbs"]),
        interconnect=row["interconnect"],
        supports_bf16=row["supports_bf16"].strip().lower() == "true",
        form=row["form"],
        source=row["source"],
        marketed_gb=float(row["marketed_gb"]),
        link="nvlink" if row["link"] == "nvlink" else "pcie",
        card_class=row["card_class"],  # type: ignore[arg-type]
        memory_note=row["memory_note"],
        checked=row["checked"],
        notes=row["notes"],
        aliases=tuple(a.strip() for a in row["aliases"].split("|") if a.strip()),
        tdp_w=float(row["tdp_w"]) if row["tdp_w"] else None,
        chip_family=row["chip_family"],
    )


@cache
def all_gpus() -> list[GpuSpec]:
    """Every catalog card, in catalog order (roughly by generation and class)."""
    with GPUS_CSV.open(encoding="utf-8", newline="") as handle:
        return [_row_to_spec(row) for row in csv.DictReader(handle)]


@cache
def _by_key() -> dict[str, GpuSpec]:
    return {gpu.key: gpu for gpu in all_gpus()}


def gpu_by_key(key: str) -> GpuSpec | None:
    return _by_key().get(key)


def gpu_names() -> list[str]:
    """Display names and the aliases people type, for autocomplete and the parser."""
    names: list[str] = []
    for gpu in all_gpus():
        names.append(gpu.name)
        names.extend(gpu.aliases)
    return list(dict.fromkeys(names))


def _words(text: str) -> tuple[list[str], float | None]:
    """Identity words of a card name and the memory size it states, if any."""
    lowered = text.lower().replace("(", " ").replace(")", " ")
    # "80 GB" and "80GB" are one token; "rtx4090" is "4090".
    lowered = re.sub(r"(\d)\s+(gb|gib|g)\b", r"\1\2", lowered)
    words: list[str] = []
    memory_gb: float | None = None
    for raw in re.split(r"[^a-z0-9.]+", lowered):
        token = raw.strip(".")
        if token.startswith("rtx") and len(token) > 3:
            token = token[3:]
        if not token or token in _NOISE_WORDS:
            continue
        memory = _MEMORY_TOKEN.match(token)
        if memory:
            memory_gb = float(memory.group(1))
            continue
        # "a100-80gb" arrives as one token only when written without a separator: "a10080gb".
        glued = re.match(r"^([a-z]+\d+[a-z]*?)(\d{2,3})(gb|g)$", token)
        if glued:
            words.append(glued.group(1))
            memory_gb = float(glued.group(2))
            continue
        words.append(_VARIANT_SPELLINGS.get(token, token))
    return words, memory_gb


def _compact(text: str) -> str:
    words, memory_gb = _words(text)
    return "".join(words) + (f"{memory_gb:g}gb" if memory_gb else "")


@cache
def _alias_index() -> dict[str, GpuSpec]:
    index: dict[str, GpuSpec] = {}
    for gpu in all_gpus():
        for spelling in (gpu.key, gpu.name, *gpu.aliases):
            index.setdefault(_compact(spelling), gpu)
    return index


def _family(words: list[str]) -> str | None:
    return next((word for word in words if any(ch.isdigit() for ch in word)), None)


@cache
def _card_words() -> list[tuple[GpuSpec, str | None, frozenset[str], float]]:
    table = []
    for gpu in all_gpus():
        words, _ = _words(gpu.name)
        table.append((gpu, _family(words), frozenset(words), gpu.marketed_gb))
    return table


def read_gpu(name: str) -> GpuMatch | None:
    """Read a loosely written card name; None when it names no catalog card."""
    if not name or not name.strip():
        return None
    compact = _compact(name)
    exact = _alias_index().get(compact)
    if exact is not None:
        words, _ = _words(name)
        siblings = [gpu for gpu, family, _, _ in _card_words() if family == _family(words)]
        if len(siblings) > 1 and compact == _family(words):
            others = Listing((gpu.name for gpu in siblings if gpu is not exact), zh_sep=", ")
            note = CARDS("read_as", name=name.strip(), card=exact.name, others=others)
            return GpuMatch(exact, note)
        return GpuMatch(exact)
    words, memory_gb = _words(name)
    family = _family(words)
    if family is None:
        return None
    candidates = [
        (gpu, card_words)
        for gpu, card_family, card_words, marketed_gb in _card_words()
        if card_family == family and (memory_gb is None or abs(marketed_gb - memory_gb) < 1)
    ]
    # Words no sibling carries ("HBM3" in "NVIDIA H100 80GB HBM3") cannot tell siblings apart.
    known_words = frozenset().union(*(card_words for _, card_words in candidates))
    variants = (set(words) - {family}) & known_words
    matching = [gpu for gpu, card_words in candidates if variants <= card_words]
    if not matching:
        return None
    default = _alias_index().get(family)
    chosen = default if default in matching else matching[0]
    if len(matching) == 1:
        return GpuMatch(chosen)
    others = Listing((gpu.name for gpu in matching if gpu is not chosen), zh_sep=", ")
    return GpuMatch(chosen, CARDS("read_as", name=name.strip(), card=chosen.name, others=others))


def resolve_gpu(name: str) -> GpuSpec | None:
    """The catalog card a loosely written name means, or None."""
    match = read_gpu(name)
    return match.gpu if match else None


def closest_gpus(name: str, n: int = 3) -> list[GpuSpec]:
    """The catalog cards whose names look most like `name`, best first (for "did you mean")."""
    # Card names are short; a pasted paragraph need not cost a quadratic string comparison.
    target = (_compact(name[:MAX_NAME_CHARS]) or name.lower())[:MAX_NAME_CHARS]
    target_letters = re.match(r"[a-z]*", target).group()
    best: dict[str, float] = {}
    for spelling, gpu in _alias_index().items():
        score = difflib.SequenceMatcher(None, target, spelling).ratio()
        # Same letter prefix means same product line ("H300" is nearer H100/H200 than 3090).
        if target_letters and spelling.startswith(target_letters):
            score += 0.25
        best[gpu.key] = max(best.get(gpu.key, 0.0), score)
    ranked = sorted(best.items(), key=lambda item: -item[1])
    return [_by_key()[key] for key, _ in ranked[:n]]


# Apple silicon: the GPU shares the Mac's unified memory and runs Metal, not CUDA.
_APPLE = re.compile(
    r"\bapple\b|mac\s?book|mac\s?(?:studio|mini)|(?<![a-z0-9])m[1-9]\s?(?:pro|max|ultra)"
)


def is_apple_silicon(name: str) -> bool:
    return bool(_APPLE.search(name.lower()))


def apple_silicon_sentence(name: str, memory_gb: float | None) -> str:
    """The plain answer for a Mac: what its memory is and what trains there (no rental row).
    macOS caps what the GPU may wire at about 75 % of unified memory on large-memory Macs
    (Metal's recommendedMaxWorkingSetSize [uncertain: the fraction varies by model and macOS
    release; sysctl iogpu.wired_limit_mb raises it])."""
    memory = CARDS("apple.memory", gb=memory_gb) if memory_gb else CARDS("apple.memory_unknown")
    return CARDS("apple", name=name, memory=memory)


# The card a job names: a catalog card read from what the user wrote, or a generic card of the
# size they gave, with what was assumed or not understood.
GENERIC_PREFIX = "generic-"


@cache
def _gib_per_marketed_gb() -> float:
    """How much of a marketed GB nvidia-smi shows, typical over the catalog."""
    return statistics.median(gpu.usable_gib / gpu.marketed_gb for gpu in all_gpus())


def generic_card(vram_gb: float) -> GpuSpec:
    """A card known only by its size ("70b qlora 48gb?"): fit only, no speed or price."""
    return GpuSpec(
        key=f"{GENERIC_PREFIX}{vram_gb:g}gb",
        name=f"{vram_gb:g} GB card",
        vendor="",
        usable_gib=round(vram_gb * _gib_per_marketed_gb(), 2),
        bf16_tflops=0.0,
        bandwidth_gbs=0.0,
        interconnect="",
        supports_bf16=True,
        form="",
        source="size given by the user",
        marketed_gb=vram_gb,
    )


class RequestedCard(NamedTuple):
    gpu: GpuSpec | None
    assumptions: tuple[str, ...]
    warnings: tuple[str, ...]


# The catalog is fixed for the process and chat users name the same few dozen cards, so a card
# name is read (fuzzy matching over every alias) once.
@lru_cache(maxsize=512)
def requested_card(name: str | None, vram_gb: float | None) -> RequestedCard:
    assumptions: list[str] = []
    warnings: list[str] = []
    if name and is_apple_silicon(name):
        return RequestedCard(None, (), (apple_silicon_sentence(name, vram_gb),))
    if name:
        match = read_gpu(name)
        if match is not None:
            if match.note:
                assumptions.append(match.note)
            return RequestedCard(match.gpu, tuple(assumptions), ())
        nearest = ", ".join(gpu.name for gpu in closest_gpus(name))
        warnings.append(NAMES("unknown_card", name=name, nearest=nearest))
    gpu = generic_card(vram_gb) if vram_gb else None
    return RequestedCard(gpu, tuple(assumptions), tuple(warnings))
