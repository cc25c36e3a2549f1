"""The Slack adapter's stores for one process, chosen by GPUPLAN_STATE_URL: the SQLite file and
this process's memory by default, or one Redis shared by every Slack process."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from adapters.slack import limits
from adapters.slack.keys import PLATFORM
from adapters.slack.redis_store import (
    RedisInstallationStore,
    RedisOAuthStateStore,
    RedisThreadLinks,
)
from adapters.slack.store import ThreadIndex, ThreadLinks
from bot.state.backend import StateBackend
from bot.state.seen import SeenIds, open_seen_ids
from bot.state.sqlite import state_db_path

if TYPE_CHECKING:
    from slack_sdk.oauth.installation_store.async_installation_store import (
        AsyncInstallationStore,
    )
    from slack_sdk.oauth.state_store.async_state_store import AsyncOAuthStateStore

OAUTH_STATE_TTL_S = 600  # how long an install link stays good


@dataclass(frozen=True)
class SlackStores:
    backend: StateBackend  # what opened them (its describe() is the start-up log line)
    threads: ThreadLinks
    seen: SeenIds
    installations: Callable[[str], AsyncInstallationStore]  # by OAuth client id
    oauth_states: Callable[[], AsyncOAuthStateStore]
    status: Callable[[], Awaitable[dict[str, object]]]


def open_stores(backend: StateBackend) -> SlackStores:
    if backend.redis_url is None:
        return _sqlite_stores(backend)
    link = backend.async_redis_link()
    return SlackStores(
        backend=backend,
        threads=RedisThreadLinks(link),
        seen=open_seen_ids(backend, PLATFORM, limits.DELIVERY_REPEAT_TTL_S, link),
        installations=lambda client_id: RedisInstallationStore(link, client_id),
        oauth_states=lambda: RedisOAuthStateStore(link, OAUTH_STATE_TTL_S),
        status=link.status,
    )


def _sqlite_stores(backend: StateBackend) -> SlackStores:
    database = str(state_db_path())

    def installations(client_id: str) -> AsyncInstallationStore:
        from slack_sdk.oauth.installation_store.sqlite3 import SQLite3InstallationStore

        return SQLite3InstallationStore(database=database, client_id=client_id)

    def oauth_states() -> AsyncOAuthStateStore:
        from slack_sdk.oauth.state_store.sqlite3 import SQLite3OAuthStateStore

        return SQLite3OAuthStateStore(database=database, expiration_seconds=OAUTH_STATE_TTL_S)

    async def status() -> dict[str, object]:
        return {"store": "sqlite", "path": database, "ok": True}

    return SlackStores(
        backend=backend,
        threads=ThreadIndex(),
        seen=open_seen_ids(backend, PLATFORM, limits.DELIVERY_REPEAT_TTL_S),
        installations=installations,
        oauth_states=oauth_states,
        status=status,
    )
