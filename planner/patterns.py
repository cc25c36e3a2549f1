"""Regular expressions compiled on first use.

The parser's few hundred patterns cost about a third of `gpuplan ask`'s cold start when
compiled at import (issue 33, item 7), while one question uses about a quarter of them: each
module-level pattern is a `lazy_pattern`, which compiles when first matched and keeps the
result. `.pattern` reads without compiling, so patterns can still be built from each other.
"""

from __future__ import annotations

import re
from typing import Any, cast


class _LazyPattern:
    __slots__ = ("_compiled", "_flags", "pattern")

    def __init__(self, pattern: str, flags: int) -> None:
        self.pattern = pattern
        self._flags = flags
        self._compiled: re.Pattern[str] | None = None

    def __getattr__(self, name: str) -> Any:
        # Only what the instance lacks (search, finditer, sub, flags, groups ...) lands here.
        if self._compiled is None:
            self._compiled = re.compile(self.pattern, self._flags)
        return getattr(self._compiled, name)

    def __repr__(self) -> str:
        return f"lazy_pattern({self.pattern!r})"


def lazy_pattern(pattern: str, flags: int = 0) -> re.Pattern[str]:
    """`re.compile(pattern, flags)`, compiled at the first match instead of now."""
    return cast("re.Pattern[str]", _LazyPattern(pattern, flags))
