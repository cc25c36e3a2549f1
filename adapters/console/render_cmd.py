"""`gpuplan render slack|discord TEXT`: the exact payloads the bot would send, as JSON."""

from __future__ import annotations

import argparse
import importlib
import json

RENDERERS = {"slack": "adapters.slack.render", "discord": "adapters.discord.render"}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("platform", choices=sorted(RENDERERS))
    parser.add_argument("text", nargs="+", help='the question, e.g. "13B QLoRA, 4k ctx"')


def run(args: argparse.Namespace) -> int:
    from adapters.console import logs
    from bot.conversation import answer_once

    logs.configure()
    reply = answer_once(" ".join(args.text)).reply
    payloads = importlib.import_module(RENDERERS[args.platform]).render_reply(reply)
    print(json.dumps(payloads, indent=2, ensure_ascii=False))
    return 0
