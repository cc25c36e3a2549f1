"""The project's pint unit registry, and the one way free text becomes a quantity.

Safety: user text never reaches pint's string parser (an exponent tower like "9**9**9 tokens" hangs
it). Callers pass a float and one of the whitelisted spellings in `UNIT_SPELLINGS`; the registry
is built from planner/data/units.txt, not pint's default file.

Start-up: importing pint costs ~0.25 s, half of the CLI's cold-start budget, so pint is imported
only when a value has to change unit; a value already in the wanted unit is returned as is.
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING

from planner.data_files import DATA_DIR
from planner.messages import DURATIONS

if TYPE_CHECKING:
    import pint

UNITS_FILE = DATA_DIR / "units.txt"

# Bytes in a GiB: PyTorch and nvidia-smi report binary units, so every byte count the planner
# shows goes through this one figure (no pint on the hot path).
GIB = float(2**30)

# How people write each unit → its name in units.txt. Anything else is not a unit to us.
UNIT_SPELLINGS: dict[str, str] = {
    "byte": "byte",
    "bytes": "byte",
    "kb": "kilobyte",
    "mb": "megabyte",
    "g": "gigabyte",
    "gb": "gigabyte",
    "tb": "terabyte",
    "kib": "kibibyte",
    "mib": "mebibyte",
    "gib": "gibibyte",
    "tib": "tebibyte",
    "s": "second",
    "sec": "second",
    "secs": "second",
    "second": "second",
    "seconds": "second",
    "min": "minute",
    "mins": "minute",
    "minute": "minute",
    "minutes": "minute",
    "h": "hour",
    "hr": "hour",
    "hrs": "hour",
    "hour": "hour",
    "hours": "hour",
    "小时": "hour",
    "d": "day",
    "day": "day",
    "days": "day",
    "天": "day",
    "w": "week",
    "wk": "week",
    "week": "week",
    "weeks": "week",
    "周": "week",
    "month": "month",
    "months": "month",
    "token": "token",
    "tokens": "token",
    "sample": "sample",
    "samples": "sample",
    "epoch": "epoch",
    "epochs": "epoch",
    "$": "dollar",
    "usd": "dollar",
    "dollar": "dollar",
    "dollars": "dollar",
    "cent": "cent",
    "cents": "cent",
}


class UnknownUnit(ValueError):
    """A unit spelling outside the whitelist."""


@cache
def registry() -> pint.UnitRegistry:
    """The registry, built once per process from our own small definitions file."""
    import pint

    return pint.UnitRegistry(str(UNITS_FILE), cache_folder=None)


def unit_name(spelling: str) -> str:
    """The registry name for a user's spelling ("GiB" → "gibibyte"); raises UnknownUnit."""
    name = UNIT_SPELLINGS.get(spelling.strip().lower())
    if name is None:
        raise UnknownUnit(f"unknown unit {spelling!r}")
    return name


def convert(value: float, spelling: str, target: str) -> float:
    """`value` in the unit the user spelled, expressed in `target` (a registry name or spelling)."""
    source, wanted = unit_name(spelling), unit_name(target)
    if source == wanted:
        return value
    return float(value) * _factor(source, wanted)


@cache
def _factor(source: str, wanted: str) -> float:
    """How many `wanted` make one `source`: asked of pint once per pair (every unit in units.txt
    is a plain multiple, so one factor converts any value)."""
    return float(registry().Quantity(1.0, source).to(wanted).magnitude)


def hours_text(value_h: float) -> str:
    """How a duration reads everywhere (plan summaries, suggestions, replies): minutes under an
    hour ("12 min", never "0.0 h"), hours under two days, then days."""
    if value_h < 1:
        return DURATIONS("min", minutes=max(1, round(value_h * 60)))
    if value_h < 48:
        return DURATIONS("h", hours=value_h)
    return DURATIONS("days", days=value_h / 24)
