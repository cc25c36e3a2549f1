"""`gpuplan discord-commands`: print the exact command JSON the bot syncs to Discord."""

from __future__ import annotations

import argparse
import json


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--compact", action="store_true", help="one line instead of indented")


def run(args: argparse.Namespace) -> int:
    from adapters.discord.commands import command_payloads

    print(json.dumps(command_payloads(), indent=None if args.compact else 2, ensure_ascii=False))
    return 0
