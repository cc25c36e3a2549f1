"""Context length: "4k ctx", "ctx=8192", "cutoff_len 2048", "max_seq_length: 4096", "8K context",
"@ 512 context", "512+ ctx", "sequence length of 2k", "序列长度 4096", "序列2048", "长度2048",
two-part "source_max_len 384 / target_max_len 128", and a bare "what if 8k?".

"k" here means 1024 (4k → 4096), stated as an assumption; "28k per entry" and "14k tokens/sec" are
not context lengths (the throughput and dataset readers take those first).
"""

from __future__ import annotations

import re
from functools import partial

from planner.messages import PARSING
from planner.parsing.numbers import NUM
from planner.parsing.reading import Reading
from planner.patterns import lazy_pattern

_KEYS = (
    r"(?:max_seq_length|max_seq_len|max_sequence_length|seq_length|seq_len|sequence_len(?:gth)?|"
    r"cutoff_len|model_max_length|max_length|max_len|block_size|context_length|context_len|"
    r"max_position_embeddings|max_tokens|sequence\slength|seq\slen(?:gth)?|context\s(?:length|size|"
    r"window|len)|ctx\s(?:len|length|size)|max(?:imum)?\s(?:sequence\s)?length|max\slen|sequence|cutoff|context|ctx|"
    r"序列长度|序列长|序列|上下文长度|上下文|token长度|长度|seq)"
)
# A word every key in _KEYS contains.
_KEY_WORDS = (
    *("seq", "cutoff", "len", "block_size", "context", "ctx", "max"),
    *("序列", "上下文", "长度"),
)
# "ctx 2k 50k samples": a count of samples after a key is the dataset, not the length.
_VALUE = (
    r"(?P<num>"
    + NUM
    + r")\s?(?P<k>k)?(?![a-z0-9_]|\.\d)\+?"
    + r"(?!\s?(?:samples?|examples?|rows?|instances?|conversations?|pairs?|条|个样本|样本))"
)
_KEY_VALUE = lazy_pattern(
    # "平均长度1500", "每条长度": the length of a sample, read with the dataset.
    r"(?<![a-z])(?<!平均)(?<!每条)-{0,2}"
    + _KEYS
    + r"s?\s?(?:of|=|:|is|at|to|设置为|设置成|设为|为|是|只要|只有|需要|要|改成|改为)?\s?"
    + r"(?:about|around|~|up\sto)?\s?"
    + _VALUE
)
_VALUE_KEY = lazy_pattern(
    r"(?<![a-z0-9_.])"
    + _VALUE
    + r"\s?(?:tokens?\s|toks?\s|-token\s|-)?(?:token\s)?(?:context|ctx|max_seq_len(?:gth)?|"
    r"seq(?:uence)?(?:\s?len(?:gth)?)?|cutoff|max\slength|长度|上下文)(?![a-z])"
)
_AT_HINT = lazy_pattern(r"(?:@|at|w/?)\s?[\d.]")
_AT_VALUE = lazy_pattern(
    r"(?:@|\bat|\bw/?)\s?" + _VALUE + r"(?!\s?(?:tokens?/|samples|steps|gpus?))"
)
_SPLIT = lazy_pattern(
    r"(?P<first>source_max_len|max_prompt_length|max_source_length|max_source_seq_len)\s?[=:]?\s?"
    r"(?P<a>\d{1,7}).{0,40}?(?P<second>target_max_len|max_completion_length|max_target_length|"
    r"max_target_seq_len)\s?[=:]?\s?(?P<b>\d{1,7})"
)
_N_TOKENS = lazy_pattern(
    r"(?<![a-z0-9_.,])(?P<num>\d{2,6})\s?(?:-\s?)?tokens?(?![a-z0-9_]|\.\d)(?!\s?(?:per|/|a\s))"
)
# "has to stay under 1k tokens", "max 2k tokens per example", "最长不超过1k token": a limit on
# each sequence is the context length, not a dataset size.
_PER_ITEM = (
    r"(?:\s?(?:per|each|/|a)\s?(?:example|sample|sequence|conversation|row|item|entry|prompt|"
    r"response|output|trace))?"
)
_LIMIT = lazy_pattern(
    r"(?<![a-z])(?:max(?:imum)?|under|up\sto|at\smost|below|less\sthan|no\smore\sthan|not\sexceed\w*|"
    r"最长(?:不超过)?|不超过|最多|最长不超过)\s?(?:of\s|about\s|~)?(?P<num>\d{1,6})\s?(?P<k>k)?\s?"
    r"(?:个\s?)?(?:tokens?|toks?)(?![a-z])" + _PER_ITEM
)
_LIMIT_WORDS = ("max", "under", "up to", "at most", "below", "less", "more than", "exceed", "最")
_LIMIT_WORDS += ("不超过",)
# "300–400 tokens per sample", "每条300到400个token": the context holds the longest; the dataset
# counts the middle of the range.
_RANGE = lazy_pattern(
    r"(?<![a-z0-9_.])(?P<low>\d{2,6})\s?(?:-|–|—|~|to|到|至)\s?(?P<num>\d{2,6})\s?(?:个\s?)?"
    r"(?:tokens?|toks?)(?![a-z])" + _PER_ITEM
)
_RANGE_HINT = lazy_pattern(r"\d\s?(?:-|–|—|~|to|到|至)\s?\d")
# "4k or 8k ctx": the first length is the job, the other a comparison.
_COMPARED_BEFORE = lazy_pattern(
    r"(?<![a-z0-9_.])(?P<num>\d{1,6})\s?(?P<k>k)?\s?(?:or|vs\.?|versus|/|还是)\s?$"
)
_BARE_K = lazy_pattern(
    r"(?<![a-z0-9_.$])(?P<num>1|2|4|8|16|32|64|128|256)\s?(?P<k>k)(?![a-z0-9_]|\.\d)"
)


