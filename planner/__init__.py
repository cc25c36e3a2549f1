"""gpuplan's pure core: free text → JobSpec → Plan. No I/O beyond reading its own data files.

The folders follow the pipeline, each importing only the ones before it
(tests/test_planner_layers.py): spec.py and plan.py (the public JobSpec and Plan JSON) →
catalog/ (models, cards, prices, stack profiles) → job/ (ResolvedJob, Patch) and parsing/
(free text → JobSpec) → estimate/ (memory per GPU, time per token) → resolve/ (every default
decided) → market/ (rows, picks, suggestions, solving) → planner.py (make_plan), with anchor,
context_curve, explain and run_config/ on top.
"""

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
