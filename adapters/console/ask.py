"""`gpuplan ask TEXT`: answer one question in the terminal (or as Plan JSON, or with a chart)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from bot.conversation import Turn


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("text", nargs="+", help='the job, e.g. "13B QLoRA, 4k ctx, 20M tokens x3"')
    parser.add_argument("--json", action="store_true", help="print the Plan as JSON")
    parser.add_argument("--chart", metavar="FILE", type=Path, help="write hours and cost as PNG")


def run(args: argparse.Namespace) -> int:
    from adapters.console import logs
    from adapters.console.config_paths import with_config_files
    from adapters.console.text import render_text, wants_colour
    from bot.conversation import answer_once

    logs.configure()
    question, unreadable = with_config_files(" ".join(args.text))
    if unreadable is not None:
        print(f"gpuplan ask: {unreadable}", file=sys.stderr)
        return 1
    turn = answer_once(question)
    reply = turn.reply
    if args.json:
        if turn.plan is not None:
            print(plan_json(turn))
        else:
            print(json.dumps({"error": reply.body or reply.title, "kind": reply.kind}))
    else:
        print(render_text(reply, colour=wants_colour(sys.stdout)))
    if args.chart is not None:
        if not reply.has_chart:
            print("gpuplan ask: no chart: this answer has no hours or costs", file=sys.stderr)
            return 1
        from bot.chart import chart_png

        try:
            args.chart.write_bytes(chart_png(reply))
        except ModuleNotFoundError as missing:  # the chart extra, kept out of a plain install
            from adapters.serve import install_command

            hint = install_command("chart")
            print(f"gpuplan ask: --chart needs {missing.name}: {hint}", file=sys.stderr)
            return 1
        except OSError as error:
            print(f"gpuplan ask: cannot write {args.chart}: {error.strerror}", file=sys.stderr)
            return 1
        print(f"chart written to {args.chart}", file=sys.stderr)
    return 0 if turn.plan is not None else 1


def plan_json(turn: Turn) -> str:
    """The Plan; a comparison adds `alternatives`, one full Plan per compared job in the order
    asked (the first is the Plan itself, which a thread keeps)."""
    if not turn.alternatives:
        return turn.plan.model_dump_json(indent=2)
    document = turn.plan.model_dump(mode="json")
    document["alternatives"] = [plan.model_dump(mode="json") for plan in turn.alternatives]
    return json.dumps(document, indent=2, ensure_ascii=False)
