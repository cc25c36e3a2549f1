"""Writing YAML with a comment beside each value (why the plan chose it).

YAML libraries drop comments when they dump, so the few shapes the configs use are written here:
mappings of scalars, lists of scalars and nested mappings. Scalars are written as JSON, which YAML
1.2 reads as the same value (strings double-quoted, so "no" and "on" stay strings); tests parse
every file back with a YAML parser.
"""

from __future__ import annotations

import json
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
    text = json.dumps(value, ensure_ascii=False)
    if isinstance(value, float) and "e" in text:
        # YAML 1.1 (PyYAML, which TRL and axolotl load with) reads 1e-06 as a string: a float's
        # mantissa needs a dot.
        mantissa, exponent = text.split("e")
        text = f"{float(mantissa):.1f}e{exponent}" if "." not in mantissa else text
    return text


def yaml_text(entries: Sequence[Entry | None], header: Sequence[str] = ()) -> str:
    """The YAML of `entries` (None entries skipped), with `header` as comment lines on top."""
    lines = [f"# {line}" if line else "#" for line in header]
    _write(block(*entries), 0, lines)
    return "\n".join(lines) + "\n"


def _write(mapping: Block, indent: int, lines: list[str]) -> None:
    pad = " " * indent
    for entry in mapping.entries:
        comment = f"  # {entry.why}" if entry.why else ""
        value = entry.value
        if isinstance(value, Block):
            lines.append(f"{pad}{entry.key}:{comment}")
            _write(value, indent + 2, lines)
        elif isinstance(value, str) and "\n" in value:
            lines.append(f"{pad}{entry.key}: |{comment}")
            lines.extend(
                f"{pad}  {line}" if line else "" for line in value.rstrip("\n").split("\n")
            )
        elif isinstance(value, Sequence) and value and isinstance(value[0], Block):
            lines.append(f"{pad}{entry.key}:{comment}")
            for item in value:
                nested: list[str] = []
                _write(item, indent + 4, nested)
                lines.append(f"{pad}  - {nested[0].lstrip()}")
                lines.extend(nested[1:])
        elif isinstance(value, Sequence) and not isinstance(value, str):
            items = ", ".join(scalar(item) for item in value)
            lines.append(f"{pad}{entry.key}: [{items}]{comment}")
        else:
            lines.append(f"{pad}{entry.key}: {scalar(value)}{comment}")


def json_text(document: Mapping[str, object]) -> str:
    return json.dumps(document, indent=2) + "\n"
