"""The workspace settings commands, answered: `/gpuplan language zh`, `/gpuplan providers …`,
`/gpuplan reports on` (the table that reads them is bot.conversation.settings_commands). Also
where an answer reads its workspace's settings: the default language and the providers.

Settings are read at most every SETTINGS_TTL_S: no store round trip per answer for a setting that
rarely changes (a change made through this process applies at once, through another within that).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable

from bot import phrases
from bot.cache import TTLCache
from bot.conversation.outcome import Turn
from bot.conversation.settings_commands import read_settings_command
from bot.language import LANGUAGE_SETTING, language_default
from bot.prices.market import MarketPrices
from bot.prices.preferences import (
    PROVIDERS_ENV,
    ProvidersCommand,
    env_providers,
    providers_for,
    save_providers,
)
from bot.reply import Reply
from bot.reply_builder import message_reply, providers_reply
from bot.reports import ReportsCommand, keeps_reports, save_keep_reports
from bot.state.settings import SETTINGS_ERRORS, SettingsStore, scope_of
from bot.threads import ThreadKey

logger = logging.getLogger(__name__)

SETTINGS_TTL_S = 5.0


class WorkspaceSettings:
    """A workspace's settings as answers use them, and the commands that change them (admins
    only: the surface says who is one)."""

    def __init__(self, settings: SettingsStore, prices: MarketPrices) -> None:
        self.settings = settings
        self._prices = prices
        self._settings_read: TTLCache[frozenset[str] | None] = TTLCache(ttl_s=SETTINGS_TTL_S)
        self._language_read: TTLCache[str | None] = TTLCache(ttl_s=SETTINGS_TTL_S)

    def answer(self, key: ThreadKey, text: str, user: str, admin: bool) -> Turn | None:
        """A settings command (bot.conversation.settings_commands' table), answered; None for
        anything else."""
        command = read_settings_command(text)
        if command is None:
            return None
        answer = {
            "language": self._set_language,
            "providers": self._providers,
            "reports": self._keeping_reports,
        }[command.name]
        return Turn(answer(key, command.parsed, user, admin))

    def language_of(self, key: ThreadKey) -> str | None:
        """The workspace's default language, else the process's (GPUPLAN_LANGUAGE)."""
        # An unreadable store reads as nothing set: the process default. Read at most every few
        # seconds, like the providers: no store round trip per answer for a setting that rarely
        # changes (a change through another process applies within SETTINGS_TTL_S).
        scope = scope_of(key)
        stored = self._language_read.get_or_compute(
            scope, lambda: self.settings.get(scope, LANGUAGE_SETTING)
        )
        return language_default(stored)

    def _set_language(self, key: ThreadKey, language: str, user: str, admin: bool) -> Reply:
        if not admin:
            return message_reply("error", *phrases.ONLY_ADMINS_LANGUAGE)
        value = None if language == "auto" else language
        if not _saved(
            scope_of(key),
            lambda: self.settings.put(scope_of(key), LANGUAGE_SETTING, value, by=user),
        ):
            return message_reply("error", *phrases.SETTING_NOT_SAVED)
        self._language_read.clear()
        return message_reply("help", *phrases.language_set(value))

    def providers_of(self, key: ThreadKey) -> frozenset[str] | None:
        """The workspace's provider preference; read from the store at most every few seconds
        (a change made through this process applies at once, through another within that)."""
        scope = scope_of(key)

        return self._settings_read.get_or_compute(
            (scope, os.environ.get(PROVIDERS_ENV)), lambda: providers_for(self.settings, scope)
        )

    def _providers(
        self, key: ThreadKey, command: ProvidersCommand, user: str, admin: bool
    ) -> Reply:
        if command.error:
            return message_reply("error", phrases.UNKNOWN_PROVIDER_TITLE, command.error)
        if command.change:
            if not admin:
                return message_reply("error", *phrases.ONLY_ADMINS_PROVIDERS)
            scope = scope_of(key)
            if not _saved(
                scope, lambda: save_providers(self.settings, scope, command.providers, by=user)
            ):
                return message_reply("error", *phrases.SETTING_NOT_SAVED)
            self._settings_read.clear()
        snapshot = self._prices.snapshot()
        quoted = {offer.provider for offer in snapshot.offers} if snapshot else set()
        return providers_reply(
            self.providers_of(key), env_providers(), quoted, changed=command.change
        )

    def _keeping_reports(
        self, key: ThreadKey, command: ReportsCommand, user: str, admin: bool
    ) -> Reply:
        """`/gpuplan reports [on|off]`: whether this workspace keeps run reports (admins only)."""
        scope = scope_of(key)
        if command.error:
            return message_reply("error", phrases.REPORTS_SETTING_TITLE, command.error)
        if command.change:
            if not admin:
                return message_reply("error", *phrases.ONLY_ADMINS_REPORTS)
            if not _saved(
                scope, lambda: save_keep_reports(self.settings, scope, command.keep, by=user)
            ):
                return message_reply("error", *phrases.SETTING_NOT_SAVED)
        kept = keeps_reports(self.settings, scope)
        return message_reply("help", *phrases.reports_setting(kept, changed=command.change))


def _saved(scope: str, write: Callable[[], None]) -> bool:
    """Run a settings write; False (logged) when the store refused it."""
    try:
        write()
    except SETTINGS_ERRORS as error:
        logger.warning("saving settings for %s failed: %s", scope, error)
        return False
    return True
