"""`gpuplan`: the command line for every surface.

Each subcommand lives in its own module with `add_arguments(parser)` and `run(args) -> int`,
imported only when that subcommand runs, so `gpuplan ask` never pays for slack-bolt or discord.py.
"""

from __future__ import annotations

import argparse
import atexit
import gc
import importlib
import os
import sys

SUBCOMMANDS: dict[str, tuple[str, str]] = {
    "ask": ("adapters.console.ask", "answer one question in the terminal"),
    "chat": ("adapters.console.chat", "a conversation, one message per line; threads persist"),
    "parse": ("adapters.console.parse_cmd", "print the JobSpec read from free text"),
    "config": ("adapters.console.config_cmd", "write a job's run config: --stack S --out DIR"),
    "estimate": ("adapters.console.estimate", "plan JobSpec JSON (--spec FILE|- or --jsonl)"),
    "models": ("adapters.console.models_cmd", "list known models: total/active params, context"),
    "render": ("adapters.console.render_cmd", "print the exact Slack or Discord payload"),
    "serve": ("adapters.serve", "run the Slack or Discord bot, or the MCP server"),
    "doctor": ("adapters.doctor.cli", "check a Slack, Discord or MCP set-up, one line per check"),
    "discord-commands": ("adapters.discord.commands_cmd", "print the synced command JSON"),
    "bench": ("adapters.console.bench_cmd", "parse + plan throughput and latency in-process"),
    "prices": ("adapters.console.prices_cmd", "live GPU prices: refresh, a table, or --json"),
    "calibration": ("adapters.console.calibration_cmd", "estimates vs users' reported peaks"),
}


def positive_int(text: str) -> int:
    """An argparse type for counts and ids that must be ≥ 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be 1 or more, not {value}")
    return value


def _one_line(error: Exception) -> str:
    from planner.errors import PlanningError

    if isinstance(error, PlanningError):
        return error.message
    return f"{type(error).__name__}: {error}"


def _usage() -> str:
    lines = ["usage: gpuplan COMMAND [ARGS]", "", "commands:"]
    lines += [f"  {name:<18}{about}" for name, (_, about) in SUBCOMMANDS.items()]
    lines += ["", 'example: gpuplan ask "13B QLoRA, 4k ctx, 20M tokens x3"']
    return "\n".join(lines)


def _skip_final_collection() -> None:
    """Freeze the heap when the process exits, so that the interpreter's last cyclic garbage
    collection does not walk it: a command leaves some 10^5 long-lived objects (modules,
    pydantic validators, catalogs) that the OS frees at once, and that walk was ~25 ms of
    `gpuplan ask`'s ~250 ms (bench/ask_cold_start.py). Registered at exit only, so callers that
    run `main` in-process (tests) keep collecting as before; a long `serve` is unaffected."""
    atexit.unregister(gc.freeze)
    atexit.register(gc.freeze)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if not args or args[0] in ("-h", "--help", "help"):
        print(_usage())
        return 0
    name, rest = args[0], args[1:]
    if name not in SUBCOMMANDS:
        print(f"gpuplan: unknown command {name!r}\n\n{_usage()}", file=sys.stderr)
        return 2
    module_path, about = SUBCOMMANDS[name]
    _skip_final_collection()
    module = importlib.import_module(module_path)
    parser = argparse.ArgumentParser(prog=f"gpuplan {name}", description=about)
    module.add_arguments(parser)
    try:
        return int(module.run(parser.parse_args(rest)) or 0)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0
    except Exception as error:  # a bad file or a bug still reads as one line, not a traceback
        if os.environ.get("GPUPLAN_DEBUG"):
            raise
        print(
            f"gpuplan {name}: {_one_line(error)} — set GPUPLAN_DEBUG=1 for details", file=sys.stderr
        )
        return 1


if __name__ == "__main__":
    sys.exit(main())
