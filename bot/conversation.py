"""The conversation: a question or a follow-up in a thread → a Reply, the same on every surface.

A thread keeps the JobSpec history of what its users said (not the filled-in plan), so a follow-up
such as "what if 8k ctx?" patches the job and every default is chosen afresh for the new job.
"""

from __future__ import annotations

import contextvars
import logging
import os
import threading
import time
import unicodedata
import weakref
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import Any

from pydantic import ValidationError

from bot import phrases
from bot.backoff import Backoff
from bot.cache import TTLCache
from bot.changes import diff_plans
from bot.configs import CONFIG_KEY, NotJson, config_name, split_config
from bot.followups import (
    CARD_FIELDS,
    LINKED_FIELDS,
    Cheapest,
    Help,
    Intent,
    Question,
    Reported,
    Reset,
    Undo,
    apply_patch,
    compared_cards,
    patch_from_fields,
    read_intent,
    relative_patch,
)
from bot.language import (
    LANGUAGE_SETTING,
    language_default,
    localize,
    reply_language,
)
from bot.patches import (
    PATCH_ID_PREFIX,
    Button,
    MemoryPatchStore,
    Message,
    Patch,
    PatchStore,
    open_patch_store,
)
from bot.prices.market import Market, MarketPrices
from bot.prices.preferences import ProvidersCommand
from bot.prices.store import open_price_store
from bot.ratelimit import Limiter, open_rate_limiter, wait_text
from bot.reply import Reply
from bot.reply_builder import (
    comparison_lines,
    help_reply,
    message_reply,
    move_to,
    plan_reply,
    providers_reply,
)
from bot.reports import (
    Report,
    ReportsCommand,
    ReportStore,
    keeps_reports,
    open_report_store,
    save_keep_reports,
)
from bot.run_configs import ConfigRequest, config_reply, stack_patch
from bot.settings import (
    SETTINGS_ERRORS,
    MemorySettings,
    SettingsStore,
    open_settings_store,
    scope_of,
)
from bot.settings_commands import read_settings_command
from bot.store import MemoryStore, SpecJson, StateStore, StoreUnavailable, open_thread_store
from bot.threads import ThreadKey
from planner.anchor import confirms_report, estimate_of_kind, report_doubt
from planner.catalog.models import ModelArch, arch_from_hf_config
from planner.errors import PlanningError, validation_sentence
from planner.market.solve import pick_for_constraints, solve
from planner.parsing.assemble import MAX_INPUT_CHARS
from planner.parsing.report import oom_reported, without_oom_report
from planner.parsing.result import ParseResult
from planner.plan import Plan
from planner.resolve.defaults import resolve
from planner.spec import JobSpec

logger = logging.getLogger(__name__)

MAX_HISTORY = 20  # how many steps "undo" can go back
# A writer that lost the compare-and-set waits a jittered moment and answers again from the
# winner's job, for up to a few seconds: well after Slack's and Discord's acks, so only the answer
# waits (bench/cas_contention.py: with 8 writers on one thread none is refused).
SAVE_BACKOFF = Backoff(first_delay_s=0.002, max_delay_s=0.1, budget_s=3.0)
MAX_UNREAD_SHOWN = 3
CACHE_TTL_S = 60.0
SETTINGS_TTL_S = 5.0

PlanFn = Callable[[JobSpec], Plan]
ParseFn = Callable[[str], ParseResult]
# The market the answer being built uses (its workspace's provider preference applied): set for
# one message in `_respond`, read where plans are made, so the planning steps need not pass it.
_MARKET: contextvars.ContextVar[Market | None] = contextvars.ContextVar("market", default=None)
# The model a config.json supplied, while a job on it is planned.
_ARCH: contextvars.ContextVar[ModelArch | None] = contextvars.ContextVar("arch", default=None)


@dataclass(frozen=True)
class ConfigQuestion:
    """A message carrying a config.json: the model, and the words around it (the job)."""

    config: dict[str, Any]
    text: str


def _arch_of(config: dict[str, Any]) -> ModelArch:
    try:
        return arch_from_hf_config(config, config_name(config))
    except PlanningError as error:
        raise PlanningError(phrases.not_a_config(error.message), field="config") from None


