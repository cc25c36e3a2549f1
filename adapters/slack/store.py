"""The Slack adapter's tables in gpuplan's state DB (bot.state.sqlite's file under
GPUPLAN_STATE_DIR): which Slack threads belong to which gpuplan conversation, plus (in OAuth mode)
slack_sdk's installation and OAuth-state tables.

A thread is usually its own conversation (keyed by its root ts), but a what-if clicked on a
slash-command answer opens a thread under a message whose ts we never saw, so the thread is
mapped back to the conversation the slash command started.

`ThreadLinks` is the seam: this SQLite form, or the Redis one (adapters.slack.redis_store) when
GPUPLAN_STATE_URL names Redis. Its methods are async so the Redis form can use redis.asyncio.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Protocol

from bot.state.sqlite import BUSY_TIMEOUT_S, state_db_path


class ThreadLinks(Protocol):
    async def remember(self, team: str, channel: str, root_ts: str, conversation: str) -> None: ...

    async def conversation_for(self, team: str, channel: str, root_ts: str) -> str | None:
        """The thread's conversation, None for a thread that is not gpuplan's; raises
        StoreUnavailable when the store cannot say."""
        ...

    async def available(self) -> bool:
        """Whether the store takes commands again, for the thread links and the conversation's
        threads alike (after an outage, replies held meanwhile are then answered)."""
        ...


class ThreadIndex:
    def __init__(self, path: Path | None = None) -> None:
        self._db = sqlite3.connect(
            path or state_db_path(), timeout=BUSY_TIMEOUT_S, check_same_thread=False
        )
        with self._db:
            self._db.execute(
                "CREATE TABLE IF NOT EXISTS slack_threads (team TEXT, channel TEXT, root_ts TEXT,"
                " conversation TEXT NOT NULL, PRIMARY KEY (team, channel, root_ts))"
            )

    async def remember(self, team: str, channel: str, root_ts: str, conversation: str) -> None:
        with self._db:
            self._db.execute(
                "INSERT OR REPLACE INTO slack_threads VALUES (?, ?, ?, ?)",
                (team, channel, root_ts, conversation),
            )

    async def available(self) -> bool:
        return True  # a file on this host: its failures are answered where they happen

    async def conversation_for(self, team: str, channel: str, root_ts: str) -> str | None:
        row = self._db.execute(
            "SELECT conversation FROM slack_threads WHERE team = ? AND channel = ? AND root_ts = ?",
            (team, channel, root_ts),
        ).fetchone()
        return row[0] if row else None
