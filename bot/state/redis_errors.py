"""The one Redis failure policy: which errors mean "the store is unavailable right now".

A Redis that cannot take a command for a while (the connection is gone or hung, it is full, it
is a replica after a failover, it is loading its data, a script holds it) must be treated the
same everywhere: the stores skip Redis for a backoff, answers come without thread memory and say
so, and nothing becomes a 500. Everything else (a wrong type, a bad argument) is our bug and is
raised as it is. bot.state.redis_link applies this to every command; nothing else maps Redis errors.
"""

from __future__ import annotations

import re

import redis
import redis.exceptions

# By class, as redis-py parses the reply (LOADING is a BusyLoadingError, a ConnectionError).
_KINDS_BY_CLASS: tuple[tuple[type[BaseException], str], ...] = (
    (redis.exceptions.BusyLoadingError, "loading"),
    (redis.ConnectionError, "connection"),
    (redis.TimeoutError, "timeout"),
    (OSError, "connection"),
    (redis.exceptions.OutOfMemoryError, "out_of_memory"),  # maxmemory with noeviction
    (redis.exceptions.ReadOnlyError, "read_only"),  # a replica, e.g. the old primary
)
# Replies redis-py leaves as a plain ResponseError: the code starts the message, or follows
# "…caused error: " for a command of a pipeline.
_KINDS_BY_CODE = {
    "BUSY": "busy",  # a script or function running past busy-reply-threshold
    "MASTERDOWN": "read_only",  # a replica that lost its primary
    "MISCONF": "read_only",  # writes stopped because an RDB save failed
    "NOREPLICAS": "read_only",  # min-replicas-to-write not met
}
_CODE = re.compile(r"(?:^|caused error: )(" + "|".join(_KINDS_BY_CODE) + r")\b")

# What the callers of the Redis stores catch to know a command failed this way.
REDIS_ERRORS: tuple[type[BaseException], ...] = (redis.RedisError, OSError)


def unavailable_kind(error: BaseException) -> str | None:
    """How Redis is unavailable ("connection", "timeout", "out_of_memory", "read_only",
    "loading", "busy"), or None when `error` is not an outage but a failed command."""
    for error_class, kind in _KINDS_BY_CLASS:
        if isinstance(error, error_class):
            return kind
    if isinstance(error, redis.ResponseError):
        found = _CODE.search(str(error))
        if found:
            return _KINDS_BY_CODE[found.group(1)]
    return None
