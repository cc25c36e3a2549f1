"""Peaks users measured on real runs, kept with the job they were reported for — only where the
workspace allows it (the `keep_reports` setting, off by default).

A report is the thread's job as the user said it (JobSpec JSON, with the card), our estimate of
the same kind, and what they measured; `gpuplan calibration` scores them and exports them in the
vram_dev.jsonl format so they can be reviewed and contributed.

SQLite by default (a table beside the threads); Redis when GPUPLAN_STATE_URL names one. Reports
are the point of keeping, so they carry no TTL: a workspace that turns keeping off stops adding,
and `gpuplan calibration --forget SCOPE` deletes its reports.
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from pydantic import BaseModel

from bot.settings import SettingsStore
from bot.store import state_db_connection

KEEP_REPORTS_SETTING = "keep_reports"
MAX_REPORTS_LISTED = 100_000


class Report(BaseModel):
    """One measured peak against the job it was measured on."""

    scope: str  # "platform/workspace"
    spec: dict[str, Any]  # the job as the user said it (JobSpec JSON, no defaults filled)
    planned: dict[str, Any]  # the job as planned (Plan.spec: every default filled)
    metric: str  # allocated | reserved | nvidia-smi | unknown | oom
    measured_gib: float | None  # None for an OOM
    estimated_gib: float  # our estimate of the same kind, before re-anchoring
    range_gib: tuple[float, float]
    card_gib: float | None  # the usable memory of the card it ran on, when named
    reported_at: float


class ReportStore(Protocol):
    def add(self, report: Report) -> None: ...

    def all(self, scope: str | None = None) -> list[Report]: ...

    def forget(self, scope: str) -> int:
        """Delete a workspace's reports; how many there were."""
        ...


def keeps_reports(settings: SettingsStore | None, scope: str) -> bool:
    """Whether `scope` opted in to keeping reports (off unless its setting is "on")."""
    return settings is not None and settings.get(scope, KEEP_REPORTS_SETTING) == "on"


@dataclass(frozen=True)
class ReportsCommand:
    """`/gpuplan reports [on|off]`: show whether this workspace keeps reports, or change it."""

    change: bool
    keep: bool = False
    error: str | None = None


_COMMAND = re.compile(r"^\s*[/!]?(?:gpuplan\s+)?reports\b\s*(?P<rest>.*)$", re.IGNORECASE)
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


def open_report_store() -> ReportStore:
    """The report store GPUPLAN_STATE_URL selects: Redis when it names one, else SQLite."""
    from bot.state_url import backend_from_env

    backend = backend_from_env()
    if backend.redis_url is None:
        return SQLiteReports()
    from bot.redis_client import shared_link
    from bot.redis_reports import RedisReports

    return RedisReports(shared_link(backend.redis_url))


class SQLiteReports:
    """A table of the state database (WAL, read-only when the file is), beside the threads."""

    def __init__(self, directory: Path | None = None) -> None:
        self._connect = state_db_connection(directory)
        with self._connect() as connection:
            connection.execute(
                "CREATE TABLE IF NOT EXISTS run_reports ("
                " id INTEGER PRIMARY KEY AUTOINCREMENT, scope TEXT NOT NULL,"
                " report TEXT NOT NULL)"
            )

    def add(self, report: Report) -> None:
        with self._connect() as connection:
            connection.execute(
                "INSERT INTO run_reports (scope, report) VALUES (?, ?)",
                (report.scope, report.model_dump_json()),
            )

    def all(self, scope: str | None = None) -> list[Report]:
        query = "SELECT report FROM run_reports"
        arguments: tuple[str, ...] = ()
        if scope is not None:
            query, arguments = query + " WHERE scope = ?", (scope,)
        with self._connect() as connection:
            rows = connection.execute(f"{query} ORDER BY id LIMIT {MAX_REPORTS_LISTED}", arguments)
            return [Report.model_validate_json(row[0]) for row in rows]

    def forget(self, scope: str) -> int:
        with self._connect() as connection:
            return connection.execute("DELETE FROM run_reports WHERE scope = ?", (scope,)).rowcount


class MemoryReports:
    """In-process reports (tests, `gpuplan ask`)."""

    def __init__(self) -> None:
        self._reports: list[Report] = []

    def add(self, report: Report) -> None:
        self._reports.append(report)

    def all(self, scope: str | None = None) -> list[Report]:
        return [r for r in self._reports if scope is None or r.scope == scope]

    def forget(self, scope: str) -> int:
        kept = [r for r in self._reports if r.scope != scope]
        forgotten, self._reports = len(self._reports) - len(kept), kept
        return forgotten


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
