"""Which providers a team rents from: `GPUPLAN_PROVIDERS=runpod,vastai` for the whole process,
or per workspace/server with `/gpuplan providers runpod, vast.ai` (admins only), which wins.
Answers then price cards from those providers' quotes only (cards none of them quote fall back
to the bundled table, said in the answer's price line).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

from bot.prices.offers import PROVIDER_NAMES
from bot.state.settings import SettingsStore
from planner.errors import PlanningError

PROVIDERS_ENV = "GPUPLAN_PROVIDERS"
SETTING = "providers"
# Other ways people write a provider, beyond its key and display name.
_ALIASES = {
    "vast": "vastai",
    "lambda": "lambdalabs",
    "lambdacloud": "lambdalabs",
    "datacrunch": "verda",
    "google": "gcp",
    "googlecloud": "gcp",
    "amazon": "aws",
    "microsoft": "azure",
    "oracle": "oci",
}
_CLEAR_WORDS = frozenset({"all", "any", "every", "reset", "clear", "none", "off"})
_COMMAND = re.compile(r"^\s*(?:/?gpuplan\s+)?providers?(?::|\s|$)(?P<rest>.*)$", re.I | re.S)
_SEPARATORS = re.compile(r"\s*(?:,|;|\band\b|\s)\s*", re.I)


def _squash(name: str) -> str:
    return re.sub(r"[^a-z0-9]", "", name.lower())


_BY_SPELLING = {
    **{_squash(key): key for key in PROVIDER_NAMES},
    **{_squash(name): key for key, name in PROVIDER_NAMES.items()},
    **_ALIASES,
}


def read_providers(text: str) -> frozenset[str]:
    """Provider keys from "runpod, Vast.ai and lambda"; ValueError naming an unknown one."""
    names = [part for part in _SEPARATORS.split(text.strip()) if part]
    unknown = [name for name in names if _squash(name) not in _BY_SPELLING]
    if unknown:
        known = ", ".join(sorted(PROVIDER_NAMES.values()))
        raise ValueError(f"I don't know the provider “{unknown[0][:40]}”. Known: {known}.")
    return frozenset(_BY_SPELLING[_squash(name)] for name in names)


def env_providers() -> frozenset[str] | None:
    raw = os.environ.get(PROVIDERS_ENV, "").strip()
    try:
        return read_providers(raw) if raw else None
    except ValueError as error:
        raise PlanningError(f"{PROVIDERS_ENV}: {error}") from None


def providers_for(settings: SettingsStore, scope: str) -> frozenset[str] | None:
    """The workspace's setting, else GPUPLAN_PROVIDERS, else None (every provider)."""
    stored = settings.get(scope, SETTING)
    if stored:
        return frozenset(stored.split(","))
    return env_providers()


def save_providers(
    settings: SettingsStore, scope: str, providers: frozenset[str] | None, by: str
) -> None:
    settings.put(scope, SETTING, ",".join(sorted(providers)) if providers else None, by=by)


@dataclass(frozen=True)
class ProvidersCommand:
    """`/gpuplan providers …`: show (nothing after it), clear ("all"), or set the list."""

    change: bool
    providers: frozenset[str] | None = None  # None with change=True clears the setting
    error: str | None = None


def read_providers_command(text: str) -> ProvidersCommand | None:
    m = _COMMAND.match(text)
    if m is None:
        return None
    rest = m.group("rest").strip()
    if not rest:
        return ProvidersCommand(change=False)
    if rest.lower() in _CLEAR_WORDS:
        return ProvidersCommand(change=True)
    try:
        return ProvidersCommand(change=True, providers=read_providers(rest))
    except ValueError as error:
        return ProvidersCommand(change=True, error=str(error))
