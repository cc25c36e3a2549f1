"""Discord's API, offline: its OpenAPI schemas, and a loopback fake REST + Gateway server.

`schema_errors` validates our payloads against Discord's own OpenAPI spec (a vendored subset,
MIT). `FakeDiscord` runs on 127.0.0.1 so real discord.py goes through its whole `Client.start()`
path (login, IDENTIFY, READY, GUILD_CREATE) and every request body is recorded exactly as it went
over the wire. It enforces the 3 s acknowledgement deadline in real time (404 / 10062 when late),
which is what bench/discord_defer.py measures against.
"""

from __future__ import annotations

import asyncio
import itertools
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from aiohttp import WSMsgType, web
from jsonschema import Draft202012Validator

from tests.fakes.loopback import serve_on_loopback, stop_loopback

SUBSET = Path(__file__).parents[1] / "data" / "discord_openapi_subset.json"
APP_ID = 900_000_000_000_000_001
GUILD_ID = 900_000_000_000_000_002
CHANNEL_ID = 900_000_000_000_000_003
USER = {"id": "900000000000000004", "username": "ana", "discriminator": "0", "avatar": None}
BOT = {"id": str(APP_ID), "username": "gpuplan", "discriminator": "0", "avatar": None, "bot": True}
TIMESTAMP = "2026-01-01T00:00:00+00:00"
ALL_PERMISSIONS = str((1 << 51) - 1)


@cache
def _components() -> dict[str, Any]:
    return json.loads(SUBSET.read_text())["components"]


def schema_errors(schema: str, body: Any) -> list[str]:
    """Every way `body` breaks Discord's `schema`, one short line each; [] when valid."""
    validator = Draft202012Validator(
        {"$ref": f"#/components/schemas/{schema}", "components": _components()}
    )
    return [
        f"{'/'.join(map(str, error.absolute_path))}: {error.message[:100]}"
        for error in validator.iter_errors(body)
    ]


@dataclass
class Call:
    method: str
    path: str
    body: Any
    at_s: float  # loop time the request arrived
    status: int  # what the fake answered
    files: dict[str, bytes] = field(default_factory=dict)  # multipart attachments by filename