@dataclass(frozen=True)
class Turn:
    """One answer: the Reply, and for the machine-readable forms the plan and what changed."""

    reply: Reply
    plan: Plan | None = None
    changes: dict[str, tuple[Any, Any]] = field(default_factory=dict)
    # Every job of a comparison ("7B or 13B", "lora vs qlora"), planned, in the order asked;
    # empty for a single job.
    alternatives: tuple[Plan, ...] = ()


@dataclass(frozen=True)
class _Outcome:
    turn: Turn
    history: tuple[SpecJson, ...] | None = None  # the thread's new history; None leaves it as is


class Conversation:
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
    ) -> None:
        self.store = store if store is not None else open_thread_store()
        if patches is None:
            one_off = isinstance(self.store, MemoryStore)
            patches = MemoryPatchStore() if one_off else open_patch_store()
        self.patches = patches
        # Prices come from the snapshots the scheduled refresh saves in the state store.
        self.prices = prices if prices is not None else MarketPrices(open_price_store())
        if settings is None:
            one_off = isinstance(self.store, MemoryStore)
            settings = MemorySettings() if one_off else open_settings_store()
        self.settings = settings
        self._plan_fn = plan_fn or self._plan_at_market
        self._parse_fn = parse_fn or _default_parse_fn()
        self._limiter = (rate_limiter or open_rate_limiter()) if limit_rate else None
        # Identical jobs within a minute (a repeated question, the "before" side of a follow-up)
        # are planned once.
        self._plans: TTLCache[Plan] = TTLCache(ttl_s=cache_ttl_s)
        self._parses: TTLCache[ParseResult] = TTLCache(ttl_s=cache_ttl_s)
        self._settings_read: TTLCache[frozenset[str] | None] = TTLCache(ttl_s=SETTINGS_TTL_S)
        self._language_read: TTLCache[str | None] = TTLCache(ttl_s=SETTINGS_TTL_S)
        self._locks = _KeyLocks()
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
        language = reply_language(_spoken(text), self._language_of(key))
        return replace(turn, reply=localize(turn.reply, language))

    def _priced(self, key: ThreadKey, text: str | Patch | JobSpec, user: str, admin: bool) -> Turn:
        if isinstance(text, str):  # workspace commands are typed, never a button
            command = self._workspace_command(key, _clean(text), user, admin)
            if command is not None:
                return command

        try:
            market = self.prices.market(self._providers_of(key))
        except PlanningError as error:  # a bad GPUPLAN_PROVIDERS or GPUPLAN_PRICES
            return Turn(message_reply("error", phrases.CANT_PRICE_TITLE, error.message))
        token = _MARKET.set(market)
        try:
            return _with_freshness(self._respond(key, text, user), market)
        finally:
            _MARKET.reset(token)

    def _workspace_command(self, key: ThreadKey, text: str, user: str, admin: bool) -> Turn | None:
        """A settings command (bot.settings_commands' table), answered; None for anything else."""
        command = read_settings_command(text)
        if command is None:
            return None
        answer = {
            "language": self._set_language,
            "providers": self._providers,
            "reports": self._keeping_reports,
        }[command.name]
        return Turn(answer(key, command.parsed, user, admin))

    def _language_of(self, key: ThreadKey) -> str | None:
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
        try:
            self.settings.put(scope_of(key), LANGUAGE_SETTING, value, by=user)
        except SETTINGS_ERRORS as error:
            logger.warning("saving settings for %s failed: %s", scope_of(key), error)
            return message_reply("error", *phrases.SETTING_NOT_SAVED)
        self._language_read.clear()
        return message_reply("help", *phrases.language_set(value))

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

    def _respond(self, key: ThreadKey, text: str | Patch | JobSpec, user: str) -> Turn:
        config = None
        if isinstance(text, str):
            try:
                config, text = split_config(_clean(text))
            except NotJson as error:
                return Turn(message_reply("error", *phrases.not_json(str(error))))
            if not text and config is None:
                return Turn(message_reply("clarify", *phrases.ASK_SOMETHING))
            if len(text) > MAX_INPUT_CHARS:
                # The parser owns the limit and says why; such a text is not worth caching.
                refusal = self._parse_fn(text).error or phrases.TOO_LONG_BODY
                return Turn(message_reply("error", phrases.TOO_LONG_TITLE, refusal))
        if self._limiter is not None:
            scope = f"{key.platform}/{key.workspace}"
            wait_s = self._limiter.acquire(
                f"{scope}/{user}" if user else "", f"{scope}/{key.channel}"
            )
            if wait_s > 0:
                return Turn(message_reply("rate_limited", *phrases.rate_limited(wait_text(wait_s))))
        intent = read_intent(text) if isinstance(text, str) else text
        if config is not None:  # a supplied model starts a new job, even inside a thread
            intent = ConfigQuestion(config, text)
        if isinstance(intent, Help):
            return Turn(help_reply())
        if isinstance(intent, Question) and self._is_report(text):
            oom = oom_reported(text)
            said = without_oom_report(text) if oom else text
            intent = Reported(text=said, oom=oom, scope=scope_of(key))
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
                    return _without_memory(self._answer((), intent).turn, error, read=True)
                outcome = self._answer(state.history, intent)
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

    def _answer(
        self,
        history: Sequence[SpecJson],
        intent: Intent | ConfigRequest | Patch | ConfigQuestion | JobSpec,
    ) -> _Outcome:
        try:
            if isinstance(intent, ConfigQuestion):
                return self._config_question(intent)
            if isinstance(intent, JobSpec):
                plan = self._plan(intent)
                return _Outcome(Turn(plan_reply(plan), plan), history=(_as_json(intent),))
            # A thread about a supplied model keeps planning that model, until a new job.
            config = history[-1].get(CONFIG_KEY) if history else None
            if not isinstance(config, dict) or isinstance(intent, Reset):
                return self._answer_intent(tuple(history), intent)
            token = _ARCH.set(_arch_of(config))
            try:
                outcome = self._answer_intent(tuple(history), intent)
            finally:
                _ARCH.reset(token)
            new = outcome.history
            if new and len(new) > len(history) and new[: len(history)] == tuple(history):
                new[-1].setdefault(CONFIG_KEY, config)  # the changed job, on the same model
            return outcome
        except PlanningError as error:
            return _Outcome(Turn(message_reply("error", phrases.CANT_PLAN, error.message)))
        except ValidationError as error:  # a change that makes the job invalid, e.g. 0 epochs
            sentence = validation_sentence(error)
            return _Outcome(Turn(message_reply("error", phrases.CANT_USE, sentence)))

    def _answer_intent(
        self, history: tuple[SpecJson, ...], intent: Intent | ConfigRequest | Patch
    ) -> _Outcome:
        current = _current_job(history)
        match intent:
            case Patch() if current is None:
                return _no_job_yet()
            case Patch():
                return self._patched(history, current, intent, notes=[])
            case Reset(question=""):
                return _Outcome(Turn(message_reply("clarify", *phrases.STARTED_OVER)), history=())
            case Reset(question=question):
                return self._new_question(question)
            case Question(text=text) | Cheapest(text=text) | Reported(text=text) if current is None:
                return self._new_question(text)
            case _ if current is None:
                return _no_job_yet()
            case Undo():
                return self._undo(history)
            case ConfigRequest(stack=stack):
                return self._run_config(current, stack)
            case Cheapest(text=text):
                return self._cheapest(history, current, text)
            case Question(text=text):
                return self._followup(history, current, text)
            case Reported():
                return self._reported(history, current, intent)
        raise AssertionError(f"unhandled intent {intent!r}")

    def _new_question(self, text: str) -> _Outcome:
        result = self._parse(text)
        if result.spec is None:
            if result.error:
                return _Outcome(Turn(message_reply("error", phrases.CANT_READ, result.error)))
            if result.doubt:
                return _one_question(result.doubt)
            if result.fields or result.relative:  # a change ("what if 8k ctx?") with no job
                return _no_job_yet()
            body = result.clarify or phrases.WHICH_MODEL_BODY
            return _Outcome(Turn(message_reply("clarify", phrases.WHICH_MODEL_TITLE, body)))
        if result.asked:
            plan, job = self._solved(result.spec, result.asked)
            reply = plan_reply(plan, notes=result.assumptions)
            reply.warnings += _unread_warnings(result)
            return _Outcome(Turn(reply, plan), history=(_as_json(job),))
        plan = self._plan(result.spec)
        compared = (plan, *(self._plan(job) for job in result.alternatives))
        cards = compared_cards(result.fields, result.alternative_fields)
        notes = [*result.assumptions, *_comparison_notes(result, cards)]
        reply = plan_reply(plan, notes=notes, only_gpus=_card_keys(cards))
        if len(compared) > 1 and not cards:  # a card comparison is the narrowed table itself
            reply.comparison = comparison_lines(compared)
        reply.warnings += _unread_warnings(result)
        turn = Turn(reply, plan, alternatives=compared if len(compared) > 1 else ())
        return _Outcome(turn, history=(_as_json(result.spec),))

    def _followup(self, history: tuple[SpecJson, ...], current: JobSpec, text: str) -> _Outcome:
        result = self._parse(text)
        if result.error:
            return _Outcome(Turn(message_reply("error", phrases.CANT_READ, result.error)))
        if result.doubt:
            return _one_question(result.doubt)
        if result.unread:
            # A what-if changes exactly what was meant: if part of it is unreadable, change nothing.
            unread = [part[:40] for part in result.unread[:MAX_UNREAD_SHOWN]]
            return _Outcome(Turn(message_reply("clarify", *phrases.unread_change(unread))))
        cards = compared_cards(result.fields, result.alternative_fields)
        patch = patch_from_fields(result.fields)
        if result.relative:  # "double the context": of the thread's value, or the plan's default
            planned = self._plan(_validated(apply_patch(_as_json(current), patch))).spec
            changed, unknown = relative_patch(_as_json(current), result.relative, planned)
            if unknown and not (patch or changed):
                return _Outcome(Turn(message_reply("clarify", *phrases.nothing_to_scale(unknown))))
            patch |= changed
        if result.asked:  # "and the max batch?": solved on the thread's job, as changed
            base = _validated(apply_patch(_as_json(current), patch))
            plan, job = self._solved(base, result.asked)
            reply = plan_reply(plan, notes=result.assumptions)
            unchanged = _as_json(job) == _as_json(current)
            return _Outcome(
                Turn(reply, plan), history=None if unchanged else (*history, _as_json(job))
            )
        if cards:  # the cards are shown side by side; the job itself keeps its card
            patch = {name: value for name, value in patch.items() if name not in CARD_FIELDS}
            if not patch:
                plan = self._plan(current)
                notes = _comparison_notes(result, cards)
                return _Outcome(
                    Turn(plan_reply(plan, notes=notes, only_gpus=_card_keys(cards)), plan)
                )
        if not patch:
            return _Outcome(Turn(message_reply("clarify", *phrases.NO_CHANGE_READ)))
        notes = [*result.assumptions, *_comparison_notes(result, cards)]
        # A parsed follow-up is the same typed change a button carries.
        change = Patch(patch, label=text)
        return self._patched(history, current, change, notes=notes, only_gpus=_card_keys(cards))

    def _cheapest(self, history: tuple[SpecJson, ...], current: JobSpec, text: str) -> _Outcome:
        result = self._parse(text)
        if result.error:
            return _Outcome(Turn(message_reply("error", phrases.CANT_READ, result.error)))
        budget_usd = result.fields.get("budget_usd")
        budget_patch: SpecJson = {} if budget_usd is None else {"budget_usd": budget_usd}
        plan = self._plan(_validated(apply_patch(_as_json(current), budget_patch)))
        recommendation = plan.recommendation
        pick = recommendation.within_budget if budget_usd is not None else recommendation.cheapest
        if pick is None:
            nothing = phrases.nothing_cheaper(within_budget=budget_usd is not None)
            return _Outcome(Turn(message_reply("clarify", *nothing)))
        change = Patch({**budget_patch, **move_to(pick)}, label=text)
        return self._patched(history, current, change, notes=[])

    def _patched(
        self,
        history: tuple[SpecJson, ...],
        current: JobSpec,
        patch: Patch,
        notes: Sequence[str],
        only_gpus: Sequence[str] | None = None,
    ) -> _Outcome:
        job = _validated(apply_patch(_as_json(current), dict(patch.fields)))
        before, after = self._plan(current), self._plan(job)
        changes = diff_plans(before, after)
        reply = plan_reply(
            after,
            changes=changes.lines() or [phrases.NOTHING_CHANGED],
            notes=notes,
            only_gpus=only_gpus,
        )
        unchanged = _as_json(job) == _as_json(current)
        return _Outcome(
            Turn(reply, after, changes.spec),
            history=None if unchanged else (*history, _as_json(job)),
        )

    def _undo(self, history: tuple[SpecJson, ...]) -> _Outcome:
        if len(history) < 2:
            return _Outcome(Turn(message_reply("clarify", *phrases.NOTHING_TO_UNDO)))
        undone, restored = _validated(history[-1]), _validated(history[-2])
        before, after = self._plan(undone), self._plan(restored)
        changes = diff_plans(before, after)
        reply = plan_reply(after, changes=[phrases.UNDID, *changes.lines()])
        return _Outcome(Turn(reply, after, changes.spec), history=history[:-1])

    def _run_config(self, current: JobSpec, stack: str | None) -> _Outcome:
        """The thread's job planned on `stack`, as the files that realise it (attached); the
        thread's job stays as it is."""
        try:
            patch = stack_patch(stack)
        except PlanningError as refused:  # a stack gpuplan writes no config for
            return _Outcome(Turn(message_reply("error", phrases.NO_CONFIG_TITLE, refused.message)))
        plan = self._plan(_validated(apply_patch(_as_json(current), patch)))
        return _Outcome(Turn(config_reply(plan, stack), plan))

    def _is_report(self, text: str) -> bool:
        return oom_reported(text) or "measured_peak_gib" in self._parse(text).fields

    def _reported(
        self, history: tuple[SpecJson, ...], current: JobSpec, report: Reported
    ) -> _Outcome:
        """Re-anchor the thread's job on a measured peak (planner.anchor) and keep the report
        where the workspace allows it; what-ifs after it scale from the measurement."""
        result = self._parse(report.text)
        if result.error:
            return _Outcome(Turn(message_reply("error", phrases.CANT_READ, result.error)))
        patch = patch_from_fields(result.fields)
        if report.oom:
            patch |= {"measured_metric": "oom", "measured_peak_gib": None}
        patch["memory_scale"] = None  # decided afresh from this measurement
        job = _validated(apply_patch(_as_json(current), patch))
        doubt = None if confirms_report(report.text) else report_doubt(resolve(job, _ARCH.get()))
        if doubt is not None:
            # Asked, not applied: the thread's job and history stay as they were.
            return _Outcome(Turn(message_reply("clarify", phrases.REPORT_DOUBT, doubt)))
        unmeasured = job.model_copy(update=dict.fromkeys(MEASUREMENT_FIELDS))
        estimate, before, after = self._plan(unmeasured), self._plan(current), self._plan(job)
        scale = after.spec.memory_scale or 1.0
        if report.oom and scale < (current.memory_scale or 1.0):
            # An OOM says "at least this much": it never undoes a measured peak's scale.
            scale = current.memory_scale or 1.0
            after = self._plan(job.model_copy(update={"memory_scale": scale}))
        job = job.model_copy(update={"memory_scale": scale if scale != 1.0 else None})
        kept = keeps_reports(self.settings, report.scope) and self._keep(
            _report(report.scope, job, estimate)
        )
        changes = diff_plans(before, after)
        lines = [phrases.report_kept(kept), *changes.lines()]
        reply = plan_reply(after, changes=lines, notes=result.assumptions)
        return _Outcome(Turn(reply, after, changes.spec), history=(*history, _as_json(job)))

    def _keep(self, report: Report) -> bool:
        """Keep a report; a store that fails loses the report, never the answer."""
        try:
            if self._reports is None:
                self._reports = open_report_store()
            self._reports.add(report)
        except Exception:
            logger.exception("could not keep a run report for %s", report.scope)
            return False
        return True

    def _solved(self, spec: JobSpec, asked: str) -> tuple[Plan, JobSpec]:
        """An inverse question: the forward plan at the answer, carrying the answer, and the job
        at the answer (the thread's job from now on)."""
        if asked == "gpu":
            plan = self._plan(spec)
            return plan.model_copy(update={"solve": pick_for_constraints(plan)}), spec
        job, answer = solve(spec, asked)
        return self._plan(job).model_copy(update={"solve": answer}), job

    def _plan(self, job: JobSpec) -> Plan:
        market, arch = _MARKET.get(), _ARCH.get()
        shape = (arch.name, arch.params_b, arch.num_layers, arch.hidden_size) if arch else None
        key = (job.model_dump_json(), market.key if market else None, shape)
        return self._plans.get_or_compute(key, lambda: self._plan_fn(job))

    def _plan_at_market(self, job: JobSpec) -> Plan:
        from planner.planner import make_plan

        market = _MARKET.get()
        prices = market.book if market else None
        # Answers draw a chart on the surfaces that can: it shows memory against context.
        return make_plan(job, _ARCH.get(), prices=prices, context_curve=True)

    def _config_question(self, question: ConfigQuestion) -> _Outcome:
        """A job on a supplied model: the config says the model, the words around it the job."""
        arch = _arch_of(question.config)  # a JSON that is not a config raises, naming the gap
        result = self._parse(question.text) if question.text else None
        if result is not None and result.error:
            return _Outcome(Turn(message_reply("error", phrases.CANT_READ, result.error)))
        said = result.fields if result is not None else {}
        fields = {
            name: value
            for name, value in said.items()
            if name in JobSpec.model_fields and name not in LINKED_FIELDS["model"] + ("model",)
        }
        job = JobSpec.model_validate({"method": "lora", **fields, "model": arch.name})
        notes = list(result.assumptions) if result is not None else []
        if "method" not in said:
            notes.append(phrases.CONFIG_DEFAULT_LORA)
        token = _ARCH.set(arch)
        try:
            plan = self._plan(job)
        finally:
            _ARCH.reset(token)
        reply = plan_reply(plan, notes=notes)
        return _Outcome(
            Turn(reply, plan), history=({**_as_json(job), CONFIG_KEY: question.config},)
        )

    def _providers_of(self, key: ThreadKey) -> frozenset[str] | None:
        """The workspace's provider preference; read from the store at most every few seconds
        (a change made through this process applies at once, through another within that)."""
        from bot.prices.preferences import PROVIDERS_ENV, providers_for

        scope = scope_of(key)

        return self._settings_read.get_or_compute(
            (scope, os.environ.get(PROVIDERS_ENV)), lambda: providers_for(self.settings, scope)
        )

    def _providers(
        self, key: ThreadKey, command: ProvidersCommand, user: str, admin: bool
    ) -> Reply:
        from bot.prices.preferences import env_providers, save_providers

        if command.error:
            return message_reply("error", phrases.UNKNOWN_PROVIDER_TITLE, command.error)
        if command.change:
            if not admin:
                return message_reply("error", *phrases.ONLY_ADMINS_PROVIDERS)
            try:
                save_providers(self.settings, scope_of(key), command.providers, by=user)
            except SETTINGS_ERRORS as error:
                logger.warning("saving settings for %s failed: %s", scope_of(key), error)
                return message_reply("error", *phrases.SETTING_NOT_SAVED)
            self._settings_read.clear()
        snapshot = self.prices.snapshot()
        quoted = {offer.provider for offer in snapshot.offers} if snapshot else set()
        return providers_reply(
            self._providers_of(key), env_providers(), quoted, changed=command.change
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
            try:
                save_keep_reports(self.settings, scope, command.keep, by=user)
            except SETTINGS_ERRORS as error:
                logger.warning("saving settings for %s failed: %s", scope, error)
                return message_reply("error", *phrases.SETTING_NOT_SAVED)
        kept = keeps_reports(self.settings, scope)
        return message_reply("help", *phrases.reports_setting(kept, changed=command.change))

    def _parse(self, text: str) -> ParseResult:
        return self._parses.get_or_compute(text, lambda: self._parse_fn(text))


class _KeyLock:
    __slots__ = ("__weakref__", "lock")

    def __init__(self) -> None:
        self.lock = threading.Lock()


class _KeyLocks:
    """One lock per thread key, dropped once no one holds or waits on it."""

    def __init__(self) -> None:
        self._locks: weakref.WeakValueDictionary[str, _KeyLock] = weakref.WeakValueDictionary()
        self._guard = threading.Lock()

    @contextmanager
    def hold(self, key: str) -> Iterator[None]:
        with self._guard:
            entry = self._locks.get(key)
            if entry is None:
                entry = self._locks[key] = _KeyLock()
        with entry.lock:
            yield


def _with_freshness(turn: Turn, market: Market) -> Turn:
    """An answer with a plan says how fresh its live prices are, and warns when some are old."""
    if turn.plan is not None and market.freshness:
        reply = turn.reply
        reply.assumptions.insert(0, phrases.prices_fresh(market.freshness))
        if market.stale_warning:
            reply.warnings.append(market.stale_warning)
    return turn


def _default_parse_fn() -> ParseFn:
    from planner.parsing import parse

    return parse


def _spoken(message: Message | JobSpec) -> str:
    """The words a message was said in, for choosing the answer's language."""
    if isinstance(message, JobSpec):
        return ""
    if isinstance(message, Button):
        return message.text
    return message.label if isinstance(message, Patch) else message


def _clean(text: str) -> str:
    """Drop control and invisible formatting characters (zero-width, bidi overrides) that only
    hide what a message says; keep line breaks and tabs."""
    return "".join(
        char for char in text if char in "\n\t" or unicodedata.category(char) not in ("Cc", "Cf")
    ).strip()


def _as_json(job: JobSpec) -> SpecJson:
    return job.model_dump(mode="json", exclude_none=True)


def _validated(job_json: SpecJson) -> JobSpec:
    return JobSpec.model_validate(job_json)


# What a report measured, kept as its truth rather than in its job.
MEASUREMENT_FIELDS = {"measured_peak_gib", "measured_metric", "memory_scale"}


def _report(scope: str, job: JobSpec, estimate: Plan) -> Report:
    """What a kept report records: the job as said, our estimate of the same kind before
    re-anchoring, and the measurement."""
    metric = job.measured_metric or "unknown"
    memory = estimate.memory
    estimated_gib = estimate_of_kind(memory, metric)
    requested = estimate.requested
    return Report(
        scope=scope,
        spec=job.model_dump(mode="json", exclude_none=True, exclude=MEASUREMENT_FIELDS),
        planned=estimate.spec.model_dump(mode="json", exclude_none=True),
        metric=metric,
        measured_gib=job.measured_peak_gib,
        estimated_gib=estimated_gib,
        range_gib=memory.range_gib,
        card_gib=requested.usable_gib if requested is not None else None,
        reported_at=time.time(),
    )


def _current_job(history: Sequence[SpecJson]) -> JobSpec | None:
    if not history:
        return None
    try:
        return _validated(history[-1])
    except ValidationError:
        logger.warning("a stored job no longer validates; treating the thread as new")
        return None


def _without_memory(turn: Turn, error: StoreUnavailable, *, read: bool) -> Turn:
    turn.reply.warnings.append(error.user_sentence(read=read))
    return turn


def _one_question(doubt: str) -> _Outcome:
    """A reading too unsure to plan from: ask, and leave the thread's job as it is."""
    return _Outcome(Turn(message_reply("clarify", phrases.ONE_QUESTION_TITLE, doubt)))


def _no_job_yet() -> _Outcome:
    return _Outcome(Turn(message_reply("clarify", *phrases.NO_JOB_YET)))


def _comparison_notes(result: ParseResult, cards: Sequence[str]) -> list[str]:
    if cards:
        return [phrases.comparing_cards(cards)]
    if result.alternatives:
        return [phrases.comparing_jobs(len(result.alternatives) + 1)]
    if result.alternative_fields:
        return [phrases.first_of_variants(len(result.alternative_fields) + 1)]
    return []


def _card_keys(names: Sequence[str]) -> list[str] | None:
    """Catalog keys of the compared cards, for narrowing the table; None when not comparing."""
    if not names:
        return None
    from planner.catalog.gpus import resolve_gpu

    return [card.key for name in names if (card := resolve_gpu(name)) is not None]


def _unread_warnings(result: ParseResult) -> list[str]:
    unread = [part[:80] for part in result.unread[:MAX_UNREAD_SHOWN]]
    return [phrases.did_not_understand(unread)] if unread else []


def answer_once(text: str) -> Turn:
    """A one-off question outside any thread (`gpuplan ask`, `gpuplan render`); nothing is kept."""
    conversation = Conversation(MemoryStore(), limit_rate=False)
    return conversation.respond(ThreadKey(platform="console", thread="once"), text)
