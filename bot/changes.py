"""What changed between two plans of a thread: the job, memory, verdicts, time and cost."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from bot import format as fmt
from bot import phrases
from planner.errors import field_label
from planner.plan import Option, Plan

MAX_FLIP_LINES = 4


@dataclass(frozen=True)
class VerdictFlip:
    gpu_name: str
    count: int
    before: str
    after: str


@dataclass(frozen=True)
class PlanChanges:
    spec: dict[str, tuple[Any, Any]] = field(default_factory=dict)
    required_gib: tuple[float, float] | None = None
    flips: list[VerdictFlip] = field(default_factory=list)
    headline: tuple[str, Option | None, Option | None] | None = None  # (label, before, after)

    def lines(self) -> list[str]:
        """Plain sentences, e.g. "context: 4096 → 8192"; raw values so a reader can search them
        (in Chinese, enumerated values in the catalogs' words: 多卡切分：不切分… → FSDP…)."""
        out = [change_line(name, before, after) for name, (before, after) in self.spec.items()]
        if self.required_gib is not None:
            before_gib, after_gib = self.required_gib
            out.append(phrases.memory_changed(before_gib, after_gib))
        out += [
            phrases.field_changed(
                fmt.card(flip.gpu_name, flip.count),
                phrases.verdict_word(flip.before),
                phrases.verdict_word(flip.after),
            )
            for flip in self.flips[:MAX_FLIP_LINES]
        ]
        if len(self.flips) > MAX_FLIP_LINES:
            out.append(phrases.more_flips(len(self.flips) - MAX_FLIP_LINES))
        if self.headline is not None:
            out.append(_headline_line(*self.headline))
        return out


def change_line(name: str, before: Any, after: Any) -> str:
    """One changed JobSpec field as the answer says it: "context length: 4096 → 8192"."""
    return phrases.field_changed(field_label(name), _value(name, before), _value(name, after))


def diff_plans(before: Plan, after: Plan) -> PlanChanges:
    before_spec = before.spec.model_dump(mode="json")
    after_spec = after.spec.model_dump(mode="json")
    spec = {
        name: (before_spec.get(name), value)
        for name, value in after_spec.items()
        if before_spec.get(name) != value
    }
    memory = (before.memory.required_gib, after.memory.required_gib)
    before_options = {(o.gpu, o.count): o for o in before.options}
    flips = [
        VerdictFlip(option.gpu_name, option.count, old.verdict, option.verdict)
        for option in after.options
        if (old := before_options.get((option.gpu, option.count))) is not None
        and old.verdict != option.verdict
    ]
    return PlanChanges(
        spec=spec,
        required_gib=memory if abs(memory[1] - memory[0]) >= 0.05 else None,
        flips=flips,
        headline=_headline(before, after),
    )


def _headline(before: Plan, after: Plan) -> tuple[str, Option | None, Option | None] | None:
    """The option whose time and cost a reader follows: the card they named, else the cheapest."""
    if before.requested is not None and after.requested is not None:
        pair = (phrases.YOUR_CARD, before.requested, after.requested)
    else:
        pair = (phrases.CHEAPEST_RUN, before.recommendation.cheapest, after.recommendation.cheapest)
    label, old, new = pair
    if old is None and new is None:
        return None
    if old is not None and new is not None and _same_outcome(old, new):
        return None
    return label, old, new


def _same_outcome(old: Option, new: Option) -> bool:
    return (old.gpu, old.count, old.hours, old.cost_usd) == (
        new.gpu,
        new.count,
        new.hours,
        new.cost_usd,
    )


def _headline_line(label: str, old: Option | None, new: Option | None) -> str:
    def where(option: Option | None) -> str:
        return fmt.card(option.gpu_name, option.count) if option else phrases.NONE_FITS

    moved = where(new) if _card(old) != _card(new) else None
    figures = []
    if old is not None and new is not None:
        if old.hours is not None and new.hours is not None:
            delta = fmt.signed_hours(new.hours - old.hours)
            figures.append(
                phrases.figure_changed(fmt.hours(old.hours), fmt.hours(new.hours), delta)
            )
        if old.cost_usd is not None and new.cost_usd is not None:
            delta = fmt.signed(new.cost_usd - old.cost_usd, fmt.usd)
            figures.append(
                phrases.figure_changed(fmt.usd(old.cost_usd), fmt.usd(new.cost_usd), delta)
            )
    return phrases.headline_line(label, where(old), moved, figures)


def _card(option: Option | None) -> tuple[str, int] | None:
    return (option.gpu, option.count) if option else None


def _value(name: str, value: Any) -> str:
    if value is None:
        return phrases.DEFAULT_VALUE
    if isinstance(value, bool):
        return phrases.ON if value else phrases.OFF
    if isinstance(value, float):  # 6 significant digits: a scale of 1.1238151079839733 is 1.12382
        return str(int(value)) if value.is_integer() else f"{value:g}"
    if isinstance(value, list):
        return ",".join(map(str, value))
    word = phrases.value_word(name, value) if isinstance(value, str) else None
    return word if word is not None else str(value)
