"""The rule translator: what is left of the old way of making a Chinese answer, for sentences
not yet in a catalog (planner/words.py; the planner's assumptions, suggestions and warnings, price
dates and durations). Numbers, card and model names stay as they are.

The rules (bot/zh_rules.tsv) are tried in order, longest and most specific first; each is a
regular expression over the English phrase and its Chinese with the same groups. A phrase no rule
knows stays in English. Each sentence family that moves to a catalog deletes its rules here;
bot/language.py uses this only for plain strings, never for a catalog sentence.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

RULES_FILE = Path(__file__).with_name("zh_rules.tsv")


@cache
def _rules() -> list[tuple[re.Pattern[str], str]]:
    rules = []
    for line in RULES_FILE.read_text(encoding="utf-8").splitlines():
        if line and not line.startswith("#"):
            pattern, chinese = line.split("\t")
            rules.append((re.compile(pattern), chinese))
    return rules


# Text some rule may still translate: English words, or a duration's short unit ("4.3 h",
# "18 min": planner.units.hours_text), which a table cell holds alone.
_UNTRANSLATED = re.compile(r"[A-Za-z]{3,}|\d (?:h|min)\b")


def translate(english: str) -> str:
    """The Chinese for one reply string; what no rule knows stays as written."""
    text = english
    for pattern, chinese in _rules():
        if _UNTRANSLATED.search(text) is None:
            break
        text = pattern.sub(chinese, text)
    return text
