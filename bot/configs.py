"""A Hugging Face config.json inside a message: pasted JSON (or a file's contents that a surface
read for the user: a terminal path, a Discord attachment, a Slack file), split from the words
around it.

Nothing here opens a path: a bot never reads a file a chat message names. The words around the
JSON say the job ("lora 4k ctx on a 4090"); the JSON says the model.
"""

from __future__ import annotations

import re
from typing import Any

from bot import json_limits
from bot.json_limits import JsonRefused
from planner.patterns import lazy_pattern

MAX_CONFIG_CHARS = 200_000
# A config.json is a few kB; an attached file this big is not one and is not fetched.
MAX_CONFIG_ATTACHMENT_BYTES = 1_000_000
# Where a pasted object starts: a brace followed by a quoted key, so "{7B, 13B}" stays text.
_OBJECT_START = lazy_pattern(r'\{\s*"')
_FENCE = lazy_pattern(r"```(?:json)?", re.IGNORECASE)
# The key a thread's history entry keeps its config under (JobSpec ignores unknown keys).
CONFIG_KEY = "hf_config"


class NotJson(ValueError):
    """Text that starts like a JSON object but does not parse."""


def split_config(text: str) -> tuple[dict[str, Any] | None, str]:
    """The first JSON object in `text` and the text without it (code fences dropped); (None,
    text) when there is none. Raises NotJson, saying where, for an object that does not parse."""
    start = _OBJECT_START.search(text)
    if start is None:
        return None, text
    if len(text) > MAX_CONFIG_CHARS:
        raise NotJson(f"that config is over {MAX_CONFIG_CHARS:,} characters")
    try:
        config, end = json_limits.raw_decode(text, start.start())
    except JsonRefused as error:  # a syntax error, or nested too deep, or a number too long
        raise NotJson(str(error)) from None
    if not isinstance(config, dict):
        return None, text
    rest = _FENCE.sub(" ", text[: start.start()] + " " + text[end:])
    return config, " ".join(rest.split())


def config_name(config: dict[str, Any]) -> str:
    """What to call the supplied model: its HF name if the config kept one, else its class."""
    named = config.get("_name_or_path")
    if isinstance(named, str) and named.strip():
        return named.strip().rstrip("/").rsplit("/", 1)[-1][:80]
    architectures = config.get("architectures")
    if isinstance(architectures, list) and architectures and isinstance(architectures[0], str):
        return architectures[0][:80]
    model_type = config.get("model_type")
    return str(model_type)[:80] if model_type else "custom model"
