"""Errors the planner raises for input it cannot plan; each names the field and says why."""

from __future__ import annotations


class PlanningError(ValueError):
    """A job that cannot be planned as given; `field` names the JobSpec field at fault."""

    def __init__(self, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.field = field
