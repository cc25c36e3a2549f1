"""ParseResult: what `planner.parse` read from free text."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from planner.spec import JobSpec
from planner.words import Text


class RelativeChange(BaseModel):
    """A change to a value the thread already has: multiply it (`times`) or add to it (`plus`)."""

    model_config = ConfigDict(frozen=True)

    op: Literal["times", "plus"]
    by: float


class ParseResult(BaseModel):
    """`fields` holds only what the text said (JobSpec field names), so a follow-up can patch a job.

    `spec` is the job when the text names enough to plan (a model or a size); otherwise `clarify`
    asks for what is missing, with an example. `alternatives` holds the other jobs of a comparison
    ("7B/13B", "4090 vs H100"), `spec` being the first; `alternative_fields` holds the same
    comparison as patches like `fields`, so a follow-up such as "4090 vs H100?" still compares.
    `fields["asked"]` names the limit an inverse question asks for ("max context?").

    `doubt` is set when a reading is too unsure to plan from ("200 GPU-hours" with no GPU count,
    steps with no sequence length): then `spec` is None and `clarify` is that one short question,
    asked instead of a guess.

    `relative` holds changes relative to a thread's job ("double the context" → seq_len times 2,
    "one more epoch" → epochs plus 1), which only the conversation can apply.
    """

    spec: JobSpec | None = None
    fields: dict[str, Any] = {}
    assumptions: list[Text] = []  # Text: a catalog sentence keeps its id (planner/words.py)
    unread: list[Text] = []  # notes are catalog sentences; leftovers the asker's own words
    clarify: Text | None = None
    doubt: Text | None = None
    relative: dict[str, RelativeChange] = {}
    alternatives: list[JobSpec] = []
    alternative_fields: list[dict[str, Any]] = []
    error: str | None = None

    @property
    def asked(self) -> str | None:
        """The limit an inverse question asks for (planner.market.solve's ASKED_FIELDS), if any."""
        return self.fields.get("asked")
