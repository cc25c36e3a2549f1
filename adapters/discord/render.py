"""Reply → Discord message payloads. Never fails on size: long answers are split, never rejected.

Each payload is {"content", "embeds", "components", "allowed_mentions"}, the body of a message
create / interaction followup. Every payload carries allowed_mentions {"parse": []} so text echoed
from a question ("@everyone", role mentions) can never ping anyone. Numbers live in limits.py.
"""

from __future__ import annotations

import re
from typing import Any

from adapters.discord import limits
from bot import format as fmt
from bot import phrases
from bot.language import label, marks
from bot.reply import CardRow, Reply, WhatIf

CHART_FILENAME = "gpuplan-chart.png"
NO_MENTIONS: dict[str, list[str]] = {"parse": []}
# Our policy, not Discord's: past this many messages a reply floods the channel, so it is cut.
MAX_MESSAGES = 8

# A what-if button carries its whole follow-up in its custom_id, so a click still re-plans after a
# restart, when nothing of the original reply is left in memory.
WHATIF_PREFIX = "gpuplan:whatif:"
WHATIF_TEMPLATE = re.compile(r"gpuplan:whatif:(?P<id>[a-z0-9_-]+):(?P<text>.+)", re.DOTALL)

_COLOURS = {
    "plan": 0x2E86DE,
    "clarify": 0xF39C12,
    "error": 0xE74C3C,
    "help": 0x7F8C8D,
    "rate_limited": 0xE67E22,
}
_MARKDOWN = re.compile(r"([\\*_~`|>\[\]])")
_MASS_MENTION = re.compile(r"@(everyone|here)")
_CONTINUED = " (cont.)"
_CARD_WIDTH = 24
_ELLIPSIS = "…"


def render_reply(reply: Reply) -> list[dict[str, Any]]:
    """One or more message payloads, in order; the what-if buttons ride on the last one."""
    groups = _pack(_embeds(reply))
    payloads = [
        {"content": "", "embeds": group, "components": [], "allowed_mentions": dict(NO_MENTIONS)}
        for group in groups[:MAX_MESSAGES]
    ]
    if len(groups) > MAX_MESSAGES:
        payloads[-1]["content"] = (
            f"(Answer cut short: {len(groups) - MAX_MESSAGES} more message(s) not shown.)"
        )
    payloads[-1]["components"] = whatif_rows(reply.whatifs)
    return payloads


def embed_size(embed: dict[str, Any]) -> int:
    """Characters Discord counts towards the 6000 total of a message."""
    size = len(embed.get("title") or "") + len(embed.get("description") or "")
    size += sum(len(f["name"]) + len(f["value"]) for f in embed.get("fields") or [])
    size += len((embed.get("footer") or {}).get("text") or "")
    size += len((embed.get("author") or {}).get("name") or "")
    return size


def whatif_custom_id(whatif: WhatIf) -> str:
    """Stable id "gpuplan:whatif:<id>:<follow-up text>"; the label stands in for a long text."""
    key = re.sub(r"[^a-z0-9_-]", "", whatif.id.lower())[:32] or "custom"
    head = f"{WHATIF_PREFIX}{key}:"
    text = " ".join(whatif.text.split()) or whatif.label
    if len(head) + len(text) > limits.CUSTOM_ID:
        text = " ".join(whatif.label.split())
    return head + text[: limits.CUSTOM_ID - len(head)]


def whatif_rows(whatifs: list[WhatIf]) -> list[dict[str, Any]]:
    """Action rows of what-if buttons, deduplicated by custom_id, at most 5 rows × 5 buttons."""
    buttons: dict[str, dict[str, Any]] = {}
    for whatif in whatifs:
        if not (whatif.text.strip() or whatif.label.strip()):
            continue  # nothing to send when pressed
        custom_id = whatif_custom_id(whatif)
        label = _clip(" ".join((whatif.label or whatif.text).split()), limits.BUTTON_LABEL)
        buttons.setdefault(
            custom_id, {"type": 2, "style": 2, "label": label, "custom_id": custom_id}
        )
    capacity = limits.ACTION_ROWS_PER_MESSAGE * limits.BUTTONS_PER_ROW
    kept = list(buttons.values())[:capacity]
    return [
        {"type": 1, "components": kept[i : i + limits.BUTTONS_PER_ROW]}
        for i in range(0, len(kept), limits.BUTTONS_PER_ROW)
    ]


