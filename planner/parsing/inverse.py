"""Questions that run backwards: which limit the user asks for ("max context?", "how many
4090s?", "最长上下文", "几张卡"), recorded as the field `asked` (planner.market.solve answers it).

A phrase followed by a value is a setting, not a question: "max context 8192" sets the context.
A card number after the phrase ("最长上下文 4090") is still a card.
"""

from __future__ import annotations

import re

from planner.parsing.reading import Reading
from planner.patterns import lazy_pattern

# A value right after the phrase ("max length 4096", "max length of 4096", "max_len=2048") makes
# it a setting, unless it is a GeForce card number or a model size ("max ctx 8b qlora").
_NOT_A_SETTING = (
    r"(?!\s*(?:[:=]|of|is|was|at|to|set\s+to|设为|为|是)?\s*(?!(?:[2-5]0[5-9]0)(?!\d))"
    r"(?!\d+(?:\.\d+)?\s?[bm](?![a-z]))\d)"
)
# "gpus", "cards", or a card in the plural ("H100s", "4090s", "a100s"): what a count asks for
# (looked ahead at, not taken: the card is still read).
_CARDS_PLURAL = r"(?:gpus|cards|(?:rtx\s?)?[a-z]{0,2}\d{2,4}[a-z]{0,3}s)\b"
_MAX = r"(?:max(?:imum|imal)?|longest|biggest|largest|highest|most|greatest)"
_ASKED_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "seq_len",
        lazy_pattern(
            rf"(?<!\d\s)\b{_MAX}\s+(?:possible\s+|usable\s+|trainable\s+)?"
            r"(?:context(?:\s+(?:length|size|window))?|ctx|seq(?:uence)?(?:[\s_]len(?:gth)?)?|"
            r"sequence\s+length|input\s+length|length)\b"
            + _NOT_A_SETTING
            + r"|\bhow\s+(?:long|much|big|large)\s+(?:of\s+)?(?:a\s+)?"
            r"(?:context(?:\s+(?:length|window))?|ctx|sequences?|seq(?:uence)?\s+length)\b"
            r"|\bhow\s+many\s+tokens\s+(?:of\s+context|context|per\s+(?:sample|sequence)|"
            r"can\s+i\s+(?:fit|train|use))"
            r"|\bwhat\s+(?:context(?:\s+length)?|sequence\s+length|seq\s+len)\s+"
            r"(?:can|could|will|would|fits?)\b"
            r"|最长(?:的)?\s*(?:上下文|序列|长度|context|seq)"
            r"|(?:上下文|序列长度|序列|context)\s*最(?:长|大)"
            r"|最大\s*(?:的)?\s*(?:上下文|序列长度|序列|context|长度)"
            + _NOT_A_SETTING
            + r"|(?:能|可以)(?:跑|训练?|支持|开到)\s*多长"
        ),
    ),
    (
        "micro_batch",
        lazy_pattern(
            rf"(?<!\d\s)\b{_MAX}\s+(?:possible\s+|usable\s+)?(?:per[\s-]device\s+|micro[\s_-]?)?"
            r"(?:batch(?:[\s_]size)?|bs)\b"
            + _NOT_A_SETTING
            + r"|\bhow\s+(?:big|large|high)\s+(?:of\s+)?(?:a\s+)?(?:micro[\s-]?)?batch(?:\s+size)?"
            r"|\bwhat\s+batch\s+size\s+(?:can|could|will|would|fits?)\b"
            r"|最大\s*(?:的)?\s*(?:micro[\s_-]?)?(?:batch(?:[\s_]?size)?|bs|批次?大小|批量|批次)"
            r"|(?:batch(?:[\s_]?size)?|bs|批次?大小|批量)\s*最大"
            r"|(?:batch(?:[\s_]?size)?|bs)\s*(?:能|可以)\s*(?:开|设)?(?:到)?\s*多(?:大|少)"
        ),
    ),
    (
        "params_b",
        lazy_pattern(
            rf"\b{_MAX}(?=\s+(?:[a-z0-9.\-]+\s+){{0,3}}models?\b)"
            r"|\bhow\s+(?:big|large)\s+(?:of\s+)?(?:a\s+)?model\b"
            r"|\bwhat\s+(?:size|sized)\s+(?:of\s+)?model\b"
            r"|\bwhat\s+model\s+size\b"
            r"|最大\s*(?:的)?\s*(?:多大\s*的?\s*)?模型"
            r"|(?:能|可以)\s*(?:跑|训练?|微调|finetune|fine-tune)\s*多大\s*(?:的)?\s*模型"
            r"|多大\s*的?\s*模型"
        ),
    ),
    (
        "num_gpus",
        lazy_pattern(
            r"\bhow\s+many\b(?!\s+(?:more\s+)?(?:tokens?|epochs?|samples?|steps?|examples?|hours?|"
            r"gpu[\s-]?(?:hours?|hrs?|days?)|"
            r"days?|params|parameters|layers?|rows?|dollars?|times?|gb|gib|images?|prompts?)\b)"
            r"|\b(?:min(?:imum)?|fewest|least)\s+(?:number\s+of\s+|#\s?of\s+)?(?="
            + _CARDS_PLURAL
            + r")|(?:\bnumber|#)\s?of\s+(?="
            + _CARDS_PLURAL
            + r"\s+(?:needed|required|(?:do|would|will)\s+(?:i|we)\s+need)\b)"
            r"|几\s*(?:张|块|台|卡)(?:卡|显卡|gpu)?|多少\s*(?:张|块)(?:卡|显卡|gpu)?|最少\s*(?:几|多少)"
        ),
    ),
)
_CARD_QUESTION = lazy_pattern(
    r"\b(?:cheapest|fastest|which|what|best)\s+(?:way|card|gpus?|option|setup|run|config|"
    r"rental|instance|machine)\b|最便宜|哪(?:个|张|种)\s*(?:卡|gpu|显卡)|什么\s*(?:卡|gpu|显卡)"
)


def read_asked(r: Reading) -> None:
    """Before the field readers: the limit asked for, its phrase taken out of the text."""
    for asked, pattern in _ASKED_PATTERNS:
        m = pattern.search(r.text)
        if m is not None:
            r.put("asked", asked)
            r.take(m)
            return


def read_asked_card(r: Reading) -> None:
    """After them: "cheapest way to finish by tomorrow?" asks for the card that meets a deadline
    or budget, which is known only once those are read."""
    if "asked" in r.fields:
        return
    if "deadline_hours" in r.fields or "budget_usd" in r.fields:
        m = _CARD_QUESTION.search(r.text)
        if m is not None:
            r.put("asked", "gpu")
            r.take(m)
