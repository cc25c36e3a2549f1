"""LoRA settings: "rank 64", "r=16", "lora_r: 8", "lora rank of 32", "lora_alpha 32", "alpha=16",
"target_modules q_proj,v_proj", "all linear layers", "all-linear".
"""

from __future__ import annotations

import re

from planner.parsing.numbers import NUM, whole
from planner.parsing.reading import Reading
from planner.patterns import lazy_pattern

_SEP = r"\s?(?:=|:|of|is)?\s?"
_RANK = lazy_pattern(
    r"(?:(?:(?<![a-z])-{0,2}(?:lora_r|lora_rank|lora\srank|lora\sr|rank)|秩)"
    + r"\s?(?:=|:|of|is|改成|改为|设为|为|是)?\s?"
    + r"|(?<![a-z])-{0,2}(?:r\s?[=:]\s?|r\s))"
    + r"(?P<num>\d{1,5})(?![a-z0-9_]|\.\d)"
)
_RANK_AFTER = lazy_pattern(
    r"(?<![a-z0-9_.])(?P<num>\d{1,5})\s?-?rank(?![a-z])|(?<![a-z])r(?P<num2>4|8|16|32|64|128|256)\b"
)
_ALPHA = lazy_pattern(
    r"(?<![a-z])-{0,2}(?:lora_alpha|lora\salpha|alpha)" + _SEP + r"(?P<num>" + NUM + ")"
)
_ALL_LINEAR = lazy_pattern(
    r"all[-_\s]linear(?:\slayers)?|all\s(?:the\s)?linear\s(?:layers|modules)|all\sproj\w*|"
    # LLaMA-Factory's "--lora_target all"
    r"lora_target\s?[=:]?\s?['\"]?all(?![a-z_-])|lora_target_linear\s?[=:]\s?true"
)
_TARGET_LIST = lazy_pattern(
    # "lora on q_proj,v_proj only", "to q_proj and v_proj": chat wording names the list too.
    r"(?:target_modules|lora_target_modules|lora_target|targets?|modules?|on|to|only)\s?[=:]?\s?"
    r"[\[(]?\s?(?P<list>(?:['\"]?[a-z_]{1,12}_proj['\"]?(?:\sand\s|[\s,/+]{0,3})){1,7})"
)
_PROJ = lazy_pattern(r"\b(q|k|v|o|gate|up|down)_proj\b")
_LETTER_LIST = lazy_pattern(r"[qkvo]\s?[,/]\s?[qkvo]")
_SHORT_LIST = lazy_pattern(
    r"(?:targets?|modules?|on)\s?[=:]?\s?(?P<list>[qkvo](?:\s?[,/]\s?[qkvo]){1,3})(?![a-z])"
)


# "r64 a16": rank and alpha in shorthand, only as a pair (alone, "a16" is an NVIDIA A16).
# Quick patterns every match of the rank patterns contains.
_R_NUMBER = lazy_pattern(r"r\d")
_RANK_AFTER_HINT = lazy_pattern(r"r(?:ank|\d)")
_RANK_HINT = lazy_pattern(r"rank|秩|r\s?(?:=|:|of|is|to|设置为|设为|为|是)?\s?\d")
_RANK_ALPHA = lazy_pattern(r"(?<![a-z])r(?P<rank>\d{1,4})\s?a(?P<alpha>\d{1,4})(?![a-z0-9])")


def read_lora(r: Reading) -> None:
    for m in r.matches_when(_R_NUMBER, _RANK_ALPHA):
        r.put("lora_rank", int(m.group("rank")))
        r.put("lora_alpha", int(m.group("alpha")))
        r.take(m)
    for m in r.matches_when(_RANK_HINT, _RANK):
        r.put("lora_rank", int(r.number(m, "num", "The LoRA rank")))
        r.take(m)
    for m in r.matches_when(_RANK_AFTER_HINT, _RANK_AFTER):
        if "lora_rank" not in r.fields:
            r.put("lora_rank", int(m.group("num") or m.group("num2")))
            r.take(m)
    for m in r.matches_if(("alpha",), _ALPHA):
        r.put("lora_alpha", whole(r.number(m, "num", "The LoRA alpha")))
        r.take(m)
    for m in r.matches_if(("all", "target_linear"), _ALL_LINEAR):
        r.put("lora_targets", "all-linear")
        r.take(m)
    for m in r.matches_if(("_proj",), _TARGET_LIST):
        targets = list(dict.fromkeys(_PROJ.findall(m.group("list"))))
        if targets:
            r.put("lora_targets", targets)
            r.take(m)
    for m in r.matches_when(_LETTER_LIST, _SHORT_LIST):
        r.put("lora_targets", list(dict.fromkeys(re.findall(r"[qkvo]", m.group("list")))))
        r.take(m)
