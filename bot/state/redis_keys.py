"""Names on Redis, and a Redis URL as it may be logged: pure string work, so the stores and the
backend choice use them without loading the redis client."""

from __future__ import annotations

import re

KEY_PREFIX = "gpuplan:"
_PASSWORD = re.compile(r"//([^:/@]*):[^@/]*@")  # user:password@ in a URL


def key(*parts: str) -> str:
    """A namespaced key: gpuplan:<kind>:<id>…"""
    return KEY_PREFIX + ":".join(parts)


def redacted(url: str) -> str:
    """`url` with its password (if any) replaced by ***, safe to log."""
    return _PASSWORD.sub(r"//\1:***@", url)
