"""Which language an answer is in: the asker's (a question written in Chinese gets a Chinese
answer), else the workspace's or server's default, else English.

The default per workspace/server is the `language` setting in the settings store
(bot/settings.py), set by an admin with `/gpuplan language zh` (or `en`, or `auto` to clear it);
`GPUPLAN_LANGUAGE` is the default for workspaces that set none. The language is applied once, on
the finished neutral reply, so every surface (console, Slack, Discord) shows the same words: a
catalog sentence (planner/words.py) is shown as its entry's Chinese with the same values; nothing
translates English text after the fact. Renderers translate their own headings with `label`.
"""

from __future__ import annotations

import os
import re
from typing import Literal, get_args

from bot import phrases
from bot.reply import Reply
from planner.patterns import lazy_pattern
from planner.words import Said, in_language

Language = Literal["en", "zh"]
LANGUAGES: tuple[str, ...] = get_args(Language)
ENGLISH: Language = "en"
LANGUAGE_ENV = "GPUPLAN_LANGUAGE"
LANGUAGE_SETTING = "language"
_CJK = lazy_pattern(r"[\u4e00-\u9fff]")
_SPELLINGS = {"en": "en", "english": "en", "英文": "en", "英语": "en", "zh": "zh", "chinese": "zh"}
_SPELLINGS |= {"中文": "zh", "汉语": "zh", "auto": "auto", "default": "auto", "自动": "auto"}
_COMMAND = lazy_pattern(
    r"^\s*(?:/?gpuplan\s+)?(?:language|lang|语言)\s*[:：]?\s*(?P<value>\S{1,12})\s*$", re.I
)


def read_language_command(text: str) -> str | None:
    """ "/gpuplan language zh" → "zh"; "auto" clears the workspace default; None otherwise."""
    m = _COMMAND.match(text)
    return _SPELLINGS.get(m.group("value").lower()) if m else None


def language_default(stored: str | None) -> Language | None:
    """The workspace's stored setting, else GPUPLAN_LANGUAGE; None when neither names one."""
    for value in (stored, os.environ.get(LANGUAGE_ENV, "").strip().lower()):
        if value in LANGUAGES:
            return value  # type: ignore[return-value]
    return None


def question_language(text: str) -> Language | None:
    """Chinese when the message has Chinese characters; None when it says nothing ("8k?")."""
    return "zh" if _CJK.search(text) else None


def reply_language(text: str, default: Language | None) -> Language:
    return question_language(text) or default or ENGLISH


def localize(reply: Reply, language: Language) -> Reply:
    """The reply in `language`: headline, verdict, recommendation, suggestions, changes,
    assumptions, warnings, body, the memory components and the price date; numbers and names
    unchanged. The card table stays data (its verdicts and marks are keys the chart and the
    renderers read): renderers label its columns, verdicts and marks (`label`, `marks`)."""
    if language == ENGLISH:
        return reply
    sections = ("comparison", "recommendation", "suggestions", "changes", "assumptions", "warnings")
    return reply.model_copy(
        update={
            "language": language,
            "memory": [
                line.model_copy(update={"component": label(language, line.component)})
                for line in reply.memory
            ],
            "price_date": in_chinese(reply.price_date) if reply.price_date else None,
            "title": in_chinese(reply.title),
            "verdict": in_chinese(reply.verdict),
            "body": in_chinese(reply.body),
            **{name: [in_chinese(line) for line in getattr(reply, name)] for name in sections},
            "followups": [in_chinese(text) for text in reply.followups],
            "whatifs": [
                whatif.model_copy(
                    update={"label": in_chinese(whatif.label), "text": in_chinese(whatif.text)}
                )
                for whatif in reply.whatifs
            ],
        }
    )


def in_chinese(text: str) -> str:
    """A sentence in Chinese from its catalog entry; a plain string (a name, a number, data)
    as it is."""
    return text.to("zh") if isinstance(text, Said) else text


def label(language: str, english: str) -> str:
    """A renderer's heading or table word (a column, a verdict) in the reply's language."""
    if language == ENGLISH or english not in phrases.LABELS.entries:
        return english
    return phrases.LABELS(english).to(language)


def marks(language: str, highlight: str | None) -> str:
    """A highlighted row's marks ("cheapest, spot") in the reply's language."""
    if not highlight:
        return ""
    if language == ENGLISH:
        return highlight
    return "、".join(label(language, part) for part in highlight.split(", "))


def duration(language: Language, text: str) -> str:
    """A table cell's duration ("4.3 h", planner.units.hours_text) in the reply's language."""
    return in_language(text, language)
