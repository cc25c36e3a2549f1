"""Reports from real runs: "it actually peaked at 21.3 GiB", "nvidia-smi showed 23 GB",
"max_memory_allocated = 18.2GB", "实际显存占用 21G".

A peak becomes `measured_peak_gib` with `measured_metric` (how it was read: nvidia-smi, torch's
allocated or reserved, else unknown). Running out of memory is a report only against a thread's
job ("OOM at step 3", "4090 上 OOM 了", "显存不够"), so the conversation reads it
(`oom_reported`), not every question.
Before the card-memory reader, so a measured "23 GB" is never read as the card's size. GB is read
as GiB: nvidia-smi prints MiB and torch bytes, which people divide by 1024³ and call GB.
"""

from __future__ import annotations

import re

from planner.messages import PARSING
from planner.parsing.reading import Reading
from planner.patterns import lazy_pattern

_AMOUNT = r"(?P<num>\d{1,6}(?:\.\d{1,3})?)\s?(?P<unit>gib|gb|g|mib|mb)(?![a-z])"
# A verb of measuring right before the amount; the peak verbs are reports by themselves, the
# others only when the message says it is a measurement (_MEASURED).
_PEAK_VERB = (
    r"peak(?:ed|s)?(?:\s+(?:memory|vram|usage|mem|gpu\s+memory))?(?:\s+(?:at|of|was|is|around|"
    r"about))?|maxed\s+out\s+at|topped\s+out\s+at|max_memory_(?:allocated|reserved)\(?\)?"
    r"|峰值(?:显存)?"
)
_USE_VERB = (
    r"used|using|uses|took|takes|consumed|consumes|hit|hits|reached|shows?|showed|showing|"
    r"said|says|reports?|reported|sits?\s+at|sat\s+at|was\s+at|came\s+to|占用(?:了)?|用了|使用了"
)
_REPORT = lazy_pattern(
    rf"(?:(?P<peak>{_PEAK_VERB})|(?P<use>{_USE_VERB}))\s*(?:(?:was|is|of|at|about|around|roughly|"
    rf"~|≈|=|:|到|约|大约|为|是)\s*){{0,2}}{_AMOUNT}"
)
_MEASURED = lazy_pattern(
    r"actual(?:ly)?|in practice|measured|observed|nvidia-smi|nvidia\s+smi|max_memory|memory_"
    r"(?:allocated|reserved)|torch\.cuda|real\s+run|my\s+run|our\s+run|\bit\s+(?:used|took)|"
    r"we\s+saw|i\s+saw|实际|实测"
)
_METRICS = (
    ("nvidia-smi", lazy_pattern(r"nvidia[\s-]?smi|nvtop|gpustat")),
    ("allocated", lazy_pattern(r"allocated")),
    ("reserved", lazy_pattern(r"reserved")),
)
# Word edges by letters and digits, not \b: Chinese characters are word characters, and "OOM了"
# has no \b after OOM. Chinese says it with 显存 (card memory) and a word of running out or
# bursting on either side: 爆显存, 显存不够, 显存炸了, 4090 显存不足.
_OOM = lazy_pattern(
    r"(?<![a-z0-9])(?:cuda\s+)?oom(?:ed|'d|s)?(?![a-z0-9])|out\s+of\s+memory|outofmemoryerror|"
    r"ran\s+out\s+of\s+(?:gpu\s+|vram\s+|cuda\s+)?memory|"
    r"(?:爆|炸|撑爆了?)\s?显存|显存\s?(?:不够|不足|溢出|(?:又|直接)?(?:爆|炸)了?|oom)",
    re.IGNORECASE,
)
# "Would it OOM?", "会不会爆显存": a question about the job, not a report of a run.
_HYPOTHETICAL = lazy_pattern(
    r"\b(?:would|will|could|might|can|does|do|is\s+it\s+going\s+to|am\s+i\s+going\s+to)\b"
    r"[^.!\n]{0,40}(?:oom|out\s+of\s+memory|run\s+out)|会不会|会\s*爆|是否|能不能|\?\s*$|？\s*$",
    re.IGNORECASE,
)
_UNIT_GIB = {"gib": 1.0, "gb": 1.0, "g": 1.0, "mib": 1 / 1024, "mb": 1 / 1024}


def read_report(r: Reading) -> None:
    text = r.text
    m = _REPORT.search(text)
    if m is not None and (m.group("peak") or _MEASURED.search(text)):
        peak_gib = r.number(m, "num", "The measured peak") * _UNIT_GIB[m.group("unit")]
        metric = next((name for name, pattern in _METRICS if pattern.search(text)), "unknown")
        r.put("measured_peak_gib", round(peak_gib, 3))
        r.put("measured_metric", metric, PARSING("measured_peak", written=m.group(0).strip()))
        r.take(m)


# The OOM clause with where it happened ("OOM at step 3"), taken out before the rest is parsed.
_OOM_CLAUSE = lazy_pattern(
    _OOM.pattern + r"(?:\s*(?:at|after|on|in|during)\s+(?:step|iteration|iter|epoch|batch)\s*\d+)?",
    re.IGNORECASE,
)


def without_oom_report(text: str) -> str:
    """`text` without its OOM clause, for reading what else it says ("OOM on 2x4090")."""
    return _OOM_CLAUSE.sub(" ", text)


def oom_reported(text: str) -> bool:
    """The message reports a run that ran out of memory (not "would it OOM?")."""
    return _OOM.search(text) is not None and _HYPOTHETICAL.search(text) is None
