"""Kept run reports (bot.reports says what they are and when they are kept): a table beside the
threads in the SQLite state file by default, Redis when GPUPLAN_STATE_URL names one, or memory.
Reports are the point of keeping, so they carry no TTL: a workspace that turns keeping off stops
adding, and `gpuplan calibration --forget SCOPE` deletes its reports.

On Redis, under gpuplan: and with no TTL:
- `gpuplan:reports:<scope>` — a list of report JSON, oldest first (RPUSH: one round trip);
- `gpuplan:report-scopes` — the set of scopes that have reports, for listing them all.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from pydantic import BaseModel

from bot.state.backend import StateBackend, backend_from_env
from bot.state.redis_keys import key
from bot.state.sqlite import state_db_connection

if TYPE_CHECKING:
    from bot.state.redis_link import RedisLink

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


def open_report_store(backend: StateBackend | None = None) -> ReportStore:
    """The report store on `backend` (GPUPLAN_STATE_URL's by default): Redis when it names one,
    else SQLite."""
    backend = backend if backend is not None else backend_from_env()
    if backend.redis_url is None:
        return SQLiteReports()
    return RedisReports(backend.redis_link())


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


_SCOPES = key("report-scopes")


class RedisReports:
    """ReportStore on Redis, for bots that share a GPUPLAN_STATE_URL."""

    def __init__(self, link: RedisLink) -> None:
        self._link = link

    def add(self, report: Report) -> None:
        def push(client):
            pipe = client.pipeline(transaction=False)
            pipe.rpush(key("reports", report.scope), report.model_dump_json())
            pipe.sadd(_SCOPES, report.scope)
            return pipe.execute()

        self._link.run(push)

    def all(self, scope: str | None = None) -> list[Report]:
        scopes = [scope] if scope is not None else sorted(self._scopes())
        reports: list[Report] = []
        for each in scopes:
            rows = self._link.run(
                lambda client, each=each: client.lrange(
                    key("reports", each), 0, MAX_REPORTS_LISTED - 1
                )
            )
            reports += [Report.model_validate_json(row) for row in rows]
        return reports

    def forget(self, scope: str) -> int:
        def drop(client):
            pipe = client.pipeline(transaction=True)
            pipe.llen(key("reports", scope))
            pipe.delete(key("reports", scope))
            pipe.srem(_SCOPES, scope)
            return pipe.execute()[0]

        return int(self._link.run(drop))

    def _scopes(self) -> set[str]:
        return set(self._link.run(lambda client: client.smembers(_SCOPES)))
