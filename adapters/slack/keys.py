"""Which conversation a Slack event, command or button click belongs to, as a ThreadKey."""

from __future__ import annotations

from bot.threads import ThreadKey

PLATFORM = "slack"


def thread_key(team: str, channel: str, conversation_id: str) -> ThreadKey:
    """A job lives in a conversation: a thread's root ts, or the slash command that started it
    (adapters.slack.store maps the threads opened under a slash-command answer back to it)."""
    return ThreadKey(platform=PLATFORM, workspace=team, channel=channel, thread=conversation_id)


def slash_conversation_id(trigger_id: str) -> str:
    """A slash command has no thread of its own: its trigger id names the conversation."""
    return f"slash-{trigger_id}"
