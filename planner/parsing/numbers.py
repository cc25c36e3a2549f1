"""Numbers in free text: bounded patterns (no nested repeats, so no catastrophic backtracking)."""

from __future__ import annotations

import math
import re

from planner.messages import PARSING
from planner.patterns import lazy_pattern
from planner.words import Said

# 409,600 · 20 · 6.7 · .5 · 1e5 · 1e999 (the last is refused by `to_float`, not by the pattern).
# A number never starts inside another one; the lookbehind also keeps the search linear on a
# 2,000-digit run.
NUM = (
    r"(?<![\d.])(?<!\d,)(?:\d{1,3}(?:,\d{3}){1,5}(?![\d,])|\d{1,16}(?:\.\d{1,8})?"
    r"(?:e[+-]?\d{1,4}(?![a-z0-9_]|\.\d))?|\.\d{1,8})"
)

# Count suffixes: "20M tokens", "41k rows", "1.2bn", "1.1T tokens". "b" is left to model sizes.
COUNT_SCALES: dict[str, float] = {"k": 1e3, "m": 1e6, "mn": 1e6, "bn": 1e9, "t": 1e12}
COUNT_SUFFIX = r"(?:bn|mn|k|m|t)"

# A GeForce card's number ("3090", "4060", "1080"), never a count or a length next to a keyword.
GEFORCE_NUMBER = r"(?:[1-5]0[5-9]0)(?![\d.])"

# Far beyond any real job; a bigger figure is a typo or an attack and gets a clear message.
ABSURD = 1e18
# A run of digits this long is refused before any reader sees it.
TOO_MANY_DIGITS = lazy_pattern(r"\d{20}")


class BadNumber(ValueError):
    """A number the planner cannot use; `str()` is a short message for the user."""


def to_float(written: str) -> float:
    """The value of a number matched by NUM; refuses infinities and absurd magnitudes."""
    value = float(written.replace(",", ""))
    if not math.isfinite(value) or abs(value) > ABSURD:
        raise BadNumber(f"{written} is too large a number to plan with.")
    return value


def scaled(written: str, suffix: str | None) -> float:
    """NUM with an optional count suffix ("20" + "m" → 20e6)."""
    return to_float(written) * COUNT_SCALES.get((suffix or "").lower(), 1.0)


def whole(value: float) -> int | float:
    """An int when the value is whole (JSON shows 3, not 3.0)."""
    return int(value) if value == int(value) else value


# "2^13", "2**13": a power is read as its value. A tower ("9**9**9") is never evaluated, and a
# power too big to plan with is set aside with a note, never truncated ("10^30 ctx" is not 30).
_POWER = lazy_pattern(
    r"(?<![\d.])(?P<base>\d{1,6}(?:\.\d{1,4})?)\s?(?:\^|\*\*)\s?(?P<exp>\d{1,20})(?![\d.])"
    r"(?P<tower>(?:\s?(?:\^|\*\*)\s?\d{1,20}(?:\.\d{1,8})?){1,50})?"
)


def expand_powers(text: str) -> tuple[str, list[Said]]:
    """`text` with each power written out as a plain number, and a note per tower set aside."""
    if "^" not in text and "**" not in text:
        return text, []
    notes: list[Said] = []

    def value(match: re.Match[str]) -> str:
        if match.group("tower"):
            # The tower is not echoed back: "*" and "^" are markup on chat platforms.
            tower = PARSING("note.tower")
            if tower not in notes:
                notes.append(tower)
            return " " * len(match.group(0))
        base, exponent = float(match.group("base")), int(match.group("exp"))
        if base > 1 and exponent * math.log10(base) > math.log10(ABSURD):
            # Refused, not truncated: the value is set aside and the reader told why.
            notes.append(
                PARSING("note.power_too_large", base=match.group("base"), exponent=exponent)
            )
            return " " * len(match.group(0))
        power = base**exponent
        return str(int(power)) if power == int(power) else f"{power:g}"

    return _POWER.sub(value, text), notes
