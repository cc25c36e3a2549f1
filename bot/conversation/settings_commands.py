"""The one table of workspace settings commands, shared by every surface: `/gpuplan language zh`,
`/gpuplan providers runpod, vast.ai`, `/gpuplan reports on`.

The conversation answers them (bot.conversation), and a surface asks `is_settings_change` to
know when to look up the user's role (Slack needs an API call for it: users.info; Discord reads
Manage Server), so a command added here is known to both at once.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from bot.language import read_language_command
from bot.prices.preferences import read_providers_command
from bot.reports import read_reports_command


@dataclass(frozen=True)
class SettingsCommand:
    name: str  # the setting: a name in COMMANDS
    change: bool  # it changes the setting (admins only), rather than showing it
    parsed: Any  # what the setting's reader made of the text


@dataclass(frozen=True)
class _Entry:
    name: str
    read: Callable[[str], Any]  # the command's reading of a text, None when it is not this one
    changes: Callable[[Any], bool]


COMMANDS = (
    # "language auto" clears the setting: every reading is a change.
    _Entry("language", read_language_command, lambda _value: True),
    _Entry("providers", read_providers_command, lambda command: command.change),
    _Entry("reports", read_reports_command, lambda command: command.change),
)


def read_settings_command(text: str) -> SettingsCommand | None:
    """The settings command `text` is, or None when it is none of them."""
    for entry in COMMANDS:
        parsed = entry.read(text)
        if parsed is not None:
            return SettingsCommand(entry.name, entry.changes(parsed), parsed)
    return None


def is_settings_change(text: str) -> bool:
    """Whether `text` asks to change a workspace setting (the surface then checks the role)."""
    command = read_settings_command(text)
    return command is not None and command.change
