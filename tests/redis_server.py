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
import time
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

    def start(self) -> RedisServer:
        """Start (or restart, on the same port) and wait until it answers PING."""
        self.directory.mkdir(parents=True, exist_ok=True)
        self.process = subprocess.Popen(
            [self.executable, "--port", str(self.port), "--bind", "127.0.0.1",
             "--save", "", "--appendonly", "no", "--dir", str(self.directory),
             "--protected-mode", "yes", "--loglevel", "warning"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        deadline = time.monotonic() + START_TIMEOUT_S
        while not self._answers_ping():
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
