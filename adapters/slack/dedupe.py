"""Answer each Slack delivery once. Slack redelivers events it thinks we missed (X-Slack-Retry-Num),
Socket Mode can replay envelopes, and a signed slash command or button click can be replayed
within the signature's 5-minute window; each is known by an id Slack never reuses: `event_id`
for Events API callbacks, `trigger_id` for slash commands and interactions.

`SeenIds` is the seam: this in-process form serves one Slack process per Procfile line; a shared
form (Redis `SET key 1 NX EX ttl`) serves several.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable, Mapping
from typing import Any, Protocol

from adapters.slack import limits


class SeenIds(Protocol):
    async def first_time(self, delivery_id: str) -> bool:
        """True the first time `delivery_id` is offered within the TTL, False for every repeat;
        atomic, so two deliveries of one id racing each other get one True."""
        ...


def delivery_id(body: Mapping[str, Any]) -> str | None:
    """The id that names this delivery, namespaced by kind; None when the body carries none."""
    for field, kind in (("event_id", "event"), ("trigger_id", "trigger")):
        value = body.get(field)
        if isinstance(value, str) and value:
            return f"{kind}:{value}"
    return None


class SeenInProcess:
    """An in-process TTL set of delivery ids, remembered well past Slack's last retry."""

    def __init__(
        self,
        ttl_s: float = limits.DELIVERY_REPEAT_TTL_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._ttl_s = ttl_s
        self._clock = clock
        self._seen_at: OrderedDict[str, float] = OrderedDict()

    async def first_time(self, delivery_id: str) -> bool:
        # No await between the check and the insert: one event loop makes this atomic.
        now = self._clock()
        while self._seen_at and next(iter(self._seen_at.values())) <= now - self._ttl_s:
            self._seen_at.popitem(last=False)
        if delivery_id in self._seen_at:
            return False
        self._seen_at[delivery_id] = now
        return True
