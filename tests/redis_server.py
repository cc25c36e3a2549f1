"""A real redis-server for tests: a free 127.0.0.1 port, its own temp dir, no persistence.

Without redis-server installed the Redis tests skip with a one-line reason, except under CI=true,
where a skipped Redis test would hide a broken store and fails instead.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

START_TIMEOUT_S = 20.0
MISSING = "redis-server is not installed (apt-get install -y redis-server)"


def require_redis_server() -> str:
    """The redis-server executable; skips the test (fails it under CI=true) when absent."""
    executable = shutil.which("redis-server")
    if executable is None:
        if os.environ.get("CI") == "true":
            pytest.fail(f"{MISSING}; CI must run the Redis tests", pytrace=False)
        pytest.skip(MISSING)
    return executable


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class RedisServer:
    def __init__(self, directory: Path) -> None:
        self.executable = require_redis_server()
        self.directory = directory
        self.port = _free_port()
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self, *extra: str, wait: bool = True) -> RedisServer:
        """Start (or restart, on the same port) and wait until it answers PING (`wait`);
        `extra` are more redis-server options."""
        self.directory.mkdir(parents=True, exist_ok=True)
        self.process = subprocess.Popen(
            [self.executable, "--port", str(self.port), "--bind", "127.0.0.1",
             "--save", "", "--appendonly", "no", "--dir", str(self.directory),
             "--protected-mode", "yes", "--loglevel", "warning",
             "--enable-debug-command", "local", *extra],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        deadline = time.monotonic() + START_TIMEOUT_S
        while wait and not self._answers_ping():
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"redis-server did not start on port {self.port}")
            time.sleep(0.02)  # polling a starting server; bounded by the deadline
        return self

    def _answers_ping(self) -> bool:
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=1) as connection:
                connection.sendall(b"PING\r\n")
                return connection.recv(16).startswith(b"+PONG")
        except OSError:
            return False

    def pause(self) -> None:
        """SIGSTOP: Redis hangs (connections open, no answers), as a slow or stuck server does."""
        assert self.process is not None
        self.process.send_signal(signal.SIGSTOP)

    def resume(self) -> None:
        assert self.process is not None
        self.process.send_signal(signal.SIGCONT)

    def kill(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGCONT)  # a stopped process cannot die of SIGKILL
            self.process.kill()
            self.process.wait(timeout=10)


class RedisStates:
    """Drive a running RedisServer into the states a production Redis reaches, for real: each
    is a context manager that enters the state and leaves it on exit."""

    def __init__(self, server: RedisServer) -> None:
        import redis

        self.server = server
        self.admin = redis.Redis(port=server.port, socket_timeout=10)

    @contextmanager
    def out_of_memory(self) -> Iterator[None]:
        """maxmemory below what it holds, with noeviction: every write gets OOM, reads work."""
        self.admin.set("gpuplan-test:ballast", "x" * 1024)
        self.admin.config_set("maxmemory-policy", "noeviction")
        self.admin.config_set("maxmemory", "1")
        try:
            yield
        finally:
            self.admin.config_set("maxmemory", "0")  # memory freed

    @contextmanager
    def read_only(self) -> Iterator[None]:
        """A replica, as the old primary becomes after a failover: writes get READONLY."""
        self.admin.execute_command("REPLICAOF", "127.0.0.1", str(_free_port()))
        try:
            yield
        finally:
            self.admin.execute_command("REPLICAOF", "NO", "ONE")

    @contextmanager
    def busy(self, seconds: float = 1.5) -> Iterator[None]:
        """A Lua script running past busy-reply-threshold: every other command gets BUSY."""
        import redis

        self.admin.config_set("busy-reply-threshold", "50")
        script = (
            "local t = redis.call('TIME') while true do local n = redis.call('TIME')"
            " if (n[1] - t[1]) * 1000000 + (n[2] - t[2]) > tonumber(ARGV[1]) then break end"
            " end return 1"
        )
        runner = redis.Redis(port=self.server.port, socket_timeout=seconds + 10)
        thread = threading.Thread(target=runner.eval, args=(script, 0, int(seconds * 1e6)))
        thread.start()
        self._wait_until_refused()
        try:
            yield
        finally:
            thread.join()

    @contextmanager
    def sleeping(self, seconds: float = 1.5) -> Iterator[None]:
        """DEBUG SLEEP: the server stalls (no answer at all) for `seconds`."""
        import redis

        sleeper = redis.Redis(port=self.server.port, socket_timeout=seconds + 10)
        thread = threading.Thread(target=sleeper.execute_command, args=("DEBUG", "SLEEP", seconds))
        thread.start()
        self._wait_until_stalled()
        try:
            yield
        finally:
            thread.join()

    @contextmanager
    def loading(self, keys: int = 5_000) -> Iterator[None]:
        """LOADING: restart on a saved dataset with key-load-delay (Redis's own test option:
        a pause per key while loading) and frequent event processing, so it answers clients
        with LOADING for about a second (5,000 keys × 200 µs; a refused command takes
        milliseconds); then wait until it has loaded."""
        self.admin.execute_command("DEBUG", "POPULATE", keys, "gpuplan-test:fill")
        self.admin.save()
        self.server.kill()
        self.server.start(
            "--dbfilename", "dump.rdb", "--key-load-delay", "200",
            "--loading-process-events-interval-bytes", "1024", wait=False,
        )  # fmt: skip
        self._wait_until_refused()
        try:
            yield
        finally:
            deadline = time.monotonic() + START_TIMEOUT_S
            while not self.server._answers_ping():
                assert time.monotonic() < deadline, "redis-server never finished loading"
                time.sleep(0.05)
            self.admin.flushall()

    def _wait_until_stalled(self) -> None:
        """Until PING goes unanswered for a moment, bounded."""
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            with socket.create_connection(("127.0.0.1", self.server.port), 1) as connection:
                connection.sendall(b"PING\r\n")
                connection.settimeout(0.2)
                try:
                    connection.recv(16)
                except TimeoutError:
                    return
            assert time.monotonic() < deadline, "redis-server never stalled"

    def _wait_until_refused(self) -> None:
        """Until PING gets an error reply (BUSY, LOADING), bounded."""
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            try:
                with socket.create_connection(("127.0.0.1", self.server.port), 1) as connection:
                    connection.sendall(b"PING\r\n")
                    if connection.recv(16).startswith(b"-"):
                        return
            except OSError:
                pass
            assert time.monotonic() < deadline, "redis-server never reached the state"
            time.sleep(0.01)
