"""Reading a message, the first step of a turn: what was said (cleaned of hidden characters, a
config.json split from the words around it), whether it can be read at all (empty, not JSON,
too long: answered at once), and what it asks (an Intent, a change, a supplied model, a report).
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable
from typing import Any

from bot import phrases
from bot.configs import NotJson, split_config
from bot.conversation.outcome import ConfigQuestion, Turn
from bot.followups import Intent, Question, Reported, read_intent
from bot.patches import Button, Message, Patch
from bot.reply_builder import message_reply
from planner.parsing.assemble import MAX_INPUT_CHARS
from planner.parsing.report import oom_reported, without_oom_report
from planner.parsing.result import ParseResult
from planner.spec import JobSpec

ParseFn = Callable[[str], ParseResult]
Asked = Intent | ConfigQuestion | Patch | JobSpec


def split_message(text: str, parse: ParseFn) -> tuple[dict[str, Any] | None, str] | Turn:
    """A typed message's config.json (None without one) and its words, or the answer to a
    message that cannot be read (empty, bad JSON, too long: `parse` says why, uncached, as such
    a text is not worth caching)."""
    try:
        config, words = split_config(clean(text))
    except NotJson as error:
        return Turn(message_reply("error", *phrases.not_json(str(error))))
    if not words and config is None:
        return Turn(message_reply("clarify", *phrases.ASK_SOMETHING))
    if len(words) > MAX_INPUT_CHARS:
        # The parser owns the limit and says why.
        refusal = parse(words).error or phrases.TOO_LONG_BODY
        return Turn(message_reply("error", phrases.TOO_LONG_TITLE, refusal))
    return config, words


def asked(
    text: str | Patch | JobSpec, config: dict[str, Any] | None, parse: ParseFn, scope: str
) -> Asked:
    """What a readable message asks: a supplied model starts a new job (even inside a thread);
    a question that carries a measured peak or an OOM is a report for workspace `scope`."""
    if config is not None:
        return ConfigQuestion(config, text if isinstance(text, str) else "")
    if not isinstance(text, str):
        return text
    intent = read_intent(text)
    if isinstance(intent, Question) and _is_report(text, parse):
        oom = oom_reported(text)
        said = without_oom_report(text) if oom else text
        return Reported(text=said, oom=oom, scope=scope)
    return intent


def _is_report(text: str, parse: ParseFn) -> bool:
    return oom_reported(text) or "measured_peak_gib" in parse(text).fields


def spoken(message: Message | JobSpec) -> str:
    """The words a message was said in, for choosing the answer's language."""
    if isinstance(message, JobSpec):
        return ""
    if isinstance(message, Button):
        return message.text
    return message.label if isinstance(message, Patch) else message


def clean(text: str) -> str:
    """Drop control and invisible formatting characters (zero-width, bidi overrides) that only
    hide what a message says; keep line breaks and tabs."""
    return "".join(
        char for char in text if char in "\n\t" or unicodedata.category(char) not in ("Cc", "Cf")
    ).strip()
