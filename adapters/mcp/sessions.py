"""Which conversation thread an MCP call belongs to, and the plans each session was given.

A session's thread is what a Slack thread is to the bot: the conversation keeps its job, so
"what if 8k ctx?" through `plan` changes it. A stdio server serves one client, so the process is
its session; over HTTP the session is the `Mcp-Session-Id` the SDK's transport assigns. A
2026-07-28 HTTP client has no session at all (each request stands alone): it continues a job by
passing the `plan_id` of an earlier answer, whose thread the registry remembers.

A plan_id is a random token; the registry answers one only to the session it was given to (a
sessionless caller holds the token itself, so the token is what it can show).
"""

from __future__ import annotations

import hashlib
import secrets
import threading
from collections import OrderedDict
from dataclasses import dataclass

from bot.threads import ThreadKey
from planner.plan import Plan

# Plans kept for `explain` and follow-ups, oldest dropped first: a Plan is tens of kB, so this
# bounds the registry near 50 MB whatever the callers do.
MAX_KEPT_PLANS = 2_000
PLATFORM = "mcp"


@dataclass(frozen=True)
class Caller:
    """Who is calling: `session` is the transport's session id, None when it has none."""

    transport: str  # "stdio" or "http"
    session: str | None


@dataclass(frozen=True)
class Kept:
    owner: str | None  # the session it was given to (hashed); None: a sessionless caller's
    thread: ThreadKey
    plan: Plan


class UnknownPlan(LookupError):
    """A plan_id this session was never given (or one dropped since)."""


class Sessions:
    def __init__(self, max_plans: int = MAX_KEPT_PLANS) -> None:
        self._plans: OrderedDict[str, Kept] = OrderedDict()
        self._max_plans = max_plans
        self._lock = threading.Lock()

    def thread(self, caller: Caller, plan_id: str | None = None) -> ThreadKey:
        """The thread a call continues: the plan_id's when given, else the session's; a
        sessionless call without one starts a thread of its own."""
        if plan_id:
            return self.plan(caller, plan_id).thread
        owner = _owner(caller)
        return self.fresh(caller) if owner is None else _key(caller, owner)

    def fresh(self, caller: Caller) -> ThreadKey:
        """A new thread of the caller's own (a job planned beside the session's)."""
        return _key(caller, secrets.token_hex(8))

    def keep(self, caller: Caller, thread: ThreadKey, plan: Plan) -> str:
        plan_id = secrets.token_urlsafe(9)
        with self._lock:
            self._plans[plan_id] = Kept(_owner(caller), thread, plan)
            while len(self._plans) > self._max_plans:
                self._plans.popitem(last=False)
        return plan_id

    def plan(self, caller: Caller, plan_id: str) -> Kept:
        with self._lock:
            kept = self._plans.get(plan_id.strip())
        # Another session's plan is as unknown here as a made-up id.
        if kept is None or (caller.session is not None and kept.owner != _owner(caller)):
            raise UnknownPlan(plan_id)
        return kept


def _owner(caller: Caller) -> str | None:
    """The session's name in threads and the registry, hashed: the session id stays a secret of
    the transport even in the thread store."""
    if caller.session is None:
        return None
    return hashlib.sha256(caller.session.encode()).hexdigest()[:16]


def _key(caller: Caller, thread: str) -> ThreadKey:
    return ThreadKey(platform=PLATFORM, workspace=caller.transport, thread=thread)
