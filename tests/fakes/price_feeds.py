"""The four price feeds, faked on 127.0.0.1: Azure Retail Prices (filtered by armSkuName, paged
with a NextPageLink that names Azure's own host, as the real one does), RunPod GraphQL, Vast.ai
bundles and gpuhunt's v3 catalogs. Each feed can be made to fail: `"500"`, `"timeout"` (answers
after `delay_s`), `"malformed"` (a body that is not JSON, or not a zip), `"no_csv"` (gpuhunt: a
zip without the provider's CSV), `"empty"` (a well-formed answer with no offers), `"bomb"`
(gpuhunt: a small zip whose CSV unpacks to far more than any catalog) and `"redirect"` (a 302 to
the same server under another host name, `localhost`, which a feed must not follow).

Vast answers as its search does: only offers matching the query's `verified`, `external`,
`rentable` and `rented` filters, cheapest first, at most `limit`. gpuhunt publishes every
catalog under `gpuhunt_version`.

The server runs on its own thread and loop, so both async tests and `gpuplan` commands (which
run their own event loop) can use it.
"""

from __future__ import annotations

import asyncio
import io
import json
import re
import threading
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

RECORDED = Path(__file__).resolve().parents[1] / "data" / "price_feeds"
AZURE_HOST_LINK = "https://prices.azure.com:443/api/retail/prices"
_SKU_FILTER = re.compile(r"armSkuName eq '([^']+)'")


def recorded_json(name: str) -> Any:
    return json.loads((RECORDED / name).read_text(encoding="utf-8"))


@dataclass
class FakeFeeds:
    azure_items: list[dict[str, Any]] = field(default_factory=list)
    runpod_types: list[dict[str, Any]] = field(default_factory=list)
    vast_offers: list[dict[str, Any]] = field(default_factory=list)
    gpuhunt_csv: dict[str, str] = field(default_factory=dict)  # provider → CSV text
    modes: dict[str, str] = field(default_factory=dict)  # feed → failure mode
    gpuhunt_version: str = "20261201-7"
    azure_page_items: int = 1000
    delay_s: float = 5.0
    requests: list[tuple[str, str]] = field(default_factory=list)  # (feed, path)

    def down(self) -> None:
        """Every feed answers 500."""
        self.modes = dict.fromkeys(("azure", "runpod", "vastai", "gpuhunt"), "500")

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_get("/azure/api/retail/prices", self._azure)
        app.router.add_post("/runpod/graphql", self._runpod)
        app.router.add_post("/vastai/api/v0/bundles/", self._vast)
        app.router.add_get("/gpuhunt/v3/{provider}/version", self._gpuhunt_version)
        app.router.add_get("/gpuhunt/v3/{provider}/{version}/catalog.zip", self._gpuhunt_zip)
        return app

    async def _failure(self, feed: str, request: web.Request) -> web.Response | None:
        self.requests.append((feed, request.path))
        mode = self.modes.get(feed, "ok")
        if mode == "500":
            return web.Response(status=500, text="internal error")
        if mode == "timeout":
            await asyncio.sleep(self.delay_s)
            return web.Response(status=504)
        if mode == "malformed":
            return web.Response(text="<html>not what you asked for", content_type="text/html")
        if mode == "redirect":
            elsewhere = request.url.with_host("localhost")
            raise web.HTTPFound(str(elsewhere))
        return None

    async def _azure(self, request: web.Request) -> web.Response:
        if (failed := await self._failure("azure", request)) is not None:
            return failed
        sku = _SKU_FILTER.search(request.query.get("$filter", ""))
        items = [i for i in self.azure_items if sku and i.get("armSkuName") == sku.group(1)]
        if self.modes.get("azure") == "empty":
            items = []
        skip = int(request.query.get("$skip", "0"))
        page = items[skip : skip + self.azure_page_items]
        more = skip + self.azure_page_items < len(items)
        link = None
        if more:  # Azure's link names its own host; the client must stay on the configured one
            query = {**request.query, "$skip": str(skip + self.azure_page_items)}
            link = AZURE_HOST_LINK + "?" + "&".join(f"{k}={v}" for k, v in query.items())
        body = {
            "BillingCurrency": "USD",
            "CustomerEntityId": "Default",
            "CustomerEntityType": "Retail",
            "Items": page,
            "NextPageLink": link,
            "Count": len(page),
        }
        return web.json_response(body)

    async def _runpod(self, request: web.Request) -> web.Response:
        if (failed := await self._failure("runpod", request)) is not None:
            return failed
        body = await request.json()
        if "gpuTypes" not in body.get("query", ""):
            return web.json_response({"errors": [{"message": "unknown query"}]})
        types = [] if self.modes.get("runpod") == "empty" else self.runpod_types
        return web.json_response({"data": {"gpuTypes": types}})

    async def _vast(self, request: web.Request) -> web.Response:
        if (failed := await self._failure("vastai", request)) is not None:
            return failed
        body = await request.json()
        names = set(body.get("gpu_name", {}).get("in", []))
        filters = {
            name: body[name]["eq"]
            for name in ("verified", "external", "rentable", "rented")
            if name in body
        }
        offers = [
            o
            for o in self.vast_offers
            if (not names or o.get("gpu_name") in names)
            and all(_vast_field(o, name) == wanted for name, wanted in filters.items())
        ]
        offers.sort(key=lambda o: o.get("dph_total") or 0)
        if self.modes.get("vastai") == "empty":
            offers = []
        return web.json_response({"offers": offers[: body.get("limit", 64)]})

    async def _gpuhunt_version(self, request: web.Request) -> web.Response:
        # A malformed or CSV-less catalog is the zip's fault: the version file still answers.
        if self.modes.get("gpuhunt") not in ("malformed", "no_csv") and (
            failed := await self._failure("gpuhunt", request)
        ):
            return failed
        if request.match_info["provider"] not in self.gpuhunt_csv:
            return web.Response(status=404, text="NoSuchKey")
        return web.Response(text=self.gpuhunt_version + "\n")

    async def _gpuhunt_zip(self, request: web.Request) -> web.Response:
        provider = request.match_info["provider"]
        self.requests.append(("gpuhunt", request.path))
        if (
            provider not in self.gpuhunt_csv
            or request.match_info["version"] != self.gpuhunt_version
        ):
            return web.Response(status=404)
        mode = self.modes.get("gpuhunt", "ok")
        if mode == "malformed":
            return web.Response(body=b"PK\x03\x04 truncated", content_type="application/zip")
        name = "other.csv" if mode == "no_csv" else f"{provider}.csv"
        text = self.gpuhunt_csv[provider]
        if mode == "empty":
            text = text.splitlines(keepends=True)[0]
        body = _zip_bomb(name, text) if mode == "bomb" else _zip(name, text)
        return web.Response(body=body, content_type="application/zip")


