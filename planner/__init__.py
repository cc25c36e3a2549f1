"""gpuplan's pure core: free text → JobSpec → Plan. No I/O beyond reading its own data files."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from planner.parsing import parse
    from planner.plan import Plan
    from planner.planner import make_plan
    from planner.spec import JobSpec

__all__ = ["JobSpec", "Plan", "make_plan", "parse"]

_LAZY = {
    "JobSpec": "planner.spec",
    "Plan": "planner.plan",
    "make_plan": "planner.planner",
    "parse": "planner.parsing",
}


def __getattr__(name: str) -> Any:
    # Lazy so that `import planner` stays cheap for the command line.
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(name)
