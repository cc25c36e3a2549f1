"""The memory model: per-GPU bytes of a fine-tuning job, as a sum of named components.

`estimate_memory` is pure and fast (tens of microseconds): the planner calls it for every card
and GPU count it compares.
"""

from __future__ import annotations

from planner.estimate.memory.estimate import component_job, estimate_memory

__all__ = ["component_job", "estimate_memory"]
