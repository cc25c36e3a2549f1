"""`gpuplan discord-commands`: print the exact command JSON the bot syncs to Discord
(or, with --invite APPLICATION_ID, the URL that adds the bot to a server)."""

from __future__ import annotations

import argparse
import json

from adapters.cli import positive_int


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--compact", action="store_true", help="one line instead of indented")
    parser.add_argument(
        "--invite", type=positive_int, metavar="APPLICATION_ID", help="print the invite URL instead"
    )


def run(args: argparse.Namespace) -> int:
    from adapters.discord.commands import command_payloads, invite_url

    if args.invite is not None:
        print(invite_url(args.invite))
        return 0

    print(json.dumps(command_payloads(), indent=None if args.compact else 2, ensure_ascii=False))
    return 0
