"""The Slack bot: a slack-bolt AsyncApp wired to any object with `handle(key, text, user)`.

Acknowledge first, everything else after: every listener acks, starts the work as a background
task and returns, so Bolt (in process_before_response mode) answers Slack's HTTP request or Socket
Mode envelope at once, before any store round trip; the de-duplication of a repeated delivery (a
repeat is acknowledged, then dropped), the plan (in a worker thread) and the answer follow. A slow
plan or a slow Redis never misses Slack's 3 s deadline. Bolt's own ways to do this cost more per
request: its default mode polls for the ack every 10 ms, and its lazy listeners deep-copy the
whole request (about 1 ms each) before acking. The tasks are tracked (adapters.drain) so a
shutdown finishes them.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import re
from collections.abc import Coroutine
from typing import TYPE_CHECKING, Any, Protocol

from adapters.drain import InFlight
from adapters.slack import delivery
from adapters.slack.attachments import upload_files, without_files
from adapters.slack.blocked import BlockedChannels
from adapters.slack.dedupe import delivery_id
from adapters.slack.envelopes import BlockActions, ChatEvent, SlashCommand
from adapters.slack.escape import clean, incoming_to_plain
from adapters.slack.files import shared_config
from adapters.slack.keys import slash_conversation_id, thread_key
from adapters.slack.limits import DELIVERY_REPEAT_TTL_S
from adapters.slack.pending import PendingReplies
from adapters.slack.render import WHATIF_ACTION_PREFIX, conversation_id_from_block_id, render_reply
from adapters.slack.store import ThreadIndex, ThreadLinks
from bot import metrics, phrases
from bot.conversation.settings_commands import is_settings_change
from bot.patches import Button, Message
from bot.reply import Reply
from bot.state.errors import StoreUnavailable
from bot.state.seen import SeenIds, SeenInProcess
from bot.threads import ThreadKey

if TYPE_CHECKING:
    from slack_bolt.async_app import AsyncApp
    from slack_bolt.oauth.async_oauth_settings import AsyncOAuthSettings
    from slack_sdk.web.async_client import AsyncWebClient

logger = logging.getLogger(__name__)

ACK_TEXT = phrases.PLANNING_ACK
DEFAULT_API_URL = "https://slack.com/api/"
_PRIVATE_WORD = re.compile(r"\bprivate(ly)?\b", re.IGNORECASE)
# Shown by Bolt instead of its "please reinstall" text when auth.test fails past its retries.
AUTHORIZE_ERROR_TEXT = "gpuplan could not confirm its Slack access just now. Please try again."


class Conversation(Protocol):
    def handle(
        self, key: ThreadKey, text: Message, user: str = "", *, admin: bool = False
    ) -> Reply: ...


def make_client(token: str | None, api_url: str | None = None) -> AsyncWebClient:
    """A Web API client for `api_url` (SLACK_API_URL) that waits out 429s as Slack asks and
    retries a 500/503 or a dropped connection (adapters.slack.delivery)."""
    from slack_sdk.web.async_client import AsyncWebClient

    base_url = (api_url or DEFAULT_API_URL).rstrip("/") + "/"  # slack_sdk urljoins method names
    return AsyncWebClient(token=token, base_url=base_url, retry_handlers=delivery.retry_handlers())


def build_app(
    conversation: Conversation,
    *,
    signing_secret: str,
    client: AsyncWebClient,
    threads: ThreadLinks | None = None,
    seen: SeenIds | None = None,
    files_enabled: bool = False,
    oauth_settings: AsyncOAuthSettings | None = None,
    in_flight: InFlight | None = None,
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
        user_facing_authorize_error_message=AUTHORIZE_ERROR_TEXT,
    )
    bot = _SlackBot(
        conversation,
        threads or ThreadIndex(),
        files_enabled,
        seen or SeenInProcess(DELIVERY_REPEAT_TTL_S),
        in_flight if in_flight is not None else InFlight("slack"),
    )

    @app.command(re.compile(r"^/"))
    async def slash_command(ack: Any, command: dict, client: AsyncWebClient) -> None:
        await ack(response_type="ephemeral", text=ACK_TEXT)
        bot.start(command, bot.on_command(command, client))

    @app.event("app_mention")
    async def app_mention(
        ack: Any, body: dict, event: dict, context: Any, client: AsyncWebClient
    ) -> None:
        await ack()
        bot.start(body, bot.on_mention(event, context, client))

    @app.event("message")
    async def message(
        ack: Any, body: dict, event: dict, context: Any, client: AsyncWebClient
    ) -> None:
        await ack()
        bot.start(body, bot.on_message(event, context, client))

    @app.action(re.compile("^" + re.escape(WHATIF_ACTION_PREFIX)))
    async def whatif_button(ack: Any, body: dict, client: AsyncWebClient) -> None:
        await ack()
        bot.start(body, bot.on_whatif(body, client))

    return app


class _SlackBot:
    def __init__(
        self,
        conversation: Conversation,
        threads: ThreadLinks,
        files: bool,
        seen: SeenIds,
        in_flight: InFlight,
    ) -> None:
        self._conversation = conversation
        self._threads = threads
        self._files = files
        self._seen = seen
        self._in_flight = in_flight
        self._blocked = BlockedChannels()
        self._pending = PendingReplies(threads, in_flight)

    def start(self, body: dict, work: Coroutine[Any, Any, None]) -> None:
        """Run `work` after the ack, unless the delivery is a repeat of one answered already."""
        repeat = delivery_id(body)
        self._in_flight.start(self._once(repeat, work), repeat or "slack delivery")

    async def _once(self, repeat: str | None, work: Coroutine[Any, Any, None]) -> None:
        if repeat and not await self._seen.first_time(repeat):
            logger.info("%s was answered already; acknowledged the repeat only", repeat)
            work.close()  # never awaited: the first delivery answers
            return
        await work

    def _delivered(self, reply: Reply) -> None:
        metrics.answered("slack", reply.kind)
        metrics.answer_time("slack", self._in_flight.age_s())

    async def on_command(self, body: dict, client: AsyncWebClient | None = None) -> None:
        command = SlashCommand.model_validate(body)
        text = incoming_to_plain(command.text)
        private = bool(_PRIVATE_WORD.search(text))
        conversation_id = slash_conversation_id(command.trigger_id)
        key = thread_key(command.team_id, command.channel_id, conversation_id)
        text = _PRIVATE_WORD.sub(" ", text).strip()
        reply = without_files(await self._plan(key, text, command.user_id, client))
        ephemeral = private or reply.kind == "help"
        payloads = render_reply(reply, conversation_id=conversation_id)
        if await delivery.to_response_url(command.response_url, payloads, key, ephemeral):
            self._delivered(reply)

    async def on_mention(self, body: dict, context: Any, client: AsyncWebClient) -> None:
        event = ChatEvent.model_validate(body)
        if event.edited or event.bot_id:
            return
        team, channel = _team(event, context), event.channel
        root = event.thread_ts or event.ts
        conversation_id = await self._conversation_of(team, channel, root)
        text = await self._with_shared_config(event, context, client)
        await self._answer_in_thread(client, team, channel, root, conversation_id, text, event.user)

    async def on_message(self, body: dict, context: Any, client: AsyncWebClient) -> None:
        event = ChatEvent.model_validate(body)
        # Plain human replies inside a gpuplan thread (mentions arrive as app_mention too), and
        # anything said in a DM with the bot, where Slack sends no app_mention.
        in_dm = event.channel_type == "im"
        if (
            event.bot_id
            or event.subtype not in (None, "thread_broadcast", "file_share")
            or (not in_dm and f"<@{context.bot_user_id}>" in event.text)
        ):
            return
        team, channel = _team(event, context), event.channel
        root = event.thread_ts
        try:
            conversation_id = root and await self._threads.conversation_for(team, channel, root)
        except StoreUnavailable:
            # Whether this thread is gpuplan's is in the store: ask again once it is back.
            retry = functools.partial(self.on_message, body, context, client)
            self._pending.add(retry, f"{thread_key(team, channel, root or '')} (plain reply)")
            return
        if not conversation_id:
            if not in_dm:
                return
            # A DM opens a job like a mention does, answered in a thread under it.
            root = root or event.ts
            conversation_id = root
        text = await self._with_shared_config(event, context, client)
        await self._answer_in_thread(client, team, channel, root, conversation_id, text, event.user)

    async def _with_shared_config(
        self, event: ChatEvent, context: Any, client: AsyncWebClient
    ) -> str:
        """The message's words, and a shared config.json's JSON after them for the conversation
        to read like a pasted one."""
        text = _without_mention(event.text, context.bot_user_id)
        if not event.files:
            return text
        shared = await shared_config(event.files, client.token, client.base_url)
        return f"{text}\n{shared}" if shared else text

    async def on_whatif(self, body: dict, client: AsyncWebClient) -> None:
        click = BlockActions.model_validate(body)
        action, container = click.actions[0], click.container
        team = click.team.id if click.team else ""
        channel = (click.channel.id if click.channel else "") or container.channel_id
        root = container.thread_ts or container.message_ts
        conversation_id = conversation_id_from_block_id(action.block_id)
        conversation_id = conversation_id or await self._conversation_of(team, channel, root)
        # The button's id names its stored change; an old-format button's value is its text.
        text = Button(
            action.action_id.removeprefix(WHATIF_ACTION_PREFIX), incoming_to_plain(action.value)
        )
        if container.is_ephemeral:
            # Only the asker sees an ephemeral answer, so its what-ifs stay private too.
            key = thread_key(team, channel, conversation_id)
            reply = without_files(await self._plan(key, text, click.user.id, client))
            if click.response_url is None:
                logger.warning("%s: a private what-if came without a response_url", key)
                return
            payloads = render_reply(reply, conversation_id=conversation_id)
            if await delivery.to_response_url(click.response_url, payloads, key, ephemeral=True):
                self._delivered(reply)
            return
        await self._answer_in_thread(
            client, team, channel, root, conversation_id, text, click.user.id, click.response_url
        )

    async def _answer_in_thread(
        self,
        client: AsyncWebClient,
        team: str,
        channel: str,
        root: str,
        conversation_id: str,
        text: Message,
        user: str,
        response_url: str | None = None,
    ) -> None:
        key = thread_key(team, channel, conversation_id)
        reply = await self._plan(key, text, user, client)
        # A link Redis cannot take now is kept and written once it is back (redis_store).
        await self._threads.remember(team, channel, root, conversation_id)
        payloads = render_reply(reply, conversation_id=conversation_id)
        posted = await delivery.to_thread(client, channel, root, payloads, key)
        if posted.refused:
            notice = self._blocked.explain(
                posted.refused, team=team, channel=channel, needed=posted.needed
            )
            if response_url:  # a button press: its response_url reaches the asker anyway
                await delivery.to_response_url(response_url, [{"text": notice}], key, True)
            return
        if posted.ok:
            self._delivered(reply)
        if posted.ok and self._files and reply.has_chart:
            await self._upload_chart(client, channel, root, reply)
        if posted.ok and reply.files:  # asked for ("config"): attached whatever files_enabled says
            await upload_files(client, channel, root, reply)

    async def _conversation_of(self, team: str, channel: str, root: str) -> str:
        """The conversation a thread belongs to, else the thread's own (also while the store is
        down: a mention or a click is answered either way)."""
        try:
            return await self._threads.conversation_for(team, channel, root) or root
        except StoreUnavailable:
            return root

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

    async def _plan(
        self, key: ThreadKey, text: Message, user: str | None, client: AsyncWebClient | None = None
    ) -> Reply:
        self._in_flight.label(str(key))
        # Only a settings change needs the user's role, and Slack tells it only through an API call.
        typed = isinstance(text, str) and is_settings_change(text)
        admin = bool(user and client and typed and await is_workspace_admin(client, user))
        # `admin` is passed only when true: a conversation without settings needs no new argument.
        extra = {"admin": True} if admin else {}
        handle = functools.partial(self._conversation.handle, key, text, user or "", **extra)
        try:
            return await asyncio.to_thread(handle)
        except Exception:
            # The user gets a short apology; the details go to the log, never to the channel.
            logger.exception("planning failed for %s", key)
            metrics.error("slack", "plan_failed")
            return Reply(kind="error", title=phrases.ADAPTER_ERROR_TITLE, body=phrases.PLAN_FAILED)


async def is_workspace_admin(client: AsyncWebClient, user: str) -> bool:
    """Whether `user` is a workspace admin or owner (users.info, scope users:read); False when
    Slack does not say."""
    try:
        response = await client.users_info(user=user)
    except Exception as error:  # not confirmed as an admin, whatever went wrong
        logger.warning("users.info for %s failed: %s", user, type(error).__name__)
        return False
    profile = response.get("user") or {}
    return any(profile.get(flag) for flag in ("is_admin", "is_owner", "is_primary_owner"))


def _team(event: ChatEvent, context: Any) -> str:
    return context.team_id or event.team


def _without_mention(text: str, bot_user_id: str | None) -> str:
    if bot_user_id:
        text = text.replace(f"<@{bot_user_id}>", " ")
    return incoming_to_plain(text)
