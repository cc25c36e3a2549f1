"""The gate in front of Bolt on Slack's HTTP endpoint: size, then signature, then shape.

Bolt parses a body before it checks its signature, so unsigned junk (`null`, `{`, a deeply nested
array, a non-numeric timestamp) used to reach its parser and come back as a 500 with a traceback
in the log. Here nothing is parsed until the signature is good:

- a body over REQUEST_MAX_BYTES → 413;
- a missing, malformed, wrong or stale signature (or a non-numeric timestamp) → 401;
- a signed body that is not a JSON object or form → 400;
- a signed, parsed body of a shape the bot does not act on → 200 (so Slack does not retry it);
- while the process drains before exiting, an Events API delivery → 503 (so Slack retries it);

each with one rate-limited log line (adapters.rejections) and never the body's contents. The
OAuth pages get the same one-line treatment when Bolt's flow fails on a bad query, and Socket
Mode envelopes the same shape check (Slack signs nothing there: the connection is the proof).
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import re
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl

from aiohttp import web

from adapters.rejections import RejectionLog
from adapters.slack import limits
from adapters.slack.envelopes import EventCallback, read_envelope
from bot import json_limits, metrics
from bot.json_limits import JsonRefused

if TYPE_CHECKING:
    from slack_bolt.adapter.socket_mode.async_handler import AsyncSocketModeHandler
    from slack_bolt.async_app import AsyncApp

logger = logging.getLogger(__name__)

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
_TIMESTAMP = re.compile(r"[0-9]{1,12}")
# Slack retries a failed delivery at once, after 1 and after 5 minutes whatever this says; a
# balancer or proxy in front may honour it.
DRAIN_RETRY_AFTER_S = "5"


class NotASlackBody(ValueError):
    """A signed body that is neither a JSON object nor a form Bolt can read."""


def parse_body(raw: bytes, content_type: str) -> dict[str, Any]:
    """The body as Bolt will read it: JSON for Events API callbacks, a form for slash commands,
    and a form whose `payload` field is JSON for interactions."""
    try:
        text = raw.decode("utf-8")
        if content_type == "application/json" or text.startswith("{"):
            parsed: Any = json_limits.loads(text)
        else:
            form = dict(parse_qsl(text, keep_blank_values=True))
            parsed = json_limits.loads(form["payload"]) if "payload" in form else form
    except JsonRefused as error:
        raise NotASlackBody(f"JSON: {error}") from None
    except (UnicodeDecodeError, ValueError) as error:
        raise NotASlackBody(type(error).__name__) from None
    if not isinstance(parsed, dict):
        raise NotASlackBody(f"a JSON {type(parsed).__name__}, not an object")
    return parsed


def slack_gate(
    signing_secret: str,
    events_path: str,
    rejections: RejectionLog | None = None,
    clock: Callable[[], float] = time.time,
    draining: Callable[[], bool] = lambda: False,
) -> Callable[[web.Request, Handler], Awaitable[web.StreamResponse]]:
    """An aiohttp middleware for the app Bolt serves at `events_path`. While `draining()`, an
    Events API delivery gets 503 with Retry-After, so Slack delivers it again (to another
    process, or to this one after its restart); commands and clicks, which Slack never retries,
    are still let through to be acked and answered."""
    log = rejections or RejectionLog(logger)

    def refuse(status: int, reason: str, request: web.Request, why: str) -> web.Response:
        log.reject(f"slack {status} {reason}", f"{why} ({_origin(request)})")
        return web.Response(status=status, text="" if status == 200 else reason)

    @web.middleware
    async def gate(request: web.Request, handler: Handler) -> web.StreamResponse:
        if request.path != events_path or request.method != "POST":
            return await _oauth_page(request, handler, log)
        arrived_s = time.perf_counter()
        if (request.content_length or 0) > limits.REQUEST_MAX_BYTES:
            return refuse(413, "too large", request, f"{request.content_length} bytes")
        try:
            raw = await request.read()
        except web.HTTPRequestEntityTooLarge:
            return refuse(413, "too large", request, "a body over the cap without a length")
        timestamp = request.headers.get("X-Slack-Request-Timestamp", "")
        signature = request.headers.get("X-Slack-Signature", "")
        if not _TIMESTAMP.fullmatch(timestamp) or not signature:
            return refuse(401, "unsigned", request, "no signature, or a timestamp not a number")
        age_s = clock() - int(timestamp)
        if abs(age_s) > limits.SIGNATURE_MAX_AGE_S:
            return refuse(401, "stale signature", request, f"signed {age_s:.0f} s ago")
        if not _signed_by(signing_secret, timestamp, raw, signature):
            return refuse(401, "bad signature", request, "the signature does not match")
        try:
            body = parse_body(raw, request.content_type)
        except NotASlackBody as error:
            return refuse(400, "unreadable", request, f"signed but not readable: {error}")
        envelope = read_envelope(body)
        if isinstance(envelope, str):
            return refuse(200, "ignored", request, envelope)
        if draining() and isinstance(envelope, EventCallback):
            logger.info("slack 503 draining: %s left for Slack to retry", envelope.event_id)
            return web.Response(
                status=503, text="shutting down", headers={"Retry-After": DRAIN_RETRY_AFTER_S}
            )
        response = await handler(request)  # Bolt answers as soon as the listener acks
        metrics.ack("slack", time.perf_counter() - arrived_s)
        return response

    return gate


async def _oauth_page(
    request: web.Request, handler: Handler, log: RejectionLog
) -> web.StreamResponse:
    try:
        return await handler(request)
    except web.HTTPException:
        raise  # aiohttp's own answers: 404, 405
    except Exception as error:
        # A query Bolt's OAuth flow cannot handle: the visitor gets a plain page, the log a line.
        log.reject("slack 400 oauth", f"{type(error).__name__}: {error} ({_origin(request)})")
        return web.Response(status=400, text="This install link is not valid; start again.")


def _signed_by(secret: str, timestamp: str, raw: bytes, signature: str) -> bool:
    """Slack's v0 signature: HMAC-SHA256 of `v0:{timestamp}:{body}`, over the body's bytes as
    sent (slack_sdk's verifier decodes them first, and fails on a body that is not UTF-8)."""
    digest = hmac.new(secret.encode(), f"v0:{timestamp}:".encode() + raw, hashlib.sha256)
    return hmac.compare_digest(f"v0={digest.hexdigest()}", signature)


def _origin(request: web.Request) -> str:
    return f"{request.method} {request.path} from {request.remote or 'unknown'}"


def socket_handler(app: AsyncApp, app_token: str) -> AsyncSocketModeHandler:
    """Bolt's Socket Mode handler, acking (and logging) envelopes of a shape the bot ignores
    instead of handing them to Bolt."""
    from slack_bolt.adapter.socket_mode.async_handler import AsyncSocketModeHandler
    from slack_sdk.socket_mode.response import SocketModeResponse

    log = RejectionLog(logger)

    class CheckedSocketModeHandler(AsyncSocketModeHandler):
        async def handle(self, client: Any, req: Any) -> None:
            payload = req.payload
            problem = read_envelope(payload) if isinstance(payload, dict) else "not an object"
            if isinstance(problem, str):
                log.reject("slack socket ignored", f"{problem} ({req.type} envelope)")
                await client.send_socket_mode_response(
                    SocketModeResponse(envelope_id=req.envelope_id)
                )
                return
            arrived_s = time.perf_counter()
            await super().handle(client, req)  # returns once the listener has acked
            metrics.ack("slack", time.perf_counter() - arrived_s)

    return CheckedSocketModeHandler(app, app_token=app_token)
