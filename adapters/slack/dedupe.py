"""Answer each Slack delivery once. Slack redelivers events it thinks we missed (X-Slack-Retry-Num),
Socket Mode can replay envelopes, and a signed slash command or button click can be replayed
within the signature's 5-minute window; each is known by an id Slack never reuses: `event_id`
for Events API callbacks, `trigger_id` for slash commands and interactions. bot.state.seen remembers
them (in this process, or in Redis for several).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def delivery_id(body: Mapping[str, Any]) -> str | None:
    """The id that names this delivery, namespaced by kind; None when the body carries none."""
    for field, kind in (("event_id", "event"), ("trigger_id", "trigger")):
        value = body.get(field)
        if isinstance(value, str) and value:
            return f"{kind}:{value}"
    return None
