"""Words with one home: every user-facing sentence is a catalog entry, a message id with its
English and its Chinese, formatted with values.

Why a plain typed catalog module and not gettext/Babel .po files:
- the planner must stay pure (no I/O): its sentences (assumptions, suggestions, warnings) are
  Python data beside the code that says them, loaded by import, never read from disk;
- a missing or mismatched translation is a test failure (tests/test_words.py checks that every
  entry has both languages with the same placeholders), not a silent fallback at run time;
- an answer is built once, in English, and is then shown in the asker's language: a `Said` is the
  English `str` itself (so the Plan JSON, logs and every English answer are byte-identical to
  plain strings) that also remembers its entry and values, so `Said.to("zh")` formats the Chinese
  of the same message — values that are `Said` themselves (a verdict word, a field label) are
  rendered in the same language. Nothing translates English text after the fact.

Templates are `str.format` strings with named placeholders ("{count:,}" formats alike in both).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from string import Formatter
from typing import Annotated, Any, Literal, NamedTuple

from pydantic import ValidatorFunctionWrapHandler, WrapValidator

Language = Literal["en", "zh"]


class Entry(NamedTuple):
    en: str
    zh: str


class Said(str):
    """An English sentence that knows its message id and values (see the module docstring)."""

    key: str
    entry: Entry
    values: Mapping[str, Any]

    def __new__(cls, key: str, entry: Entry, values: Mapping[str, Any]) -> Said:
        self = super().__new__(cls, entry.en.format_map(values))
        self.key, self.entry, self.values = key, entry, values
        return self

    def __reduce__(self) -> tuple[type[Said], tuple[str, Entry, Mapping[str, Any]]]:
        return (Said, (self.key, self.entry, self.values))

    def to(self, language: Language) -> str:
        """This message in `language`; plain values (numbers, names) as they are."""
        if language == "en":
            return str(self)
        values = {name: in_language(value, language) for name, value in self.values.items()}
        return self.entry.zh.format_map(values)


class Listing(tuple[Any, ...]):
    """Items said together, each in the sentence's language, joined by each language's
    separator (", " and "、" unless given)."""

    en_sep: str
    zh_sep: str

    def __new__(cls, items: Iterable[Any], en_sep: str = ", ", zh_sep: str = "、") -> Listing:
        self = super().__new__(cls, items)
        self.en_sep, self.zh_sep = en_sep, zh_sep
        return self

    def __format__(self, spec: str) -> str:
        return self.en_sep.join(map(str, self))


def in_language(value: Any, language: Language) -> Any:
    """A catalog sentence (or a listing of them) in `language`; any other value as it is."""
    if isinstance(value, Said):
        return value.to(language)
    if isinstance(value, Listing):
        sep = value.en_sep if language == "en" else value.zh_sep
        return sep.join(str(in_language(item, language)) for item in value)
    return value


class Catalog:
    """The entries of one area, by message id; calling it says one of them with its values."""

    def __init__(self, entries: Mapping[str, Entry]) -> None:
        self.entries = dict(entries)

    def __call__(self, key: str, /, **values: Any) -> Said:
        return Said(key, self.entries[key], values)


def placeholders(template: str) -> set[str]:
    """The names a template formats ("{count:,} GPUs" → {"count"})."""
    return {name for _, name, _, _ in Formatter().parse(template) if name is not None}


def _keep_said(value: Any, handler: ValidatorFunctionWrapHandler) -> Any:
    return value if isinstance(value, Said) else handler(value)


# A `str` field of a model that may hold a `Said`: pydantic would otherwise copy it to a plain
# `str` and lose its message id. Its JSON and schema are a string's.
Text = Annotated[str, WrapValidator(_keep_said)]
