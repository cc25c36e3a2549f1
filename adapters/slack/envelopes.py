"""What Slack sends, as typed models: the shapes the bot acts on, checked before Bolt sees them.

Bolt reads fields such as `event.channel` or `event_id` without checking their types, so a signed
but oddly shaped request (an `event` that is a string, an `event_id` that is a list) would crash
inside Bolt or after the ack. `read_envelope` turns every parsed body into one of these models,
or says in one short line why it is not one; the listeners then read their fields from the same
models.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from adapters.slack.render import WHATIF_ACTION_PREFIX


class _Slack(BaseModel):
    model_config = ConfigDict(frozen=True, extra="ignore")


class ChatEvent(_Slack):
    """An `app_mention` or a `message` (channels, groups, DMs): what the bot answers."""

    type: Literal["app_mention", "message"]
    channel: str
    ts: str
    text: str = ""
    user: str = ""
    team: str = ""
    thread_ts: str | None = None
    channel_type: str | None = None  # "im" in a DM with the bot
    subtype: str | None = None
    bot_id: str | None = None
    edited: dict[str, Any] | None = None
    files: list[dict[str, Any]] = []  # shared with the message (subtype file_share)


class EventCallback(_Slack):
    type: Literal["event_callback"]
    event_id: str
    team_id: str = ""
    event: ChatEvent


class UrlVerification(_Slack):
    type: Literal["url_verification"]
    challenge: str


class SlashCommand(_Slack):
    command: str = Field(pattern="^/")
    trigger_id: str
    team_id: str
    channel_id: str
    user_id: str
    response_url: str
    text: str = ""


class _Id(_Slack):
    id: str


class Container(_Slack):
    message_ts: str = ""
    thread_ts: str | None = None
    channel_id: str = ""
    is_ephemeral: bool = False


class ButtonAction(_Slack):
    # Only gpuplan's what-if buttons are ours to answer (adapters.slack.render names them).
    action_id: str = Field(pattern="^" + re.escape(WHATIF_ACTION_PREFIX))
    block_id: str = ""
    value: str = ""


class BlockActions(_Slack):
    type: Literal["block_actions"]
    trigger_id: str
    user: _Id
    team: _Id | None = None
    channel: _Id | None = None
    container: Container = Container()
    response_url: str | None = None
    actions: list[ButtonAction] = Field(min_length=1)


class SslCheck(_Slack):
    ssl_check: str


Envelope = EventCallback | UrlVerification | SlashCommand | BlockActions | SslCheck

_BY_TYPE: dict[str, type[_Slack]] = {
    "event_callback": EventCallback,
    "url_verification": UrlVerification,
    "block_actions": BlockActions,
}
# The event types the manifest subscribes to; any other is acknowledged and ignored.
ANSWERED_EVENTS = frozenset({"app_mention", "message"})
_ERROR_FIELDS_SHOWN = 2


def read_envelope(body: dict[str, Any]) -> Envelope | str:
    """The typed envelope, or a one-line reason the bot will not act on this body."""
    kind = body.get("type")
    if isinstance(kind, str) and kind in _BY_TYPE:
        model: type[_Slack] = _BY_TYPE[kind]
        event = body.get("event")
        if kind == "event_callback" and isinstance(event, dict):
            event_type = event.get("type")
            if event_type not in ANSWERED_EVENTS:
                return f"event_callback: ignored event type {_short(event_type)}"
    elif "command" in body:
        model = SlashCommand
    elif "ssl_check" in body:
        model = SslCheck
    else:
        return f"unexpected request type {_short(kind)}"
    try:
        return model.model_validate(body)  # type: ignore[return-value]
    except ValidationError as error:
        return f"{kind or model.__name__}: {_first_errors(error)}"


def _first_errors(error: ValidationError) -> str:
    parts = []
    for problem in error.errors()[:_ERROR_FIELDS_SHOWN]:
        where = ".".join(str(part) for part in problem["loc"]) or "body"
        parts.append(f"{where} {problem['msg'].lower()}")
    more = error.error_count() - len(parts)
    return "; ".join(parts) + (f" (+{more} more)" if more > 0 else "")


def _short(value: Any, limit: int = 40) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"
