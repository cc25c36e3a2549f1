"""The Slack adapter's state on Redis, when GPUPLAN_STATE_URL names one: delivery de-duplication,
thread links, and (in OAuth mode) installations and OAuth states, shared by every Slack process.

Keys (all under gpuplan:slack:):
- `seen:<event|trigger>:<id>` — bot.state.seen: `SET NX EX`, the first process to set it answers,
  every repeat (a Slack retry, a replay, a retry that landed on the other process) is acknowledged
  only. TTL: limits.DELIVERY_REPEAT_TTL_S, past Slack's last retry and the signature's window.
- `link:<team>:<channel>:<root ts>` — the conversation a Slack thread belongs to. TTL: the
  thread TTL, refreshed whenever the thread is answered (a link outliving its thread is useless).
- `install:<client id>:<enterprise>:<team>:bot`, `…:installer`, `…:installer:<user>` — slack_sdk
  Bot and Installation records as JSON. No TTL: an installation is valid until the workspace
  uninstalls the app (slack_sdk then deletes it); token rotation rewrites it in place.
- `oauth-state:<state>` — an issued OAuth state, consumed once (GETDEL). TTL: the state's expiry.

Every method is asyncio (redis.asyncio), as the Bolt app is. While Redis is unavailable, a
thread link lookup raises StoreUnavailable (the app then holds a plain reply until Redis is back,
adapters.slack.pending) and new links wait in memory; both log once per outage. Installation
lookups raise, since no answer can be posted without the token. De-duplication is bot.state.seen.
"""

from __future__ import annotations

import json
import logging
import secrets
from collections import OrderedDict
from typing import TYPE_CHECKING, Any

from slack_sdk.oauth.installation_store.async_installation_store import AsyncInstallationStore
from slack_sdk.oauth.installation_store.models.bot import Bot
from slack_sdk.oauth.installation_store.models.installation import Installation
from slack_sdk.oauth.state_store.async_state_store import AsyncOAuthStateStore

from bot.state.backend import ttl_from_env
from bot.state.errors import OutageLog, StoreUnavailable
from bot.state.redis_keys import key

if TYPE_CHECKING:
    import redis.asyncio

    from bot.state.redis_link import AsyncRedisLink

logger = logging.getLogger(__name__)
_NONE = "-"  # stands for an absent enterprise or team id in a key
# Thread links started during an outage, kept until Redis takes them: a few hours of a busy
# workspace's new threads, a few hundred kB at most.
MAX_UNSAVED_LINKS = 10_000


class RedisThreadLinks:
    """adapters.slack.store.ThreadLinks on Redis. A link the store cannot take (Redis down, full
    or read-only) is kept here, at most MAX_UNSAVED_LINKS of them, and written with the next
    command that works, so a thread started during an outage takes plain replies afterwards."""

    def __init__(self, link: AsyncRedisLink, ttl_s: float | None = None) -> None:
        self._link = link
        self._ttl_s = int(ttl_s if ttl_s is not None else ttl_from_env())
        self._outage = OutageLog("thread links are unknown")
        self._unsaved: OrderedDict[str, str] = OrderedDict()  # key → conversation

    async def remember(self, team: str, channel: str, root_ts: str, conversation: str) -> None:
        name = key("slack", "link", team, channel, root_ts)
        self._unsaved[name] = conversation
        self._unsaved.move_to_end(name)
        while len(self._unsaved) > MAX_UNSAVED_LINKS:
            name, _ = self._unsaved.popitem(last=False)
            logger.warning("%s: dropped a thread link Redis could not take", name)
        try:
            await self._write_unsaved()
        except StoreUnavailable as error:
            self._outage.failed(error)

    async def conversation_for(self, team: str, channel: str, root_ts: str) -> str | None:
        name = key("slack", "link", team, channel, root_ts)
        try:
            if self._unsaved:
                await self._write_unsaved()
            conversation = await self._link.run(lambda client: client.get(name))
        except StoreUnavailable as error:
            self._outage.failed(error)
            if name in self._unsaved:  # started here during the outage
                return self._unsaved[name]
            raise
        self._outage.recovered()
        return conversation

    async def available(self) -> bool:
        """Redis answers both this loop's client and the conversation's (bot.state.redis_link's
        status), and the links kept meanwhile are written."""
        if not (await self._link.status())["ok"]:
            return False
        try:
            await self._write_unsaved()
        except StoreUnavailable:
            return False
        return True

    async def _write_unsaved(self) -> None:
        """One pipeline (one round trip) for every link not yet in Redis."""
        links = list(self._unsaved.items())

        async def write(client: redis.asyncio.Redis) -> None:
            pipe = client.pipeline(transaction=False)
            for name, conversation in links:
                pipe.set(name, conversation, ex=self._ttl_s)
            await pipe.execute()

        await self._link.run(write)
        for name, conversation in links:
            if self._unsaved.get(name) == conversation:
                del self._unsaved[name]
        self._outage.recovered()


