"""`gpuplan chat`: a conversation in the terminal, one message per line; threads persist on disk."""

from __future__ import annotations

import argparse
import json
import secrets
import sys
from collections.abc import Iterator
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from bot.conversation import Turn
    from bot.reply import ReplyFile
    from bot.state.threads import StateStore

EXIT_WORDS = {"quit", "exit", ":q"}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--thread", metavar="ID", help="continue this thread (default: start a new one)"
    )
    parser.add_argument(
        "--json",
        action="store_true",
        help='one JSON line per message: {"plan": …, "changes": {field: [before, after]}} '
        'or {"error": …}',
    )
    parser.add_argument(
        "--keep-reports",
        action="store_true",
        help="keep peaks you report ('it peaked at 21 GiB') for `gpuplan calibration`, from now "
        "on (as typing “reports on” does; “reports off” stops)",
    )


def run(args: argparse.Namespace) -> int:
    from adapters.console import logs
    from adapters.console.config_paths import with_config_files
    from adapters.console.text import render_text, wants_colour
    from bot.conversation import Conversation
    from bot.threads import ThreadKey

    logs.configure()
    if args.thread is not None and not args.thread.strip():
        print(
            "gpuplan chat: --thread needs an id (leave it out to start a new thread)",
            file=sys.stderr,
        )
        return 2
    thread = args.thread or secrets.token_hex(4)
    interactive = sys.stdin.isatty()
    conversation = Conversation(thread_store("gpuplan chat"), limit_rate=False)
    key = ThreadKey(platform="console", thread=thread)
    if args.keep_reports:
        conversation.respond(key, "reports on", admin=True)
    colour = wants_colour(sys.stdout) and not args.json
    if interactive or not args.thread:
        print(
            f"thread {thread}: continue later with `gpuplan chat --thread {thread}`",
            file=sys.stderr,
        )
    if interactive:
        print("“help” for examples; Ctrl-D to leave", file=sys.stderr)
    for text in _messages(interactive):
        question, unreadable = with_config_files(text)
        if unreadable is not None:
            print(f"gpuplan chat: {unreadable}", file=sys.stderr)
            continue
        # The person at the terminal owns its settings.
        turn = conversation.respond(key, question, admin=True)
        if args.json:
            print(json.dumps(_json_line(turn), ensure_ascii=False), flush=True)
            continue
        if not interactive:
            print(f"> {text}")
        print(render_text(turn.reply, colour=colour) + "\n", flush=True)
        if turn.reply.files:  # "config axolotl": the files land next to the user
            _write_config(turn.reply.files, thread)
    return 0


def _write_config(files: list[ReplyFile], thread: str) -> None:
    from pathlib import Path

    from adapters.console.config_cmd import write_files

    folder = Path(f"gpuplan-config-{thread}")
    error = write_files(folder, files)
    if error is not None:
        print(f"gpuplan chat: {error}", file=sys.stderr)
    else:
        print(f"files written to {folder}/: {', '.join(f.name for f in files)}", file=sys.stderr)


def thread_store(command: str) -> StateStore:
    """The configured store; one that cannot be written to still lets `command` answer (from
    memory for this session), and says so once, naming the file and what is wrong with it."""
    from bot.state.errors import StoreUnavailable
    from bot.state.threads import MemoryStore, SQLiteStore, open_thread_store

    try:
        store = open_thread_store()
    except StoreUnavailable as error:
        print(f"{command}: {error}; answering without saving", file=sys.stderr)
        return MemoryStore()
    if isinstance(store, SQLiteStore) and store.read_only is not None:
        print(f"{command}: {store.read_only}; answering without saving", file=sys.stderr)
    return store


def _messages(interactive: bool) -> Iterator[str]:
    from adapters.console.lines import open_lines

    piped = None if interactive else open_lines("-")
    while True:
        try:
            line = input("gpuplan> ") if piped is None else piped.readline()
        except EOFError:
            return
        if not interactive and not line:
            return
        text = line.strip()
        if interactive and text.lower() in EXIT_WORDS:
            return
        if text:
            yield text


def _json_line(turn: Turn) -> dict[str, object]:
    if turn.plan is None:
        return {"error": turn.reply.body or turn.reply.title, "kind": turn.reply.kind}
    changes = {name: list(pair) for name, pair in turn.changes.items()}
    line: dict[str, object] = {"plan": turn.plan.model_dump(mode="json"), "changes": changes}
    if turn.reply.files:
        line["files"] = {file.name: file.text for file in turn.reply.files}
    return line
