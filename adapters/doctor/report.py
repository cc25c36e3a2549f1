"""One line per check: what was found and, when it is wrong, what to do about it.

`fail` makes the doctor exit 1; `warn` is worth knowing but the bot still answers; `note` is
something the doctor cannot see for itself (it says where to look); `skip` means an earlier
failure hides this check's answer.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

Status = Literal["ok", "warn", "fail", "note", "skip"]
_MARK: dict[Status, str] = {
    "ok": "ok",
    "warn": "WARN",
    "fail": "FAIL",
    "note": "note",
    "skip": "skip",
}


@dataclass(frozen=True)
class Check:
    name: str
    status: Status
    detail: str
    fix: str = ""

    @property
    def line(self) -> str:
        fix = f" → {self.fix}" if self.fix else ""
        return f"{_MARK[self.status]:<4}  {self.name}: {self.detail}{fix}"


def ok(name: str, detail: str) -> Check:
    return Check(name, "ok", detail)


def fail(name: str, detail: str, fix: str) -> Check:
    return Check(name, "fail", detail, fix)


def warn(name: str, detail: str, fix: str = "") -> Check:
    return Check(name, "warn", detail, fix)


def note(name: str, detail: str) -> Check:
    return Check(name, "note", detail)


def skip(name: str, because: str) -> Check:
    return Check(name, "skip", f"not checked until {because} passes")


def exit_code(checks: Iterable[Check]) -> int:
    """0 when nothing failed, else 1."""
    return 1 if any(check.status == "fail" for check in checks) else 0


def summary(checks: list[Check]) -> str:
    failed = sum(check.status == "fail" for check in checks)
    warned = sum(check.status == "warn" for check in checks)
    if failed:
        return f"{failed} of {len(checks)} checks failed; fix the first FAIL line and run it again."
    tail = f" ({warned} warning{'s' if warned != 1 else ''})" if warned else ""
    return f"all {len(checks)} checks passed{tail}."
