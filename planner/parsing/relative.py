"""Changes relative to the job a thread already has: "double the context", "half the batch",
"10x the data", "one more epoch", "another GPU", "double the batch and the context", "上下文翻倍",
"batch减半", "数据加倍", "再加一张卡".

The parser cannot know the value being changed, so it records the change (`r.relative`: field →
"times" or "plus" by a number); the conversation applies it to the thread's job, or to the value
the plan assumed when the job left it unsaid.
"""

from __future__ import annotations

import re

from planner.parsing.reading import Reading
from planner.patterns import lazy_pattern

_FIELD_WORDS = {
    "seq_len": r"context(?:\slength|\swindow)?|ctx|seq(?:uence)?(?:\s?len(?:gth)?)?|max\slength|"
    r"上下文(?:长度)?|序列长度|长度",
    "micro_batch": r"(?:micro[-\s]?)?batch(?:\s?size)?|bs|批大小|batch\s?size",
    "grad_accum": r"(?:grad(?:ient)?\s)?accum(?:ulation)?(?:\ssteps)?|梯度累积",
    "dataset_tokens": r"data(?:set)?(?:\ssize)?|tokens|training\sdata|数据量?|token数",
    "epochs": r"epochs?|passes|轮(?:数)?",
    "num_gpus": r"gpus?|cards?|显卡|卡",
    "lora_rank": r"(?:lora\s)?rank|秩",
    "lora_alpha": r"(?:lora\s)?alpha",
    "budget_usd": r"budget|预算",
    "deadline_hours": r"deadline|time\slimit|时间",
}
_FIELD = "|".join(f"(?P<{name}>{words})" for name, words in _FIELD_WORDS.items())
_FACTOR_WORDS = {
    "double": 2.0,
    "twice": 2.0,
    "triple": 3.0,
    "quadruple": 4.0,
    "halve": 0.5,
    "half": 0.5,
    "a quarter of": 0.25,
    "翻倍": 2.0,
    "加倍": 2.0,
    "翻一番": 2.0,
    "减半": 0.5,
    "砍半": 0.5,
    "doubled": 2.0,
    "halved": 0.5,
}
_WORD = "|".join(sorted(map(re.escape, _FACTOR_WORDS), key=len, reverse=True))
_FACTOR = r"(?P<word>" + _WORD + r")|(?P<times>\d{1,3})\s?(?:x|times|倍)(?![a-z0-9])"
# Written without named groups for the repeated part; each field is found again in the span.
_ANY_FIELD = lazy_pattern(r"(?<![a-z])(?:" + _FIELD + r")(?![a-z])")
_PLAIN_FIELD = "|".join(f"(?:{words})" for words in _FIELD_WORDS.values())
# "double the batch and the context", "half the batch": the factor, then one or two fields.
_BEFORE = lazy_pattern(
    r"(?<![a-z0-9])(?:" + _FACTOR + r")\s(?:the\s|my\s|our\s)?(?P<span>(?:" + _PLAIN_FIELD + r")"
    r"(?:(?:,\s?|\s(?:and|&)\s)(?:the\s)?(?:" + _PLAIN_FIELD + r"))?)(?![a-z])"
)
# "上下文翻倍", "batch减半", "context doubled".
_AFTER = lazy_pattern(
    r"(?<![a-z])(?P<span>" + _PLAIN_FIELD + r")\s?(?:is\s|gets\s)?(?:" + _FACTOR + r")(?![a-z])"
)
# "one more epoch" (normalised to "1 more epoch"), "another GPU", "an extra card", "再加1张卡".
_PLUS = lazy_pattern(
    r"(?<![a-z0-9])(?:(?P<more>\d{1,3})\smore|another|an\sextra|one\sextra|(?:再加|多加|加)\s?"
    r"(?P<add>\d{1,3})?)\s?(?:个|张|块)?\s?(?P<span>" + _PLAIN_FIELD + r")(?![a-z])"
)
_FEWER = lazy_pattern(
    r"(?<![a-z0-9])(?P<fewer>\d{1,3})\s(?:fewer|less)\s(?P<span>" + _PLAIN_FIELD + r")(?![a-z])"
)
_HINTS = ("doub", "twice", "tripl", "quadr", "half", "halv", "quarter", "x", "times", "倍")
_HINTS += ("翻", "减半", "砍半", "more", "another", "extra", "加", "fewer", "less")


def _fields_in(span: str) -> list[str]:
    return [m.lastgroup for m in _ANY_FIELD.finditer(span) if m.lastgroup]


def read_relative(r: Reading) -> None:
    if not any(hint in r.text for hint in _HINTS):
        return
    for pattern in (_BEFORE, _AFTER):
        for m in r.matches(pattern):
            if m.group("times") and " the " not in m.group(0):
                continue  # "2x gpus" is two GPUs; "2x the data" is a change
            factor = _FACTOR_WORDS[m.group("word")] if m.group("word") else float(m.group("times"))
            for name in _fields_in(m.group("span")):
                r.relative.setdefault(name, ("times", factor))
            r.take(m)
    for pattern, sign in ((_PLUS, 1), (_FEWER, -1)):
        for m in r.matches(pattern):
            found = m.groupdict()
            amount = float(found.get("more") or found.get("add") or found.get("fewer") or 1)
            for name in _fields_in(m.group("span")):
                r.relative.setdefault(name, ("plus", sign * amount))
            r.take(m)
