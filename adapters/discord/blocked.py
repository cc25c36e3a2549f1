"""When Discord keeps the bot from acting, say so: once in the log with the fix, and once to the
people in the thread where the bot can still speak.

Two cases: without the Message Content intent a reply in the bot's thread that does not mention
it arrives blank, so the bot cannot read it; and a channel whose permissions refuse the bot's
answer (403). The log line comes once per process for the intent and once per channel for a
refusal, so a busy server cannot flood it.
"""

from __future__ import annotations

import logging

log = logging.getLogger(__name__)

UNREADABLE_REPLY = (
    "I can't read messages here unless they mention me. Start with @gpuplan "
    "(`@gpuplan what if 8k ctx?`), press a button under my answer, or use `/gpuplan`."
)
UNREADABLE_FIX = (
    "to re-plan from plain thread replies, turn on the Message Content intent (Developer Portal → "
    "Bot → Privileged Gateway Intents) and set GPUPLAN_DISCORD_MESSAGE_CONTENT=1"
)
REFUSED_FIX = (
    "give the bot View Channel, Send Messages, Send Messages in Threads, Create Public Threads, "
    "Embed Links and Attach Files there (or re-invite it: gpuplan discord-commands --invite ID)"
)


class Blocked:
    def __init__(self) -> None:
        self._told_threads: set[int] = set()
        self._logged_unreadable = False
        self._logged_channels: set[int] = set()

    def unreadable(self, thread_id: int) -> str | None:
        """The notice for a blank reply in `thread_id`: the first time there, else None."""
        if not self._logged_unreadable:
            self._logged_unreadable = True
            log.warning(
                "a reply in a gpuplan thread arrived blank (no Message Content intent); %s",
                UNREADABLE_FIX,
            )
        if thread_id in self._told_threads:
            return None
        self._told_threads.add(thread_id)
        return UNREADABLE_REPLY

    def refused(self, channel_id: int, reason: str) -> None:
        """Discord refused an answer in `channel_id` (403): log it once per channel with the fix."""
        if channel_id in self._logged_channels:
            return
        self._logged_channels.add(channel_id)
        log.warning(
            "Discord refused an answer in channel %s (%s); fix: %s", channel_id, reason, REFUSED_FIX
        )