@dataclass
class FakeDiscord:
    ack_deadline_s: float = 3.0
    # When set, REST calls without `Authorization: Bot <bot_token>` get Discord's 401.
    bot_token: str | None = None
    calls: list[Call] = field(default_factory=list)
    identify: dict[str, Any] | None = None
    # The application as the Developer Portal left it, and the servers the bot was invited to.
    application_flags: int = 0
    interactions_endpoint_url: str | None = None
    guilds: list[dict[str, Any]] = field(
        default_factory=lambda: [
            {"id": str(GUILD_ID), "name": "fake guild", "permissions": ALL_PERMISSIONS}
        ]
    )
    # Registered commands by scope, as PUT by a sync: "global" or a guild id.
    commands: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    dispatched_at_s: dict[str, float] = field(default_factory=dict)
    _ids: itertools.count = field(default_factory=lambda: itertools.count(APP_ID + 1000))
    _seq: itertools.count = field(default_factory=lambda: itertools.count(1))
    _sockets: list[web.WebSocketResponse] = field(default_factory=list)
    _changed: asyncio.Event = field(default_factory=asyncio.Event)

    async def start(self) -> FakeDiscord:
        app = web.Application()
        app.router.add_get("/gateway", self._gateway)
        app.router.add_route("*", "/api/v10/{path:.*}", self._rest)
        self._runner, self.port = await serve_on_loopback(app)
        return self

    async def stop(self) -> None:
        await stop_loopback(self._runner, self._sockets)

    @property
    def rest_base(self) -> str:
        return f"http://127.0.0.1:{self.port}/api/v10"

    @property
    def gateway_url(self) -> str:
        return f"ws://127.0.0.1:{self.port}/gateway"

    async def slash(
        self,
        options: dict[str, Any],
        *,
        permissions: str = ALL_PERMISSIONS,
        interaction_id: str | None = None,
    ) -> str:
        """Dispatch `/gpuplan` with these options as INTERACTION_CREATE, from a member with
        these permissions; returns its id. Giving an earlier id delivers it again."""
        interaction_id = interaction_id or str(next(self._ids))
        data = {
            "id": str(next(self._ids)),
            "name": "gpuplan",
            "type": 1,
            "options": [
                {"name": k, "type": _option_type(v), "value": v} for k, v in options.items()
            ],
        }
        payload = {
            "id": interaction_id,
            "application_id": str(APP_ID),
            "type": 2,
            "data": data,
            "guild_id": str(GUILD_ID),
            "channel_id": str(CHANNEL_ID),
            "channel": _channel(),
            "member": {**_member(USER), "permissions": permissions},
            "token": f"token-{interaction_id}",
            "version": 1,
            "app_permissions": ALL_PERMISSIONS,
            "locale": "en-US",
            "guild_locale": "en-US",
            "entitlements": [],
            "authorizing_integration_owners": {"0": str(GUILD_ID)},
            "context": 0,
            "attachment_size_limit": 8 * 2**20,
        }
        self.dispatched_at_s[interaction_id] = asyncio.get_running_loop().time()
        await self._dispatch("INTERACTION_CREATE", payload)
        return interaction_id

    async def wait_for(self, predicate: Callable[[list[Call]], Any], timeout_s: float = 10) -> Any:
        """Wait until `predicate(calls)` is truthy and return its value."""
        async with asyncio.timeout(timeout_s):
            while not (found := predicate(self.calls)):
                self._changed.clear()
                await self._changed.wait()
        return found

    async def _dispatch(self, event: str, data: dict[str, Any]) -> None:
        message = {"op": 0, "t": event, "s": next(self._seq), "d": data}
        for socket in self._sockets:
            await socket.send_str(json.dumps(message))

    async def _gateway(self, request: web.Request) -> web.WebSocketResponse:
        socket = web.WebSocketResponse()
        await socket.prepare(request)
        self._sockets.append(socket)
        await socket.send_str(json.dumps({"op": 10, "d": {"heartbeat_interval": 45000}}))
        async for frame in socket:
            if frame.type != WSMsgType.TEXT:
                continue
            message = json.loads(frame.data)
            if message["op"] == 1:
                await socket.send_str(json.dumps({"op": 11}))
            elif message["op"] == 2:
                self.identify = message["d"]
                await self._ready(message["d"].get("shard", [0, 1]))
        return socket

    async def _ready(self, shard: list[int]) -> None:
        await self._dispatch(
            "READY",
            {
                "v": 10,
                "user": BOT,
                "session_id": "session",
                "resume_gateway_url": self.gateway_url,
                "guilds": [{"id": str(GUILD_ID), "unavailable": True}],
                "application": {"id": str(APP_ID), "flags": 0},
                "shard": shard,
            },
        )
        await self._dispatch("GUILD_CREATE", _guild())

    async def _rest(self, request: web.Request) -> web.Response:
        path = "/" + request.match_info["path"]
        body, files = await _body(request)
        now_s = asyncio.get_running_loop().time()
        # Interaction callbacks and webhooks authenticate by the interaction token in the path.
        if self.bot_token is not None and not path.startswith(("/interactions/", "/webhooks/")):
            authorized = request.headers.get("Authorization") == f"Bot {self.bot_token}"
        else:
            authorized = True
        response = (
            self._respond(request.method, path, body, now_s)
            if authorized
            else _json({"message": "401: Unauthorized", "code": 0}, status=401)
        )
        self.calls.append(Call(request.method, path, body, now_s, response.status, files))
        self._changed.set()
        return response

    def _respond(self, method: str, path: str, body: Any, now_s: float) -> web.Response:
        if path.startswith("/interactions/") and path.endswith("/callback"):
            interaction_id = path.split("/")[2]
            if now_s - self.dispatched_at_s.get(interaction_id, now_s) > self.ack_deadline_s:
                return _json({"message": "Unknown interaction", "code": 10062}, status=404)
            return _json(
                {
                    "interaction": {
                        "id": interaction_id,
                        "type": 2,
                        "response_message_loading": body.get("type") == 5,
                        "response_message_ephemeral": False,
                    },
                    "resource": {"type": body.get("type")},
                }
            )
        return _json(self._answer(method, path, body))

    def _answer(self, method: str, path: str, body: Any) -> Any:
        if path == "/users/@me":
            return BOT
        if path == "/oauth2/applications/@me":
            return {
                "id": str(APP_ID),
                "name": "gpuplan",
                "description": "",
                "icon": None,
                "bot_public": True,
                "bot_require_code_grant": False,
                "owner": USER,
                "verify_key": "0" * 64,
                "flags": self.application_flags,
                "interactions_endpoint_url": self.interactions_endpoint_url,
            }
        if path == "/users/@me/guilds":
            return self.guilds
        if path == "/gateway/bot":
            return {
                "url": self.gateway_url,
                "shards": 1,
                "session_start_limit": {
                    "total": 1000,
                    "remaining": 1000,
                    "reset_after": 0,
                    "max_concurrency": 1,
                },
            }
        if path.endswith("/commands"):
            scope = path.split("/guilds/")[1].split("/")[0] if "/guilds/" in path else "global"
            if method == "PUT":
                self.commands[scope] = [
                    {
                        **command,
                        "id": str(next(self._ids)),
                        "application_id": str(APP_ID),
                        "version": "1",
                    }
                    for command in body
                ]
            return self.commands.get(scope, [])
        if method in ("POST", "PATCH") and isinstance(body, dict):
            return _message(str(next(self._ids)), body)
        return {}