def _tokens(r: Reading, m: re.Match[str]) -> int:
    value = r.number(m, "num", "The context length")
    if m.groupdict().get("k"):
        written = m.group("num") + "k"
        tokens = int(value * 1024)
        r.assume(PARSING("k_tokens", written=written, tokens=tokens))
        return tokens
    return int(value)


def read_context(r: Reading) -> None:
    for m in r.matches_if(("max",), _SPLIT):
        total = int(m.group("a")) + int(m.group("b"))
        r.put(
            "seq_len",
            total,
            PARSING("sum_tokens", first=m.group("first"), second=m.group("second"), total=total),
        )
        r.take(m)
    for m in r.matches_when(_RANGE_HINT, _RANGE):
        low, high = int(m.group("low")), int(m.group("num"))
        if low < high:
            r.put("seq_len", high, PARSING("range_context", low=low, high=high))
            r.sample_tokens = (low + high) / 2
            r.take(m)
    for m in r.matches_if(_LIMIT_WORDS, _LIMIT):
        tokens = _tokens(r, m)
        if tokens >= 16:
            r.put(
                "seq_len",
                tokens,
                PARSING("limit_context", limit=f"{m.group('num')}{m.group('k') or ''}"),
            )
            r.take(m)
    for pattern, find in (
        (_KEY_VALUE, partial(r.matches_if, _KEY_WORDS)),
        (_VALUE_KEY, r.matches_at_numbers),
    ):
        for m in find(pattern):
            tokens = _tokens(r, m)
            if tokens >= 16:
                compared = _COMPARED_BEFORE.search(r.text, max(0, m.start() - 16), m.start())
                if compared and "seq_len" not in r.fields:
                    r.put("seq_len", _tokens(r, compared))
                    r.alternatives.append({"seq_len": tokens})
                    r.take(compared)
                r.put("seq_len", tokens)
                r.take(m)


def read_loose_context(r: Reading) -> None:
    """After data and batch readers: "at 512", "2048 tokens" and a bare "8k" are lengths."""
    for pattern, find in (
        (_AT_VALUE, partial(r.matches_when, _AT_HINT)),
        (_N_TOKENS, r.matches_at_numbers),
        (_BARE_K, r.matches_at_numbers),
    ):
        for m in find(pattern):
            if "seq_len" in r.fields:
                return
            tokens = _tokens(r, m)
            if 64 <= tokens <= 1_048_576:
                r.put("seq_len", tokens)
                r.take(m)
