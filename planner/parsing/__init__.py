"""Free text → ParseResult (see result.py). Each module reads one kind of field."""

from planner.parsing.assemble import parse
from planner.parsing.result import ParseResult

__all__ = ["ParseResult", "parse"]
