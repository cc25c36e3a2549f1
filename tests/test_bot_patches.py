"""The patch store seam: a button's change round-trips by its short id and expires with the
thread TTL, on SQLite, in memory and on a real redis-server."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.patches import PATCH_ID_PREFIX, Patch, patch_id
from bot.state.patches import MemoryPatchStore, RedisPatchStore, SQLitePatchStore

EIGHT_K = Patch({"seq_len": 8192}, "8k context")


class Clock:
    def __init__(self) -> None:
        self.now_s = 1_000_000.0

    def __call__(self) -> float:
        return self.now_s


def _stores(tmp_path: Path, clock: Clock) -> list:
    return [
        SQLitePatchStore(tmp_path, ttl_s=60.0, clock=clock),
        MemoryPatchStore(ttl_s=60.0, clock=clock),
    ]


def test_a_patch_round_trips_by_a_short_stable_id_and_expires(tmp_path: Path) -> None:
    clock = Clock()
    for store in _stores(tmp_path, clock):
        stored_id = store.put(EIGHT_K)
        assert stored_id == patch_id(EIGHT_K) and stored_id.startswith(PATCH_ID_PREFIX)
        assert len(stored_id) <= 20 and stored_id == stored_id.lower()
        assert store.get(stored_id) == EIGHT_K
        assert store.get(patch_id(Patch({"seq_len": 16384}, "16k context"))) is None
        clock.now_s += 61.0
        assert store.get(stored_id) is None
        clock.now_s -= 61.0


def test_a_read_only_state_dir_fails_as_the_thread_store_does(tmp_path: Path) -> None:
    from bot.state.errors import StoreUnavailable

    blocked = tmp_path / "file"
    blocked.write_text("not a directory")
    with pytest.raises(StoreUnavailable):
        SQLitePatchStore(blocked / "state").put(EIGHT_K)


def test_redis_keeps_patches_with_the_thread_ttl(redis_url: str) -> None:
    import redis

    from bot.state.redis_link import shared_link

    store = RedisPatchStore(shared_link(redis_url), ttl_s=60.0)
    stored_id = store.put(EIGHT_K)
    assert store.get(stored_id) == EIGHT_K
    client = redis.Redis.from_url(redis_url)
    assert 0 < client.pttl(f"gpuplan:patch:{stored_id}") <= 60_000


def test_an_answers_buttons_are_kept_together(tmp_path: Path, redis_url: str) -> None:
    from bot.state.redis_link import shared_link

    sixteen_k = Patch({"seq_len": 16384}, "16k context")
    for store in [*_stores(tmp_path, Clock()), RedisPatchStore(shared_link(redis_url))]:
        ids = store.put_all([EIGHT_K, sixteen_k])
        assert ids == [patch_id(EIGHT_K), patch_id(sixteen_k)]
        assert [store.get(stored_id) for stored_id in ids] == [EIGHT_K, sixteen_k]
