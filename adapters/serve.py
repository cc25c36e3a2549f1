"""`gpuplan serve slack|discord|mcp`: run one surface's process (one per Procfile line)."""

from __future__ import annotations

import argparse
import importlib

# Each platform module exposes `add_arguments(parser)` and `run(args) -> int`.
PLATFORMS = {
    "slack": "adapters.slack.serve",
    "discord": "adapters.discord.serve",
    "mcp": "adapters.mcp.serve",
}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="platform", required=True)
    for name, module_path in PLATFORMS.items():
        importlib.import_module(module_path).add_arguments(sub.add_parser(name))


def run(args: argparse.Namespace) -> int:
    return importlib.import_module(PLATFORMS[args.platform]).run(args)