def _option_type(value: Any) -> int:
    return 5 if isinstance(value, bool) else 3


def _channel() -> dict[str, Any]:
    return {
        "id": str(CHANNEL_ID),
        "type": 0,
        "name": "ml",
        "position": 0,
        "guild_id": str(GUILD_ID),
        "permission_overwrites": [],
        "nsfw": False,
        "parent_id": None,
        "topic": None,
        "last_message_id": None,
        "rate_limit_per_user": 0,
        "flags": 0,
    }


def _member(user: dict[str, Any]) -> dict[str, Any]:
    return {
        "user": user,
        "roles": [],
        "joined_at": TIMESTAMP,
        "deaf": False,
        "mute": False,
        "flags": 0,
    }


def _guild() -> dict[str, Any]:
    everyone = {
        "id": str(GUILD_ID),
        "name": "@everyone",
        "permissions": ALL_PERMISSIONS,
        "position": 0,
        "color": 0,
        "hoist": False,
        "managed": False,
        "mentionable": False,
        "flags": 0,
    }
    return {
        "id": str(GUILD_ID),
        "name": "fake guild",
        "owner_id": USER["id"],
        "roles": [everyone],
        "channels": [_channel()],
        "members": [_member(BOT)],
        "member_count": 2,
        "large": False,
        "unavailable": False,
        "emojis": [],
        "stickers": [],
        "features": [],
        "threads": [],
        "voice_states": [],
        "presences": [],
        "joined_at": TIMESTAMP,
    }


def _message(message_id: str, body: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": message_id,
        "channel_id": str(CHANNEL_ID),
        "author": BOT,
        "type": 0,
        "content": body.get("content") or "",
        "embeds": body.get("embeds") or [],
        "components": body.get("components") or [],
        "attachments": [],
        "timestamp": TIMESTAMP,
        "edited_timestamp": None,
        "tts": False,
        "mention_everyone": False,
        "mentions": [],
        "mention_roles": [],
        "pinned": False,
        "flags": body.get("flags") or 0,
    }


async def _body(request: web.Request) -> tuple[Any, dict[str, bytes]]:
    """The JSON payload, and the files a multipart request attaches (files[n] parts)."""
    if request.content_type == "multipart/form-data":
        form = await request.post()
        files = {
            part.filename: part.file.read()
            for name, part in form.items()
            if name.startswith("files[") and isinstance(part, web.FileField)
        }
        return json.loads(str(form.get("payload_json") or "{}")), files
    text = await request.text()
    return (json.loads(text) if text else None), {}


def _json(data: Any, status: int = 200) -> web.Response:
    # discord.py parses JSON only for exactly "application/json" (no charset suffix).
    return web.Response(
        body=json.dumps(data).encode(), status=status, content_type="application/json"
    )


async def serve_for_discord_py(monkeypatch: Any, bot_token: str | None = None) -> FakeDiscord:
    """A started fake (checking `bot_token` when given) with discord.py's REST base and gateway
    URL pointed at it (for the test's duration, through pytest's monkeypatch)."""
    import yarl
    from discord.gateway import DiscordWebSocket
    from discord.http import Route

    fake = await FakeDiscord(bot_token=bot_token).start()
    monkeypatch.setattr(Route, "BASE", fake.rest_base)
    monkeypatch.setattr(DiscordWebSocket, "DEFAULT_GATEWAY", yarl.URL(fake.gateway_url))
    return fake
