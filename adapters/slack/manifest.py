"""Reading adapters/slack/manifest.yaml: the file people paste into Slack is the one source of the
scopes and events the app asks for. Only its `- item` lists are read, so no YAML library is needed.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

MANIFEST_PATH = Path(__file__).with_name("manifest.yaml")


@cache
def manifest_list(section: str) -> tuple[str, ...]:
    """The `- item` lines right under `section:` in manifest.yaml, in order."""
    lines = MANIFEST_PATH.read_text(encoding="utf-8").splitlines()
    start = next(n for n, line in enumerate(lines) if line.strip() == f"{section}:")
    items = []
    for line in lines[start + 1 :]:
        if not line.strip().startswith("- "):
            break
        items.append(line.strip()[2:])
    return tuple(items)


def bot_scopes() -> tuple[str, ...]:
    return manifest_list("bot")


def bot_events() -> tuple[str, ...]:
    return manifest_list("bot_events")
