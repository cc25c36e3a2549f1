"""Answer each Slack event once: Slack redelivers events it thinks we missed (X-Slack-Retry-Num)
and Socket Mode can replay envelopes, so event ids are remembered for longer than Slack retries."""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable

from adapters.slack import limits


class SeenEvents:
    """An in-process TTL set of event ids (one Slack process per Procfile line)."""

    def __init__(
        self,
        ttl_s: float = limits.EVENT_RETRY_TTL_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._ttl_s = ttl_s
        self._clock = clock
        self._seen_at: OrderedDict[str, float] = OrderedDict()

    def first_time(self, event_id: str) -> bool:
        """True the first time `event_id` is offered within the TTL, False for every repeat."""
        now = self._clock()
        while self._seen_at and next(iter(self._seen_at.values())) <= now - self._ttl_s:
            self._seen_at.popitem(last=False)
        if event_id in self._seen_at:
            return False
        self._seen_at[event_id] = now
        return True
