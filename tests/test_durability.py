"""kill -9 the bot while it writes a thread's state: on restart the thread is intact."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from bot.conversation import Conversation
from bot.threads import ThreadKey

WRITER = textwrap.dedent(
    """
    import sys
    from bot.conversation import Conversation
    from bot.threads import ThreadKey

    conversation = Conversation()
    key = ThreadKey(platform="test", channel="c", thread="durable")
    conversation.handle(key, "13B QLoRA, 4k ctx, 20M tokens x3")
    print("ready", flush=True)
    i = 0
    while True:  # keep writing follow-ups until killed
        conversation.handle(key, ("2 epochs", "3 epochs", "rank 32", "rank 16")[i % 4])
        i += 1
    """
)


def test_thread_survives_kill_9_mid_write(tmp_path: Path, monkeypatch) -> None:
    env = {**os.environ, "GPUPLAN_STATE_DIR": str(tmp_path)}
    writer = subprocess.Popen(
        [sys.executable, "-c", WRITER],
        env=env,
        stdout=subprocess.PIPE,
        cwd=Path(__file__).resolve().parents[1],
    )
    try:
        assert writer.stdout is not None
        assert writer.stdout.readline().strip() == b"ready"
        time.sleep(1.0)  # many follow-up writes are in flight by now
    finally:
        writer.send_signal(signal.SIGKILL)
        writer.wait(timeout=10)

    for database in tmp_path.rglob("*.db"):
        with sqlite3.connect(database) as connection:
            assert connection.execute("PRAGMA integrity_check").fetchone() == ("ok",)

    monkeypatch.setenv("GPUPLAN_STATE_DIR", str(tmp_path))
    reply = Conversation().handle(
        ThreadKey(platform="test", channel="c", thread="durable"), "what if 8k ctx?"
    )
    assert reply.kind == "plan"
    assert any("4096" in change and "8192" in change for change in reply.changes), reply.changes
