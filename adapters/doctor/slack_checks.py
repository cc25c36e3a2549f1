"""The Slack checks, in the order a set-up breaks: tokens, Slack's answer to them, scopes, then
the way Slack reaches the bot (a signed request to the HTTP server, or a Socket Mode connection).

Tokens are only ever described (kind and length), never printed. Slack's Web API base URL is
SLACK_API_URL, the same variable the bot uses, so the checks run against a loopback fake in tests.
"""

from __future__ import annotations

import json
import re
import secrets
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from adapters.doctor.common import NETWORK_ERRORS, unreachable
from adapters.doctor.report import Check, fail, note, ok, skip, warn
from adapters.slack.manifest import bot_events
from adapters.slack.serve import (
    BOT_SCOPES,
    EVENTS_PATH,
    INSTALL_PATH,
    OAUTH_REDIRECT_PATH,
    SlackEnv,
)

if TYPE_CHECKING:
    from slack_sdk.web.async_slack_response import AsyncSlackResponse

REQUEST_TIMEOUT_S = 10.0
APPS_PAGE = "https://api.slack.com/apps"
_SIGNING_SECRET = re.compile(r"[0-9a-f]{32}")  # the Client Secret has the same shape
_CLIENT_ID = re.compile(r"\d+\.\d+")
_TOKEN_CHARACTERS = re.compile(r"[A-Za-z0-9-]+")

# What stops working without each manifest scope, said the way a user notices it.
SCOPE_USES = {
    "app_mentions:read": "@gpuplan mentions are not delivered",
    "channels:history": "plain replies in public-channel threads are not read",
    "chat:write": "the bot cannot post answers in threads",
    "commands": "/gpuplan does not exist",
    "files:read": "a shared config.json is not read (pasting its JSON still works)",
    "files:write": "the chart cannot be uploaded (--files)",
    "groups:history": "plain replies in private-channel threads are not read",
    "im:history": "direct messages to the bot are not delivered",
}
# Token prefixes people paste into the wrong variable, and what each one is.
_TOKEN_KINDS = {
    "xoxb-": "a bot token",
    "xoxp-": "a user token",
    "xapp-": "an app-level token",
    "xoxe": "a rotation refresh token",
}
_REINSTALL = (
    f"reinstall the app ({APPS_PAGE} → your app → OAuth & Permissions → Reinstall) and copy the "
    "new Bot User OAuth Token into SLACK_BOT_TOKEN"
)
AUTH_FIXES = {
    "invalid_auth": "copy the Bot User OAuth Token again (OAuth & Permissions); a reinstall or a "
    "rotation replaces it",
    "not_authed": "set SLACK_BOT_TOKEN to the Bot User OAuth Token (xoxb-…)",
    "token_revoked": _REINSTALL,
    "account_inactive": _REINSTALL,
    "token_expired": "token rotation is on and this token expired: turn rotation off in "
    "OAuth & Permissions, or install through OAuth (SLACK_CLIENT_ID, SLACK_CLIENT_SECRET)",
    "not_allowed_token_type": "SLACK_BOT_TOKEN must be the Bot User OAuth Token (xoxb-…)",
}
SOCKET_FIXES = {
    "invalid_auth": "copy the token again from Basic Information → App-Level Tokens",
    "not_authed": "set SLACK_APP_TOKEN to an app-level token (xapp-…)",
    "missing_scope": "the app-level token needs the connections:write scope: generate one with it "
    "under Basic Information → App-Level Tokens",
    "not_allowed_token_type": "SLACK_APP_TOKEN must be an app-level token (xapp-…)",
}


@dataclass(frozen=True)
class SlackDoctorOptions:
    socket: bool
    local_url: str  # where `gpuplan serve slack --http` listens, including /slack/events
    public_url: str | None  # the tunnel or load balancer address Slack calls, if given
    files_enabled: bool