def escape(text: str) -> str:
    """Neutralise Discord markdown and mass mentions in text that may echo the user."""
    return _MASS_MENTION.sub("@\u200b\\1", _MARKDOWN.sub(r"\\\1", text))


def _embeds(reply: Reply) -> list[dict[str, Any]]:
    colour = _COLOURS.get(reply.kind, _COLOURS["plan"])
    main: dict[str, Any] = {"title": _clip(escape(reply.title) or "gpuplan", limits.EMBED_TITLE)}
    if reply.has_chart:
        main["image"] = {"url": f"attachment://{CHART_FILENAME}"}
    builder = _EmbedBuilder(main)
    for chunk in _description_chunks(reply):
        builder.add_description(chunk)
    for name, lines in _field_sections(reply):
        for index, value in enumerate(_split_lines(lines, limits.EMBED_FIELD_VALUE)):
            builder.add_field(name + (_CONTINUED if index else ""), value)
    footer = _footer(reply)
    if footer:
        builder.add_footer(footer)
    for embed in builder.embeds:
        embed["color"] = colour
    return builder.embeds


def _description_chunks(reply: Reply) -> list[str]:
    prose = [escape(line) for line in (reply.verdict, reply.body) if line.strip()]
    pieces = _split_lines(prose, limits.EMBED_DESCRIPTION)
    pieces += _code_blocks(_table_lines(reply.table, reply.language), limits.EMBED_DESCRIPTION)
    return _merge(pieces, limits.EMBED_DESCRIPTION, "\n")


def _field_sections(reply: Reply) -> list[tuple[str, list[str]]]:
    memory = "Memory per GPU"
    if reply.required_gib is not None:
        memory += f" ≈ {reply.required_gib:.1f} GiB"
    sections = [
        (label(reply.language, phrases.SIDE_BY_SIDE), reply.comparison),
        (memory, [f"{m.component}: {m.gib:.1f} GiB" for m in reply.memory]),
        (label(reply.language, "Recommendation"), reply.recommendation),
        (label(reply.language, "What changed"), reply.changes),
        (label(reply.language, "Suggestions"), reply.suggestions),
        (label(reply.language, "Warnings"), reply.warnings),
        (label(reply.language, "Try asking"), reply.followups),
    ]
    return [
        (name, [f"• {escape(line)}" for line in lines if line.strip()])
        for name, lines in sections
        if any(line.strip() for line in lines)
    ]


def _footer(reply: Reply) -> str:
    parts = []
    if reply.assumptions:
        parts.append(f"{label(reply.language, 'Assumed')}: " + "; ".join(reply.assumptions))
    if reply.price_date:
        parts.append(f"{label(reply.language, 'Prices from')} {reply.price_date}")
    # Footers render as plain text, so they need no markdown escaping.
    return _clip(" · ".join(parts), limits.EMBED_FOOTER)


def _table_lines(rows: list[CardRow], language: str) -> list[str]:
    """A narrow table (an embed is ~60 monospace characters wide); columns no row fills drop."""
    if not rows:
        return []
    cards = [_card(row) for row in rows]
    width = max(len("GPU"), *(len(card) for card in cards))
    columns = [
        ("fit", -6, [label(language, row.verdict) for row in rows]),
        ("±GiB", 6, [format(row.headroom_gib, "+.1f") for row in rows]),
        ("hours", 6, [_number(row.hours, ".1f") for row in rows]),
        # Cents kept: $7.17 and $7.37 are different runs, not both "7".
        ("cost $", 9, [_number(row.cost_usd, ",.2f") for row in rows]),
        ("$/h", 5, [_number(row.usd_per_hour, ".2f") for row in rows]),
    ]
    shown = [column for column in columns if any(cell != "–" for cell in column[2])]
    names = [_align(label(language, h), w) for h, w, _ in shown]
    lines = [" ".join([fmt.pad("GPU", width), *names]).rstrip()]
    for index, (card, row) in enumerate(zip(cards, rows, strict=True)):
        cells = [fmt.pad(card, width), *(_align(cells[index], w) for _, w, cells in shown)]
        if row.highlight:
            cells.append(_code_safe(marks(language, row.highlight)))
        lines.append(" ".join(cells))
    return lines


