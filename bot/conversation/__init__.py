"""The conversation: a question or a follow-up in a thread → a Reply, the same on every surface.

In parts: the turn (bot.conversation.turn: read → decide → answer, and the thread kept), reading
a message (read), the answers (answers), the workspace settings commands (workspace, with their
table in settings_commands). Callers outside the package use the names below.
"""

from bot.conversation.outcome import Turn
from bot.conversation.turn import Conversation, answer_once

__all__ = ["Conversation", "Turn", "answer_once"]