async def slack_checks(env: SlackEnv, options: SlackDoctorOptions) -> list[Check]:
    checks: list[Check] = []
    if options.socket:
        checks.append(token_shape("SLACK_APP_TOKEN", env.app_token, "xapp-", _APP_TOKEN_WHERE))
    if env.oauth and not env.bot_token:
        checks.append(
            note(
                "SLACK_BOT_TOKEN",
                "OAuth installs keep each workspace's token in the state store; set "
                "SLACK_BOT_TOKEN to one workspace's xoxb- token to check it here",
            )
        )
        bot_token_ok = False
    else:
        checks.append(token_shape("SLACK_BOT_TOKEN", env.bot_token, "xoxb-", _BOT_TOKEN_WHERE))
        bot_token_ok = checks[-1].status == "ok"
    if env.oauth:
        checks += client_credentials(env.client_id or "", env.client_secret or "")
    if not options.socket:
        checks.append(signing_secret_shape(env.signing_secret))
    if bot_token_ok:
        checks += await token_and_scopes(env.bot_token or "", env.api_url, options.files_enabled)
    elif not env.oauth:
        checks += [skip("auth.test", "SLACK_BOT_TOKEN"), skip("scopes", "SLACK_BOT_TOKEN")]
    if options.socket:
        if checks[0].status == "ok":
            checks.append(await socket_connects(env.app_token or "", env.api_url))
        else:
            checks.append(skip("Socket Mode", "SLACK_APP_TOKEN"))
    else:
        checks += await http_reachable(env.signing_secret, options)
        if env.oauth:
            checks.append(await install_page(options))
    checks.append(event_subscriptions(options))
    return checks


_BOT_TOKEN_WHERE = "OAuth & Permissions → Bot User OAuth Token"
_APP_TOKEN_WHERE = "Basic Information → App-Level Tokens (scope connections:write)"


def token_shape(variable: str, value: str | None, prefix: str, where: str) -> Check:
    """Set, bare, and of the kind the variable wants; says what it is instead, never what it is."""
    fix = f"copy it from {APPS_PAGE} → your app → {where}"
    if not value:
        return fail(variable, "not set", fix)
    if value != value.strip() or value[:1] in "\"'" or value[-1:] in "\"'":
        return fail(variable, "has spaces or quotes around it", "set it to the bare token")
    kind = next((name for start, name in _TOKEN_KINDS.items() if value.startswith(start)), None)
    if not value.startswith(prefix):
        found = f"it holds {kind}" if kind else f"it does not start with {prefix}"
        return fail(variable, found, fix)
    if not _TOKEN_CHARACTERS.fullmatch(value) or len(value) < len(prefix) + 8:
        return fail(variable, f"starts with {prefix} but is cut short or has odd characters", fix)
    return ok(variable, f"set ({prefix}…, {len(value)} characters)")


def client_credentials(client_id: str, client_secret: str) -> list[Check]:
    """OAuth installs (many workspaces): the app's Client ID and Client Secret, by shape."""
    fix = f"copy it from {APPS_PAGE} → your app → Basic Information → App Credentials"
    if _CLIENT_ID.fullmatch(client_id):
        id_check = ok("SLACK_CLIENT_ID", "set (digits.digits)")
    else:
        id_check = fail("SLACK_CLIENT_ID", "does not look like a Client ID (digits.digits)", fix)
    if _SIGNING_SECRET.fullmatch(client_secret):
        secret_check = ok("SLACK_CLIENT_SECRET", "set (32 hex characters)")
    else:
        found = "does not look like a Client Secret (32 hex characters)"
        secret_check = fail("SLACK_CLIENT_SECRET", found, fix)
    return [id_check, secret_check]


def signing_secret_shape(secret: str) -> Check:
    name = "SLACK_SIGNING_SECRET"
    fix = (
        f"copy the Signing Secret from {APPS_PAGE} → your app → Basic Information → App Credentials"
    )
    if not secret:
        return fail(name, "not set (HTTP mode verifies every request with it)", fix)
    if secret.startswith(("xox", "xapp-")):
        return fail(name, "holds a token, not the signing secret", fix)
    if not _SIGNING_SECRET.fullmatch(secret):
        return fail(name, "does not look like a signing secret (32 hex characters)", fix)
    return ok(name, "set (32 hex characters)")


