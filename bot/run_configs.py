"""A thread's job as run configs: "config axolotl" (or the "Get the config" button) answers with the
files that realise the thread's plan in that stack (planner.run_config), attached to the reply.

The job is planned on the stack asked for (its JobSpec framework), so the files and the verdict
they come with are that stack's plan; a job that does not fit gets the reason and no files.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from bot import phrases
from bot.reply import Reply, ReplyFile, WhatIf
from planner.patterns import lazy_pattern
from planner.plan import Plan

CONFIG_BUTTON_ID = "config"
CONFIG_TEXT = "config"
# "config", "config axolotl", "config for trl", "get the config", "/gpuplan config ms-swift",
# "配置 axolotl", "生成配置". A stack name starts with a letter, so "config.json …" and
# "config 8b …" stay questions.
_STACK = r"(?P<stack>[A-Za-z][\w.-]*)"
_CONFIG = lazy_pattern(
    r"^\s*(?:/gpuplan\s+)?[/!]?(?:get\s+(?:me\s+)?(?:the\s+)?)?(?:run\s+)?config(?:s|uration)?(?:\s+files?)?"
    rf"(?:(?:\s+(?:for|in|with))?\s+{_STACK})?\s*[?!.]*\s*$",
    re.IGNORECASE,
)
_ZH_CONFIG = r"(?:运行)?配置(?:文件)?"
_ZH_END = r"\s*[？?!！。]*\s*$"
_CONFIG_ZH = lazy_pattern(
    rf"^\s*(?:生成|给我|导出|要)?{_ZH_CONFIG}\s*{_STACK}?{_ZH_END}"
    rf"|^\s*(?P<stack_first>[A-Za-z][\w.-]*)\s*的?{_ZH_CONFIG}{_ZH_END}"
)


@dataclass(frozen=True)
class ConfigRequest:
    """The thread's job as files for `stack` (None: the job's own stack)."""

    stack: str | None


def read_config_request(text: str) -> ConfigRequest | None:
    match = _CONFIG.match(text) or _CONFIG_ZH.match(text)
    if match is None:
        return None
    groups = match.groupdict()
    stack = groups.get("stack") or groups.get("stack_first")
    return ConfigRequest(stack.lower() if stack else None)


def stack_patch(stack: str | None) -> dict[str, Any]:
    """The JobSpec change that plans the job on `stack` (its framework value); ConfigRefused for
    a stack gpuplan writes no config for."""
    if stack is None:
        return {}
    from planner.run_config.stacks import framework_of, stack_named

    framework = framework_of(stack_named(stack))
    return {} if framework is None else {"framework": framework}


def config_reply(plan: Plan, stack: str | None) -> Reply:
    """The files for `plan` in `stack`, attached; the reason when there are none."""
    from planner.run_config import ConfigRefused, build_run_config

    try:
        config = build_run_config(plan, stack)
    except ConfigRefused as refused:
        return Reply(kind="error", title=phrases.NO_CONFIG_TITLE, body=refused.message)
    title, body = phrases.config_attached(
        config.stack, plan.model.name, list(config.files), config.launch
    )
    return Reply(
        kind="help",
        title=title,
        body=body,
        warnings=[phrases.not_expressed(item) for item in config.unexpressed],
        files=[ReplyFile(name=name, text=text) for name, text in config.files.items()],
    )


def config_button(plan: Plan) -> WhatIf | None:
    """ "Get the config" under an answer whose job runs somewhere (a plan that fits)."""
    requested = plan.requested
    runs = (
        requested.verdict != "no" if requested is not None else bool(plan.recommendation.cheapest)
    )
    if not runs:
        return None
    label, text = phrases.CONFIG_BUTTON
    return WhatIf(id=CONFIG_BUTTON_ID, label=label, text=text)