class RedisInstallationStore(AsyncInstallationStore):
    """slack_sdk's installation store interface on Redis (the latest install per workspace and per
    installing user, as slack_sdk's own stores keep it without history)."""

    def __init__(self, link: AsyncRedisLink, client_id: str) -> None:
        self._link = link
        self._client_id = client_id

    @property
    def logger(self) -> logging.Logger:
        return logger

    def _key(self, enterprise_id: str | None, team_id: str | None, *rest: str) -> str:
        return key(
            "slack", "install", self._client_id, enterprise_id or _NONE, team_id or _NONE, *rest
        )

    async def async_save(self, installation: Installation) -> None:
        entity = json.dumps(installation.__dict__)
        records = {
            self._key(installation.enterprise_id, installation.team_id, "installer"): entity,
            self._key(
                installation.enterprise_id,
                installation.team_id,
                "installer",
                installation.user_id or _NONE,
            ): entity,
        }
        bot = installation.to_bot()
        if bot.bot_token is not None:
            records[self._key(bot.enterprise_id, bot.team_id, "bot")] = json.dumps(bot.__dict__)
        await self._link.run(lambda client: client.mset(records))

    async def async_save_bot(self, bot: Bot) -> None:
        if bot.bot_token is None:
            return
        name, entity = self._key(bot.enterprise_id, bot.team_id, "bot"), json.dumps(bot.__dict__)
        await self._link.run(lambda client: client.set(name, entity))

    async def async_find_bot(
        self,
        *,
        enterprise_id: str | None,
        team_id: str | None,
        is_enterprise_install: bool | None = False,
    ) -> Bot | None:
        team_id = None if is_enterprise_install else team_id
        entity = await self._get(self._key(enterprise_id, team_id, "bot"))
        return None if entity is None else Bot(**entity)

    async def async_find_installation(
        self,
        *,
        enterprise_id: str | None,
        team_id: str | None,
        user_id: str | None = None,
        is_enterprise_install: bool | None = False,
    ) -> Installation | None:
        team_id = None if is_enterprise_install else team_id
        rest = ("installer",) if user_id is None else ("installer", user_id)
        names = [self._key(enterprise_id, team_id, *rest), self._key(enterprise_id, team_id, "bot")]
        installer_json, bot_json = await self._link.run(lambda client: client.mget(names))
        if installer_json is None:
            return None
        installation = Installation(**json.loads(installer_json))
        if bot_json is not None:
            # The workspace's latest bot token wins over the one saved with an older user install
            # (slack_sdk's stores do the same; see bolt-python#664).
            bot = Bot(**json.loads(bot_json))
            installation.bot_id, installation.bot_user_id = bot.bot_id, bot.bot_user_id
            installation.bot_token, installation.bot_scopes = bot.bot_token, bot.bot_scopes
            installation.bot_refresh_token = bot.bot_refresh_token
            installation.bot_token_expires_at = bot.bot_token_expires_at
        return installation

    async def async_delete_bot(self, *, enterprise_id: str | None, team_id: str | None) -> None:
        name = self._key(enterprise_id, team_id, "bot")
        await self._link.run(lambda client: client.delete(name))

    async def async_delete_installation(
        self, *, enterprise_id: str | None, team_id: str | None, user_id: str | None = None
    ) -> None:
        if user_id is not None:
            names = [self._key(enterprise_id, team_id, "installer", user_id)]
        else:
            names = [self._key(enterprise_id, team_id, "installer")]
            pattern = self._key(enterprise_id, team_id, "installer", "*")
            names += await self._link.run(lambda client: _matching(client, pattern))
        await self._link.run(lambda client: client.delete(*names))

    async def _get(self, name: str) -> dict[str, Any] | None:
        entity = await self._link.run(lambda client: client.get(name))
        return None if entity is None else json.loads(entity)


async def _matching(client: redis.asyncio.Redis, pattern: str) -> list[str]:
    return [name async for name in client.scan_iter(match=pattern)]


class RedisOAuthStateStore(AsyncOAuthStateStore):
    """slack_sdk's OAuth state store interface on Redis: a state issued by one process can be
    consumed by the process the browser's redirect reaches, once."""

    def __init__(self, link: AsyncRedisLink, expiration_seconds: int) -> None:
        self._link = link
        self._expiration_seconds = expiration_seconds

    @property
    def logger(self) -> logging.Logger:
        return logger

    async def async_issue(self, *args: Any, **kwargs: Any) -> str:
        state = secrets.token_urlsafe(24)
        name = key("slack", "oauth-state", state)
        await self._link.run(lambda client: client.set(name, 1, ex=self._expiration_seconds))
        return state

    async def async_consume(self, state: str) -> bool:
        name = key("slack", "oauth-state", state)
        return await self._link.run(lambda client: client.getdel(name)) is not None
