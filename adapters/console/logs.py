"""Logging for the terminal commands: a problem is one line on stderr, not a traceback."""

from __future__ import annotations

import logging
import os


class _OneLine(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        message = f"gpuplan: {record.getMessage()}"
        if record.exc_info and record.exc_info[1] is not None:
            message += f" ({type(record.exc_info[1]).__name__}: {record.exc_info[1]})"
        return message + " — set GPUPLAN_DEBUG=1 for details"


def configure() -> None:
    """GPUPLAN_DEBUG=1 shows full tracebacks, for bug reports."""
    handler = logging.StreamHandler()
    if not os.environ.get("GPUPLAN_DEBUG"):
        handler.setFormatter(_OneLine())
    logging.basicConfig(level=logging.WARNING, handlers=[handler])