def _zip(name: str, text: str) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr(name, text)
    return buffer.getvalue()


@cache
def _zip_bomb(name: str, text: str) -> bytes:
    """A valid header, then 40 MB of one row repeated (a catalog is capped at 32 MB): about
    100 KB zipped."""
    header, row = (line.encode() for line in text.splitlines(keepends=True)[:2])
    buffer = io.BytesIO()
    with (
        zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive,
        archive.open(name, "w", force_zip64=True) as packed,
    ):
        packed.write(header)
        for _ in range(40 * 1024 * 1024 // (len(row) * 1024)):
            packed.write(row * 1024)
    return buffer.getvalue()


def _vast_field(offer: dict[str, Any], name: str) -> object:
    """An offer's value for a search filter: `verified` is its `verification` being verified."""
    if name == "verified":
        return offer.get("verification") == "verified"
    return offer.get(name)


class FeedServer:
    """`FakeFeeds` served on a free 127.0.0.1 port from a thread; `env` points the feeds at it."""

    def __init__(self, feeds: FakeFeeds) -> None:
        self.feeds = feeds
        self.port = 0
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._runner: web.AppRunner | None = None

    def __enter__(self) -> FeedServer:
        self._thread.start()
        asyncio.run_coroutine_threadsafe(self._start(), self._loop).result(10)
        return self

    async def _start(self) -> None:
        self._runner = web.AppRunner(self.feeds.app(), shutdown_timeout=0.1)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self.port = self._runner.addresses[0][1]

    def __exit__(self, *exc: object) -> None:
        if self._runner is not None:
            asyncio.run_coroutine_threadsafe(self._runner.cleanup(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)
        self._loop.close()

    @property
    def env(self) -> dict[str, str]:
        base = f"http://127.0.0.1:{self.port}"
        return {
            f"GPUPLAN_FEED_{name.upper()}_URL": f"{base}/{name}"
            for name in ("azure", "runpod", "vastai", "gpuhunt")
        }


@contextmanager
def serving(feeds: FakeFeeds, monkeypatch: pytest.MonkeyPatch) -> Iterator[FeedServer]:
    """`feeds` on 127.0.0.1 with every GPUPLAN_FEED_*_URL pointing at them, for one test."""
    with FeedServer(feeds) as running:
        for name, value in running.env.items():
            monkeypatch.setenv(name, value)
        yield running
