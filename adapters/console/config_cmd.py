"""`gpuplan config TEXT --stack S --out DIR`: write the files that realise the plan in a stack
(planner.run_config), with a SkyPilot task and a README. A job that does not fit writes nothing."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from planner.run_config.stacks import stack_names

    parser.add_argument("text", nargs="+", help='the job, e.g. "8B qlora 4k ctx on a 4090"')
    parser.add_argument(
        "--stack",
        help=f"{' | '.join(stack_names())} (default: the job's own framework, else trl)",
    )
    parser.add_argument("--out", type=Path, required=True, help="folder to write the files to")


def run(args: argparse.Namespace) -> int:
    from adapters.console import logs
    from adapters.console.config_paths import with_config_files
    from adapters.console.text import render_text
    from bot.conversation import answer_once
    from planner.run_config import ConfigRefused, build_run_config

    logs.configure()
    question, unreadable = with_config_files(" ".join(args.text))
    if unreadable is not None:
        return _fail(unreadable)
    turn = answer_once(question)
    if turn.plan is None:  # a question it cannot plan: the reply says why
        print(render_text(turn.reply), file=sys.stderr)
        return 1
    try:
        config = build_run_config(turn.plan, args.stack)
    except ConfigRefused as refused:
        return _fail(f"{refused.message}. Nothing written.")
    try:
        args.out.mkdir(parents=True, exist_ok=True)
        for name, text in config.files.items():
            (args.out / name).write_text(text, encoding="utf-8")
    except OSError as error:
        return _fail(f"cannot write to {args.out}: {error.strerror}")
    print(f"{config.stack} config for {turn.reply.title} written to {args.out}/:")
    for name in config.files:
        print(f"  {name}")
    if config.unexpressed:
        print("not expressed in the files (see README.txt):")
        for item in config.unexpressed:
            print(f"  - {item}")
    print(f"next: fill the TODOs in README.txt, then `cd {args.out} && {config.commands[-3]}`")
    return 0


def _fail(sentence: str) -> int:
    print(f"gpuplan config: {sentence}", file=sys.stderr)
    return 1
