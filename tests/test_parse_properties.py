"""Any string, random or hostile, parses to an answer: no exception, no internal failure, no hang.

Speed is measured by bench/parse_speed.py (figures printed there), not asserted here.
"""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from planner.parsing import ParseResult, parse
from planner.parsing.assemble import MAX_INPUT_CHARS, UNREADABLE

# Pieces people (and attackers) actually type, so random joins hit the readers' patterns.
_WORDS = (
    "13B|7b|8x7b|llama|qwen2.5-|3.1|mixtral|/|\\*|*|x|×|-|4k|ctx|=|:|--|lora|qlora|full|4bit|"
    "8-bit|adam|zero3|2x3090|a100|80gb|gb|G|GiB|MB|tokens|samples|epochs|x3|rank|batch size|$|"
    "12$/h|hours|days|by tomorrow|显存|内存|张|卡|万|亿|两|单卡|轮|nan|inf|1e999|9**9**9|-3|0|"
    "0.0|1,000,000|99999999999999|l3-|r1 distill|deepseek|phi-3-mini|llava 1.6b(|e2b|-a3b|"
    "qwen3.5|gemma 4|2台|4机|nodes|with|total|RAM|of|each|lora_r|r=| |(|)|?|，|ｘ|𝟗|'|\""
)
FRAGMENTS = [*_WORDS.split("|"), "\n", "\u200b", "\x00", "|"]
CORPUS = Path(__file__).parent / "data" / "parse_corpus.jsonl"
TEXTS = [json.loads(line)["text"] for line in CORPUS.read_text(encoding="utf-8").splitlines()]

hostile = st.lists(st.sampled_from(FRAGMENTS), max_size=60).map("".join)
glued_numbers = st.lists(
    st.one_of(st.integers(-(10**20), 10**20).map(str), st.sampled_from(["x", "b", "k", "m", "/"])),
    max_size=40,
).map("".join)


def _answered(result: ParseResult) -> None:
    assert isinstance(result, ParseResult)
    assert result.error != UNREADABLE, "a reader raised"
    if result.error is None and result.clarify is None:
        assert result.spec is not None


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(max_size=300))
def test_random_text_never_raises(text: str) -> None:
    _answered(parse(text))


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(hostile)
def test_hostile_fragments_never_raise(text: str) -> None:
    _answered(parse(text))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(glued_numbers)
def test_glued_numbers_never_raise(text: str) -> None:
    _answered(parse(text))


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(TEXTS), st.sampled_from(TEXTS), st.integers(0, 200), st.integers(0, 200))
def test_cut_and_spliced_corpus_texts_never_raise(first: str, second: str, a: int, b: int) -> None:
    # Real questions cut mid-word and glued together reach reader paths random text does not.
    _answered(parse(first[:a] + second[b:]))
    _answered(parse((first[a:] + " " + second[:b]).upper()))


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(FRAGMENTS), st.integers(1, MAX_INPUT_CHARS))
def test_long_repetitions_are_answered(fragment: str, length: int) -> None:
    # Repetition is where a backtracking regex would blow up.
    text = (fragment * (length // max(1, len(fragment)) + 1))[:length]
    _answered(parse(text))
