"""A small LRU cache whose entries expire, for answers that are asked again within moments."""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

Value = TypeVar("Value")


class TTLCache(Generic[Value]):
    def __init__(
        self,
        max_entries: int = 256,
        ttl_s: float = 60.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.max_entries = max_entries
        self.ttl_s = ttl_s
        self._clock = clock
        self._entries: OrderedDict[Hashable, tuple[float, Value]] = OrderedDict()
        self._lock = threading.Lock()

    def get_or_compute(self, key: Hashable, compute: Callable[[], Value]) -> Value:
        """The cached value for `key`, or `compute()` stored under it; errors are not cached."""
        with self._lock:
            entry = self._entries.get(key)
            if entry is not None and entry[0] > self._clock():
                self._entries.move_to_end(key)
                return entry[1]
        value = compute()  # outside the lock: a slow plan must not block other keys
        with self._lock:
            self._entries[key] = (self._clock() + self.ttl_s, value)
            self._entries.move_to_end(key)
            while len(self._entries) > self.max_entries:
                self._entries.popitem(last=False)
        return value

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
