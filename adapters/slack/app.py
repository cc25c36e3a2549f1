"""The Slack bot: a slack-bolt AsyncApp wired to any object with `handle(key, text, user)`.

Acknowledge first, plan after: every listener acks, starts the work as a background task and
returns, so Bolt (in process_before_response mode) answers Slack's HTTP request or Socket Mode
envelope at once; the planner then runs in a worker thread, and a slow plan never misses Slack's
3 s deadline. Bolt's own ways to do this cost more per request: its default mode polls for the ack
every 10 ms, and its lazy listeners deep-copy the whole request (about 1 ms each) before acking.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Coroutine
from typing import TYPE_CHECKING, Any, Protocol

from adapters.slack import limits
from adapters.slack.dedupe import SeenIds, SeenInProcess, delivery_id
from adapters.slack.escape import clean, incoming_to_plain
from adapters.slack.keys import slash_conversation_id, thread_key
from adapters.slack.render import WHATIF_ACTION_PREFIX, conversation_id_from_block_id, render_reply
from adapters.slack.store import ThreadIndex, ThreadLinks
from bot import phrases
from bot.reply import Reply
from bot.threads import ThreadKey

if TYPE_CHECKING:
    from slack_bolt.async_app import AsyncApp
    from slack_bolt.oauth.async_oauth_settings import AsyncOAuthSettings
    from slack_sdk.web.async_client import AsyncWebClient

logger = logging.getLogger(__name__)

ACK_TEXT = phrases.PLANNING_ACK
DEFAULT_API_URL = "https://slack.com/api/"
_PRIVATE_WORD = re.compile(r"\bprivate(ly)?\b", re.IGNORECASE)
_RATE_LIMIT_RETRIES = 3


class Conversation(Protocol):
    def handle(self, key: ThreadKey, text: str, user: str = "") -> Reply: ...


def make_client(token: str | None, api_url: str | None = None) -> AsyncWebClient:
    """A Web API client for `api_url` (SLACK_API_URL) that waits out 429s as Slack asks."""
    from slack_sdk.http_retry.builtin_async_handlers import AsyncRateLimitErrorRetryHandler
    from slack_sdk.web.async_client import AsyncWebClient

    base_url = (api_url or DEFAULT_API_URL).rstrip("/") + "/"  # slack_sdk urljoins method names
    client = AsyncWebClient(token=token, base_url=base_url)
    client.retry_handlers.append(
        AsyncRateLimitErrorRetryHandler(max_retry_count=_RATE_LIMIT_RETRIES)
    )
    return client


def build_app(
    conversation: Conversation,
    *,
    signing_secret: str,
    client: AsyncWebClient,
    threads: ThreadLinks | None = None,
    seen: SeenIds | None = None,
    files_enabled: bool = False,
    oauth_settings: AsyncOAuthSettings | None = None,
) -> AsyncApp:
    from slack_bolt.async_app import AsyncApp

    app = AsyncApp(
        signing_secret=signing_secret,
        client=client,
        oauth_settings=oauth_settings,
        # Handing Bolt the store itself makes its authorize (and token rotation) call Slack through
        # `client`; from the settings alone it would build a client of its own for slack.com.
        installation_store=oauth_settings.installation_store if oauth_settings else None,
        process_before_response=True,
    )
    bot = _SlackBot(conversation, threads or ThreadIndex(), files_enabled)
    seen_ids = seen or SeenInProcess()

    @app.middleware
    async def answer_each_delivery_once(body: dict, next_: Any) -> Any:
        from slack_bolt.response import BoltResponse

        delivery = delivery_id(body)
        if delivery and not await seen_ids.first_time(delivery):
            logger.info("%s was answered already; acknowledging the repeat only", delivery)
            return BoltResponse(status=200, body="")
        return await next_()

    @app.command(re.compile(r"^/"))
    async def slash_command(ack: Any, command: dict, respond: Any) -> None:
        await ack(response_type="ephemeral", text=ACK_TEXT)
        bot.start(bot.on_command(command, respond))

    @app.event("app_mention")
    async def app_mention(ack: Any, event: dict, context: Any, client: AsyncWebClient) -> None:
        await ack()
        bot.start(bot.on_mention(event, context, client))

    @app.event("message")
    async def message(ack: Any, event: dict, context: Any, client: AsyncWebClient) -> None:
        await ack()
        bot.start(bot.on_message(event, context, client))

    @app.action(re.compile("^" + re.escape(WHATIF_ACTION_PREFIX)))
    async def whatif_button(
        ack: Any, body: dict, action: dict, client: AsyncWebClient, respond: Any
    ) -> None:
        await ack()
        bot.start(bot.on_whatif(body, action, client, respond))

    return app


class _SlackBot:
    def __init__(self, conversation: Conversation, threads: ThreadLinks, files: bool) -> None:
        self._conversation = conversation
        self._threads = threads
        self._files = files
        self._running: set[asyncio.Task[None]] = set()  # asyncio keeps only weak references

    def start(self, work: Coroutine[Any, Any, None]) -> None:
        task = asyncio.ensure_future(self._logged(work))
        self._running.add(task)
        task.add_done_callback(self._running.discard)

    async def _logged(self, work: Coroutine[Any, Any, None]) -> None:
        try:
            await work
        except Exception:
            # Slack already has its ack; a failed post (channel gone, token revoked) is only logged.
            logger.exception("answering on Slack failed")

    async def on_command(self, command: dict, respond: Any) -> None:
        text = incoming_to_plain(command.get("text", ""))
        private = bool(_PRIVATE_WORD.search(text))
        conversation_id = slash_conversation_id(command.get("trigger_id", ""))
        key = thread_key(command.get("team_id", ""), command.get("channel_id", ""), conversation_id)
        reply = await self._plan(key, _PRIVATE_WORD.sub(" ", text).strip(), command.get("user_id"))
        ephemeral = private or reply.kind == "help"
        await _respond_all(respond, reply, conversation_id, ephemeral)

    async def on_mention(self, event: dict, context: Any, client: AsyncWebClient) -> None:
        if event.get("edited") or event.get("bot_id"):
            return
        team, channel = _team(event, context), event["channel"]
        root = event.get("thread_ts") or event["ts"]
        conversation_id = await self._threads.conversation_for(team, channel, root) or root
        text = _without_mention(event.get("text", ""), context.bot_user_id)
        await self._answer_in_thread(
            client, team, channel, root, conversation_id, text, event.get("user", "")
        )

    async def on_message(self, event: dict, context: Any, client: AsyncWebClient) -> None:
        # Only plain human replies inside a gpuplan thread; mentions arrive as app_mention too.
        root = event.get("thread_ts")
        if (
            not root
            or event.get("bot_id")
            or event.get("subtype") not in (None, "thread_broadcast")
            or f"<@{context.bot_user_id}>" in event.get("text", "")
        ):
            return
        team, channel = _team(event, context), event["channel"]
        conversation_id = await self._threads.conversation_for(team, channel, root)
        if conversation_id is None:
            return
        text = incoming_to_plain(event.get("text", ""))
        await self._answer_in_thread(
            client, team, channel, root, conversation_id, text, event.get("user", "")
        )

    async def on_whatif(
        self, body: dict, action: dict, client: AsyncWebClient, respond: Any
    ) -> None:
        container = body.get("container", {})
        team = (body.get("team") or {}).get("id", "")
        channel = (body.get("channel") or {}).get("id", "") or container.get("channel_id", "")
        user = (body.get("user") or {}).get("id", "")
        root = container.get("thread_ts") or container.get("message_ts", "")
        conversation_id = (
            conversation_id_from_block_id(action.get("block_id", ""))
            or await self._threads.conversation_for(team, channel, root)
            or root
        )
        text = incoming_to_plain(action.get("value", ""))
        if container.get("is_ephemeral"):
            # Only the asker sees an ephemeral answer, so its what-ifs stay private too.
            key = thread_key(team, channel, conversation_id)
            reply = await self._plan(key, text, user)
            await _respond_all(respond, reply, conversation_id, ephemeral=True)
            return
        await self._answer_in_thread(client, team, channel, root, conversation_id, text, user)

    async def _answer_in_thread(
        self,
        client: AsyncWebClient,
        team: str,
        channel: str,
        root: str,
        conversation_id: str,
        text: str,
        user: str,
    ) -> None:
        key = thread_key(team, channel, conversation_id)
        reply = await self._plan(key, text, user)
        await self._threads.remember(team, channel, root, conversation_id)
        for payload in render_reply(reply, conversation_id=conversation_id):
            await client.chat_postMessage(channel=channel, thread_ts=root, **payload)
        if self._files and reply.has_chart:
            await self._upload_chart(client, channel, root, reply)

    async def _upload_chart(
        self, client: AsyncWebClient, channel: str, root: str, reply: Reply
    ) -> None:
        from bot.chart import chart_png

        png = await asyncio.to_thread(chart_png, reply)
        await client.files_upload_v2(
            channel=channel,
            thread_ts=root,
            file=png,
            filename="gpuplan.png",
            title=clean(reply.title),
            alt_txt=f"Hours and cost per card: {clean(reply.title)}",
        )

    async def _plan(self, key: ThreadKey, text: str, user: str | None) -> Reply:
        try:
            return await asyncio.to_thread(self._conversation.handle, key, text, user or "")
        except Exception:
            # The user gets a short apology; the details go to the log, never to the channel.
            logger.exception("planning failed for %s", key)
            return Reply(kind="error", title=phrases.ADAPTER_ERROR_TITLE, body=phrases.PLAN_FAILED)


async def _respond_all(respond: Any, reply: Reply, conversation_id: str, ephemeral: bool) -> None:
    payloads = render_reply(reply, conversation_id=conversation_id)
    if len(payloads) > limits.RESPONSE_URL_MAX_POSTS:
        logger.warning(
            "answer needs %d messages; response_url takes %d",
            len(payloads),
            limits.RESPONSE_URL_MAX_POSTS,
        )
    for payload in payloads[: limits.RESPONSE_URL_MAX_POSTS]:
        await respond(
            response_type="ephemeral" if ephemeral else "in_channel",
            replace_original=False,
            **payload,
        )


def _team(event: dict, context: Any) -> str:
    return context.team_id or event.get("team", "")


def _without_mention(text: str, bot_user_id: str | None) -> str:
    if bot_user_id:
        text = text.replace(f"<@{bot_user_id}>", " ")
    return incoming_to_plain(text)
