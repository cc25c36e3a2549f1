"""`gpuplan serve PLATFORM` without its extra names the extra to install, never a bare
ModuleNotFoundError, and says it before asking for tokens."""

from __future__ import annotations

import sys

import pytest

from adapters.cli import main


@pytest.mark.parametrize(
    ("platform", "module", "argv"),
    [
        ("discord", "discord", []),
        ("slack", "slack_bolt", ["--http"]),
        ("slack", "prometheus_client", ["--socket"]),
        ("mcp", "mcp", []),
    ],
)
def test_serve_without_its_extra_names_the_install(
    platform: str, module: str, argv: list[str], monkeypatch, capsys
) -> None:
    monkeypatch.setitem(sys.modules, module, None)  # as if the extra were not installed
    assert main(["serve", platform, *argv]) == 1
    err = capsys.readouterr().err.strip()
    assert err == (
        f"gpuplan serve {platform}: the {platform} extra is not installed ({module} is missing): "
        f".venv/bin/pip install -q -e '.[{platform}]'"
    )


def test_with_the_extra_installed_serve_goes_on_to_its_settings(capsys) -> None:
    assert main(["serve", "discord"]) == 2  # no DISCORD_TOKEN (conftest clears it)
    assert "DISCORD_TOKEN is not set" in capsys.readouterr().err
