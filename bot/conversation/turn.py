"""A conversation's turn: a question or a follow-up in a thread → a Reply, the same on every
surface. Read the message (bot.conversation.read), decide and answer it on the thread's job
(bot.conversation.answers), keep the thread's new history; workspace settings commands are
answered on the side (bot.conversation.workspace).

A thread keeps the JobSpec history of what its users said (not the filled-in plan), so a follow-up
such as "what if 8k ctx?" patches the job and every default is chosen afresh for the new job.
"""

from __future__ import annotations

import logging
import time
from dataclasses import replace

from bot import phrases
from bot.backoff import Backoff
from bot.cache import TTLCache
from bot.conversation.answers import Answers, PlanFn, Planning
from bot.conversation.locks import KeyLocks
from bot.conversation.outcome import Turn
from bot.conversation.read import Asked, ParseFn, asked, clean, split_message, spoken
from bot.conversation.workspace import WorkspaceSettings
from bot.followups import Help
from bot.language import localize, reply_language
from bot.patches import PATCH_ID_PREFIX, Button, Message, Patch
from bot.prices.market import Market, MarketPrices
from bot.reply import Reply
from bot.reply_builder import help_reply, message_reply
from bot.state.backend import StateBackend, backend_from_env
from bot.state.errors import StoreUnavailable
from bot.state.limits import Limiter, open_rate_limiter, wait_text
from bot.state.patches import MemoryPatchStore, PatchStore, open_patch_store
from bot.state.prices import open_price_store
from bot.state.reports import Report, ReportStore, open_report_store
from bot.state.settings import MemorySettings, SettingsStore, open_settings_store, scope_of
from bot.state.threads import MemoryStore, StateStore, open_thread_store
from bot.threads import ThreadKey
from planner.errors import PlanningError
from planner.parsing.result import ParseResult
from planner.plan import Plan
from planner.spec import JobSpec

logger = logging.getLogger(__name__)

MAX_HISTORY = 20  # how many steps "undo" can go back
# A writer that lost the compare-and-set waits a jittered moment and answers again from the
# winner's job, for up to a few seconds: well after Slack's and Discord's acks, so only the answer
# waits (bench/cas_contention.py: with 8 writers on one thread none is refused).
SAVE_BACKOFF = Backoff(first_delay_s=0.002, max_delay_s=0.1, budget_s=3.0)
CACHE_TTL_S = 60.0