async def token_and_scopes(token: str, api_url: str | None, files_enabled: bool) -> list[Check]:
    """auth.test, then the scopes Slack reports for the token in its x-oauth-scopes header."""
    from slack_sdk.errors import SlackApiError

    from adapters.slack.app import make_client

    client = make_client(token, api_url)
    client.timeout = int(REQUEST_TIMEOUT_S)
    try:
        response = await client.auth_test()
    except SlackApiError as error:
        code = str(error.response.get("error", "error"))
        fix = AUTH_FIXES.get(code, f"see {APPS_PAGE} → your app → OAuth & Permissions")
        return [fail("auth.test", f"Slack refused the bot token ({code})", fix), _no_scopes()]
    except NETWORK_ERRORS as error:  # no network, DNS, TLS, a proxy: the line says which
        return [_unreachable("auth.test", client.base_url, error), _no_scopes()]
    if not response.get("bot_id"):
        found = fail("auth.test", "the token works but is not a bot's", AUTH_FIXES["not_authed"])
        return [found, _no_scopes()]
    who = f"bot <@{response.get('user_id')}> in workspace {response.get('team', '')} "
    return [ok("auth.test", who + f"({response.get('team_id')})"), _scopes(response, files_enabled)]


def _no_scopes() -> Check:
    return skip("scopes", "auth.test")


def _scopes(response: AsyncSlackResponse, files_enabled: bool) -> Check:
    header = next((v for k, v in response.headers.items() if k.lower() == "x-oauth-scopes"), None)
    if header is None:
        return warn("scopes", "Slack's answer did not list the token's scopes (x-oauth-scopes)")
    granted = {scope.strip() for scope in str(header).split(",") if scope.strip()}
    missing = [scope for scope in BOT_SCOPES if scope not in granted]
    # Apps installed before files:read keep answering; only attached configs go unread.
    optional = {"files:read"} | (set() if files_enabled else {"files:write"})
    needed = [s for s in missing if s not in optional]
    fix = (
        "add them under OAuth & Permissions → Bot Token Scopes (or paste the manifest again), then "
        "reinstall the app: Slack grants new scopes only on install"
    )
    said = "; ".join(f"{scope} ({SCOPE_USES[scope]})" for scope in missing)
    if needed:
        return fail("scopes", f"missing {said}", fix)
    if missing:
        return warn("scopes", f"missing {said}; the rest works without it", fix)
    return ok("scopes", f"all {len(BOT_SCOPES)} the manifest asks for are granted")


def event_subscriptions(options: SlackDoctorOptions) -> Check:
    """A bot token cannot read the app's event subscriptions, so say where to look."""
    where = (
        "Socket Mode on, then Event Subscriptions on"
        if options.socket
        else f"Event Subscriptions on, Request URL {_request_url(options)} marked Verified"
    )
    return note(
        "event subscriptions",
        f"not readable with a bot token; check {APPS_PAGE} → your app: {where}, bot events "
        f"{', '.join(bot_events())}; Interactivity on; App Home → Messages Tab on (for DMs)",
    )


def _request_url(options: SlackDoctorOptions) -> str:
    if options.public_url:
        return options.public_url.rstrip("/") + EVENTS_PATH
    return f"https://YOUR-HOST{EVENTS_PATH}"


async def http_reachable(secret: str, options: SlackDoctorOptions) -> list[Check]:
    """The local server, then (if given) the public address, answer what Slack sends first."""
    if not secret:
        return [skip("local server", "SLACK_SIGNING_SECRET")]
    local = await url_verification(
        "local server",
        options.local_url,
        secret,
        unreachable_fix="start it in another terminal (gpuplan serve slack --http --port N) or "
        "pass --url http://127.0.0.1:N/slack/events",
    )
    if options.public_url is None:
        public = note(
            "public URL",
            "not checked: Slack needs an https:// address that reaches this server (a tunnel or "
            "a load balancer); pass --public-url https://… to send Slack's check through it",
        )
        return [local, public]
    request_url = _request_url(options)
    if not request_url.startswith("https://"):
        scheme = fail(
            "public URL",
            f"{request_url} is not https",
            "Slack only calls https:// Request URLs: use the https address your tunnel prints",
        )
    else:
        scheme = ok("public URL", f"paste {request_url} as the Request URL (events, interactivity, "
                    "/gpuplan)")  # fmt: skip
    through = await url_verification(
        "through the public URL",
        request_url,
        secret,
        unreachable_fix="start the tunnel and point it at the bot's local port "
        "(e.g. cloudflared tunnel --url http://localhost:3000), then pass the address it prints",
    )
    return [local, scheme, through]


