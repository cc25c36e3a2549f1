"""A loopback stand-in for Slack's side: the Web API, response_url, file uploads and Socket Mode.

It records what the app sends and, like Slack, rejects payloads that break Block Kit limits
(`invalid_blocks`, `msg_blocks_too_long`) or post to a response_url more than 5 times, so tests
see the same failures production would.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import time
from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qsl

from aiohttp import WSMsgType, web
from slack_sdk.errors import SlackObjectFormationError
from slack_sdk.models.blocks import Block

from adapters.slack import limits
from adapters.slack.serve import BOT_SCOPES
from tests.fakes.loopback import serve_on_loopback, stop_loopback

BOT_USER_ID = "U0BOT"
TEAM_ID = "T0001"


def sign(body: str, secret: str, timestamp: int | None = None) -> dict[str, str]:
    """Headers Slack would send with `body` (v0 HMAC-SHA256 over `v0:{ts}:{body}`)."""
    ts = str(int(time.time()) if timestamp is None else timestamp)
    digest = hmac.new(secret.encode(), f"v0:{ts}:{body}".encode(), hashlib.sha256).hexdigest()
    return {"X-Slack-Request-Timestamp": ts, "X-Slack-Signature": f"v0={digest}"}


def mention_envelope(envelope_id: str, event_id: str, text: str, ts: str) -> dict[str, Any]:
    """A Socket Mode envelope carrying an app_mention of the bot in channel C0SOCK."""
    return {
        "envelope_id": envelope_id,
        "type": "events_api",
        "accepts_response_payload": False,
        "retry_attempt": 0,
        "retry_reason": "",
        "payload": {
            "type": "event_callback",
            "team_id": TEAM_ID,
            "event_id": event_id,
            "event": {
                "type": "app_mention",
                "text": f"<@{BOT_USER_ID}> {text}",
                "ts": ts,
                "channel": "C0SOCK",
                "user": "U0ANA",
            },
        },
    }


def payload_problems(payload: dict[str, Any]) -> list[str]:
    """Every way `payload` breaks a Slack message limit (empty when Slack would accept it)."""
    problems = []
    blocks = payload.get("blocks") or []
    if isinstance(blocks, str):
        blocks = json.loads(blocks)
    if not payload.get("text"):
        problems.append("no top-level text fallback")
    elif len(payload["text"]) > limits.FALLBACK_TEXT_MAX_CHARS:
        problems.append("fallback text too long")
    if len(blocks) > limits.MAX_BLOCKS_PER_MESSAGE:
        problems.append(f"{len(blocks)} blocks")
    if len(json.dumps(blocks, ensure_ascii=False)) > limits.MESSAGE_BLOCKS_MAX_JSON_CHARS:
        problems.append("msg_blocks_too_long")
    block_ids = [b["block_id"] for b in blocks if "block_id" in b]
    if len(block_ids) != len(set(block_ids)):
        problems.append("duplicate block_id")
    for n, block in enumerate(blocks):
        try:
            parsed = Block.parse(block)
            if parsed is None:
                problems.append(f"block {n}: unknown type {block.get('type')}")
                continue
            parsed.to_dict()  # slack_sdk raises on the limits it knows
        except SlackObjectFormationError as error:
            problems.append(f"block {n}: {error}")
        for field in block.get("fields") or []:
            if len(field["text"]) > limits.SECTION_FIELD_MAX_CHARS:
                problems.append(f"block {n}: field over {limits.SECTION_FIELD_MAX_CHARS}")
        for element in block.get("elements") or []:
            if len(element.get("value", "")) > limits.BUTTON_VALUE_MAX_CHARS:
                problems.append(f"block {n}: button value too long")
    return problems


class FakeSlack:
    """Serve with `await FakeSlack().start()`; point the app's client at `base_url`."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.responses: list[tuple[str, dict[str, Any]]] = []
        self.uploads: list[bytes] = []
        # files.uploadV2 (getUploadURLExternal, the upload, completeUploadExternal): each file's
        # name by the id handed out for it, and its bytes once uploaded.
        self.upload_names: dict[str, str] = {}
        self.uploaded: dict[str, bytes] = {}
        self.socket_acks: list[dict[str, Any]] = []
        self.rate_limit_next: dict[str, int] = {}  # method → how many 429s to answer first
        # method (or "response_url") → how many 500s to answer first, as in a Slack outage
        self.fail_next: dict[str, int] = {}
        self.installs: dict[str, str] = {}  # oauth code → team id
        # With token rotation on, an install hands out a token that expires this soon; a refresh
        # hands out one good for Slack's usual 12 hours.
        self.install_expires_in_s: int | None = None
        self.refreshes = 0
        # What the app's install granted (Slack names it in every answer's x-oauth-scopes).
        self.granted_scopes: list[str] = list(BOT_SCOPES)
        self.admins: set[str] = set()  # users.info says these are workspace admins
        self.auth_error: str | None = None  # e.g. "invalid_auth": auth.test refuses the token
        self.socket_error: str | None = None  # e.g. "missing_scope": apps.connections.open refuses
        self.channel_errors: dict[str, str] = {}  # channel → chat.postMessage's error there
        self.shared_files: dict[str, bytes] = {}  # file id → content, at its url_private
        self.file_fetches: list[dict[str, str]] = []  # each fetch's path and Authorization
        # While set to an unset Event, posts to a response_url wait for it (answers in flight).
        self.hold: asyncio.Event | None = None
        self._changed = asyncio.Condition()
        self._sockets: list[web.WebSocketResponse] = []
        self._ts = 1_700_000_000_000_000
        self.port = 0

    @property
    def base_url(self) -> str:
        return (
            f"http://127.0.0.1:{self.port}/api/"  # the trailing slash matters: slack_sdk urljoins
        )

    def response_url(self, name: str) -> str:
        return f"http://127.0.0.1:{self.port}/response/{name}"

    async def start(self) -> FakeSlack:
        app = web.Application(client_max_size=10 * 1024 * 1024)
        app.router.add_post("/api/{method}", self._api)
        app.router.add_get("/api/{method}", self._api)  # slack_sdk GETs users.info
        app.router.add_post("/response/{name:.*}", self._response_url)
        app.router.add_post("/upload/{file_id}", self._upload)
        app.router.add_get("/link/", self._socket)
        app.router.add_get("/files/{file_id}/{name}", self._shared_file)
        self._runner, self.port = await serve_on_loopback(app)
        return self

    async def stop(self) -> None:
        await stop_loopback(self._runner, list(self._sockets))

    async def wait_for(self, predicate: Callable[[], Any], timeout_s: float = 5.0) -> Any:
        async with self._changed:
            await asyncio.wait_for(self._changed.wait_for(predicate), timeout_s)
        return predicate()

    def posts(self, method: str = "chat.postMessage") -> list[dict[str, Any]]:
        return [params for name, params in self.calls if name == method]

    async def _record(self, append: Callable[[], None]) -> None:
        async with self._changed:
            append()
            self._changed.notify_all()

    def _next_ts(self) -> str:
        self._ts += 1
        return f"{self._ts // 1_000_000}.{self._ts % 1_000_000:06d}"

    async def _api(self, request: web.Request) -> web.Response:
        method = request.match_info["method"]
        if request.content_type == "application/json":
            params = await request.json()
        else:
            params = dict(parse_qsl(await request.text()))
        params.update(request.query)  # slack_sdk sends some methods' arguments in the query
        params["_auth"] = request.headers.get("Authorization", "")
        if await self._failing(method, params):
            return web.json_response({"ok": False, "error": "fatal_error"}, status=500)
        if self.rate_limit_next.get(method):
            self.rate_limit_next[method] -= 1
            await self._record(lambda: self.calls.append((f"{method}#429", params)))
            return web.json_response(
                {"ok": False, "error": "ratelimited"}, status=429, headers={"Retry-After": "0"}
            )
        await self._record(lambda: self.calls.append((method, params)))
        return web.json_response(
            self._answer(method, params), headers={"x-oauth-scopes": ",".join(self.granted_scopes)}
        )

    def _answer(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        if method == "auth.test" and self.auth_error:
            return {"ok": False, "error": self.auth_error}
        if method == "auth.test":
            token = params["_auth"].removeprefix("Bearer ")
            team = token.removeprefix("xoxb-") if token.startswith("xoxb-T") else TEAM_ID
            return {
                "ok": True,
                "team": "fake workspace",
                "team_id": team,
                "user_id": BOT_USER_ID,
                "bot_id": "B0BOT",
            }
        if method == "chat.postMessage" and params.get("channel") in self.channel_errors:
            error = self.channel_errors[params["channel"]]
            return {
                "ok": False,
                "error": error,
                **({"needed": "chat:write"} if error == "missing_scope" else {}),
            }
        if method == "users.info":
            user = params.get("user", "")
            return {"ok": True, "user": {"id": user, "is_admin": user in self.admins}}
        if method == "chat.postMessage":
            problems = payload_problems(params)
            if problems:
                return {"ok": False, "error": "invalid_blocks", "problems": problems}
            return {"ok": True, "channel": params["channel"], "ts": self._next_ts()}
        if method == "files.getUploadURLExternal":
            if "files:write" not in self.granted_scopes:
                return {"ok": False, "error": "missing_scope", "needed": "files:write"}
            # slack_sdk asks for every file's URL before it uploads any: ids must not repeat.
            file_id = f"F{len(self.upload_names) + 1:04d}"
            self.upload_names[file_id] = params.get("filename", "")
            return {
                "ok": True,
                "upload_url": f"http://127.0.0.1:{self.port}/upload/{file_id}",
                "file_id": file_id,
            }
        if method == "files.completeUploadExternal":
            return {"ok": True, "files": json.loads(params["files"])}
        if method == "apps.connections.open":
            if not params["_auth"].startswith("Bearer xapp-"):
                return {"ok": False, "error": "invalid_auth"}
            if self.socket_error:
                return {"ok": False, "error": self.socket_error}
            return {"ok": True, "url": f"ws://127.0.0.1:{self.port}/link/?ticket=t"}
        if method == "oauth.v2.access" and params.get("grant_type") == "refresh_token":
            team = params.get("refresh_token", "").removeprefix("xoxe-1-")
            if team not in self.installs.values():
                return {"ok": False, "error": "invalid_refresh_token"}
            self.refreshes += 1
            return {"ok": True, "token_type": "bot", "team": {"id": team, "name": team},
                    "access_token": f"xoxe.xoxb-{team}-{self.refreshes}",
                    "refresh_token": f"xoxe-1-{team}", "expires_in": 12 * 3600}  # fmt: skip
        if method == "oauth.v2.access":
            team = self.installs.get(params.get("code", ""))
            if team is None:
                return {"ok": False, "error": "invalid_code"}
            rotation = (
                {}
                if self.install_expires_in_s is None
                else {"refresh_token": f"xoxe-1-{team}", "expires_in": self.install_expires_in_s}
            )
            return {
                **rotation,
                "ok": True,
                "access_token": f"xoxb-{team}",
                "token_type": "bot",
                "scope": "commands,chat:write",
                "bot_user_id": BOT_USER_ID,
                "app_id": "A0001",
                "team": {"id": team, "name": team},
                "enterprise": None,
                "authed_user": {"id": "U0INSTALLER"},
                "is_enterprise_install": False,
            }
        return {"ok": False, "error": "unknown_method"}

    async def _response_url(self, request: web.Request) -> web.Response:
        name, body = request.match_info["name"], await request.json()
        if self.hold is not None:
            await self.hold.wait()
        if await self._failing("response_url", {"_url": name, **body}):
            return web.Response(status=500, text="internal_error")
        if sum(1 for url, _ in self.responses if url == name) >= limits.RESPONSE_URL_MAX_POSTS:
            return web.Response(status=404, text="used_url")
        if payload_problems(body):
            return web.Response(status=400, text="invalid_blocks")
        await self._record(lambda: self.responses.append((name, body)))
        return web.Response(text="ok")

    async def _failing(self, method: str, params: dict[str, Any]) -> bool:
        """Answer a 500 if `fail_next` says so, recording the attempt as `method#500`."""
        if not self.fail_next.get(method):
            return False
        self.fail_next[method] -= 1
        await self._record(lambda: self.calls.append((f"{method}#500", params)))
        return True

    def share_file(self, name: str, content: bytes) -> dict[str, Any]:
        """A file shared in a message: its metadata as the event carries it."""
        file_id = f"F{len(self.shared_files) + 1:04d}"
        self.shared_files[file_id] = content
        url = f"http://127.0.0.1:{self.port}/files/{file_id}/{name}"
        return {"id": file_id, "name": name, "size": len(content), "filetype": "json",
                "url_private": url, "url_private_download": url}  # fmt: skip

    async def _shared_file(self, request: web.Request) -> web.Response:
        """Slack serves a private file to a token with files:read; without the scope (or with no
        token) it answers with its sign-in page, as files.slack.com does."""
        auth = request.headers.get("Authorization", "")
        await self._record(lambda: self.file_fetches.append({"path": request.path, "auth": auth}))
        content = self.shared_files.get(request.match_info["file_id"])
        if (
            content is None
            or not auth.startswith("Bearer ")
            or "files:read" not in self.granted_scopes
        ):
            return web.Response(text="<html>Sign in to Slack</html>", content_type="text/html")
        return web.Response(body=content, content_type="application/json")

    async def _upload(self, request: web.Request) -> web.Response:
        data = await request.read()
        file_id = request.match_info["file_id"]

        def keep() -> None:
            self.uploads.append(data)
            self.uploaded[file_id] = data

        await self._record(keep)
        return web.Response(text="OK")

    async def _socket(self, request: web.Request) -> web.WebSocketResponse:
        ws = web.WebSocketResponse()
        await ws.prepare(request)
        self._sockets.append(ws)
        await ws.send_json(
            {
                "type": "hello",
                "num_connections": 1,
                "debug_info": {"host": "fake"},
                "connection_info": {"app_id": "A0001"},
            }
        )
        async for message in ws:
            if message.type == WSMsgType.TEXT:
                ack = json.loads(message.data)
                await self._record(lambda ack=ack: self.socket_acks.append(ack))
        await self._record(lambda: self._sockets.remove(ws))  # the app closed its connection
        return ws

    @property
    def socket_connections(self) -> int:
        return len(self._sockets)

    async def push_envelope(self, envelope: dict[str, Any]) -> None:
        """Deliver a Socket Mode envelope to every connected app."""
        await self.wait_for(lambda: self._sockets)
        for ws in self._sockets:
            await ws.send_json(envelope)
