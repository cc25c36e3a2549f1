"""The thread store: history round-trips, writers to one thread serialise (threads and processes),
the file is owner-only and in WAL mode, and threads expire.

The contract tests run against both backends: the SQLite file and a real redis-server."""

from __future__ import annotations

import os
import sqlite3
import stat
import subprocess
import sys
import textwrap
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from bot.state.sqlite import DB_NAME, state_dir
from bot.state.threads import MemoryStore, SQLiteStore, StateStore

REPO_ROOT = Path(__file__).resolve().parents[1]
StoreFactory = Callable[[], StateStore]


@pytest.fixture(params=["sqlite", "redis"])
def backend(request: pytest.FixtureRequest, tmp_path: Path, monkeypatch) -> str:
    """GPUPLAN_STATE_URL (and the state dir) for each backend; returns its name."""
    monkeypatch.setenv("GPUPLAN_STATE_DIR", str(tmp_path))
    if request.param == "redis":
        monkeypatch.setenv("GPUPLAN_STATE_URL", request.getfixturevalue("redis_url"))
    else:
        monkeypatch.delenv("GPUPLAN_STATE_URL", raising=False)
    return request.param


@pytest.fixture
def open_store(backend: str) -> StoreFactory:
    """Opens the backend's store the way the bot does (from the environment)."""
    from bot.state.threads import open_thread_store

    return open_thread_store


def _append(store: StateStore, key: str, item: dict) -> None:
    """What the conversation does: read, extend, write if no one else wrote first, else retry."""
    while True:
        state = store.load(key)
        if store.save(key, [*state.history, item], state.version):
            return


def test_history_round_trips_and_versions_count(open_store: StoreFactory) -> None:
    store = open_store()
    assert store.load("t").version == 0 and store.load("t").history == ()
    assert store.save("t", [{"method": "qlora", "seq_len": 4096}], expected_version=0)
    state = store.load("t")
    assert state.history == ({"method": "qlora", "seq_len": 4096},) and state.version == 1


def test_a_stale_writer_loses(open_store: StoreFactory) -> None:
    store = open_store()
    store.save("t", [{"method": "lora"}], 0)
    assert not store.save("t", [{"method": "full"}], expected_version=0)
    assert store.load("t").history == ({"method": "lora"},)


def test_keys_are_data_not_sql(open_store: StoreFactory) -> None:
    store = open_store()
    key = "slack/T1/C1/1'); DROP TABLE threads; --"
    store.save(key, [{"method": "lora"}], 0)
    assert store.load(key).history == ({"method": "lora"},)
    assert store.load("slack/T1/C1/1").version == 0


def test_file_is_owner_only_and_in_wal_mode(tmp_path: Path) -> None:
    directory = tmp_path / "state"
    store = SQLiteStore(directory)
    store.save("t", [{"method": "lora"}], 0)
    assert stat.S_IMODE(os.stat(directory).st_mode) == 0o700
    for path in directory.iterdir():  # the database and its -wal / -shm companions
        assert stat.S_IMODE(os.stat(path).st_mode) == 0o600, path
    with sqlite3.connect(store.path) as connection:
        assert connection.execute("PRAGMA journal_mode").fetchone() == ("wal",)


