"""`gpuplan serve slack --http|--socket`: run the Slack bot.

Secrets come only from the environment and are never printed. slack_bolt and aiohttp are imported
inside functions so `gpuplan --help` stays fast.

On SIGTERM or SIGINT the bot drains (adapters.drain): in HTTP mode, Events API deliveries get 503
with Retry-After (Slack retries them, on another process or after the restart) while slash
commands and button clicks, which Slack does not retry, are still acked and answered; Socket Mode
disconnects. The answers in flight finish within GPUPLAN_DRAIN_S, then the process exits 0.
"""

from __future__ import annotations

import argparse
import os
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING

from adapters.slack.manifest import bot_scopes

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from aiohttp import web
    from slack_bolt.adapter.socket_mode.async_handler import AsyncSocketModeHandler
    from slack_bolt.async_app import AsyncApp
    from slack_bolt.oauth.async_oauth_settings import AsyncOAuthSettings

    from adapters.drain import InFlight
    from adapters.slack.state import SlackStores
    from bot.state.backend import StateBackend

EVENTS_PATH = "/slack/events"
HEALTH_PATH = "/healthz"
INSTALL_PATH = "/slack/install"
OAUTH_REDIRECT_PATH = "/slack/oauth_redirect"
# What an OAuth install asks for: the manifest's bot scopes.
BOT_SCOPES = list(bot_scopes())


@dataclass(frozen=True)
class SlackEnv:
    bot_token: str | None
    signing_secret: str
    app_token: str | None
    client_id: str | None
    client_secret: str | None
    api_url: str | None
    files_enabled: bool

    @property
    def oauth(self) -> bool:
        return bool(self.client_id and self.client_secret)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument(
        "--http", action="store_true", help=f"serve Slack's requests at {EVENTS_PATH} (default)"
    )
    mode.add_argument(
        "--socket", action="store_true", help="connect out over Socket Mode (SLACK_APP_TOKEN)"
    )
    parser.add_argument("--host", default="127.0.0.1", help="HTTP bind address")
    # argparse converts a string default with `type` too, so a bad PORT is refused like --port.
    parser.add_argument(
        "--port", type=_port, default=os.environ.get("PORT") or "3000", help="HTTP port (PORT)"
    )
    parser.add_argument(
        "--files", action="store_true", help="upload the chart into threads (GPUPLAN_SLACK_FILES=1)"
    )


def _port(text: str) -> int:
    if not text.strip().isdigit() or int(text) > 65535:
        raise argparse.ArgumentTypeError(
            f"a port (--port or PORT) is a whole number 0-65535, not {text!r}"
        )
    return int(text)


def run(args: argparse.Namespace) -> int:
    import asyncio

    env, missing = read_env(socket=args.socket, files_flag=args.files)
    if missing:
        print(
            f"gpuplan serve slack: set {', '.join(missing)} in the environment "
            "(see docs/deploy.md, 'Slack').",
            file=sys.stderr,
        )
        return 2
    from bot.state.backend import StateUrlError, backend_from_env

    try:
        backend = backend_from_env()
    except StateUrlError as error:
        print(f"gpuplan serve slack: {error}", file=sys.stderr)
        return 2
    if problem := _state_file_problem(backend):
        print(f"gpuplan serve slack: {problem}", file=sys.stderr)
        return 1
    from adapters.slack.state import open_stores
    from bot.prices.schedule import start_scheduled_refresh

    try:
        start_scheduled_refresh()
    except ValueError as error:  # a bad GPUPLAN_PRICES_REFRESH_S
        print(f"gpuplan serve slack: {error}", file=sys.stderr)
        return 2
    from adapters.drain import drain_budget_s

    try:
        budget_s = drain_budget_s()
    except ValueError as error:
        print(f"gpuplan serve slack: {error}", file=sys.stderr)
        return 2
    stores = open_stores(backend)
    serving = (
        _serve_socket(env, stores, budget_s)
        if args.socket
        else _serve_http(env, stores, args, budget_s)
    )
    try:
        asyncio.run(serving)
    except OSError as error:  # port in use, bad host
        print(f"gpuplan serve slack: {error.strerror or error}", file=sys.stderr)
        return 1
    return 0


