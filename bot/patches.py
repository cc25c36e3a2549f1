"""Typed changes at the seam: what a button or a parsed follow-up changes, and where a posted
button's change is kept until it is clicked.

A button carries a short id (`p-…`), not prose for the parser to read back: the id maps to a
stored Patch (JobSpec fields + the label shown). The id is the patch's own digest, so the same
button on many answers is one row, and a patch holds nothing secret: applied in a thread it
does what typing the change would (the thread comes from where the click happened). Buttons
posted before patches were stored carry their follow-up text instead, and still work by reading
that text. A stored patch lives as long as a thread does (GPUPLAN_THREAD_TTL_S); past that the
click is answered "this button has expired, ask again".

Where patches are kept is bot.state.patches.
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

PATCH_ID_PREFIX = "p-"
# 12 base-32 characters of the digest (60 bits): no two patches a deployment stores collide.
_ID_CHARS = 12


@dataclass(frozen=True)
class Patch:
    """A change to a thread's job: JobSpec fields (JSON values) and the label to show."""

    fields: Mapping[str, Any]
    label: str = ""

    def to_json(self) -> str:
        return json.dumps({"fields": dict(self.fields), "label": self.label}, sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> Patch | None:
        try:
            data = json.loads(text)
            return cls(fields=dict(data["fields"]), label=str(data.get("label", "")))
        except (ValueError, KeyError, TypeError):
            return None


@dataclass(frozen=True)
class Button:
    """A click: the button's id, and the follow-up text it carried (the old format's payload,
    kept for buttons posted before their patches were stored)."""

    id: str
    text: str = ""

    @property
    def stored(self) -> bool:
        return self.id.startswith(PATCH_ID_PREFIX)


# What the conversation takes: the text someone typed, a click, or a change already typed.
Message = str | Button | Patch


def patch_id(patch: Patch) -> str:
    """The patch's id: a digest of its canonical JSON, lower-case base 32 (Discord custom ids
    and Slack action ids take it as is)."""
    digest = hashlib.sha256(patch.to_json().encode()).digest()
    return PATCH_ID_PREFIX + base64.b32encode(digest).decode()[:_ID_CHARS].lower()
