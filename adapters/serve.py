"""`gpuplan serve slack|discord|mcp`: run one surface's process (one per Procfile line)."""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import sys

# Each platform module exposes `add_arguments(parser)` and `run(args) -> int`.
PLATFORMS = {
    "slack": "adapters.slack.serve",
    "discord": "adapters.discord.serve",
    "mcp": "adapters.mcp.serve",
}
# Each surface's optional extra (pyproject.toml) and the modules it brings that serving imports,
# so a missing extra is named with its install command instead of a bare ModuleNotFoundError.
EXTRAS: dict[str, tuple[str, ...]] = {
    "slack": ("slack_bolt", "slack_sdk", "prometheus_client"),
    "discord": ("discord", "prometheus_client"),
    "mcp": ("mcp",),
}


def install_command(extra: str) -> str:
    return f".venv/bin/pip install -q -e '.[{extra}]'"


def missing_module(platform: str) -> str | None:
    """The first module of the platform's extra that is not installed (None when all are)."""
    return next((m for m in EXTRAS[platform] if importlib.util.find_spec(m) is None), None)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="platform", required=True)
    for name, module_path in PLATFORMS.items():
        importlib.import_module(module_path).add_arguments(sub.add_parser(name))


def run(args: argparse.Namespace) -> int:
    if (module := missing_module(args.platform)) is not None:
        print(
            f"gpuplan serve {args.platform}: the {args.platform} extra is not installed "
            f"({module} is missing): {install_command(args.platform)}",
            file=sys.stderr,
        )
        return 1
    return importlib.import_module(PLATFORMS[args.platform]).run(args)
