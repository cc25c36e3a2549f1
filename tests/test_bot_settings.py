"""The per-workspace settings store (SQLite and memory, one contract) and the first setting on
it: the providers a team rents from, changed only by admins, used by every answer there."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

import pytest

from bot.conversation import Conversation
from bot.prices.market import MarketPrices
from bot.prices.offers import make_offer
from bot.prices.snapshot import FeedStatus, Snapshot
from bot.reply import Reply
from bot.state.prices import MemoryPriceStore
from bot.state.settings import MemorySettings, SettingsStore, SQLiteSettings
from bot.state.threads import MemoryStore
from bot.threads import ThreadKey

STORES: list[Callable[[], SettingsStore]] = [SQLiteSettings, MemorySettings]
FETCHED = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)
SEED = "13B QLoRA, 4k ctx, 20M tokens x3"


@pytest.mark.parametrize("make", STORES)
def test_settings_are_kept_per_workspace(make: Callable[[], SettingsStore]) -> None:
    store = make()
    store.put("slack/T1", "providers", "runpod", by="U1")
    store.put("slack/T1", "language", "zh", by="U1")
    store.put("discord/G1", "providers", "vastai", by="U2")
    assert store.get("slack/T1", "providers") == "runpod"
    assert store.all("slack/T1") == {"language": "zh", "providers": "runpod"}
    store.put("slack/T1", "providers", None)
    assert store.get("slack/T1", "providers") is None
    assert store.get("discord/G1", "providers") == "vastai"
    with pytest.raises(ValueError, match="at most"):
        store.put("slack/T1", "x", "y" * 5000)


def test_sqlite_settings_survive_a_restart() -> None:
    SQLiteSettings().put("slack/T1", "providers", "runpod,vastai", by="U1")
    assert SQLiteSettings().get("slack/T1", "providers") == "runpod,vastai"


def _offer(provider: str, usd: float, pricing: str = "community"):
    return make_offer(
        feed="test",
        provider=provider,
        instance="x",
        gpu="rtx4090",
        gpu_vram_gb=24,
        gpu_count=1,
        usd_per_hour=usd,
        pricing=pricing,
        region="",
        fetched_at=FETCHED,
        source_url="http://127.0.0.1/test",
    )


@pytest.fixture
def conversation() -> Conversation:
    store = MemoryPriceStore()
    store.save(
        Snapshot(
            version=0,
            taken_at=FETCHED,
            offers=(_offer("runpod", 0.34), _offer("vastai", 0.44)),
            feeds=(FeedStatus("test", True, 2, FETCHED),),
        )
    )
    prices = MarketPrices(store, clock=lambda: FETCHED.timestamp() + 2 * 3600)
    return Conversation(MemoryStore(), prices=prices, settings=MemorySettings(), limit_rate=False)


def _key(workspace: str = "T1", thread: str = "t") -> ThreadKey:
    return ThreadKey(platform="slack", workspace=workspace, channel="C", thread=thread)


def _rtx4090_price(conversation: Conversation, key: ThreadKey) -> float:
    plan = conversation.respond(key, SEED).plan
    return next(o for o in plan.options if o.gpu == "rtx4090" and o.count == 1).usd_per_hour


def test_answers_say_how_fresh_their_prices_are(conversation: Conversation) -> None:
    reply = conversation.handle(_key(), SEED)
    assert reply.assumptions[0] == "Prices from 2 providers, 2 h ago."
    assert reply.price_date.startswith("live quotes from 2 providers (RunPod, Vast.ai)")
    assert not any("older" in w or "fetched" in w for w in reply.warnings)


def test_prices_older_than_a_day_are_warned_about() -> None:
    store = MemoryPriceStore()
    store.save(Snapshot(0, FETCHED, (_offer("runpod", 0.34),), ()))
    prices = MarketPrices(store, clock=lambda: FETCHED.timestamp() + 3 * 86400)
    reply = Conversation(MemoryStore(), prices=prices, limit_rate=False).handle(_key(), SEED)
    assert reply.assumptions[0] == "Prices from 1 provider, 3 days ago."
    assert any("fetched 3 days ago" in warning for warning in reply.warnings)


def test_only_admins_change_the_providers_and_answers_follow(conversation: Conversation) -> None:
    assert _rtx4090_price(conversation, _key()) == 0.34
    refused = conversation.handle(_key(), "providers vast.ai", user="U2")
    assert refused.kind == "error" and "admins" in refused.body
    saved = conversation.handle(_key(), "/gpuplan providers vast", user="U1", admin=True)
    assert saved.title == "Provider preference saved" and "Vast.ai only" in saved.body
    assert _rtx4090_price(conversation, _key(thread="t2")) == 0.44
    assert _rtx4090_price(conversation, _key(workspace="T2")) == 0.34  # another workspace
    shown = conversation.handle(_key(), "providers")
    assert "Vast.ai only" in shown.body
    conversation.handle(_key(), "providers all", user="U1", admin=True)
    assert _rtx4090_price(conversation, _key(thread="t3")) == 0.34


def test_an_unknown_provider_is_named(conversation: Conversation) -> None:
    reply = conversation.handle(_key(), "providers runpod, nosuchcloud", admin=True)
    assert reply.kind == "error" and "nosuchcloud" in reply.body and "RunPod" in reply.body


def test_gpuplan_providers_sets_the_default(
    conversation: Conversation, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GPUPLAN_PROVIDERS", "vastai")
    assert _rtx4090_price(conversation, _key()) == 0.44
    monkeypatch.setenv("GPUPLAN_PROVIDERS", "nosuch")
    reply = conversation.handle(_key(thread="t2"), SEED)
    assert reply.kind == "error" and "GPUPLAN_PROVIDERS" in reply.body


def test_spot_rows_are_marked_in_the_table(conversation: Conversation) -> None:
    store = MemoryPriceStore()
    store.save(Snapshot(0, FETCHED, (_offer("runpod", 0.34), _offer("runpod", 0.29, "spot")), ()))
    prices = MarketPrices(store, clock=lambda: FETCHED.timestamp())
    spot = Conversation(MemoryStore(), prices=prices, limit_rate=False)
    # Asked on a 4090, so its row is in the table whatever the bundled table prices lower.
    asked = SEED + " on a 4090"
    row = next(
        r for r in spot.handle(_key(), asked + ", spot is fine").table if "4090" in r.gpu_name
    )
    assert row.usd_per_hour == 0.29 and "spot" in (row.highlight or "")
    plain = next(r for r in spot.handle(_key("T2"), asked).table if "4090" in r.gpu_name)
    assert plain.usd_per_hour == 0.34 and "spot" not in (plain.highlight or "")


ZH_SEED = "13B QLoRA，4k 上下文，20M tokens 训练 3 轮，能跑吗？"
# The live-price sentences' English words, none of which a Chinese answer may show.
ENGLISH_PRICE_WORDS = ("live quotes", "provider", "fetched", "Some prices", "has not answered")


def _english_price_words(reply: Reply) -> list[str]:
    lines = [reply.price_date or "", *reply.assumptions, *reply.warnings]
    return [word for line in lines for word in ENGLISH_PRICE_WORDS if word in line]


def test_a_chinese_answer_names_its_live_prices_in_chinese(conversation: Conversation) -> None:
    reply = conversation.handle(_key(), ZH_SEED)
    live = "实时报价来自 2 家供应商（RunPod、Vast.ai），获取于 2026-12-01 09:00 UTC；其他显卡："
    assert reply.price_date.startswith(live)
    assert reply.assumptions[0] == "价格来自 2 家供应商，2 小时前更新。"
    assert _english_price_words(reply) == []


def test_a_chinese_answer_warns_about_old_prices_in_chinese() -> None:
    store = MemoryPriceStore()
    store.save(Snapshot(0, FETCHED, (_offer("runpod", 0.34),), ()))
    prices = MarketPrices(store, clock=lambda: FETCHED.timestamp() + 3 * 86400)
    reply = Conversation(MemoryStore(), prices=prices, limit_rate=False).handle(_key(), ZH_SEED)
    assert reply.price_date.startswith("实时报价来自 1 家供应商（RunPod）")
    assert "部分价格3 天前更新（2026-12-01 09:00 UTC）" in reply.warnings[-1]
    assert _english_price_words(reply) == []
