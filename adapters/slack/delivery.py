"""Getting answers to Slack: retried where Slack allows it, and a trace in the log when they fail.

slack_sdk's retry handlers wait out a 429 (Retry-After) and retry a 500/503 or a dropped
connection, for both the Web API client (chat.postMessage, auth.test) and `response_url`; the
waits are bot.backoff's full jitter. What still fails is logged once with the thread key, never
with the token or the response_url (which lets anyone holding it post as the bot).
"""

from __future__ import annotations

import logging
import random
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from slack_sdk.http_retry.async_handler import AsyncRetryHandler
from slack_sdk.http_retry.builtin_async_handlers import (
    AsyncConnectionErrorRetryHandler,
    AsyncRateLimitErrorRetryHandler,
    AsyncServerErrorRetryHandler,
)
from slack_sdk.http_retry.interval_calculator import RetryIntervalCalculator

from adapters.slack import limits
from adapters.slack.blocked import REFUSALS
from bot import metrics
from bot.backoff import Backoff
from bot.threads import ThreadKey

if TYPE_CHECKING:
    from slack_sdk.web.async_client import AsyncWebClient

logger = logging.getLogger(__name__)

# Slack asks apps to back off on errors; a few tries over a few seconds ride out a brief outage.
DELIVERY_BACKOFF = Backoff(first_delay_s=0.25, max_delay_s=2.0, budget_s=10.0)
SERVER_ERROR_RETRIES = 3
RATE_LIMIT_RETRIES = 3


class _JitteredInterval(RetryIntervalCalculator):
    def calculate_sleep_duration(self, current_attempt: int) -> float:
        return DELIVERY_BACKOFF.cap_s(current_attempt) * random.random()


def retry_handlers() -> list[AsyncRetryHandler]:
    interval = _JitteredInterval()
    return [
        AsyncRateLimitErrorRetryHandler(max_retry_count=RATE_LIMIT_RETRIES),
        AsyncServerErrorRetryHandler(
            max_retry_count=SERVER_ERROR_RETRIES, interval_calculator=interval
        ),
        AsyncConnectionErrorRetryHandler(
            max_retry_count=SERVER_ERROR_RETRIES, interval_calculator=interval
        ),
    ]


async def to_response_url(
    response_url: str, payloads: Sequence[dict[str, Any]], key: ThreadKey, ephemeral: bool
) -> bool:
    """Post each payload to a slash command's or a click's response_url (at most Slack's 5);
    whether all of them got there."""
    from slack_sdk.webhook.async_client import AsyncWebhookClient

    if len(payloads) > limits.RESPONSE_URL_MAX_POSTS:
        logger.warning(
            "%s: the answer needs %d messages; response_url takes %d",
            key,
            len(payloads),
            limits.RESPONSE_URL_MAX_POSTS,
        )
    webhook = AsyncWebhookClient(response_url, retry_handlers=retry_handlers())
    for part, payload in enumerate(payloads[: limits.RESPONSE_URL_MAX_POSTS], start=1):
        try:
            response = await webhook.send_dict(
                {
                    "response_type": "ephemeral" if ephemeral else "in_channel",
                    "replace_original": False,
                    **payload,
                }
            )
        except Exception as error:
            _lost(key, "response_url", part, len(payloads), type(error).__name__)
            return False
        if response.status_code != 200:
            _lost(key, "response_url", part, len(payloads), f"HTTP {response.status_code}")
            return False
    return True


class Posted(NamedTuple):
    ok: bool
    refused: str = ""  # Slack's code when it will not let the bot post there (blocked.REFUSALS)
    needed: str = ""  # with missing_scope: the scope Slack says is needed


async def to_thread(
    client: AsyncWebClient,
    channel: str,
    root: str,
    payloads: Sequence[dict[str, Any]],
    key: ThreadKey,
) -> Posted:
    """chat.postMessage each payload into the thread. A failure is logged here, except a refusal
    of the channel itself, which the caller explains (adapters.slack.blocked)."""
    from slack_sdk.errors import SlackApiError

    for part, payload in enumerate(payloads, start=1):
        try:
            await client.chat_postMessage(channel=channel, thread_ts=root, **payload)
        except SlackApiError as error:
            code = _code(error)
            if code in REFUSALS:
                return Posted(ok=False, refused=code, needed=str(error.response.get("needed", "")))
            status = error.response.status_code
            _lost(key, "chat.postMessage", part, len(payloads), f"HTTP {status} {code}")
            return Posted(ok=False)
        except Exception as error:  # the connection, after its retries
            _lost(key, "chat.postMessage", part, len(payloads), type(error).__name__)
            return Posted(ok=False)
    return Posted(ok=True)


def _code(error: Any) -> str:
    data = error.response.data
    return str(data.get("error", "")) if isinstance(data, dict) else ""


def _lost(key: ThreadKey, where: str, part: int, parts: int, why: str) -> None:
    # The class of a connection error, not its text: aiohttp's messages can carry the URL.
    logger.warning("%s: answer lost at %s, part %d of %d (%s)", key, where, part, parts, why)
    metrics.error("slack", "answer_lost")
