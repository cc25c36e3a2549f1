"""Reply → Slack Block Kit messages (chat.postMessage / response_url payloads).

Plain-text objects are escaped too: Slack decodes the entities there as well, and nothing raw
such as `<!everyone>` should ever reach the wire.

Every block is built with `slack_sdk.models.blocks`, whose `to_dict()` rejects what Slack would
reject; the limits it does not check (50 blocks, field size, total size) are enforced here by
truncating and splitting, so rendering never fails and Slack never answers `invalid_blocks`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator

from slack_sdk.models.blocks import (
    ActionsBlock,
    ButtonElement,
    ContextBlock,
    HeaderBlock,
    MarkdownTextObject,
    PlainTextObject,
    SectionBlock,
)

from adapters.slack import limits
from adapters.slack.escape import escape_mrkdwn, truncate_escaped, truncate_plain
from bot import format as fmt
from bot import phrases
from bot.language import label, marks
from bot.reply import CardRow, Reply, WhatIf

WHATIF_ACTION_PREFIX = "whatif:"
WHATIF_BLOCK_PREFIX = "whatif"
_BUTTONS_PER_ROW = 5
_CODE_FENCE = "```"
_GPU_COLUMN_MAX_CHARS = 34  # "8× NVIDIA RTX PRO 6000 Blackwell" fits whole
_NUMERIC_COLUMNS = {2, 3, 4, 5}  # free GiB, hours, cost, $/GPU-h: flush right


def render_reply(reply: Reply, *, conversation_id: str = "") -> list[dict]:
    """One or more `{"text", "blocks"}` payloads, in order, each within every Slack limit.

    `conversation_id` is stamped into the what-if buttons' block_id so a click on a message Slack
    gives us without thread context (a slash-command answer) still finds its conversation.
    """
    blocks = [*_content_blocks(reply), *_whatif_blocks(reply.whatifs, conversation_id)]
    pages = _paginate(blocks)
    return [{"text": _fallback_text(reply, n, len(pages)), **page} for n, page in enumerate(pages)]


def conversation_id_from_block_id(block_id: str) -> str:
    """The conversation id `render_reply` stamped into a what-if block ("" when absent)."""
    prefix, _, rest = block_id.partition(":")
    if prefix != WHATIF_BLOCK_PREFIX:
        return ""
    return rest.partition(":")[2]


def _content_blocks(reply: Reply) -> Iterator[dict]:
    yield HeaderBlock(
        text=PlainTextObject(
            text=_escaped_or(reply.title, "gpuplan", limits.HEADER_TEXT_MAX_CHARS),
            emoji=True,
        )
    ).to_dict()
    if reply.changes:
        yield from _sections(["*What changed*", *(f"• {escape_mrkdwn(c)}" for c in reply.changes)])
    if reply.verdict:
        yield from _sections([f"*{escape_mrkdwn(reply.verdict)}*"])
    if reply.body:
        yield from _sections(escape_mrkdwn(reply.body).split("\n"))
    if reply.comparison:
        heading = f"*{label(reply.language, phrases.SIDE_BY_SIDE)}*"
        yield from _sections([heading, *(f"• {escape_mrkdwn(c)}" for c in reply.comparison)])
    yield from _memory_blocks(reply)
    if reply.table:
        yield from _sections(_card_table(reply.table, reply.language), code=True)
    for heading, items in (
        (label(reply.language, "Recommendation"), reply.recommendation),
        (label(reply.language, "Ways to make it fit or cost less"), reply.suggestions),
        (label(reply.language, "Warnings"), reply.warnings),
        (label(reply.language, "You could also tell me"), reply.followups),
    ):
        if items:
            yield from _sections([f"*{heading}*", *(f"• {escape_mrkdwn(i)}" for i in items)])
    yield from _context_blocks(reply)


def _memory_blocks(reply: Reply) -> Iterator[dict]:
    fields = [
        MarkdownTextObject(
            text=truncate_escaped(
                f"*{escape_mrkdwn(line.component)}*\n{line.gib:.1f} GiB",
                limits.SECTION_FIELD_MAX_CHARS,
            )
        )
        for line in reply.memory
    ]
    title = "*Memory per GPU*"
    if reply.required_gib is not None:
        title = f"*Memory per GPU: {reply.required_gib:.1f} GiB*"
        if reply.range_gib is not None:
            title += f" (range {reply.range_gib[0]:.1f}–{reply.range_gib[1]:.1f} GiB)"
    for n, row in enumerate(_rows(fields, limits.SECTION_FIELDS_MAX)):
        text = title if n == 0 else "*Memory per GPU (cont.)*"
        yield SectionBlock(text=MarkdownTextObject(text=text), fields=row).to_dict()


def _card_table(rows: list[CardRow], language: str) -> list[str]:
    names = ("card", "fit", "free GiB", "hours", "cost", "$/GPU-h", "")
    header = tuple(label(language, name) for name in names)
    cells = [header] + [
        (
            truncate_plain(fmt.card(row.gpu_name, row.count), _GPU_COLUMN_MAX_CHARS),
            label(language, row.verdict),
            f"{row.headroom_gib:+.1f}",
            _number(row.hours),
            fmt.usd(row.cost_usd),
            fmt.usd(row.usd_per_hour),
            marks(language, row.highlight),
        )
        for row in rows
    ]
    return [
        escape_mrkdwn("  ".join(columns).rstrip())
        for columns in fmt.padded_columns(cells, _NUMERIC_COLUMNS)
    ]


def _number(value: float | None) -> str:
    if value is None:
        return "–"
    return f"{value:,.0f}" if value >= 100 else f"{value:.1f}"


def _sections(lines: Iterable[str], *, code: bool = False) -> Iterator[dict]:
    """Escaped mrkdwn lines packed into as few sections as the text limit allows."""
    overhead = 2 * (len(_CODE_FENCE) + 1) if code else 0
    budget = limits.SECTION_TEXT_MAX_CHARS - overhead
    for chunk in _chunks((truncate_escaped(line, budget) for line in lines), budget, "\n"):
        text = f"{_CODE_FENCE}\n{chunk}\n{_CODE_FENCE}" if code else chunk
        if text.strip():
            yield SectionBlock(text=MarkdownTextObject(text=text)).to_dict()


def _chunks(pieces: Iterable[str], budget: int, joiner: str) -> Iterator[str]:
    current: list[str] = []
    size = 0
    for piece in pieces:
        added = len(piece) + (len(joiner) if current else 0)
        if current and size + added > budget:
            yield joiner.join(current)
            current, size = [], 0
            added = len(piece)
        current.append(piece)
        size += added
    if current:
        yield joiner.join(current)


def _context_blocks(reply: Reply) -> Iterator[dict]:
    notes = [f"{label(reply.language, 'Assumed')}: {a}" for a in reply.assumptions]
    if reply.price_date:
        notes.append(f"{label(reply.language, 'Prices as of')} {reply.price_date}")
    elements = [
        MarkdownTextObject(text=truncate_escaped(escape_mrkdwn(n), limits.CONTEXT_TEXT_MAX_CHARS))
        for n in notes
    ]
    for row in _rows(elements, limits.CONTEXT_ELEMENTS_MAX):
        yield ContextBlock(elements=row).to_dict()


def _rows(elements: list[MarkdownTextObject], max_count: int) -> Iterator[list[MarkdownTextObject]]:
    """Elements grouped so no block exceeds its element count or one section's worth of text,
    which keeps every block far below the per-message size guard."""
    row: list[MarkdownTextObject] = []
    size = 0
    for element in elements:
        if row and (
            len(row) == max_count or size + len(element.text) > limits.SECTION_TEXT_MAX_CHARS
        ):
            yield row
            row, size = [], 0
        row.append(element)
        size += len(element.text)
    if row:
        yield row


def _whatif_blocks(whatifs: list[WhatIf], conversation_id: str) -> Iterator[dict]:
    buttons = [
        ButtonElement(
            text=PlainTextObject(
                text=_escaped_or(w.label or w.text, "What if…", limits.BUTTON_TEXT_MAX_CHARS),
                emoji=True,
            ),
            action_id=(WHATIF_ACTION_PREFIX + w.id)[: limits.ACTION_ID_MAX_CHARS],
            # Escaped like any text (the app reads it back with incoming_to_plain).
            value=truncate_escaped(escape_mrkdwn(w.text), limits.BUTTON_VALUE_MAX_CHARS),
        )
        for w in whatifs[: limits.ACTIONS_ELEMENTS_MAX]
    ]
    for row_number, start in enumerate(range(0, len(buttons), _BUTTONS_PER_ROW)):
        block_id = f"{WHATIF_BLOCK_PREFIX}:{row_number}:{conversation_id}"
        yield ActionsBlock(
            block_id=block_id[: limits.BLOCK_ID_MAX_CHARS],
            elements=buttons[start : start + _BUTTONS_PER_ROW],
        ).to_dict()


def _fallback_text(reply: Reply, page: int, pages: int) -> str:
    summary = ": ".join(part for part in (reply.title, reply.verdict) if part) or reply.body
    suffix = f" (continued {page + 1}/{pages})" if page else ""
    return _escaped_or(summary, "gpuplan", limits.FALLBACK_TEXT_MAX_CHARS - len(suffix)) + suffix


def _escaped_or(text: str, default: str, max_chars: int) -> str:
    """Escaped and cut to fit; `default` when nothing printable is left (Slack rejects "")."""
    escaped = truncate_escaped(escape_mrkdwn(text).strip(), max_chars)
    return escaped or default


def _paginate(blocks: list[dict]) -> list[dict]:
    """Greedy split into messages under the block-count and total-size limits."""
    pages: list[list[dict]] = [[]]
    size = 2  # the list's brackets
    for block in blocks:
        block_size = len(json.dumps(block, ensure_ascii=False)) + 2  # with its ", " separator
        page = pages[-1]
        if page and (
            len(page) == limits.MAX_BLOCKS_PER_MESSAGE
            or size + block_size > limits.MESSAGE_BLOCKS_MAX_JSON_CHARS
        ):
            pages.append([])
            size = 2
        pages[-1].append(block)
        size += block_size
    return [{"blocks": page} for page in pages]
