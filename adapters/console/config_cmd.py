"""`gpuplan config TEXT --stack S --out DIR`: write the files that realise the job's plan in a
stack (bot/run_configs.py, planner.run_config), with a SkyPilot task and a README. The job is
asked and then "config S" is said in its thread, as in a chat; a job that does not fit writes
nothing and exits 1 with the reason."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from bot.reply import ReplyFile


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from planner.run_config.stacks import stack_names

    parser.add_argument("text", nargs="+", help='the job, e.g. "8B qlora 4k ctx on a 4090"')
    parser.add_argument(
        "--stack", help=f"{' | '.join(stack_names())} (default: the job's own framework, else trl)"
    )
    parser.add_argument("--out", type=Path, required=True, help="folder to write the files to")


def run(args: argparse.Namespace) -> int:
    from adapters.console import logs
    from adapters.console.config_paths import with_config_files
    from adapters.console.text import render_text
    from bot.conversation import Conversation
    from bot.run_configs import CONFIG_TEXT
    from bot.state.threads import MemoryStore
    from bot.threads import ThreadKey

    logs.configure()
    if args.stack is not None:
        from planner.run_config import ConfigRefused
        from planner.run_config.stacks import stack_named

        try:
            stack_named(args.stack)
        except ConfigRefused as refused:
            return _fail(f"{refused.message}. Nothing written.")
    question, unreadable = with_config_files(" ".join(args.text))
    if unreadable is not None:
        return _fail(unreadable)
    conversation = Conversation(MemoryStore(), limit_rate=False)
    key = ThreadKey(platform="console", thread="config")
    asked = conversation.respond(key, question)
    if asked.plan is None:  # a question it cannot plan: the reply says why
        print(render_text(asked.reply), file=sys.stderr)
        return 1
    said = f"{CONFIG_TEXT} {args.stack}" if args.stack else CONFIG_TEXT
    reply = conversation.respond(key, said).reply
    if not reply.files:
        return _fail(f"{reply.body or reply.title}. Nothing written.")
    error = write_files(args.out, reply.files)
    if error is not None:
        return _fail(error)
    print(f"{reply.title}: written to {args.out}/")
    for file in reply.files:
        print(f"  {file.name}")
    for warning in reply.warnings:
        print(f"  {warning}")
    print(f"next: fill in the TODOs in {args.out / 'README.txt'}, then run the commands it lists")
    return 0


def write_files(folder: Path, files: list[ReplyFile]) -> str | None:
    """Write a reply's files into `folder` (made if missing); the error sentence on failure."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        for file in files:
            (folder / file.name).write_text(file.text, encoding="utf-8")
    except OSError as error:
        return f"cannot write to {folder}: {error.strerror}"
    return None


def _fail(sentence: str) -> int:
    print(f"gpuplan config: {sentence}", file=sys.stderr)
    return 1
