"""The conversation's shared state on Redis: thread histories and rate-limit buckets.

Keys (all under gpuplan:, all with a TTL):
- `gpuplan:thread:<thread key>` — a hash {history: JSON list, version: n}. Saved by one Lua script
  that compares the version and writes in one step (compare-and-set), so two processes answering
  one thread cannot both win. Expires GPUPLAN_THREAD_TTL_S (7 days) after the last change, like
  the SQLite rows.
- `gpuplan:rate:<user|channel>:<scope>` — a hash {tokens, at}. Both buckets an answer draws on are
  checked and taken by one Lua script on Redis's own clock (processes' clocks may differ). A
  bucket expires when it would have refilled, since a missing bucket reads as full.

One round trip each: load is HMGET, save and acquire are EVALSHA (redis-py reloads a script that a
restarted Redis forgot).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence

from bot.ratelimit import CHANNEL_RULE, USER_RULE, BucketRule, RateLimiter, scopes_for
from bot.redis_client import RedisLink, key
from bot.store import SpecJson, StoreUnavailable, ThreadState, decode_history, ttl_from_env

logger = logging.getLogger(__name__)

# KEYS[1] the thread; ARGV: expected version, history JSON, TTL in ms. 1 if written, 0 if stale.
_SAVE_IF_VERSION = """
local version = tonumber(redis.call('HGET', KEYS[1], 'version') or '0')
if version ~= tonumber(ARGV[1]) then return 0 end
redis.call('HSET', KEYS[1], 'history', ARGV[2], 'version', version + 1)
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return 1
"""

# KEYS: buckets; ARGV: burst and tokens per second for each. 0 if a token was taken from every
# bucket, else the milliseconds until all of them hold one (nothing is taken then).
_TAKE_TOKENS = """
local clock = redis.call('TIME')
local now = tonumber(clock[1]) + tonumber(clock[2]) / 1000000
local levels, wait_s = {}, 0
for i, bucket in ipairs(KEYS) do
  local burst, rate = tonumber(ARGV[2 * i - 1]), tonumber(ARGV[2 * i])
  local stored = redis.call('HMGET', bucket, 'tokens', 'at')
  local level = burst
  if stored[1] then
    level = math.min(burst, tonumber(stored[1]) + math.max(0, now - tonumber(stored[2])) * rate)
  end
  levels[i] = level
  if level < 1 then wait_s = math.max(wait_s, (1 - level) / rate) end
end
if wait_s > 0 then return math.ceil(wait_s * 1000) end
for i, bucket in ipairs(KEYS) do
  local burst, rate = tonumber(ARGV[2 * i - 1]), tonumber(ARGV[2 * i])
  local left = levels[i] - 1
  local tokens, at = string.format('%.6f', left), string.format('%.6f', now)
  redis.call('HSET', bucket, 'tokens', tokens, 'at', at)
  redis.call('PEXPIRE', bucket, math.ceil((burst - left) / rate * 1000) + 1000)
end
return 0
"""


class RedisStateStore:
    """bot.store.StateStore on Redis. Raises StoreUnavailable when Redis cannot be reached."""

    def __init__(self, link: RedisLink, *, ttl_s: float | None = None) -> None:
        self._link = link
        self.ttl_s = ttl_s if ttl_s is not None else ttl_from_env()
        self._save = link.client.register_script(_SAVE_IF_VERSION)

    def load(self, thread: str) -> ThreadState:
        history_json, version = self._link.run(
            lambda client: client.hmget(key("thread", thread), "history", "version")
        )
        if version is None:
            return ThreadState(history=(), version=0)
        return ThreadState(history=decode_history(history_json or ""), version=int(version))

    def save(self, thread: str, history: Sequence[SpecJson], expected_version: int) -> bool:
        arguments = [expected_version, json.dumps(list(history)), int(self.ttl_s * 1000)]
        written = self._link.run(
            lambda client: self._save(keys=[key("thread", thread)], args=arguments, client=client)
        )
        return written == 1


class RedisRateLimiter:
    """bot.ratelimit.RateLimiter's buckets on Redis, so every process draws on the same ones.

    While Redis is unreachable the process falls back to its own in-memory buckets: limits then
    hold per process, which is looser but never blocks an answer."""

    def __init__(
        self,
        link: RedisLink,
        user_rule: BucketRule = USER_RULE,
        channel_rule: BucketRule = CHANNEL_RULE,
    ) -> None:
        self._link = link
        self._rules = {"user": user_rule, "channel": channel_rule}
        self._take = link.client.register_script(_TAKE_TOKENS)
        self._fallback = RateLimiter(user_rule, channel_rule)
        self._on_fallback = False  # log once per outage, not once per message

    def acquire(self, user: str, channel: str) -> float:
        scopes = scopes_for(user, channel)
        keys = [key("rate", kind, scope) for kind, scope in scopes]
        arguments: list[float] = []
        for kind, _ in scopes:
            rule = self._rules[kind]
            arguments += [rule.burst, rule.per_minute / 60]
        try:
            wait_ms = self._link.run(
                lambda client: self._take(keys=keys, args=arguments, client=client)
            )
        except StoreUnavailable as error:
            if not self._on_fallback:
                logger.warning("rate limits are per process until Redis is back: %s", error)
            self._on_fallback = True
            return self._fallback.acquire(user, channel)
        self._on_fallback = False
        return int(wait_ms) / 1000