def _card(row: CardRow) -> str:
    # NVIDIA is the default vendor; dropping the word keeps a row on one line on a phone.
    count = f" ×{row.count}"
    name = _clip(_code_safe(row.gpu_name.removeprefix("NVIDIA ")), _CARD_WIDTH - len(count))
    return name + count


def _align(text: str, width: int) -> str:
    """Right-align numbers (positive width), left-align words (negative width), in display
    columns (a CJK character takes two)."""
    return fmt.pad(text, abs(width), right=width > 0)


def _number(value: float | None, spec: str) -> str:
    return "–" if value is None else format(value, spec)


def _code_safe(text: str) -> str:
    # Inside a code block only a backtick fence can break out; swap it for a look-alike.
    return text.replace("`", "ˋ")


class _EmbedBuilder:
    """Fills embeds in reading order, opening a new one whenever a limit would be crossed."""

    def __init__(self, first: dict[str, Any]) -> None:
        self.embeds = [first]

    def _room(self, embed: dict[str, Any]) -> int:
        return limits.EMBED_TOTAL_PER_MESSAGE - embed_size(embed)

    def add_description(self, chunk: str) -> None:
        last = self.embeds[-1]
        if "description" in last or "fields" in last or self._room(last) < len(chunk):
            self.embeds.append({"description": chunk})
        else:
            last["description"] = chunk

    def add_field(self, name: str, value: str) -> None:
        field = {"name": _clip(name, limits.EMBED_FIELD_NAME), "value": value, "inline": False}
        last = self.embeds[-1]
        fields = last.setdefault("fields", [])
        if len(fields) >= limits.EMBED_FIELDS or self._room(last) < len(name) + len(value):
            if not fields:
                del last["fields"]
            self.embeds.append({"fields": [field]})
        else:
            fields.append(field)

    def add_footer(self, text: str) -> None:
        last = self.embeds[-1]
        if self._room(last) < len(text):
            last = {}
            self.embeds.append(last)
        last["footer"] = {"text": text}


def _pack(embeds: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """Group embeds into messages of ≤10 embeds and ≤6000 counted characters."""
    groups: list[list[dict[str, Any]]] = [[]]
    total = 0
    for embed in embeds:
        size = embed_size(embed)
        group = groups[-1]
        if group and (
            len(group) >= limits.EMBEDS_PER_MESSAGE or total + size > limits.EMBED_TOTAL_PER_MESSAGE
        ):
            groups.append([])
            total = 0
        groups[-1].append(embed)
        total += size
    return groups


def _split_lines(lines: list[str], limit: int) -> list[str]:
    """Join lines into chunks of at most `limit` chars, breaking inside a line only if it must."""
    pieces: list[str] = []
    for line in lines:
        pieces += [line[i : i + limit] for i in range(0, len(line), limit)] or [""]
    return _merge(pieces, limit, "\n")


def _code_blocks(lines: list[str], limit: int) -> list[str]:
    fence_open, fence_close = "```\n", "\n```"
    inner = limit - len(fence_open) - len(fence_close)
    if not lines:
        return []
    return [fence_open + block + fence_close for block in _split_lines(lines, inner)]


def _merge(pieces: list[str], limit: int, separator: str) -> list[str]:
    merged: list[str] = []
    for piece in pieces:
        if merged and len(merged[-1]) + len(separator) + len(piece) <= limit:
            merged[-1] += separator + piece
        else:
            merged.append(piece)
    return merged


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - len(_ELLIPSIS)] + _ELLIPSIS
