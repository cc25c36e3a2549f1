"""Sizes that only a name or a parameter count gives: "mymodel34b", "xyz-3b5" (3.5B),
"SomeLab-13B-chat", "350000000参数" (3.5亿 after normalising), "1300000000 parameters".

Known families are read first (model.py); this reads the size of a name it does not know, so an
in-house model still plans from its size. A name that only resembles a family ("a Llama-like
architecture", "GPT-style") names no model.
"""

from __future__ import annotations

from planner.messages import PARSING
from planner.parsing.numbers import whole
from planner.parsing.reading import Reading
from planner.patterns import lazy_pattern

_GLUED = lazy_pattern(
    r"(?<![a-z0-9_./-])(?P<name>[a-z][a-z0-9_-]{0,30}?(?:[a-z][-_]?|[-_]))(?P<size>\d{1,3}(?:\.\d{1,2})?)b"
    r"(?P<tenths>\d)?(?P<suffix>(?:-[a-z]{1,10}){0,3})(?![a-z0-9])"
)
_GLUED_HINT = lazy_pattern(r"[a-z-]\d{1,3}(?:\.\d{1,2})?b")
_COUNTED = lazy_pattern(
    r"(?<![\d.,])(?P<count>\d{7,13})\s?(?:个)?(?:参数|parameters?|params)(?![a-z])"
)
_LOOKALIKE = lazy_pattern(r"(?<![a-z0-9])[a-z][a-z0-9.]{1,20}-(?:like|style|ish)(?![a-z])")
# Words that end in a digit and "b" without being a size.
_NOT_A_NAME = ("int", "fp", "bf", "bit", "nf", "gpt-oss")


def read_size_in_names(r: Reading) -> None:
    for m in r.matches_if(("-like", "-style", "-ish"), _LOOKALIKE):
        r.take(m)
    if "params_b" in r.fields:
        return
    for m in r.matches_when(_GLUED_HINT, _GLUED):
        if m.group("name").rstrip("-") in _NOT_A_NAME:
            continue
        size = float(m.group("size")) + (int(m.group("tenths") or 0) / 10)
        written = m.group(0)
        r.put("params_b", whole(size), PARSING("size_model", written=written, size=whole(size)))
        r.take(m)
        return
    for m in r.matches_when(lazy_pattern(r"\d{7}"), _COUNTED):
        size = int(m.group("count")) / 1e9
        r.put(
            "params_b",
            whole(round(size, 3)),
            PARSING("parameters", count=m.group("count"), size=size),
        )
        r.take(m)
        return
