"""Text input for the line-oriented commands (`parse --jsonl`, `estimate --jsonl`, piped `chat`)."""

from __future__ import annotations

import io
import sys
from typing import IO


def open_lines(path: str) -> IO[str]:
    """`path` ("-" for stdin) as UTF-8 lines. Undecodable bytes become U+FFFD, so a damaged line
    gets its own answer and the run goes on; an unreadable file raises OSError."""
    if path == "-":
        if isinstance(sys.stdin, io.TextIOWrapper):
            sys.stdin.reconfigure(errors="replace")
        return sys.stdin
    return open(path, encoding="utf-8", errors="replace")
