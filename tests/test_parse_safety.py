"""Issue #4 item 5: long input refused politely; pint never sees user text; NaN, infinities,
negative and absurd numbers answered with a clear message; nothing is evaluated."""

from __future__ import annotations

import pytest

from planner import units
from planner.parsing import parse


def test_over_two_thousand_characters_is_refused_politely() -> None:
    result = parse("13B lora " + "a" * 2_000)
    assert result.spec is None
    assert "2,000" in result.error and "13B QLoRA" in result.error


def test_exactly_two_thousand_characters_is_read() -> None:
    text = "13B lora".ljust(2_000)
    assert parse(text).fields == {"params_b": 13, "method": "lora"}


def test_exponent_towers_are_not_evaluated(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_registry() -> None:
        raise AssertionError("pint was asked to parse user text")

    monkeypatch.setattr(units, "registry", no_registry)
    result = parse("9**9**9 tokens, 13B")
    assert result.error is None
    assert result.fields["params_b"] == 13
    assert "dataset_tokens" not in result.fields


def test_units_accept_only_whitelisted_spellings() -> None:
    with pytest.raises(units.UnknownUnit):
        units.convert(1.0, "9**9**9", "gb")
    with pytest.raises(units.UnknownUnit):
        units.convert(1.0, "__import__('os')", "gb")
    assert units.convert(24, "GiB", "gb") == pytest.approx(25.77, rel=1e-3)
    assert units.convert(5.5, "days", "hour") == 132


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("13B, 1e999 tokens", "too large"),
        ("13B, nan epochs", "nan"),
        ("13B lora, inf tokens", "inf"),
        ("13B lora, -3 epochs", "positive"),
        ("13B lora, epochs=-1", "positive"),
        ("13B lora, batch size -4", "positive"),
        ("13B lora, seq_len 99999999999", "context length"),
        ("9000B model lora", "model size"),
        ("13B lora on 200000 GPUs", "gpu count"),
    ],
)
def test_impossible_numbers_get_a_clear_message(text: str, words: str) -> None:
    result = parse(text)
    assert result.spec is None
    assert words in result.error.lower()
    assert "Traceback" not in result.error


def test_code_in_the_text_is_only_text() -> None:
    result = parse("__import__('os').system('echo hi') 13B; {{7*7}} ${7*7}")
    assert result.fields == {"params_b": 13}
    assert "49" not in result.model_dump_json()


def test_unread_pieces_carry_no_markup() -> None:
    result = parse("13b lora <!everyone> <@U12345> `rm -rf /` &amp;5")
    assert result.fields == {"params_b": 13, "method": "lora"}
    for piece in result.unread:
        assert not set(piece) & set("<>@!&`*_|")


@pytest.mark.parametrize(
    ("text", "field", "value"),
    [("7b 2^13 ctx", "seq_len", 8192), ("7b 2 ** 11 ctx", "seq_len", 2048)],
)
def test_a_power_is_read_as_its_value(text: str, field: str, value: int) -> None:
    assert parse(text).fields[field] == value


@pytest.mark.parametrize(
    "text", ["7b 10^30 ctx", "7b lora 10**30 tokens", "13b 9^99 ctx", "7b 2^99999 ctx"]
)
def test_a_power_too_big_to_plan_is_refused_not_truncated(text: str) -> None:
    result = parse(text)
    assert result.error is None
    assert "seq_len" not in result.fields and "dataset_tokens" not in result.fields
    assert any("too large" in note for note in result.unread)


def test_a_tower_of_powers_is_set_aside_and_never_echoed() -> None:
    result = parse("13B lora 10^10^10 tokens")
    assert result.fields == {"params_b": 13, "method": "lora"}
    assert any("tower" in note for note in result.unread)
    assert not any("^" in note or "*" in note for note in result.unread)
