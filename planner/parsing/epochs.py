"""Epochs: "3 epochs", "epochs=5", "num_train_epochs 3.0", "three epochs" (normalised to 3),
"x3", "3x", "训练3轮", "70轮", "one round of fine-tuning", "0.5 epoch". "per epoch" timings are not
a count of epochs.
"""

from __future__ import annotations

from functools import partial

from planner.messages import PARSING
from planner.parsing.numbers import GEFORCE_NUMBER, NUM, whole
from planner.parsing.reading import Reading
from planner.patterns import lazy_pattern

# "1 epoch 3090 10 hours": a card's number after the word is not a count of epochs. Nor, once a
# count stands before the word ("3 epochs 2 4090s"), is the number after it.
_KEY_VALUE = lazy_pattern(
    r"(?<!\d\s)(?<!\d)(?:num_train_epochs|num_epochs|n_epochs|train_epochs|max_epochs|epochs?|轮数|训练轮数)\s?"
    r"(?:=|:|of|to)?\s?(?!" + GEFORCE_NUMBER + r")(?P<num>" + NUM + r")(?![a-z0-9_]|\.\d)"
)
_VALUE_KEY = lazy_pattern(
    r"(?<![a-z0-9_.])(?P<num>"
    + NUM
    + r")\s?(?:more\s|full\s|training\s)?(?:epochs?|eps?|轮|个epoch|"
    r"rounds?|passes)(?![a-z])(?!\s?(?:takes|took|per|each))"
)
# "3x faster", "2x the memory": a ratio, not a number of passes.
_RATIO = (
    r"(?!\s?(?:faster|slower|more|less|fewer|cheaper|bigger|smaller|larger|longer|speed\w*|the|"
    r"as|bytes?|bits?|gb|gib|hours?|days?)\b)"
)
_TIMES = lazy_pattern(
    r"(?<![a-z0-9_.])(?:x|\*)\s?(?P<num>\d{1,3})(?![a-z0-9_]|\.\d)" + _RATIO + r"|(?<![a-z0-9_.])"
    r"(?P<num2>\d{1,3})x(?![a-z0-9_]|\.\d)" + _RATIO
)
# "epoch 1/3" in a training log: the run has 3 epochs.
_PROGRESS = lazy_pattern(r"epochs?\s?:?\s?\d{1,5}\s?/\s?(?P<of>\d{1,5})(?![\d.])")
# "(?<![a-z])": the "a" ending "lora" or "qlora" is not the article ("lora epochs=3").
_PER_EPOCH = lazy_pattern(
    r"(?<![a-z])(?:per|each|every|a)\s(?:epoch|round)|1\sepoch\s(?:takes|took)|每轮"
)


def read_epochs(r: Reading) -> None:
    for m in r.matches_if(("epoch", "round", "每轮"), _PER_EPOCH):
        r.take(m)
    for m in r.matches_if(("epoch",), _PROGRESS):
        r.put("epochs", whole(r.number(m, "of", "The number of epochs")))
        r.take(m)
    for pattern, find in (
        (_KEY_VALUE, partial(r.matches_if, ("epoch", "轮数"))),
        (_VALUE_KEY, r.matches_at_numbers),
    ):
        for m in find(pattern):
            r.put("epochs", whole(r.number(m, "num", "The number of epochs")))
            r.take(m)


def read_times(r: Reading) -> None:
    """ "x3" / "3x" with nothing else around it: epochs (read last, after GPUs took "2x3090")."""
    for m in r.matches_if(("x", "*"), _TIMES):
        group = "num" if m.group("num") else "num2"
        value = whole(r.number(m, group, "The number of epochs"))
        r.put("epochs", value, PARSING("epochs", written=m.group(0).strip(), value=value))
        r.take(m)
