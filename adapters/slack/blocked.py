"""When Slack will not let the bot post where it was asked, say why: once in the log with the fix
(per workspace, channel and reason, so a busy channel cannot flood it), and to the asker where
Slack leaves a way to reach them (a button press carries a response_url, which needs no
membership). A mention in such a channel cannot be answered at all, so the log is all there is.
"""

from __future__ import annotations

import logging
from typing import NamedTuple

logger = logging.getLogger(__name__)

INVITE = "invite the bot there with `/invite @gpuplan`"


class Refusal(NamedTuple):
    what: str
    fix: str


# chat.postMessage's errors that mean "not here", by Slack's error code.
REFUSALS = {
    "not_in_channel": Refusal("the bot is not a member of this channel", INVITE),
    "channel_not_found": Refusal(
        "the channel is private (or gone) and the bot is not in it",
        f"private channels need an invite: {INVITE}",
    ),
    "is_archived": Refusal("the channel is archived", "unarchive it, or ask in another channel"),
    "restricted_action": Refusal(
        "this channel only lets some members post",
        "let the app post (channel settings → Posting permissions), or ask elsewhere",
    ),
    "missing_scope": Refusal(
        "the app's install lacks a scope it needs",
        "add it under OAuth & Permissions (see `gpuplan doctor slack`) and reinstall the app",
    ),
}


class BlockedChannels:
    """Turns a refusal into one log line per (workspace, channel, reason) and a sentence to show."""

    def __init__(self) -> None:
        self._logged: set[tuple[str, str, str]] = set()

    def explain(self, error_code: str, *, team: str, channel: str, needed: str = "") -> str:
        """The sentence for the asker of an answer refused with `error_code` (one of REFUSALS)."""
        refusal = REFUSALS[error_code]
        what = f"{refusal.what} ({needed})" if needed else refusal.what
        if (team, channel, error_code) not in self._logged:
            self._logged.add((team, channel, error_code))
            logger.warning(
                "Slack refused an answer in %s/%s (%s): %s; fix: %s",
                team,
                channel,
                error_code,
                what,
                refusal.fix,
            )
        return (
            f"I can't post in this channel: {what}. To fix it, {refusal.fix}. "
            "`/gpuplan` still works here."
        )
