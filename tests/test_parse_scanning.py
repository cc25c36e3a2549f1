"""The parser's fast scans (`Reading.matches_at_numbers`, `matches_near`, `matches_if`,
`matches_when`) find exactly what a full scan of the same pattern finds."""

from __future__ import annotations

import re

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from planner.parsing import budget, context, dataset, epochs, gpu, lora, model, vram
from planner.parsing.normalize import normalize
from planner.parsing.reading import Reading
from tests.parse_cases import CORPUS, REALISTIC, load_cases

TEXTS = [normalize(case["text"]) for path in (CORPUS, REALISTIC) for case in load_cases(path)]
NUMBER_LED = [
    budget._SPEED,
    context._VALUE_KEY,
    context._N_TOKENS,
    context._BARE_K,
    dataset._TOKENS,
    dataset._TOKENS_TIMES_EPOCHS,
    dataset._SAMPLES,
    dataset._TEXT_SIZE,
    epochs._VALUE_KEY,
    gpu._COUNT_VRAM,
    gpu._NODES_EACH,
    gpu._NODE_PRODUCT,
    gpu._GPU_HOURS,
    model._SIZE_FAMILY,
    model._BARE_SIZES,
    model._BILLION_PARAMS,
    model._MILLION_PARAMS,
    model._BARE_MOE,
    model._GB_TYPO,
    vram._RAM,
    vram._BARE,
]
HINTED = [
    (budget._DEADLINE_HINT, budget._DEADLINE),
    (context._AT_HINT, context._AT_VALUE),
    (lora._R_NUMBER, lora._RANK_ALPHA),
    (lora._RANK_HINT, lora._RANK),
    (lora._RANK_AFTER_HINT, lora._RANK_AFTER),
    (model._SIZE_HINT, model._FAMILY_SIZE),
    (vram._NUMBER_THEN_GB, vram._BARE),
]
PIECES = [
    "7b",
    "13B",
    "~512",
    "1,000",
    "1,5",
    ".5",
    "x3",
    "*2",
    "2x3090",
    "8x7b",
    "a100",
    " ",
    ",",
    "r16",
    "rank 8",
    "@ 512",
    "w/ 2k",
    "an hour",
    "3 d",
    "24gb",
    "4 nodes",
    "8 gpu",
    "tokens",
    "samples",
    "llama",
    "qwen2.5-",
    "b",
    "m",
    "g",
    "-",
    "/",
    "k",
    "4090",
    "单卡",
    "2台",
]
fragments = st.lists(st.sampled_from(PIECES), max_size=30).map("".join)


def _spans(matches: list[re.Match[str]]) -> list[tuple[int, int]]:
    return [m.span() for m in matches]


def _same_as_full_scans(text: str) -> None:
    r = Reading(text=text)
    for pattern in NUMBER_LED:
        assert _spans(r.matches_at_numbers(pattern)) == _spans(r.matches(pattern)), pattern.pattern
    for hint, pattern in HINTED:
        assert _spans(r.matches_when(hint, pattern)) == _spans(r.matches(pattern)), pattern.pattern
    near = r.matches_near(gpu._CARD, gpu._CARD_NAME, gpu._CARD_REACH)
    assert _spans(near) == _spans(r.matches(gpu._CARD))


def test_fast_scans_match_full_scans_on_every_case() -> None:
    for text in TEXTS:
        _same_as_full_scans(text)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(fragments)
def test_fast_scans_match_full_scans_on_glued_fragments(text: str) -> None:
    _same_as_full_scans(text)


def test_number_starts_stay_right_after_text_is_taken() -> None:
    r = Reading(text="1.5 and 12,34 x 99")
    r.matches_at_numbers(model._BARE_SIZES)
    r.take(next(re.finditer(r"1\.5 and 12,", r.text)))
    assert _spans(r.matches_at_numbers(context._N_TOKENS)) == _spans(r.matches(context._N_TOKENS))
    assert r._number_starts[1] == [m.start() for m in re.finditer(r"(?<![\d.])\d", r.text)]
