"""Where a plan's number comes from: the function that computes it, read back from the code.

Each figure a Plan reports is computed by a small pure function whose docstring states its formula
and source. An explanation is that docstring, the docstring of its module (where the model's
constants are argued), the function's place in the code and the plan's value, so the words never
drift from the arithmetic: there is no second, hand-written copy of any formula here, only the map
from a figure's name to the function that computes it.
"""

from __future__ import annotations

import inspect
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, Field

from planner.estimate import throughput
from planner.estimate.memory import components, estimate, host, placement
from planner.market import options
from planner.plan import MemoryBreakdown, Option, Plan

_ROOT = Path(__file__).resolve().parents[1]
_NAMED = re.compile(r"`(\w+)`")


class Explanation(BaseModel):
    """One figure of a plan, with the formula and source that produce it."""

    component: str
    value: float | list[float] | None = Field(
        description="the plan's figure (GiB per GPU, tokens/s, hours or USD); null when the "
        "plan has none (e.g. no priced run)"
    )
    unit: str
    formula: str = Field(description="the computing function's docstring: formula and source")
    function: str = Field(description="module.function that computes it")
    where: str = Field(description="file:line of that function in the gpuplan source")
    background: str = Field(
        description="the module's docstring: the model around the formula and its constants"
    )
    field_note: str = Field("", description="the Plan field's own description, when it has one")
    details: dict[str, str] = Field(
        {}, description="the docstrings of the functions the formula names in `backticks`"
    )


@dataclass(frozen=True)
class _Figure:
    function: Callable[..., object]
    value: Callable[[Plan], float | list[float] | None]
    unit: str
    field_note: str = ""


def _breakdown(name: str) -> Callable[[Plan], float]:
    return lambda plan: getattr(plan.memory.breakdown_gib, name)


def _run(plan: Plan) -> Option | None:
    """The run a plan's time and cost are quoted for: the card asked about, else the cheapest."""
    picks = plan.recommendation
    return plan.requested or picks.cheapest or picks.fastest


def _of_run(name: str) -> Callable[[Plan], float | None]:
    return lambda plan: getattr(run, name) if (run := _run(plan)) is not None else None


def _note(model: type[BaseModel], name: str) -> str:
    return model.model_fields[name].description or ""


_MEMORY_FUNCTIONS: dict[str, Callable[..., object]] = {
    "weights": components.weights_bytes,
    "adapter": components.adapter_bytes,
    "gradients": components.gradient_bytes,
    "optimizer": components.optimizer_bytes,
    "activations": components.activation_bytes,
    "logits": components.logits_bytes,
    "overhead": estimate.peak_bytes,
    "reference": components.reference_bytes,
    "value": placement.critic_share,
    "reward": components.reward_bytes,
    "rollout": components.rollout_bytes,
}

FIGURES: dict[str, _Figure] = {
    **{
        name: _Figure(function, _breakdown(name), "GiB per GPU", _note(MemoryBreakdown, name))
        for name, function in _MEMORY_FUNCTIONS.items()
    },
    "required": _Figure(estimate.peak_bytes, lambda plan: plan.memory.required_gib, "GiB per GPU"),
    "range": _Figure(estimate.range_bytes, lambda plan: list(plan.memory.range_gib), "GiB per GPU"),
    "host_ram": _Figure(host.host_ram_bytes, lambda plan: plan.memory.host_ram_gib, "GiB"),
    "tokens_per_s": _Figure(
        throughput.estimate_throughput, _of_run("tokens_per_s"), "tokens/s, whole job"
    ),
    "hours": _Figure(options.make_option, _of_run("hours"), "hours", _note(Option, "hours")),
    "cost": _Figure(options.make_option, _of_run("cost_usd"), "USD", _note(Option, "cost_usd")),
}


def explain(plan: Plan, component: str) -> Explanation | None:
    """`component` of `plan` explained; None when no figure has that name (see FIGURES)."""
    name = component.strip().lower().replace(" ", "_")
    figure = FIGURES.get(name)
    if figure is None:
        return None
    function = figure.function
    code = function.__code__  # where it is defined, without reading the file
    path = Path(code.co_filename)
    where = path.relative_to(_ROOT) if path.is_relative_to(_ROOT) else path
    module = sys.modules[function.__module__]
    formula = inspect.getdoc(function) or ""
    named = (getattr(module, word, None) for word in _NAMED.findall(formula))
    details = {
        helper.__name__: inspect.getdoc(helper) or ""
        for helper in named
        if inspect.isfunction(helper) and helper is not function
    }
    return Explanation(
        component=name,
        value=figure.value(plan),
        unit=figure.unit,
        formula=formula,
        function=f"{function.__module__}.{function.__qualname__}",
        where=f"{where}:{code.co_firstlineno}",
        background=inspect.getdoc(module) or "",
        field_note=figure.field_note,
        details=details,
    )
