"""JSON from strangers, parsed within limits: how deep it nests and how long a number may be.

Python's parser recurses once per level, so a value nested a thousand deep raises RecursionError,
and it converts any run of digits, so an integer of more than 4,300 digits raises a ValueError
about int conversion (CPython's guard against quadratic conversion). Neither is a JSONDecodeError,
so each used to escape as "Something went wrong" and a traceback. Here both are refused up front
with a sentence: nothing a person pastes (a model's config.json nests 3 or 4 deep) comes close.
"""

from __future__ import annotations

import json
import re
from typing import Any

from planner.patterns import lazy_pattern

MAX_DEPTH = 64
MAX_NUMBER_CHARS = 100  # a float64 needs 17 significant digits; an exponent says the rest
# Strings (skipped whole, escapes included) and the brackets that open or close a level.
_STRUCTURE = lazy_pattern(r'"(?:[^"\\]|\\.)*"|[\[\]{}]', re.DOTALL)


class JsonRefused(ValueError):
    """JSON that does not parse or breaks a limit; the message is a sentence for the user."""


def raw_decode(text: str, start: int = 0) -> tuple[Any, int]:
    """json.JSONDecoder.raw_decode within the limits: the value at `start` and where it ends."""
    _check_depth(text, start)
    decoder = json.JSONDecoder(parse_int=_int, parse_float=_float)
    try:
        return decoder.raw_decode(text, start)
    except json.JSONDecodeError as error:
        raise JsonRefused(f"{error.msg} at line {error.lineno}, column {error.colno}") from None
    except RecursionError:  # the depth check above should make this unreachable
        raise JsonRefused(f"it nests deeper than {MAX_DEPTH} levels") from None


def loads(text: str) -> Any:
    """json.loads within the limits (whitespace only after the value)."""
    value, end = raw_decode(text, len(text) - len(text.lstrip()))
    if text[end:].strip():
        raise JsonRefused(f"extra data after the JSON value at character {end}")
    return value


def _check_depth(text: str, start: int) -> None:
    depth = 0
    for token in _STRUCTURE.finditer(text, start):
        bracket = token.group()
        if bracket in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                raise JsonRefused(f"it nests deeper than {MAX_DEPTH} levels")
        elif bracket in "]}":
            depth -= 1
            if depth <= 0:
                return


def _int(digits: str) -> int:
    if len(digits) > MAX_NUMBER_CHARS:
        raise JsonRefused(f"it has a number {len(digits):,} digits long")
    return int(digits)


def _float(digits: str) -> float:
    if len(digits) > MAX_NUMBER_CHARS:
        raise JsonRefused(f"it has a number {len(digits):,} characters long")
    return float(digits)
