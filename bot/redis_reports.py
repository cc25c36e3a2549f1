"""Kept run reports on Redis (bot.reports.ReportStore), for bots that share a GPUPLAN_STATE_URL.

Keys, under gpuplan: and with no TTL — reports are what a workspace chose to keep, until it
deletes them (`gpuplan calibration --forget SCOPE`):
- `gpuplan:reports:<scope>` — a list of report JSON, oldest first (RPUSH: one round trip);
- `gpuplan:report-scopes` — the set of scopes that have reports, for listing them all.
"""

from __future__ import annotations

from bot.redis_client import RedisLink, key
from bot.reports import MAX_REPORTS_LISTED, Report

_SCOPES = key("report-scopes")


class RedisReports:
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
