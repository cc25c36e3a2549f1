"""Suite-wide safety: no test writes outside its tmp dir or reads a developer's price overrides."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO_ROOT.parent / "shared" / "data"


@pytest.fixture(autouse=True)
def _isolated_environment(tmp_path_factory: pytest.TempPathFactory, monkeypatch) -> None:
    monkeypatch.setenv("GPUPLAN_STATE_DIR", str(tmp_path_factory.mktemp("state")))
    monkeypatch.delenv("GPUPLAN_PRICES", raising=False)
    for secret in ("SLACK_BOT_TOKEN", "SLACK_SIGNING_SECRET", "SLACK_APP_TOKEN", "DISCORD_TOKEN"):
        monkeypatch.delenv(secret, raising=False)
