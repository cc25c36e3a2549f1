"""Free text → ParseResult (see result.py). Each module reads one kind of field."""

from planner.parse.assemble import parse
from planner.parse.result import ParseResult

__all__ = ["ParseResult", "parse"]
