"""A real `gpuplan serve slack --http` process for tests, on a free port, its output kept."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]


class BotProcess:
    """`gpuplan serve slack --http --port 0` in its own process."""

    def __init__(self, env: dict[str, str]) -> None:
        command = [sys.executable, "-m", "adapters.cli", "serve", "slack", "--http", "--port", "0"]
        self.process = subprocess.Popen(
            command, env=env, cwd=REPO_ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            text=True,
        )  # fmt: skip
        assert self.process.stdout is not None
        first_line = self.process.stdout.readline()  # blocks until it serves, or dies
        match = re.search(r"http://(\S+?)/slack/events", first_line)
        assert match, f"no address in {first_line!r}: {self.process.stderr.read()}"  # type: ignore[union-attr]
        self.base = f"http://{match.group(1)}"
        self.store_line = self.process.stdout.readline().strip()

    def stop(self) -> str:
        if self.process.poll() is None:
            self.process.terminate()
        _, err = self.process.communicate(timeout=20)
        return err
