"""`gpuplan doctor slack|discord|mcp`: run the checks in order, print one line each, exit 0 or 1."""

from __future__ import annotations

import argparse
import asyncio
import os

from adapters.doctor.report import Check, exit_code, summary

DEFAULT_PORT = "3000"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="platform", required=True)
    slack = sub.add_parser(
        "slack", help="check the Slack app, tokens and how Slack reaches the bot"
    )
    mode = slack.add_mutually_exclusive_group()
    mode.add_argument("--http", action="store_true", help="check HTTP mode")
    mode.add_argument("--socket", action="store_true", help="check Socket Mode")
    slack.add_argument(
        "--url",
        help="the running bot's events URL (default http://127.0.0.1:$PORT/slack/events, "
        f"PORT default {DEFAULT_PORT})",
    )
    slack.add_argument(
        "--public-url", help="the https address Slack calls (your tunnel), e.g. https://x.example"
    )
    slack.add_argument(
        "--files", action="store_true", help="the bot uploads charts (GPUPLAN_SLACK_FILES=1)"
    )
    sub.add_parser("discord", help="check the Discord application, token, intents and commands")
    sub.add_parser("mcp", help="check the MCP SDK extra is installed and the server starts")


def run(args: argparse.Namespace) -> int:
    from adapters.doctor import common

    if args.platform == "slack":
        header, checks = _slack(args)
    elif args.platform == "mcp":
        from adapters.doctor.mcp_checks import mcp_checks

        header, checks = "gpuplan doctor mcp", mcp_checks()
    else:
        header, checks = _discord()
    checks += [common.state_store(), common.prices()]
    print(header)
    for check in checks:
        print(check.line)
    print(summary(checks))
    return exit_code(checks)


def _slack(args: argparse.Namespace) -> tuple[str, list[Check]]:
    from adapters.doctor.slack_checks import SlackDoctorOptions, slack_checks
    from adapters.slack.serve import EVENTS_PATH, read_env

    # Socket Mode when asked, or when only its token says so; HTTP otherwise (serve's default).
    socket = args.socket or (not args.http and bool(os.environ.get("SLACK_APP_TOKEN")))
    env, _ = read_env(socket=socket, files_flag=args.files)
    port = os.environ.get("PORT") or DEFAULT_PORT
    options = SlackDoctorOptions(
        socket=socket,
        local_url=args.url or f"http://127.0.0.1:{port}{EVENTS_PATH}",
        public_url=args.public_url,
        files_enabled=env.files_enabled,
    )
    if socket:
        why = "" if args.socket else " (SLACK_APP_TOKEN is set; --http checks HTTP mode)"
        header = f"gpuplan doctor slack: Socket Mode{why}"
    else:
        header = "gpuplan doctor slack: HTTP mode (--socket checks Socket Mode)"
    return header, asyncio.run(slack_checks(env, options))


def _discord() -> tuple[str, list[Check]]:
    from adapters.doctor.discord_checks import discord_checks

    return "gpuplan doctor discord", asyncio.run(discord_checks(os.environ))
