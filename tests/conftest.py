"""Suite-wide safety (no test writes outside its tmp dir or reads a developer's price overrides),
and the started fakes of Slack and Discord that many tests share."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from itertools import count
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
import pytest_asyncio

from tests.redis_server import RedisServer

if TYPE_CHECKING:
    from tests.fakes.discord_api import FakeDiscord
    from tests.fakes.slack_api import FakeSlack


@pytest.fixture(scope="session")
def _state_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("state")


_STATE_DIRS = count()


@pytest.fixture(autouse=True)
def _isolated_environment(_state_root: Path, monkeypatch) -> None:
    # A fresh state directory per test, named but not made: the SQLite store makes it when a test
    # first saves (bot/state/sqlite.py), so the thousands of tests that never save skip a mkdir.
    monkeypatch.setenv("GPUPLAN_STATE_DIR", str(_state_root / str(next(_STATE_DIRS))))
    monkeypatch.delenv("GPUPLAN_PRICES", raising=False)
    # No bot a test starts refreshes prices on its own, and a feed no test points elsewhere is
    # refused on loopback rather than fetched from the internet.
    monkeypatch.setenv("GPUPLAN_PRICES_REFRESH_S", "0")
    for feed in ("GPUHUNT", "AZURE", "RUNPOD", "VASTAI"):
        monkeypatch.setenv(f"GPUPLAN_FEED_{feed}_URL", "http://127.0.0.1:9/no-feed-in-tests")
    for name in ("GPUPLAN_FEEDS", "GPUPLAN_PROVIDERS"):
        monkeypatch.delenv(name, raising=False)
    for secret in ("SLACK_BOT_TOKEN", "SLACK_SIGNING_SECRET", "SLACK_APP_TOKEN", "DISCORD_TOKEN"):
        monkeypatch.delenv(secret, raising=False)


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    """One real redis-server for the session (tests that kill Redis start their own)."""
    server = RedisServer(tmp_path_factory.mktemp("redis")).start()
    yield server
    server.kill()


@pytest.fixture
def redis_url(redis_server: RedisServer) -> Iterator[str]:
    """The session's Redis, emptied for this test."""
    import redis

    with redis.Redis.from_url(redis_server.url) as client:
        client.flushall()
    yield redis_server.url


@pytest_asyncio.fixture
async def slack() -> AsyncIterator[FakeSlack]:
    """A started fake of Slack's Web API (tests that set env or hold posts keep their own)."""
    from tests.fakes.slack_api import FakeSlack

    server = await FakeSlack().start()
    yield server
    await server.stop()


@pytest_asyncio.fixture
async def discord_fake(monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[FakeDiscord]:
    """A started fake of Discord's REST API and gateway, with discord.py pointed at it."""
    from tests.fakes.discord_api import serve_for_discord_py

    fake = await serve_for_discord_py(monkeypatch)
    yield fake
    await fake.stop()
