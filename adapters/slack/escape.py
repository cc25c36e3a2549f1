"""mrkdwn escaping for any string that reaches Slack as mrkdwn.

Slack treats only `&`, `<` and `>` as control characters; escaping them defuses `<!everyone>`,
`<!channel>`, `<@U…>` and `<url|label>` links. Nothing else is HTML-encoded (a `'` must stay a `'`).
Control characters are dropped because Slack rejects or mangles them.
"""

from __future__ import annotations

import re

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f\u202a-\u202e\u2066-\u2069]")
_MRKDWN = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;"})
_DANGLING_ENTITY = re.compile(r"&[a-z]{0,3}$")
_SLACK_ENTITIES = (("&lt;", "<"), ("&gt;", ">"), ("&amp;", "&"))
_MENTION_OR_LINK = re.compile(r"<([@#!])?([^>|]*)(?:\|([^>]*))?>")


def clean(text: str) -> str:
    """The text without control or bidi-override characters (newlines and tabs kept)."""
    return _CONTROL.sub("", text)


def escape_mrkdwn(text: str) -> str:
    """Plain text → mrkdwn that renders the same characters and pings nobody."""
    return clean(text).translate(_MRKDWN)


def truncate_escaped(text: str, max_chars: int) -> str:
    """Cut escaped mrkdwn to `max_chars` with an ellipsis, never leaving half an `&amp;`."""
    if len(text) <= max_chars:
        return text
    return _DANGLING_ENTITY.sub("", text[: max_chars - 1]) + "…"


def truncate_plain(text: str, max_chars: int) -> str:
    text = clean(text)
    return text if len(text) <= max_chars else text[: max_chars - 1] + "…"


def incoming_to_plain(text: str) -> str:
    """What the user typed, from Slack's wire form: `<@U1>` → `@U1`, `<url|label>` → `label`,
    `&lt;` → `<`. The bot's own mention should already be removed."""

    def _readable(match: re.Match[str]) -> str:
        sigil, target, label = match.group(1) or "", match.group(2), match.group(3)
        if label:
            return label
        return f"@{target}" if sigil in ("@", "!") else f"{sigil}{target}"

    plain = _MENTION_OR_LINK.sub(_readable, text)
    for entity, char in _SLACK_ENTITIES:
        plain = plain.replace(entity, char)
    return plain.strip()