async def url_verification(name: str, url: str, secret: str, *, unreachable_fix: str) -> Check:
    """POST a signed url_verification, exactly what Slack sends when a Request URL is saved, and
    expect its challenge echoed back."""
    import aiohttp
    from slack_sdk.signature import SignatureVerifier

    challenge = secrets.token_urlsafe(16)
    body = json.dumps(
        {"token": "gpuplan-doctor", "challenge": challenge, "type": "url_verification"}
    )
    timestamp = str(int(time.time()))
    signature = SignatureVerifier(secret).generate_signature(timestamp=timestamp, body=body)
    headers = {
        "Content-Type": "application/json",
        "X-Slack-Request-Timestamp": timestamp,
        "X-Slack-Signature": signature,
    }
    try:
        async with (
            aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=REQUEST_TIMEOUT_S)) as http,
            http.post(url, data=body, headers=headers) as response,
        ):
            status, text = response.status, await response.text()
    except NETWORK_ERRORS as error:
        return _unreachable(name, url, error, fix=unreachable_fix)
    if status == 401:
        return fail(
            name,
            f"{url} refused the signature (401)",
            "the server runs with a different SLACK_SIGNING_SECRET than this shell, or its clock "
            "is more than 5 minutes off: give both the Signing Secret from Basic Information",
        )
    if status == 404:
        return fail(name, f"{url} answered 404", f"the path must be {EVENTS_PATH}")
    if status != 200:
        return fail(name, f"{url} answered {status}", "read the bot's log for the cause")
    try:
        echoed = json.loads(text).get("challenge")
    except (ValueError, AttributeError):
        echoed = None
    if echoed != challenge:
        return fail(
            name,
            f"{url} answered 200 without echoing the challenge",
            "something other than gpuplan answers there: check the port and the tunnel's target",
        )
    return ok(name, f"{url} answers Slack's signed url_verification")


async def install_page(options: SlackDoctorOptions) -> Check:
    """In OAuth mode the server also serves the install page, which links to Slack's authorize."""
    import aiohttp

    name = "install page"
    url = options.local_url.removesuffix(EVENTS_PATH) + INSTALL_PATH
    try:
        async with (
            aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=REQUEST_TIMEOUT_S)) as http,
            http.get(url) as response,
        ):
            status, text = response.status, await response.text()
    except NETWORK_ERRORS as error:
        return _unreachable(name, url, error, fix="start the bot with the same environment")
    if status != 200 or "slack.com/oauth/v2/authorize" not in text:
        return fail(
            name,
            f"{url} answered {status} without a link to Slack's authorize page",
            "the server runs without SLACK_CLIENT_ID and SLACK_CLIENT_SECRET: restart it with them",
        )
    public = (options.public_url or "https://YOUR-HOST").rstrip("/")
    return ok(
        name,
        f"served; people install at {public}{INSTALL_PATH}, and Slack needs "
        f"{public}{OAUTH_REDIRECT_PATH} under OAuth & Permissions → Redirect URLs",
    )


async def socket_connects(app_token: str, api_url: str | None) -> Check:
    """apps.connections.open with the app-level token, then the WebSocket it names says hello."""
    import aiohttp
    from slack_sdk.errors import SlackApiError

    from adapters.slack.app import make_client

    name = "Socket Mode"
    client = make_client(app_token, api_url)
    client.timeout = int(REQUEST_TIMEOUT_S)
    try:
        opened = await client.apps_connections_open(app_token=app_token)
    except SlackApiError as error:
        code = str(error.response.get("error", "error"))
        fix = SOCKET_FIXES.get(code, f"see {APPS_PAGE} → your app → Socket Mode")
        return fail(name, f"apps.connections.open refused the app-level token ({code})", fix)
    except NETWORK_ERRORS as error:
        return _unreachable(name, client.base_url, error)
    try:
        async with (
            aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=REQUEST_TIMEOUT_S)) as http,
            http.ws_connect(str(opened["url"])) as socket,
        ):
            first = await socket.receive_json(timeout=REQUEST_TIMEOUT_S)
    except (*NETWORK_ERRORS, ValueError) as error:  # ValueError: not JSON
        return _unreachable(name, "Slack's Socket Mode WebSocket", error)
    if first.get("type") != "hello":
        reason = first.get("reason") or first.get("type")
        return fail(
            name, f"the WebSocket said {reason!r} instead of hello", "try again in a minute"
        )
    app_id = (first.get("connection_info") or {}).get("app_id", "")
    return ok(name, f"connected and greeted (app {app_id})")


def _unreachable(name: str, where: str, error: Exception, *, fix: str = "") -> Check:
    return unreachable(
        name, where, error, fix or "check the network, proxy settings and SLACK_API_URL"
    )