def _state_file_problem(backend: StateBackend) -> str | None:
    """Why the SQLite state file cannot be written, naming it; None when it can (or on Redis).
    A bot that cannot save threads, thread links or installs should not start."""
    if backend.redis_url is not None:
        return None
    from bot.state.errors import StoreUnavailable
    from bot.state.threads import SQLiteStore

    try:
        store = SQLiteStore()
    except StoreUnavailable as error:
        return str(error)
    return str(store.read_only) if store.read_only is not None else None


def read_env(*, socket: bool, files_flag: bool = False) -> tuple[SlackEnv, list[str]]:
    """The Slack settings, and the names of required variables that are missing."""
    env = SlackEnv(
        bot_token=os.environ.get("SLACK_BOT_TOKEN") or None,
        signing_secret=os.environ.get("SLACK_SIGNING_SECRET", ""),
        app_token=os.environ.get("SLACK_APP_TOKEN") or None,
        client_id=os.environ.get("SLACK_CLIENT_ID") or None,
        client_secret=os.environ.get("SLACK_CLIENT_SECRET") or None,
        api_url=os.environ.get("SLACK_API_URL") or None,
        files_enabled=files_flag or os.environ.get("GPUPLAN_SLACK_FILES", "") == "1",
    )
    if socket:
        required = {"SLACK_APP_TOKEN": env.app_token, "SLACK_BOT_TOKEN": env.bot_token}
    elif env.oauth:
        required = {"SLACK_SIGNING_SECRET": env.signing_secret}
    else:
        required = {"SLACK_SIGNING_SECRET": env.signing_secret, "SLACK_BOT_TOKEN": env.bot_token}
    return env, [name for name, value in required.items() if not value]


def build_app_from_env(
    env: SlackEnv,
    conversation: object | None = None,
    stores: SlackStores | None = None,
    in_flight: InFlight | None = None,
) -> AsyncApp:
    """The Bolt app with the stores GPUPLAN_STATE_URL selects (or `stores`); metrics on."""
    from adapters.slack.app import build_app, make_client
    from adapters.slack.state import open_stores
    from bot import metrics
    from bot.conversation import Conversation
    from bot.state.backend import backend_from_env

    # Once: the conversation shares the Slack stores' backend.
    backend = stores.backend if stores is not None else backend_from_env()
    stores = stores or open_stores(backend)
    oauth_settings = _oauth_settings(env, stores) if env.oauth else None
    if conversation is None:
        conversation = Conversation(backend=backend)
        metrics.enable(conversation.prices.snapshot)
    return build_app(
        conversation,
        signing_secret=env.signing_secret,
        client=make_client(None if env.oauth else env.bot_token, env.api_url),
        threads=stores.threads,
        seen=stores.seen,
        files_enabled=env.files_enabled,
        oauth_settings=oauth_settings,
        in_flight=in_flight,
    )


def _oauth_settings(env: SlackEnv, stores: SlackStores) -> AsyncOAuthSettings:
    from slack_bolt.oauth.async_oauth_settings import AsyncOAuthSettings

    # With an installation that has a refresh token (token rotation turned on for the app), Bolt
    # refreshes the bot token before it expires and saves the new one through this store, so
    # every process sharing it picks the new token up.
    return AsyncOAuthSettings(
        client_id=env.client_id,
        client_secret=env.client_secret,
        scopes=BOT_SCOPES,
        installation_store=stores.installations(env.client_id or ""),
        state_store=stores.oauth_states(),
        install_path=INSTALL_PATH,
        redirect_uri_path=OAUTH_REDIRECT_PATH,
    )


