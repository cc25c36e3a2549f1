"""What the user rules out or takes back, handled once for every field.

- Ruled out: "not QLoRA, plain LoRA", "full FT is overkill", "I don't have an H100, only my 3090",
  "rather not use DeepSpeed", "不用qlora，直接lora", "全量微调太夸张了", "128k 太长了".
  The ruled-out phrase is blanked before any field reader runs, so it is never read as chosen;
  a ruled-out method is remembered ("not lora" and nothing else means full fine-tuning).
- Taken back: "P100... oh wait, 2x T4", "4 epochs, no, 3 epochs", "V100 16GB — sorry, I mean a
  V100 32GB", "一开始用的P40，后来换成了两张V100".
  The clause before the correction and the one after
  it are each read on their own; what the second says replaces the first field by field, and every
  replaced field is stated as an assumption.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from planner.messages import PARSING
from planner.parsing.reading import Reading
from planner.patterns import lazy_pattern

Reader = Callable[[Reading], None]

_METHODS = (
    (lazy_pattern(r"q[-\s]?lora"), "qlora"),
    (lazy_pattern(r"lora|peft|adapter"), "lora"),
    (lazy_pattern(r"full|fft|全参|全量"), "full"),
)
_BITS = r"\d\s?-?\s?bits?"
_METHOD = (
    r"(?:"
    + _BITS
    + r"\s?(?:的\s?)?)?(?:q[-\s]?lora|lora|peft|adapters?|full[-\s_]?(?:parameter\w*|"
    r"param\w*|fine[-\s]?tun\w*|finetun\w*|ft|training|sft)?|fft|全参数?(?:微调)?|全量(?:微调)?)"
    r"(?![a-z])|" + _BITS + r"(?![a-z])"
)
_CARD = r"(?:rtx\s?)?(?:[abhltvp]\d{2,3}[a-z]?|\d{4}(?:\s?ti)?)(?![a-z0-9])"
_TOOL = r"(?:deepspeed|zero[-\s]?\d|fsdp|ddp|unsloth|axolotl)(?![a-z])"
_LENGTH = r"\d{1,4}\s?k(?:\s?(?:context|ctx|tokens?|上下文))?(?![a-z])"
_TARGET = r"(?P<target>" + "|".join((_METHOD, _CARD, _TOOL)) + r")"
_NEGATOR = (
    r"(?<![a-z])(?:not|no|without|instead\sof|rather\sthan|rather\snot\suse|avoid(?:ing)?|"
    r"(?:don'?t|do\snot|doesn'?t|won'?t)\s(?:have|want|need|use|own)|isn'?t|aren'?t|"
    r"不用|不要|不是|别用|没有|而不是|不做|不想用)\s?(?:an?\s|the\s|any\s|to\suse\s|using\s|"
    r"going\s|doing\s)?"
)
_RULED_OUT_BEFORE = lazy_pattern(_NEGATOR + _TARGET)
_DISMISSAL = (
    r"\s?(?:(?:is|are|would\sbe|seems?)\s)?(?:overkill|unnecessary|not\s(?:needed|necessary|required|"
    r"an\soption|possible)|isn'?t\s(?:needed|necessary|required|an\soption|possible)|out\sof\sthe\s"
    r"question|too\s(?:slow|expensive|much|big|long|pricey))"
    r"|[\u4e00-\u9fff\s]{0,6}?(?:太夸张|太长|太贵|太慢|太大|做不了|不需要|没必要|不行|跑不了|不现实|"
    r"用不起)"
)
_RULED_OUT_AFTER = lazy_pattern(
    r"(?<![a-z0-9])(?P<target>" + _METHOD + "|" + _LENGTH + r")(?:" + _DISMISSAL + r")"
)
_HINTS = ("not", "no", "with", "instead", "rather", "avoid", "n't", "do", "不", "别", "没", "太")
_HINTS += ("overkill", "unnecessary", "question", "too", "要", "行")

# A correction: what comes after it replaces what came before, in the same sentence.
_CORRECTION = lazy_pattern(
    r"(?:\.{2,}|…|[,;?!—–-])?\s?(?:(?:oh\s|no\s)?wait(?![a-z])[,.!]?|sorry,?(?:\si\smean[t]?)?"
    r"(?![a-z])[,:]?|(?<![a-z])i\smean[t]?(?![a-z])[,:]?|make\sthat(?![a-z])|scratch\sthat"
    r"(?![a-z])[,.]?|correction(?![a-z]):?)"
    r"|(?:\.{2,}|…|[.,—–-])\s?actually(?![a-z])[,:]?(?:\s(?:make\sthat|it'?s|i\shave|we\shave)"
    r"(?![a-z]))?"
    r"|(?:\.{2,}|…|[,;?!—–-])\s?(?:no|nope)\s?[,.!—–-]\s"
    r"|不对[,，]?|更正[:：]?|后来(?:换成|改成|改用|换了)了?"
)
_CORRECTION_HINTS = ("wait", "sorry", "mean", "make that", "scratch", "correction", "actually")
_CORRECTION_HINTS += ("no", "不对", "更正", "后来")
# A message full of corrections is read for its first few; the rest is read as it stands (the cost
# of reading clauses apart stays bounded on hostile input).
MAX_CORRECTIONS = 3
# A correction is local: at most this many characters on each side of it are read apart.
CLAUSE_REACH = 160
_SENTENCE_END = lazy_pattern(r"[.。!?！？;；](?:\s|$)|\n")


def read_ruled_out(r: Reading) -> None:
    """Blank every phrase the user rules out; remember ruled-out methods in `r.ruled_out`."""
    if not any(hint in r.text for hint in _HINTS):
        return
    for pattern in (_RULED_OUT_BEFORE, _RULED_OUT_AFTER):
        for m in r.matches(pattern):
            target = m.group("target")
            for method_word, method in _METHODS:
                if method_word.match(target):
                    r.ruled_out.add(method)
                    break
            r.take(m)


def read_corrections(r: Reading, readers: Sequence[Reader]) -> None:
    """Read each corrected clause and its correction apart; the correction wins field by field."""
    if not any(hint in r.text for hint in _CORRECTION_HINTS):
        return
    done = 0
    markers = [m for m in _CORRECTION.finditer(r.text)]
    for marker in markers[:MAX_CORRECTIONS]:
        if marker.start() < done:
            continue
        before_start = _sentence_start(r.text, marker.start(), done)
        after_end = _sentence_end(r.text, marker.end())
        first = _read_apart(r, r.text[before_start : marker.start()], readers)
        second = _read_apart(r, r.text[marker.end() : after_end], readers)
        if not second.fields:
            continue
        if "gpu" in second.fields and "gpu_vram_gb" not in second.fields:
            first.fields.pop("gpu_vram_gb", None)  # the memory belonged to the card taken back
        for name, value in (first.fields | second.fields).items():
            old = first.fields.get(name)
            if r.put(name, value) and old is not None and old != value:
                r.assume(PARSING("correction", name=name.replace("_", " "), value=value, old=old))
        for part in (first, second):
            for said in part.assumptions:
                r.assume(said)
            r.notes += part.notes
            r.ruled_out |= part.ruled_out
        r.text = r.text[:before_start] + " " * (after_end - before_start) + r.text[after_end:]
        done = after_end


def _sentence_start(text: str, position: int, floor: int) -> int:
    start = floor = max(floor, position - CLAUSE_REACH)
    for m in _SENTENCE_END.finditer(text, floor, position):
        start = m.end()
    return start


def _sentence_end(text: str, position: int) -> int:
    end = min(len(text), position + CLAUSE_REACH)
    m = _SENTENCE_END.search(text, position, end)
    return m.start() if m else end


def _read_apart(r: Reading, text: str, readers: Sequence[Reader]) -> Reading:
    part = Reading(text=text, cased=r.cased)
    for reader in readers:
        reader(part)
    return part
