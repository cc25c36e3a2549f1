"""Deciding and answering, the middle of a turn: what an intent means for the thread's job (a
new question, a follow-up, a change, undo, a report, a supplied model, a run config), planned
and put into words, with the thread's new history.

Everything a job is planned with is explicit: `Planning` carries the market of the workspace
the message came from and the model a config.json supplied, so nothing travels in context
variables.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from pydantic import ValidationError

from bot import phrases
from bot.cache import TTLCache
from bot.changes import diff_plans
from bot.configs import CONFIG_KEY, config_name
from bot.conversation.outcome import ConfigQuestion, Outcome, Turn
from bot.conversation.read import Asked, ParseFn
from bot.followups import (
    CARD_FIELDS,
    LINKED_FIELDS,
    Cheapest,
    Intent,
    Question,
    Reported,
    Reset,
    Undo,
    apply_patch,
    compared_cards,
    patch_from_fields,
    relative_patch,
)
from bot.patches import Patch
from bot.prices.market import Market
from bot.reply_builder import (
    comparison_lines,
    message_reply,
    move_to,
    nothing_cheaper_reply,
    plan_reply,
)
from bot.reports import keeps_reports
from bot.run_configs import ConfigRequest, config_reply, stack_patch
from bot.state.reports import Report
from bot.state.settings import SettingsStore
from bot.state.threads import SpecJson
from planner.anchor import confirms_report, estimate_of_kind, report_doubt
from planner.catalog.models import ModelArch, arch_from_hf_config
from planner.errors import PlanningError, validation_sentence
from planner.market.solve import pick_for_constraints, solve
from planner.parsing.result import ParseResult
from planner.plan import Plan
from planner.resolve.defaults import resolve
from planner.spec import JobSpec
from planner.words import Said

logger = logging.getLogger(__name__)

MAX_UNREAD_SHOWN = 3
PlanFn = Callable[[JobSpec], Plan]
# What a report measured, kept as its truth rather than in its job.
MEASUREMENT_FIELDS = {"measured_peak_gib", "measured_metric", "memory_scale"}


@dataclass(frozen=True)
class Planning:
    """How one message's jobs are planned: at its workspace's market (its provider preference
    applied), on the model a config.json supplied (None: the catalog's), through a cache that
    outlives the message (identical jobs within a minute are planned once). `plan_fn` replaces
    the planner (tests); it then plans without the market or the supplied model."""

    plans: TTLCache[Plan]
    market: Market
    arch: ModelArch | None = None
    plan_fn: PlanFn | None = None

    def on(self, arch: ModelArch) -> Planning:
        return replace(self, arch=arch)

    def plan(self, job: JobSpec, only_gpus: Sequence[str] | None = None) -> Plan:
        """`only_gpus`: a comparison's cards, the market kept among them (planner.market)."""
        arch = self.arch
        shape = (arch.name, arch.params_b, arch.num_layers, arch.hidden_size) if arch else None
        among = tuple(only_gpus) if only_gpus else None
        key = (job.model_dump_json(), self.market.key, shape, among)
        return self.plans.get_or_compute(key, lambda: self._make_plan(job, only_gpus))

    def _make_plan(self, job: JobSpec, only_gpus: Sequence[str] | None) -> Plan:
        if self.plan_fn is not None and only_gpus is None:
            return self.plan_fn(job)
        from planner.planner import make_plan

        # Answers draw a chart on the surfaces that can: it shows memory against context.
        return make_plan(
            job, self.arch, prices=self.market.book, context_curve=True, only_gpus=only_gpus
        )


@dataclass(frozen=True)
class Answers:
    """The answers to one message: `parse` reads text (cached), `settings` says whether the
    workspace keeps reports, `keep` keeps one (False when it could not)."""

    planning: Planning
    parse: ParseFn
    settings: SettingsStore
    keep: Callable[[Report], bool]

    def answer(
        self,
        history: Sequence[SpecJson],
        intent: Asked | ConfigRequest,
    ) -> Outcome:
        try:
            if isinstance(intent, ConfigQuestion):
                return self._config_question(intent)
            if isinstance(intent, JobSpec):
                plan = self.planning.plan(intent)
                return Outcome(Turn(plan_reply(plan), plan), history=(as_json(intent),))
            # A thread about a supplied model keeps planning that model, until a new job.
            config = history[-1].get(CONFIG_KEY) if history else None
            if not isinstance(config, dict) or isinstance(intent, Reset):
                return self._answer_intent(tuple(history), intent)
            on_model = replace(self, planning=self.planning.on(_arch_of(config)))
            outcome = on_model._answer_intent(tuple(history), intent)
            new = outcome.history
            if new and len(new) > len(history) and new[: len(history)] == tuple(history):
                new[-1].setdefault(CONFIG_KEY, config)  # the changed job, on the same model
            return outcome
        except PlanningError as error:
            return Outcome(Turn(message_reply("error", phrases.CANT_PLAN, error.message)))
        except ValidationError as error:  # a change that makes the job invalid, e.g. 0 epochs
            sentence = validation_sentence(error)
            return Outcome(Turn(message_reply("error", phrases.CANT_USE, sentence)))

    def _answer_intent(
        self, history: tuple[SpecJson, ...], intent: Intent | ConfigRequest | Patch
    ) -> Outcome:
        current = current_job(history)
        match intent:
            case Patch() if current is None:
                return _no_job_yet()
            case Patch():
                return self._patched(history, current, intent, notes=[])
            case Reset(question=""):
                return Outcome(Turn(message_reply("clarify", *phrases.STARTED_OVER)), history=())
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

    def _new_question(self, text: str) -> Outcome:
        result = self.parse(text)
        if result.spec is None:
            if result.error:
                return Outcome(Turn(message_reply("error", phrases.CANT_READ, result.error)))
            if result.doubt:
                return _one_question(result.doubt)
            if result.fields or result.relative:  # a change ("what if 8k ctx?") with no job
                return _no_job_yet()
            body = result.clarify or phrases.WHICH_MODEL_BODY
            return Outcome(Turn(message_reply("clarify", phrases.WHICH_MODEL_TITLE, body)))
        if result.asked:
            plan, job = self._solved(result.spec, result.asked)
            reply = plan_reply(plan, notes=result.assumptions)
            reply.warnings += _unread_warnings(result)
            return Outcome(Turn(reply, plan), history=(as_json(job),))
        cards = compared_cards(result.fields, result.alternative_fields)
        only_gpus = _card_keys(cards)
        plan = self.planning.plan(result.spec, only_gpus)
        compared = (plan, *(self.planning.plan(job) for job in result.alternatives))
        notes = [*result.assumptions, *_comparison_notes(result, cards)]
        reply = plan_reply(plan, notes=notes, only_gpus=only_gpus)
        if len(compared) > 1 and not cards:  # a card comparison is the narrowed table itself
            reply.comparison = comparison_lines(compared)
        reply.warnings += _unread_warnings(result)
        turn = Turn(reply, plan, alternatives=compared if len(compared) > 1 else ())
        return Outcome(turn, history=(as_json(result.spec),))

    def _followup(self, history: tuple[SpecJson, ...], current: JobSpec, text: str) -> Outcome:
        result = self.parse(text)
        if result.error:
            return Outcome(Turn(message_reply("error", phrases.CANT_READ, result.error)))
        if result.doubt:
            return _one_question(result.doubt)
        if result.unread:
            # A what-if changes exactly what was meant: if part of it is unreadable, change nothing.
            unread = [_clipped(part, 40) for part in result.unread[:MAX_UNREAD_SHOWN]]
            return Outcome(Turn(message_reply("clarify", *phrases.unread_change(unread))))
        cards = compared_cards(result.fields, result.alternative_fields)
        patch = patch_from_fields(result.fields)
        if result.relative:  # "double the context": of the thread's value, or the plan's default
            planned = self.planning.plan(_validated(apply_patch(as_json(current), patch))).spec
            changed, unknown = relative_patch(as_json(current), result.relative, planned)
            if unknown and not (patch or changed):
                return Outcome(Turn(message_reply("clarify", *phrases.nothing_to_scale(unknown))))
            patch |= changed
        if result.asked:  # "and the max batch?": solved on the thread's job, as changed
            base = _validated(apply_patch(as_json(current), patch))
            plan, job = self._solved(base, result.asked)
            # The answer sets what it solved: say so, as every change is said.
            changes = diff_plans(self.planning.plan(current), plan)
            reply = plan_reply(plan, changes=changes.lines(), notes=result.assumptions)
            unchanged = as_json(job) == as_json(current)
            return Outcome(
                Turn(reply, plan, changes.spec),
                history=None if unchanged else (*history, as_json(job)),
            )
        if cards:  # the cards are shown side by side; the job itself keeps its card
            patch = {name: value for name, value in patch.items() if name not in CARD_FIELDS}
            if not patch:
                only_gpus = _card_keys(cards)
                plan = self.planning.plan(current, only_gpus)
                notes = _comparison_notes(result, cards)
                return Outcome(Turn(plan_reply(plan, notes=notes, only_gpus=only_gpus), plan))
        if not patch:
            return Outcome(Turn(message_reply("clarify", *phrases.NO_CHANGE_READ)))
        notes = [*result.assumptions, *_comparison_notes(result, cards)]
        # A parsed follow-up is the same typed change a button carries.
        change = Patch(patch, label=text)
        return self._patched(history, current, change, notes=notes, only_gpus=_card_keys(cards))

    def _cheapest(self, history: tuple[SpecJson, ...], current: JobSpec, text: str) -> Outcome:
        result = self.parse(text)
        if result.error:
            return Outcome(Turn(message_reply("error", phrases.CANT_READ, result.error)))
        budget_usd = result.fields.get("budget_usd")
        budget_patch: SpecJson = {} if budget_usd is None else {"budget_usd": budget_usd}
        plan = self.planning.plan(_validated(apply_patch(as_json(current), budget_patch)))
        recommendation = plan.recommendation
        pick = recommendation.within_budget if budget_usd is not None else recommendation.cheapest
        if pick is None:
            return Outcome(Turn(nothing_cheaper_reply(plan)))
        change = Patch({**budget_patch, **move_to(pick)}, label=text)
        return self._patched(history, current, change, notes=[])

    def _patched(
        self,
        history: tuple[SpecJson, ...],
        current: JobSpec,
        patch: Patch,
        notes: Sequence[str],
        only_gpus: Sequence[str] | None = None,
    ) -> Outcome:
        job = _validated(apply_patch(as_json(current), dict(patch.fields)))
        before, after = self.planning.plan(current, only_gpus), self.planning.plan(job, only_gpus)
        changes = diff_plans(before, after)
        reply = plan_reply(
            after,
            changes=changes.lines() or [phrases.NOTHING_CHANGED],
            notes=notes,
            only_gpus=only_gpus,
        )
        unchanged = as_json(job) == as_json(current)
        return Outcome(
            Turn(reply, after, changes.spec),
            history=None if unchanged else (*history, as_json(job)),
        )

    def _undo(self, history: tuple[SpecJson, ...]) -> Outcome:
        if len(history) < 2:
            return Outcome(Turn(message_reply("clarify", *phrases.NOTHING_TO_UNDO)))
        undone, restored = _validated(history[-1]), _validated(history[-2])
        before, after = self.planning.plan(undone), self.planning.plan(restored)
        changes = diff_plans(before, after)
        reply = plan_reply(after, changes=[phrases.UNDID, *changes.lines()])
        return Outcome(Turn(reply, after, changes.spec), history=history[:-1])

    def _run_config(self, current: JobSpec, stack: str | None) -> Outcome:
        """The thread's job planned on `stack`, as the files that realise it (attached); the
        thread's job stays as it is."""
        try:
            patch = stack_patch(stack)
        except PlanningError as refused:  # a stack gpuplan writes no config for
            return Outcome(Turn(message_reply("error", phrases.NO_CONFIG_TITLE, refused.message)))
        plan = self.planning.plan(_validated(apply_patch(as_json(current), patch)))
        return Outcome(Turn(config_reply(plan, stack), plan))

    def _reported(
        self, history: tuple[SpecJson, ...], current: JobSpec, report: Reported
    ) -> Outcome:
        """Re-anchor the thread's job on a measured peak (planner.anchor) and keep the report
        where the workspace allows it; what-ifs after it scale from the measurement."""
        result = self.parse(report.text)
        if result.error:
            return Outcome(Turn(message_reply("error", phrases.CANT_READ, result.error)))
        patch = patch_from_fields(result.fields)
        if report.oom:
            patch |= {"measured_metric": "oom", "measured_peak_gib": None}
        patch["memory_scale"] = None  # decided afresh from this measurement
        job = _validated(apply_patch(as_json(current), patch))
        doubt = (
            None if confirms_report(report.text) else report_doubt(resolve(job, self.planning.arch))
        )
        if doubt is not None:
            # Asked, not applied: the thread's job and history stay as they were.
            return Outcome(Turn(message_reply("clarify", phrases.REPORT_DOUBT, doubt)))
        unmeasured = job.model_copy(update=dict.fromkeys(MEASUREMENT_FIELDS))
        plan = self.planning.plan
        estimate, before, after = plan(unmeasured), plan(current), plan(job)
        scale = after.spec.memory_scale or 1.0
        if report.oom and scale < (current.memory_scale or 1.0):
            # An OOM says "at least this much": it never undoes a measured peak's scale.
            scale = current.memory_scale or 1.0
            after = plan(job.model_copy(update={"memory_scale": scale}))
        job = job.model_copy(update={"memory_scale": scale if scale != 1.0 else None})
        kept = keeps_reports(self.settings, report.scope) and self.keep(
            _report(report.scope, job, estimate)
        )
        changes = diff_plans(before, after)
        lines = [phrases.report_kept(kept), *changes.lines()]
        reply = plan_reply(after, changes=lines, notes=result.assumptions)
        return Outcome(Turn(reply, after, changes.spec), history=(*history, as_json(job)))

    def _solved(self, spec: JobSpec, asked: str) -> tuple[Plan, JobSpec]:
        """An inverse question: the forward plan at the answer, carrying the answer, and the job
        at the answer (the thread's job from now on)."""
        if asked == "gpu":
            plan = self.planning.plan(spec)
            return plan.model_copy(update={"solve": pick_for_constraints(plan)}), spec
        job, answer = solve(spec, asked)
        return self.planning.plan(job).model_copy(update={"solve": answer}), job

    def _config_question(self, question: ConfigQuestion) -> Outcome:
        """A job on a supplied model: the config says the model, the words around it the job."""
        arch = _arch_of(question.config)  # a JSON that is not a config raises, naming the gap
        result = self.parse(question.text) if question.text else None
        if result is not None and result.error:
            return Outcome(Turn(message_reply("error", phrases.CANT_READ, result.error)))
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
        plan = self.planning.on(arch).plan(job)
        reply = plan_reply(plan, notes=notes)
        return Outcome(Turn(reply, plan), history=({**as_json(job), CONFIG_KEY: question.config},))


def _arch_of(config: dict[str, Any]) -> ModelArch:
    try:
        return arch_from_hf_config(config, config_name(config))
    except PlanningError as error:
        raise PlanningError(phrases.not_a_config(error.message), field="config") from None


def as_json(job: JobSpec) -> SpecJson:
    return job.model_dump(mode="json", exclude_none=True)


def _validated(job_json: SpecJson) -> JobSpec:
    return JobSpec.model_validate(job_json)


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


def current_job(history: Sequence[SpecJson]) -> JobSpec | None:
    if not history:
        return None
    try:
        return _validated(history[-1])
    except ValidationError:
        logger.warning("a stored job no longer validates; treating the thread as new")
        return None


def _one_question(doubt: str) -> Outcome:
    """A reading too unsure to plan from: ask, and leave the thread's job as it is."""
    return Outcome(Turn(message_reply("clarify", phrases.ONE_QUESTION_TITLE, doubt)))


def _no_job_yet() -> Outcome:
    return Outcome(Turn(message_reply("clarify", *phrases.NO_JOB_YET)))


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


def _clipped(part: str, limit: int) -> str:
    """The asker's leftover words cut to `limit`; our own notes (catalog sentences, which know
    their Chinese) whole."""
    return part if isinstance(part, Said) else part[:limit]


def _unread_warnings(result: ParseResult) -> list[str]:
    unread = [_clipped(part, 80) for part in result.unread[:MAX_UNREAD_SHOWN]]
    return phrases.did_not_understand(unread)
