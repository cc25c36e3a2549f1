"""Rewrite free text into one canonical spelling before any field is read.

Full-width characters, Chinese numerals, English number words and the common misspellings of
phrasing.md all become plain ASCII-ish text here, so the field readers need one pattern per form.
"""

from __future__ import annotations

import re
import unicodedata

from planner.patterns import lazy_pattern

_CN_DIGITS = {"零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "俩": 2, "三": 3, "四": 4, "五": 5}
_CN_DIGITS |= {"六": 6, "七": 7, "八": 8, "九": 9}
_CN_UNITS = {"十": 10, "百": 100, "千": 1000}
_CN_BIG = {"万": 10_000, "亿": 100_000_000}

# A run of Chinese numerals that ends at 十/百/千 or a digit; 万/亿 scale whatever precedes them.
_CN_RUN = lazy_pattern(r"[零〇一二两俩三四五六七八九十百千]{1,8}")
_CN_SCALE = lazy_pattern(r"(\d{1,9}(?:\.\d{1,6})?)\s?(万亿|千万|亿|万|千)")

_WORD_NUMBERS = {
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "sixteen": 16,
    "twenty": 20,
    "thirty": 30,
    "forty": 40,
    "fifty": 50,
    "sixty": 60,
}
# The lookahead lets positions that cannot start a number word fail at once.
_WORD_NUMBER = lazy_pattern(
    "(?=["
    + "".join(sorted({word[0] for word in _WORD_NUMBERS}))
    + r"])\b("
    + "|".join(_WORD_NUMBERS)
    + r")\b(?![-']\w)"
)
_WORD_SCALES = {"thousand": "k", "million": "m", "billion": "bn", "trillion": "t"}
_WORD_SCALE = lazy_pattern(r"(\d)\s?(thousand|million|billion|trillion)\b")
_HUNDRED = lazy_pattern(r"\b(\d{1,2})(?:-(\d{1,2}))?\s?hundred\b")
_A_SINGLE = lazy_pattern(r"\b(?:a single|a|an|single)\s+(epoch|round)\b")

# Misspellings counted in real questions; each maps to the spelling the readers expect (no
# capturing groups: the one group around each pattern tells which matched).
_SPELLING = [
    (r"\bepoches\b", "epochs"),
    (r"\bnivdia\b|\bnvida\b|\bnvdia\b", "nvidia"),
    (r"\bloro\b", "lora"),
    (r"\bgpro\b", "grpo"),
    (r"\bmemmory\b", "memory"),
    (r"\bmahine\b", "machine"),
    (r"\bfine-?tunn?ing\b|\bfinetunn?ing\b", "finetuning"),
    (r"现存", "显存"),
    # Units in chat: "24 gigs", "12 gig card", "50 mil tokens".
    (r"(?<=\d)\s?(?:gigs?|gigabytes?)\b", "gb"),
    (r"(?<=\d)\s?mil\b", "m"),
    # "cutoff_len设置为2048", "rank设的64": "set to" only joins a setting to its value.
    (r"设置为|设置成|设置|设为|设成|设的", " "),
    # "3个epoch": the measure word between a number and an English unit says nothing.
    (r"(?<=\d)\s?个\s?(?=[a-z])", " "),
]


# One pass for every misspelling: the group that matched names its spelling.
# A part of every misspelling, so text with none of them is not scanned.
_MISSPELLING_HINTS = ("epoche", "nivdia", "nvida", "nvdia", "loro", "gpro", "memmory", "mahine")
_MISSPELLING_HINTS += ("tunn", "现存", "设", "个", "gig", "mil")
_MISSPELLED = lazy_pattern("|".join(f"({pattern})" for pattern, _ in _SPELLING))


def fold_width(text: str) -> str:
    """Full-width digits, letters and punctuation (ＡＢＣ１２３，：) become ASCII."""
    # "16，3个epoch" is two numbers: the full-width comma must not become a thousands separator.
    folded = unicodedata.normalize("NFKC", text.replace("，", ", "))
    return folded.replace("×", "x").replace("＊", "*").replace("\\*", "*").replace("\u3000", " ")


def lower_same_length(text: str) -> str:
    """Lower-case without growing the text ("İ".lower() is two characters)."""
    lowered = text.lower()
    if len(lowered) == len(text):
        return lowered
    return "".join(low if len(low := ch.lower()) == 1 else ch for ch in text)


def _chinese_run_value(run: str) -> int | None:
    if all(ch in _CN_DIGITS for ch in run):
        if len(run) == 1:
            return _CN_DIGITS[run]
        return int("".join(str(_CN_DIGITS[ch]) for ch in run))
    total, digit = 0, None
    for ch in run:
        if ch in _CN_DIGITS:
            if digit is not None:
                return None
            digit = _CN_DIGITS[ch]
        else:
            total += (1 if digit is None else digit) * _CN_UNITS[ch]
            digit = None
    return total + (digit or 0)


def _chinese_numerals(text: str) -> str:
    def run_to_digits(match: re.Match[str]) -> str:
        run, before = match.group(), text[match.start() - 1 : match.start()]
        if before.isdigit() and run[0] in _CN_UNITS:
            return run  # "5千万": a digit's scale, read by _CN_SCALE
        value = _chinese_run_value(run)
        if value is None:
            return run
        # "3090一张": the numeral is a count of its own, not more digits of the card.
        return (" " if before.isascii() and before.isalnum() else "") + str(value)

    text = _CN_RUN.sub(run_to_digits, text)

    def scale(match: re.Match[str]) -> str:
        factor = 1.0
        for ch in match.group(2):
            factor *= _CN_BIG.get(ch, 1000)
        return _plain_number(float(match.group(1)) * factor)

    return _CN_SCALE.sub(scale, text)


def _plain_number(value: float) -> str:
    return str(int(value)) if value == int(value) else f"{value:g}"


def _hundreds(match: re.Match[str]) -> str:
    # "5-6 hundred tokens" is a range of hundreds: 500-600.
    low, high = match.group(1), match.group(2)
    return f"{low}00" + (f"-{high}00" if high else "")


def _english_numbers(text: str) -> str:
    if "epoch" in text or "round" in text:
        text = _A_SINGLE.sub(r"1 \1", text)
    text = _WORD_NUMBER.sub(lambda m: str(_WORD_NUMBERS[m.group(1)]), text)
    if "hundred" in text:
        text = _HUNDRED.sub(_hundreds, text)
    if "illion" in text or "thousand" in text:
        text = _WORD_SCALE.sub(lambda m: m.group(1) + _WORD_SCALES[m.group(2)], text)
    return text


# Qwen's Chinese names, spelled before Chinese numerals are read (千 would become 1000);
# each replacement is as long as what it replaces, so positions still map back to the text.
_CHINESE_MODEL_NAMES = (("通义千问", "qwen"), ("千问", "qw"))


# torchtune's config names ("llama3_1/8B_lora_single_device", "qwen2_5/7B_full") and its version
# spelling ("qwen2_5 7b"): rewritten in place, as long as before, to "llama3.1 8b lora".
_TORCHTUNE_CONFIG = lazy_pattern(
    r"(?<![\w/.-])(?P<family>(?:llama|qwen|gemma|phi|mistral)\d?(?:_\d)?)/"
    r"(?P<size>\d{1,3}(?:_\d)?b)_(?P<method>q?lora|full|q?dora)(?P<rest>(?:_[a-z]{1,12}){0,3})"
    r"(?![\w/])"
)
_UNDERSCORED_VERSION = lazy_pattern(r"\b(?P<family>llama|qwen|gemma|phi)(?P<major>\d)_(?=\d\b)")


def _torchtune_spellings(text: str) -> str:
    def config(m: re.Match[str]) -> str:
        family = m.group("family").replace("_", ".")
        size = m.group("size").replace("_", ".")
        return f"{family} {size} {m.group('method')}" + " " * len(m.group("rest"))

    text = _TORCHTUNE_CONFIG.sub(config, text)
    return _UNDERSCORED_VERSION.sub(lambda m: f"{m.group('family')}{m.group('major')}.", text)


def normalize(text: str) -> str:
    """Lower-cased canonical text (HF ids get their casing back from `fold_width(text)`)."""
    folded = fold_width(text)
    if "千问" in folded:
        for chinese, latin in _CHINESE_MODEL_NAMES:
            folded = folded.replace(chinese, latin)
    lowered = lower_same_length(folded if folded.isascii() else _chinese_numerals(folded))
    lowered = _english_numbers(lowered)
    if "_" in lowered:
        lowered = _torchtune_spellings(lowered)
    if not any(hint in lowered for hint in _MISSPELLING_HINTS):
        return lowered
    return _MISSPELLED.sub(lambda m: _SPELLING[m.lastindex - 1][1], lowered)
