"""Discord's API, offline: its OpenAPI schemas (vendored subset, MIT) to validate our payloads."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator

SUBSET = Path(__file__).parents[1] / "data" / "discord_openapi_subset.json"


@cache
def _components() -> dict[str, Any]:
    return json.loads(SUBSET.read_text())["components"]


def schema_errors(schema: str, body: Any) -> list[str]:
    """Every way `body` breaks Discord's `schema`, one short line each; [] when valid."""
    validator = Draft202012Validator(
        {"$ref": f"#/components/schemas/{schema}", "components": _components()}
    )
    return [
        f"{'/'.join(map(str, error.absolute_path))}: {error.message[:100]}"
        for error in validator.iter_errors(body)
    ]