def test_state_dir_follows_env_then_xdg(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("GPUPLAN_STATE_DIR", str(tmp_path / "explicit"))
    assert state_dir() == tmp_path / "explicit"
    monkeypatch.delenv("GPUPLAN_STATE_DIR")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    assert state_dir() == tmp_path / "xdg" / "gpuplan"
    assert SQLiteStore().path == tmp_path / "xdg" / "gpuplan" / DB_NAME


def test_threads_expire_after_the_ttl(tmp_path: Path, monkeypatch) -> None:
    now = [1_000_000.0]
    store = SQLiteStore(tmp_path, ttl_s=3600, clock=lambda: now[0])
    store.save("old", [{"method": "lora"}], 0)
    now[0] += 1800
    assert store.load("old").history == ({"method": "lora"},)
    now[0] += 3600
    expired = store.load("old")
    assert expired.history == ()
    assert store.save("old", [{"method": "full"}], expired.version)  # the thread starts afresh
    monkeypatch.setenv("GPUPLAN_THREAD_TTL_S", "60")
    assert SQLiteStore(tmp_path).ttl_s == 60


def test_expired_rows_are_purged_on_write(tmp_path: Path) -> None:
    now = [0.0]
    store = SQLiteStore(tmp_path, ttl_s=10, clock=lambda: now[0])
    store.save("old", [{"method": "lora"}], 0)
    now[0] = 100.0
    store.save("new", [{"method": "lora"}], 0)
    with sqlite3.connect(store.path) as connection:
        assert connection.execute("SELECT key FROM threads").fetchall() == [("new",)]


def test_a_corrupt_row_reads_as_an_empty_thread(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path)
    store.save("t", [{"method": "lora"}], 0)
    with sqlite3.connect(store.path) as connection:
        connection.execute("UPDATE threads SET history = '{not json'")
    state = store.load("t")
    assert state.history == () and state.version == 1


def test_concurrent_writers_in_threads_lose_nothing(open_store: StoreFactory) -> None:
    store = open_store()

    def write_ten(writer: int) -> None:
        for n in range(10):
            _append(store, "t", {"w": writer, "n": n})

    writers = [threading.Thread(target=write_ten, args=(i,)) for i in range(4)]
    for writer in writers:
        writer.start()
    for writer in writers:
        writer.join()
    history = store.load("t").history
    assert len(history) == 40
    assert sorted((item["w"], item["n"]) for item in history) == [
        (w, n) for w in range(4) for n in range(10)
    ]


def test_concurrent_writers_in_two_processes_lose_nothing(open_store: StoreFactory) -> None:
    script = textwrap.dedent(
        """
        import sys
        from bot.state.threads import open_thread_store
        store = open_thread_store()
        for n in range(25):
            while True:
                state = store.load("t")
                if store.save("t", [*state.history, {"p": sys.argv[1], "n": n}], state.version):
                    break
        """
    )
    processes = [
        subprocess.Popen([sys.executable, "-c", script, name], cwd=REPO_ROOT) for name in "ab"
    ]
    assert [process.wait(timeout=60) for process in processes] == [0, 0]
    history = open_store().load("t").history
    assert len(history) == 50
    assert {(item["p"], item["n"]) for item in history} == {(p, n) for p in "ab" for n in range(25)}


def test_memory_store_keeps_the_same_contract() -> None:
    store = MemoryStore()
    assert store.save("t", [{"method": "lora"}], 0)
    assert not store.save("t", [], 0)
    assert store.load("t").history == ({"method": "lora"},) and store.load("t").version == 1


def test_a_thread_starts_afresh_once_its_key_expires(redis_url: str) -> None:
    import redis

    from bot.state.redis_link import RedisLink
    from bot.state.threads import RedisStateStore

    store = RedisStateStore(RedisLink(redis_url), ttl_s=3600)
    store.save("t", [{"method": "lora"}], 0)
    client = redis.Redis.from_url(redis_url)
    (name,) = client.keys("gpuplan:thread:*")
    assert 3500_000 < client.pttl(name) <= 3600_000  # the thread's TTL, refreshed on each save
    client.delete(name)  # what Redis does when the TTL runs out
    expired = store.load("t")
    assert expired.history == () and store.save("t", [{"method": "full"}], expired.version)


def test_a_corrupt_redis_value_reads_as_an_empty_thread(redis_url: str) -> None:
    import redis

    from bot.state.redis_link import RedisLink
    from bot.state.threads import RedisStateStore

    store = RedisStateStore(RedisLink(redis_url))
    store.save("t", [{"method": "lora"}], 0)
    client = redis.Redis.from_url(redis_url)
    client.hset("gpuplan:thread:t", "history", "{not json")
    state = store.load("t")
    assert state.history == () and state.version == 1