async def start_http(
    app: AsyncApp,
    host: str,
    port: int,
    status: Callable[[], Awaitable[dict[str, object]]] | None = None,
    *,
    signing_secret: str,
    draining: Callable[[], bool] = lambda: False,
) -> web.AppRunner:
    """Serve `app` at EVENTS_PATH (plus the OAuth pages when configured) behind the gate that
    checks size and signature before Bolt parses anything (and, while `draining`, turns Events
    API deliveries away with 503), GET METRICS_PATH for Prometheus and, given the store's
    `status`, GET HEALTH_PATH for load balancers; returns the runner."""
    from aiohttp import web

    from adapters.metrics_http import METRICS_PATH, metrics_page
    from adapters.slack.ingress import slack_gate

    web_app = app.web_app(path=EVENTS_PATH, port=port)
    web_app.middlewares.append(slack_gate(signing_secret, EVENTS_PATH, draining=draining))
    web_app.router.add_get(METRICS_PATH, metrics_page)
    if status is not None:

        async def health(request: web.Request) -> web.Response:
            # 200 even when the store is down: this process still answers fresh questions, and
            # taking every process out of the balancer for a Redis outage would answer none.
            return web.json_response({"ok": True, "state": await status()})

        web_app.router.add_get(HEALTH_PATH, health)
    runner = web.AppRunner(web_app)
    await runner.setup()
    await web.TCPSite(runner, host, port).start()
    return runner


async def _serve_http(
    env: SlackEnv, stores: SlackStores, args: argparse.Namespace, budget_s: float
) -> None:
    from adapters.drain import InFlight, until_stop_signal

    in_flight = InFlight("slack")
    draining = False
    runner = await start_http(
        build_app_from_env(env, stores=stores, in_flight=in_flight),
        args.host,
        args.port,
        stores.status,
        signing_secret=env.signing_secret,
        draining=lambda: draining,
    )
    host, bound_port = args.host, runner.addresses[0][1]
    print(f"gpuplan: Slack requests at http://{host}:{bound_port}{EVENTS_PATH}", flush=True)
    print(f"gpuplan: state in {stores.backend.describe()}", flush=True)
    if env.oauth:
        print(f"gpuplan: install page at http://{host}:{bound_port}{INSTALL_PATH}", flush=True)
    try:
        received = await until_stop_signal()
        # Still listening: slash commands and clicks keep being acked and answered meanwhile.
        draining = True
        print(f"gpuplan: {received}: draining (up to {budget_s:g} s)", flush=True)
        await in_flight.finish(budget_s)
    finally:
        await runner.cleanup()


async def connect_socket(app: AsyncApp, app_token: str) -> AsyncSocketModeHandler:
    """Open a Socket Mode connection (apps.connections.open, then the WSS it names)."""
    from adapters.slack.ingress import socket_handler

    handler = socket_handler(app, app_token)
    await handler.connect_async()
    return handler


async def _serve_socket(env: SlackEnv, stores: SlackStores, budget_s: float) -> None:
    from adapters.drain import InFlight, until_stop_signal
    from adapters.metrics_http import serve_metrics_from_env

    in_flight = InFlight("slack")
    app = build_app_from_env(env, stores=stores, in_flight=in_flight)
    handler = await connect_socket(app, env.app_token or "")
    print("gpuplan: connected to Slack over Socket Mode", flush=True)
    print(f"gpuplan: state in {stores.backend.describe()}", flush=True)
    metrics_runner = await serve_metrics_from_env("slack")
    try:
        received = await until_stop_signal()
        print(f"gpuplan: {received}: draining (up to {budget_s:g} s)", flush=True)
    finally:
        # No new envelopes; the answers in flight still go out through the Web API.
        await handler.close_async()
    try:
        await in_flight.finish(budget_s)
    finally:
        if metrics_runner is not None:
            await metrics_runner.cleanup()
