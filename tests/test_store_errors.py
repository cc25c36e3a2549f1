"""When the state file fails, the error says how and where: to the user in one plain sentence, to
the log in full. A full disk and a read-only file system are real: a tmpfs mounted in a user and
mount namespace of its own (`unshare -rm`), so even root meets ENOSPC and EROFS."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from bot import phrases
from bot.conversation import Conversation
from bot.state.errors import StoreFailed
from bot.state.threads import SQLiteStore
from bot.threads import ThreadKey

REPO_ROOT = Path(__file__).resolve().parents[1]
SEED = "13B QLoRA, 4k ctx, 20M tokens x3"


def _namespaces_work() -> bool:
    if shutil.which("unshare") is None:
        return False
    probe = subprocess.run(["unshare", "-rm", "true"], capture_output=True, check=False)
    return probe.returncode == 0


needs_namespaces = pytest.mark.skipif(
    not _namespaces_work(), reason="unshare -rm (user and mount namespaces) is not permitted here"
)


def _in_own_tmpfs(
    mount_point: Path, size: str, script: str, env: dict[str, str]
) -> subprocess.CompletedProcess[str]:
    """Run the shell `script` with a fresh tmpfs of `size` at `mount_point`, seen only by it."""
    mount_point.mkdir()
    wrapped = f'mount -t tmpfs -o size={size} tmpfs "{mount_point}"\n{script}'
    return subprocess.run(
        ["unshare", "-rm", "sh", "-ec", wrapped],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=REPO_ROOT,
        env={**os.environ, "GPUPLAN_STATE_DIR": str(mount_point), **env},
        check=False,
    )


FILL_THE_DISK = textwrap.dedent(
    """
    import json, logging, os, sqlite3, sys
    from pathlib import Path
    logging.basicConfig(stream=sys.stderr, format="%(name)s %(message)s")
    from bot.conversation import Conversation
    from bot.state.threads import SQLiteStore
    from bot.threads import ThreadKey

    state, hold = Path(sys.argv[1]), sys.argv[2] == "hold"
    conversation = Conversation(SQLiteStore(state), limit_rate=False)
    key = ThreadKey(platform="test", thread="full")
    conversation.handle(key, "13B QLoRA, 4k ctx, 20M tokens x3")
    if hold:  # another connection keeps SQLite's -wal and -shm, as the Slack thread index does
        holder = sqlite3.connect(state / "threads.db")
        holder.execute("SELECT count(*) FROM threads").fetchone()
    filler = os.open(state / "filler", os.O_WRONLY | os.O_CREAT)
    try:
        while True:
            os.write(filler, bytes(4096))
    except OSError:
        os.close(filler)
    reply = conversation.handle(key, "what if 8k ctx?")
    print(json.dumps({"kind": reply.kind, "title": reply.title, "warnings": reply.warnings}))
    """
)


@needs_namespaces
@pytest.mark.parametrize(
    ("hold", "kind", "told", "logged"),
    [
        ("hold", "plan", phrases.store_not_saved("disk_full"), "database or disk is full"),
        ("nohold", "clarify", phrases.store_not_read("disk_full"), "disk I/O error"),
    ],
    ids=["full-at-commit", "full-before-reading"],
)
def test_a_full_disk_is_said_plainly_and_logged_with_the_path(
    tmp_path: Path, hold: str, kind: str, told: str, logged: str
) -> None:
    state = tmp_path / "state"
    script = f'"{sys.executable}" - "{state}" {hold} <<"EOF"\n{FILL_THE_DISK}\nEOF'
    run = _in_own_tmpfs(state, "256k", script, {})
    assert run.returncode == 0, run.stderr
    reply = json.loads(run.stdout)
    assert reply["kind"] == kind and reply["warnings"][-1] == told
    assert "Traceback" not in run.stderr and "cannot rollback" not in run.stderr
    assert f"thread store {state}/threads.db: disk full ({logged})" in run.stderr


@needs_namespaces
def test_on_a_read_only_store_chat_answers_without_saving_and_serve_names_the_path(
    tmp_path: Path,
) -> None:
    state, out = tmp_path / "state", tmp_path / "out"
    out.mkdir()
    chat = f'"{sys.executable}" -m adapters.cli chat --thread t1'
    serve = f'"{sys.executable}" -m adapters.cli serve slack --http --port 0'
    script = textwrap.dedent(
        f"""
        echo "{SEED}" | {chat} > "{out}/first.out"
        mount -o remount,ro "{state}"
        echo "what if 8k ctx?" | {chat} > "{out}/chat.out" 2> "{out}/chat.err"
        echo $? > "{out}/chat.rc"
        set +e
        {serve} 2> "{out}/serve.err"
        echo $? > "{out}/serve.rc"
        """
    )
    run = _in_own_tmpfs(
        state, "4m", script, {"SLACK_SIGNING_SECRET": "s", "SLACK_BOT_TOKEN": "xoxb-t"}
    )
    assert run.returncode == 0, run.stderr
    answer = (out / "chat.out").read_text()
    assert (out / "chat.rc").read_text().strip() == "0"
    assert "8192" in answer and phrases.store_not_saved("read_only") in answer
    failure = f"thread store {state}/threads.db: read only (Read-only file system)"
    assert (out / "chat.err").read_text().splitlines()[0] == (
        f"gpuplan chat: {failure}; answering without saving"
    )
    assert (out / "serve.rc").read_text().strip() == "1"
    assert (out / "serve.err").read_text() == f"gpuplan serve slack: {failure}\n"


def test_a_corrupt_file_is_named_corrupt(tmp_path: Path) -> None:
    (tmp_path / "threads.db").write_bytes(b"not a database, " * 512)
    with pytest.raises(StoreFailed) as failure:
        SQLiteStore(tmp_path)
    assert failure.value.kind == "corrupt" and failure.value.path == tmp_path / "threads.db"
    assert str(failure.value) == (
        f"thread store {tmp_path}/threads.db: corrupt (file is not a database)"
    )


def test_a_locked_file_is_named_locked_and_the_answer_still_comes(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    store = SQLiteStore(tmp_path, busy_timeout_s=0.05)
    conversation = Conversation(store, limit_rate=False)
    key = ThreadKey(platform="test", thread="locked")
    conversation.handle(key, SEED)
    other = sqlite3.connect(tmp_path / "threads.db", isolation_level=None)
    other.execute("BEGIN EXCLUSIVE")  # another program holding the write lock
    try:
        reply = conversation.handle(key, "what if 8k ctx?")
    finally:
        other.execute("ROLLBACK")
        other.close()
    assert reply.kind == "plan" and reply.warnings[-1] == phrases.store_not_saved("locked")
    assert f"thread store {tmp_path}/threads.db: locked (database is locked)" in caplog.text
    assert store.load(str(key)).history[-1]["seq_len"] == 4096  # the stored job is unchanged