class Conversation:
    """Answers messages in threads, with the stores it keeps them in: threads, button patches,
    settings, rate limits, kept reports and prices, each opened on one state backend
    (GPUPLAN_STATE_URL's by default) unless given."""

    def __init__(
        self,
        store: StateStore | None = None,
        *,
        plan_fn: PlanFn | None = None,
        parse_fn: ParseFn | None = None,
        rate_limiter: Limiter | None = None,
        limit_rate: bool = True,
        cache_ttl_s: float = CACHE_TTL_S,
        save_backoff: Backoff = SAVE_BACKOFF,
        prices: MarketPrices | None = None,
        settings: SettingsStore | None = None,
        reports: ReportStore | None = None,
        patches: PatchStore | None = None,
        backend: StateBackend | None = None,
    ) -> None:
        # A one-off answer (a MemoryStore of threads) keeps its patches and settings in memory.
        backend = backend if backend is not None else backend_from_env()
        self.store = store if store is not None else open_thread_store(backend)
        one_off = isinstance(self.store, MemoryStore)
        if patches is None:
            patches = MemoryPatchStore() if one_off else open_patch_store(backend)
        self.patches = patches
        # Prices come from the snapshots the scheduled refresh saves in the state store.
        self.prices = prices if prices is not None else MarketPrices(open_price_store(backend))
        if settings is None:
            settings = MemorySettings() if one_off else open_settings_store(backend)
        self.workspace = WorkspaceSettings(settings, self.prices)
        self._backend = backend
        self._plan_fn = plan_fn
        self._parse_fn = parse_fn or _default_parse_fn()
        self._limiter = (rate_limiter or open_rate_limiter(backend)) if limit_rate else None
        # Identical jobs within a minute (a repeated question, the "before" side of a follow-up)
        # are planned once.
        self._plans: TTLCache[Plan] = TTLCache(ttl_s=cache_ttl_s)
        self._parses: TTLCache[ParseResult] = TTLCache(ttl_s=cache_ttl_s)
        self._locks = KeyLocks()
        self._save_backoff = save_backoff
        self._reports = reports  # opened at the first report kept

    def handle(
        self, key: ThreadKey, text: Message, user: str = "", *, admin: bool = False
    ) -> Reply:
        """Answer `text` (typed text, a button click or a Patch); `admin` says the user may
        change workspace settings (the surface decides: Slack workspace admins, Discord members
        with Manage Server)."""
        return self.respond(key, text, user, admin=admin).reply

    def respond(
        self, key: ThreadKey, text: Message | JobSpec, user: str = "", *, admin: bool = False
    ) -> Turn:
        """Like `handle`, with the plan and the field changes for machine-readable forms. A
        JobSpec (the MCP server's `plan {spec}`) is a new job already read: the thread's job
        from now on, as a new question's would be."""
        try:
            if isinstance(text, Button):
                pressed = self._pressed(text)
                turn = (
                    pressed
                    if isinstance(pressed, Turn)
                    else self._priced(key, pressed, user, admin)
                )
            else:
                turn = self._priced(key, text, user, admin)
            self._store_buttons(turn.reply)
        except Exception:
            logger.exception("answering a message in %s failed", key)
            turn = Turn(message_reply("error", *phrases.SOMETHING_WENT_WRONG))
        # The asker's language (a Chinese question gets a Chinese answer), else the workspace's.
        language = reply_language(spoken(text), self.workspace.language_of(key))
        return replace(turn, reply=localize(turn.reply, language))

    def _priced(self, key: ThreadKey, text: str | Patch | JobSpec, user: str, admin: bool) -> Turn:
        if isinstance(text, str):  # workspace commands are typed, never a button
            command = self.workspace.answer(key, clean(text), user, admin)
            if command is not None:
                return command

        try:
            market = self.prices.market(self.workspace.providers_of(key))
        except PlanningError as error:  # a bad GPUPLAN_PROVIDERS or GPUPLAN_PRICES
            return Turn(message_reply("error", phrases.CANT_PRICE_TITLE, error.message))
        return _with_freshness(self._respond(key, text, user, market), market)

    def _store_buttons(self, reply: Reply) -> None:
        """Each what-if's patch stored, its button carrying the patch's short id; if the store
        cannot be reached the buttons keep their text, which a click reads as a follow-up."""
        unstored = [
            whatif
            for whatif in reply.whatifs
            if whatif.patch and not whatif.id.startswith(PATCH_ID_PREFIX)
        ]
        if not unstored:
            return
        try:
            ids = self.patches.put_all([Patch(whatif.patch, whatif.label) for whatif in unstored])
        except StoreUnavailable as error:
            logger.warning("what-if buttons keep their text: %s", error)
            return
        for whatif, new_id in zip(unstored, ids, strict=True):
            whatif.id = new_id

    def _pressed(self, button: Button) -> str | Patch | Turn:
        """What a click asks for: its stored patch, the text an old-format button carried, or
        a plain answer that the button expired."""
        if not button.stored:
            return button.text
        try:
            patch = self.patches.get(button.id)
        except StoreUnavailable as error:  # the button's text says the same change
            logger.warning("reading button %s by its text: %s", button.id, error)
            return button.text
        if patch is None:
            return Turn(message_reply("clarify", *phrases.BUTTON_EXPIRED))
        return patch

    def _respond(
        self, key: ThreadKey, text: str | Patch | JobSpec, user: str, market: Market
    ) -> Turn:
        config = None
        if isinstance(text, str):
            read = split_message(text, self._parse_fn)
            if isinstance(read, Turn):
                return read
            config, text = read
        if self._limiter is not None:
            scope = f"{key.platform}/{key.workspace}"
            wait_s = self._limiter.acquire(
                f"{scope}/{user}" if user else "", f"{scope}/{key.channel}"
            )
            if wait_s > 0:
                return Turn(message_reply("rate_limited", *phrases.rate_limited(wait_text(wait_s))))
        intent = asked(text, config, self._parse, scope_of(key))
        if isinstance(intent, Help):
            return Turn(help_reply())
        answers = Answers(
            Planning(self._plans, market, plan_fn=self._plan_fn),
            self._parse,
            self.workspace.settings,
            self._keep,
        )
        return self._in_thread(key, answers, intent)

    def _in_thread(self, key: ThreadKey, answers: Answers, intent: Asked) -> Turn:
        """Decide and answer on the thread's job, and keep the thread's new history."""
        thread = str(key)
        # Follow-ups in one thread take turns here; across processes the store's version check
        # makes a writer that lost the race answer again from the winner's job.
        with self._locks.hold(thread):
            started_s = time.monotonic()
            retry_delays = self._save_backoff.delays()
            while True:
                try:
                    state = self.store.load(thread)
                except StoreUnavailable as error:
                    logger.warning("answering %s without thread memory: %s", thread, error)
                    return _without_memory(answers.answer((), intent).turn, error, read=True)
                outcome = answers.answer(state.history, intent)
                try:
                    if outcome.history is None or self.store.save(
                        thread, outcome.history[-MAX_HISTORY:], state.version
                    ):
                        return outcome.turn
                except StoreUnavailable as error:
                    logger.warning("could not save %s: %s", thread, error)
                    return _without_memory(outcome.turn, error, read=False)
                delay_s = next(retry_delays, None)
                if delay_s is None:
                    break
                time.sleep(delay_s)
            logger.warning(
                "%s: every save lost the race for %.1f s; not answered",
                key,
                time.monotonic() - started_s,
            )
        return Turn(message_reply("error", *phrases.THREAD_BUSY))

    def _keep(self, report: Report) -> bool:
        """Keep a report; a store that fails loses the report, never the answer."""
        try:
            if self._reports is None:
                self._reports = open_report_store(self._backend)
            self._reports.add(report)
        except Exception:
            logger.exception("could not keep a run report for %s", report.scope)
            return False
        return True

    def _parse(self, text: str) -> ParseResult:
        return self._parses.get_or_compute(text, lambda: self._parse_fn(text))


def _with_freshness(turn: Turn, market: Market) -> Turn:
    """An answer with a plan says how fresh its live prices are, and warns when some are old."""
    if turn.plan is not None and market.freshness:
        reply = turn.reply
        reply.assumptions.insert(0, market.freshness)
        if market.stale_warning:
            reply.warnings.append(market.stale_warning)
    return turn


def _default_parse_fn() -> ParseFn:
    from planner.parsing import parse

    return parse


def _without_memory(turn: Turn, error: StoreUnavailable, *, read: bool) -> Turn:
    turn.reply.warnings.append(error.user_sentence(read=read))
    return turn


def answer_once(text: str) -> Turn:
    """A one-off question outside any thread (`gpuplan ask`, `gpuplan render`); nothing is kept."""
    conversation = Conversation(MemoryStore(), limit_rate=False)
    return conversation.respond(ThreadKey(platform="console", thread="once"), text)
