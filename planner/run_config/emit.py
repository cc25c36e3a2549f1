"""Writing YAML with a comment beside each value (why the plan chose it).

YAML libraries drop comments when they dump, so the few shapes the configs use are written here:
mappings of scalars, lists of scalars and nested mappings. Scalars are written as JSON, which YAML
1.2 reads as the same value (strings double-quoted, so "no" and "on" stay strings); tests parse
every file back with a YAML parser.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Union

Scalar = str | int | float | bool | None
Value = Union[Scalar, Sequence[Scalar], "Block", Sequence["Block"]]


@dataclass(frozen=True, slots=True)
class Entry:
    """One key: its value and the reason, written as a comment ("" for none)."""

    key: str
    value: Value
    why: str = ""


@dataclass(frozen=True, slots=True)
class Block:
    """A nested mapping."""

    entries: tuple[Entry, ...]


def block(*entries: Entry | None) -> Block:
    return Block(tuple(entry for entry in entries if entry is not None))


def scalar(value: Scalar) -> str:
    if isinstance(value, str):
        return _quoted(value)
    text = json.dumps(value)
    if isinstance(value, float) and "e" in text:
        # YAML 1.1 (PyYAML, which TRL and axolotl load with) reads 1e-06 as a string: a float's
        # mantissa needs a dot.
        mantissa, exponent = text.split("e")
        text = f"{float(mantissa):.1f}e{exponent}" if "." not in mantissa else text
    return text


def yaml_text(entries: Sequence[Entry | None], header: Sequence[str] = ()) -> str:
    """The YAML of `entries` (None entries skipped), with `header` as comment lines on top."""
    lines = [f"# {_printable(line)}" if line else "#" for line in header]
    _write(block(*entries), 0, lines)
    return "\n".join(lines) + "\n"


# A plain key YAML 1.1 reads back as the same string: an identifier that is not one of its
# bool or null words (PyYAML, which TRL and axolotl load with, reads `on:` as True).
_PLAIN_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]*")
_YAML_WORDS = frozenset(
    word
    for base in ("yes", "no", "true", "false", "on", "off", "null", "y", "n")
    for word in (base, base.capitalize(), base.upper())
)


def _key(key: str) -> str:
    """`key` as written: plain where it reads back as itself, else double-quoted."""
    return key if _PLAIN_KEY.fullmatch(key) and key not in _YAML_WORDS else _quoted(key)


def _write(mapping: Block, indent: int, lines: list[str]) -> None:
    pad = " " * indent
    for entry in mapping.entries:
        comment = f"  # {_printable(entry.why)}" if entry.why else ""
        value = entry.value
        key = _key(entry.key)
        if isinstance(value, Block):
            lines.append(f"{pad}{key}:{comment}")
            _write(value, indent + 2, lines)
        elif isinstance(value, str) and _literal_block(value):
            lines.append(f"{pad}{key}: |{comment}")
            lines.extend(
                f"{pad}  {line}" if line else "" for line in value.rstrip("\n").split("\n")
            )
        elif isinstance(value, Sequence) and value and isinstance(value[0], Block):
            lines.append(f"{pad}{key}:{comment}")
            for item in value:
                nested: list[str] = []
                _write(item, indent + 4, nested)
                lines.append(f"{pad}  - {nested[0].lstrip()}")
                lines.extend(nested[1:])
        elif isinstance(value, Sequence) and not isinstance(value, str):
            items = ", ".join(scalar(item) for item in value)
            lines.append(f"{pad}{key}: [{items}]{comment}")
        else:
            lines.append(f"{pad}{key}: {scalar(value)}{comment}")


def _literal_block(text: str) -> bool:
    """Whether `text` reads back the same as a `|` block (a shell script: lines of printable
    characters ending in one newline); anything else is written quoted."""
    if not text.endswith("\n") or text.endswith("\n\n") or not text.strip() or text[0].isspace():
        return False
    return all(line.isprintable() for line in text[:-1].split("\n"))


def _quoted(text: str) -> str:
    """A YAML double-quoted scalar: printable characters as they are, the rest escaped (YAML
    reads some raw code points, NEL and LS, as line breaks, and wants an 8-digit escape for
    astral ones)."""
    out = []
    for char in text:
        if char in '"\\':
            out.append("\\" + char)
        elif char.isprintable():
            out.append(char)
        elif ord(char) < 0x10000:
            out.append(f"\\u{ord(char):04x}")
        else:
            out.append(f"\\U{ord(char):08x}")
    return '"' + "".join(out) + '"'


def _printable(text: str) -> str:
    """A comment on one line: a model name from a supplied config.json may hold anything, and a
    YAML file may not hold control characters even in a comment."""
    return "".join(char if char.isprintable() else " " for char in text)


def json_text(document: Mapping[str, object]) -> str:
    return json.dumps(document, indent=2) + "\n"
