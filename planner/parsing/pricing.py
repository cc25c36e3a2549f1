"""Which price the job accepts: "spot", "spot is fine", "interruptible", "preemptible is fine",
"竞价/抢占式" → spot; "on-demand", "no spot", "not interruptible" → on-demand (the default, said
only to undo a spot follow-up)."""

from __future__ import annotations

from planner.parsing.reading import Reading
from planner.patterns import lazy_pattern
from planner.spec import Pricing

# A word every spelling below contains.
_WORDS = ("spot", "interrupt", "preempt", "pre-empt", "demand", "抢占", "竞价")
_TAIL = (
    r"(?:\s(?:instances?|pricing|prices?|rates?|gpus?|machines?|only|"
    r"(?:is|are)\s(?:fine|ok|okay|allowed)|ok|okay|works|allowed))?"
)
_SPELLINGS = (
    # Negations first: "no spot" must not read as spot.
    (
        lazy_pattern(
            r"(?<![a-z])(?:on[-\s]?demand|(?:no|not|without|never)\s(?:spot|interruptible|"
            r"pre-?emptible)|non[-\s]?(?:interruptible|pre-?emptible))" + _TAIL + r"(?![a-z])"
        ),
        Pricing.on_demand,
    ),
    (
        lazy_pattern(
            r"(?<![a-z])(?:spot|interruptible|pre-?emptible)" + _TAIL + r"(?![a-z])"
            r"|可抢占|抢占式|竞价(?:实例)?"
        ),
        Pricing.spot,
    ),
)


def read_pricing(r: Reading) -> None:
    r.put_spellings("pricing", _WORDS, _SPELLINGS)
