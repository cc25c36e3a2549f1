"""Peaks users measured on real runs, kept with the job they were reported for — only where the
workspace allows it (the `keep_reports` setting, off by default).

A report is the thread's job as the user said it (JobSpec JSON, with the card), our estimate of
the same kind, and what they measured; `gpuplan calibration` scores them and exports them in the
vram_dev.jsonl format so they can be reviewed and contributed.

Where reports are kept is bot.state.reports.
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass
from typing import Any

from bot.state.reports import Report
from bot.state.settings import SettingsStore
from planner.patterns import lazy_pattern

KEEP_REPORTS_SETTING = "keep_reports"


def keeps_reports(settings: SettingsStore | None, scope: str) -> bool:
    """Whether `scope` opted in to keeping reports (off unless its setting is "on")."""
    return settings is not None and settings.get(scope, KEEP_REPORTS_SETTING) == "on"


@dataclass(frozen=True)
class ReportsCommand:
    """`/gpuplan reports [on|off]`: show whether this workspace keeps reports, or change it."""

    change: bool
    keep: bool = False
    error: str | None = None


_COMMAND = lazy_pattern(r"^\s*[/!]?(?:gpuplan\s+)?reports\b\s*(?P<rest>.*)$", re.IGNORECASE)
_ON = frozenset({"on", "yes", "keep", "true", "enable", "1"})
_OFF = frozenset({"off", "no", "stop", "false", "disable", "0"})


def read_reports_command(text: str) -> ReportsCommand | None:
    m = _COMMAND.match(text)
    if m is None:
        return None
    rest = m.group("rest").strip().lower().rstrip(".!")
    if not rest:
        return ReportsCommand(change=False)
    if rest in _ON or rest in _OFF:
        return ReportsCommand(change=True, keep=rest in _ON)
    return ReportsCommand(change=True, error=f"say “reports on” or “reports off”, not “{rest}”")


def save_keep_reports(settings: SettingsStore, scope: str, keep: bool, by: str) -> None:
    settings.put(scope, KEEP_REPORTS_SETTING, "on" if keep else None, by=by)


def _date(timestamp: float) -> str:
    return time.strftime("%Y-%m-%d", time.gmtime(timestamp))


def report_json_line(report: Report, number: int) -> str:
    """A report as a vram_dev.jsonl row: the job as said (with the card) and the measured truth."""
    truth: dict[str, Any]
    if report.metric == "oom":
        truth = {"kind": "oom_lower_bound", "capacity_gib": report.card_gib}
    else:
        metric = {"allocated": "max_memory_allocated", "reserved": "max_memory_reserved"}.get(
            report.metric, report.metric
        )
        truth = {"kind": "measurement", "metric": metric, "peak_gib": report.measured_gib}
    row = {
        "id": f"gpuplan-report-{number:05d}",
        "source": f"gpuplan user report ({report.scope}, {_date(report.reported_at)})",
        "spec": report.spec,
        "truth": truth,
    }
    return json.dumps(row, ensure_ascii=False)
