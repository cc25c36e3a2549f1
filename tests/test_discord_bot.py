"""The Discord bot end to end: real discord.py against SimCord's in-process Discord, all offline.

The main flows run through the real bot.conversation.Conversation. A scripted stand-in is used only
where a test needs a behaviour the real planner must never have (a 10 s plan, a 40 kB answer).
"""

from __future__ import annotations

from typing import Any

import discord
import pytest
import simcord

from adapters.discord.blocked import UNREADABLE_REPLY
from adapters.discord.client import UNDELIVERABLE, GpuplanClient
from adapters.discord.render import CHART_FILENAME, whatif_custom_id
from bot.conversation import Conversation
from bot.patches import Button, Patch, patch_id
from bot.reply import Reply, WhatIf
from bot.state.errors import StoreUnavailable
from bot.state.patches import MemoryPatchStore
from bot.threads import ThreadKey
from tests.fakes.discord_api import schema_errors

# A model whose context window holds the doubled context the "8k context" button offers.
QUESTION = "llama 3.1 8b QLoRA, 4k ctx, 20M tokens x3 on a 4090 @everyone <@&1234>"
EIGHT_K = WhatIf(id="ctx8k", label="8k context", text="what if 8k ctx?")


class Recording:
    """The real conversation, with every (key, text) it was asked recorded."""

    def __init__(self, conversation: Any) -> None:
        self.conversation = conversation
        self.calls: list[tuple[ThreadKey, str]] = []

    def handle(self, key: ThreadKey, text: str, user: str = "") -> Reply:
        self.calls.append((key, text))
        return self.conversation.handle(key, text, user)


class Scripted:
    """Answers every message with `reply`; `discord_clock_s` is how long planning takes as
    Discord's (simulated) clock sees it, without the test waiting for real."""

    def __init__(self, reply: Reply, *, env_box: list | None = None, discord_clock_s: float = 0):
        self.reply = reply
        self.env_box = env_box
        self.discord_clock_s = discord_clock_s
        self.calls: list[tuple[ThreadKey, str]] = []
        self.requests_seen_at_start: list[str] = []

    def handle(self, key: ThreadKey, text: str, user: str = "") -> Reply:
        self.calls.append((key, text))
        if self.env_box:
            env = self.env_box[0]
            self.requests_seen_at_start = [f"{r.method} {r.path}" for r in env.http_requests]
            # SimCord enforces the 3 s deadline on its own clock; move it as a slow plan would.
            env.backend.clock.advance(self.discord_clock_s)
        return self.reply.model_copy(update={"verdict": f"{self.reply.verdict} ({text})"})


def _plan_reply(**overrides: Any) -> Reply:
    values = dict(kind="plan", title="GPU plan", verdict="Fits on one RTX 4090.", whatifs=[EIGHT_K])
    return Reply(**(values | overrides))


def _world(env: simcord.Env):
    guild = env.create_guild()
    channel = guild.create_text_channel("ml")
    ana = guild.add_member(env.create_user("ana"))
    return guild, channel, ana


def _message_bodies(env: simcord.Env) -> list[dict]:
    """Every message the bot put on the wire: sends, interaction edits and followups."""
    return [
        r.json
        for r in env.http_requests
        if r.method in ("POST", "PATCH")
        and isinstance(r.json, dict)
        and ("embeds" in r.json or "content" in r.json)
    ]


def _assert_never_pings(env: simcord.Env) -> None:
    bodies = _message_bodies(env)
    assert bodies
    for body in bodies:
        mentions = body["allowed_mentions"]
        assert mentions["parse"] == []
        assert not (mentions.get("replied_user") or mentions.get("roles") or mentions.get("users"))


def _bot_messages(channel: simcord.ChannelHandle, bot: discord.Client) -> list[discord.Message]:
    return [m for m in channel.history() if m.author.id == bot.user.id]


def _field(message: discord.Message | simcord.ResponseMessage, prefix: str) -> str:
    """The value of the first embed field whose name starts with `prefix`."""
    return next(
        f.value for e in message.embeds for f in e.fields if (f.name or "").startswith(prefix)
    )


@pytest.fixture
def conversation() -> Recording:
    return Recording(Conversation())


async def test_the_slash_command_defers_at_once_and_answers_after_a_slow_planner():
    env_box: list = []
    planner = Scripted(_plan_reply(), env_box=env_box, discord_clock_s=10)
    async with simcord.run(GpuplanClient(planner, shard_count=1)) as env:
        env_box.append(env)
        _, channel, ana = _world(env)
        result = await ana.slash(channel, "gpuplan", query="13B QLoRA")
        # The deferral was on the wire before planning began; the 10 s plan then still answered.
        assert any(r.endswith("/callback") for r in planner.requests_seen_at_start)
        callback = next(r.json for r in env.http_requests if r.path.endswith("/callback"))
        assert callback == {"type": 5}
        assert schema_errors("CreateMessageInteractionCallbackRequest", callback) == []
        assert result.acknowledged and not result.ephemeral
        assert result.response.embeds[0].description.startswith("Fits on one RTX 4090.")
        assert env.errors == []


async def test_planning_before_acknowledging_would_miss_the_deadline():
    """Control for the test above: SimCord really rejects a late first response."""

    class PlansFirst(GpuplanClient):
        async def answer(self, interaction, text, *, ephemeral):
            await self.plan(ThreadKey(platform="discord"), text, "")
            await interaction.response.send_message("too late")

    env_box: list = []
    planner = Scripted(_plan_reply(), env_box=env_box, discord_clock_s=10)
    async with simcord.run(PlansFirst(planner, shard_count=1), check_errors=False) as env:
        env_box.append(env)
        _, channel, ana = _world(env)
        result = await ana.slash(channel, "gpuplan", query="13B QLoRA")
        assert not result.acknowledged
        assert env.errors[0].original.code == 10062  # Unknown interaction


async def test_private_answers_are_ephemeral_from_the_first_response(conversation):
    async with simcord.run(GpuplanClient(conversation, shard_count=1)) as env:
        _, channel, ana = _world(env)
        result = await ana.slash(channel, "gpuplan", query=QUESTION, private=True)
        callback = next(r.json for r in env.http_requests if r.path.endswith("/callback"))
        assert callback == {"type": 5, "data": {"flags": 64}}
        assert result.ephemeral and result.response.ephemeral
        assert result.response.embeds
        _assert_never_pings(env)


async def test_slash_help_explains_usage_with_examples(conversation):
    async with simcord.run(GpuplanClient(conversation, shard_count=1)) as env:
        _, channel, ana = _world(env)
        result = await ana.slash(channel, "gpuplan", query="help")
        (embed,) = result.response.embeds
        assert "e.g." in embed.description and "what if 8k ctx?" in embed.description
        assert conversation.calls[0][1] == "help"


async def test_model_and_gpu_names_autocomplete():
    async with simcord.run(GpuplanClient(Scripted(_plan_reply()), shard_count=1)) as env:
        _, channel, ana = _world(env)
        gpus = await ana.autocomplete(channel, "gpuplan", "gpu", "4090")
        assert gpus and len(gpus) <= 25
        assert all("4090" in choice["name"] for choice in gpus)
        models = await ana.autocomplete(channel, "gpuplan", "model", "lla")
        assert models and len(models) <= 25
        assert all("lla" in choice["name"].lower() for choice in models)
        assert models[0]["name"].lower().startswith("lla")
        everything = await ana.autocomplete(channel, "gpuplan", "gpu", "")
        assert len(everything) == 25


async def test_a_mention_opens_a_thread_whose_what_ifs_replan_the_same_job(conversation):
    client = GpuplanClient(conversation, shard_count=1)
    async with simcord.run(client) as env:
        _, channel, ana = _world(env)
        question = await ana.send(channel, f"{client.user.mention} {QUESTION}")
        (thread,) = channel.threads
        assert thread.id == question.id  # a thread made from a message shares its id
        assert thread.name.startswith("gpuplan: llama 3.1 8b QLoRA")
        (first,) = _bot_messages(thread, client)
        assert "QLoRA" in first.embeds[0].title and "4,096 ctx" in first.embeds[0].title

        await ana.send(thread, f"{client.user.mention} what if 8k ctx?")
        _, second = _bot_messages(thread, client)
        assert "8,192 ctx" in second.embeds[0].title
        assert "context length: 4096 → 8192" in _field(second, "What changed")
        (key, text), (followup_key, followup_text) = conversation.calls
        assert text == QUESTION and followup_text == "what if 8k ctx?"
        expected = ThreadKey(
            platform="discord",
            workspace=str(channel.guild.id),
            channel=str(channel.id),
            thread=str(thread.id),
        )
        assert key == followup_key == expected

        # Without the message_content intent an unmentioned reply arrives blank: it is not
        # planned, and the thread is told once how to ask.
        await ana.send(thread, "and 2 epochs?")
        assert _bot_messages(thread, client)[-1].content == UNREADABLE_REPLY
        assert len(conversation.calls) == 2
        _assert_never_pings(env)


async def test_a_bare_mention_gets_help_in_place_without_a_thread(conversation):
    client = GpuplanClient(conversation, shard_count=1)
    async with simcord.run(client) as env:
        _, channel, ana = _world(env)
        question = await ana.send(channel, client.user.mention)
        assert channel.threads == []
        (answer,) = _bot_messages(channel, client)
        assert answer.reference.message_id == question.id
        assert "what if 8k ctx?" in answer.embeds[0].description
        assert conversation.calls[0][1] == "help"
        _assert_never_pings(env)


async def test_an_answer_discord_refuses_still_ends_the_thinking_state(caplog):
    async with simcord.run(GpuplanClient(Scripted(_plan_reply()), shard_count=1)) as env:
        guild, channel, ana = _world(env)
        env.inject_error("PATCH", "/webhooks/*/messages/@original", status=400, code=50035)
        result = await ana.slash(channel, "gpuplan", query="13B QLoRA")
        assert result.response.content == UNDELIVERABLE
        assert result.response.embeds == []
    (lost,) = [r for r in caplog.records if r.name == "adapters.discord.client"]
    assert lost.exc_info is None and lost.getMessage().startswith(f"discord/{guild.id}/")
    assert lost.getMessage().endswith(
        "answer lost at the interaction's follow-up (HTTP 400, code 50035)"
    )


async def test_a_direct_message_conversation_needs_no_mention_and_remembers_the_job(
    conversation,
):
    client = GpuplanClient(conversation, shard_count=1)
    async with simcord.run(client) as env:
        bo = env.create_user("bo")
        await bo.send_dm(QUESTION)
        await bo.send_dm("what if 8k ctx?")
        first, second = _bot_messages(bo.dm_channel, client)
        assert "4,096 ctx" in first.embeds[0].title
        assert "context length: 4096 → 8192" in _field(second, "What changed")
        (key, _), (followup_key, _) = conversation.calls
        assert key == followup_key and key.workspace == "" and key.thread == ""
        _assert_never_pings(env)


async def test_with_the_message_content_intent_plain_thread_replies_replan(conversation):
    client = GpuplanClient(conversation, shard_count=1, message_content=True)
    async with simcord.run(client, approved_intents=discord.Intents.all()) as env:
        _, channel, ana = _world(env)
        await ana.send(channel, f"{client.user.mention} {QUESTION}")
        (thread,) = channel.threads
        await ana.send(thread, "what if 8k ctx?")
        assert [text for _, text in conversation.calls] == [QUESTION, "what if 8k ctx?"]
        assert len(_bot_messages(thread, client)) == 2
        # Plain channel chatter that does not mention the bot is left alone.
        await ana.send(channel, "lunch?")
        assert len(conversation.calls) == 2


async def test_a_what_if_button_in_the_thread_replans_and_survives_a_restart(conversation):
    client = GpuplanClient(conversation, shard_count=1)
    async with simcord.run(client) as env:
        _, channel, ana = _world(env)
        await ana.send(channel, f"{client.user.mention} {QUESTION}")
        (thread,) = channel.threads
        (answer,) = _bot_messages(thread, client)
        buttons = {b.label: b.custom_id for row in answer.components for b in row.children}
        # The button carries its stored change's id, and its text for older builds' sake.
        eight_k = Patch({"seq_len": 8192}, EIGHT_K.label)
        assert buttons["8k context"] == whatif_custom_id(
            EIGHT_K.model_copy(update={"id": patch_id(eight_k)})
        )

        clicked = await ana.click(answer, label="8k context")
        assert clicked.acknowledged
        assert "context length: 4096 → 8192" in _field(clicked.response, "What changed")
        assert clicked.response.channel_id == thread.id
        assert conversation.calls[1] == (
            conversation.calls[0][0],
            Button(patch_id(eight_k), "what if 8k ctx?"),
        )

        # A new process: a fresh client and conversation; the thread's job lives in the store.
        restarted = Recording(Conversation())
        await env.restart_bot(GpuplanClient(restarted, shard_count=1))
        after_restart = await ana.click(answer, custom_id=buttons["2 GPUs"])
        changes = _field(after_restart.response, "What changed")
        assert "GPU count: 1 → 2" in changes and "context" not in changes
        assert "8,192 ctx" in after_restart.response.embeds[0].title
        (pressed,) = restarted.calls
        assert pressed[0] == conversation.calls[0][0] and pressed[1].text == "what if 2 GPUs?"
        _assert_never_pings(env)


class UnreachablePatches:
    """A patch store that cannot be reached (a Redis outage): buttons keep their text, which is
    also how buttons posted before patches were stored look."""

    def put(self, patch: Patch) -> str:
        raise StoreUnavailable("patch store unreachable")

    def put_all(self, patches: list[Patch]) -> list[str]:
        raise StoreUnavailable("patch store unreachable")

    def get(self, patch_id: str) -> Patch | None:
        raise StoreUnavailable("patch store unreachable")


async def _click_8k(conversation: Conversation):
    client = GpuplanClient(conversation, shard_count=1)
    async with simcord.run(client) as env:
        _, channel, ana = _world(env)
        await ana.send(channel, f"{client.user.mention} {QUESTION}")
        (thread,) = channel.threads
        (answer,) = _bot_messages(thread, client)
        buttons = {b.label: b.custom_id for row in answer.components for b in row.children}
        clicked = await ana.click(answer, label="8k context")
        return buttons["8k context"], clicked.response


async def test_an_old_format_button_still_works_by_its_text():
    custom_id, response = await _click_8k(Conversation(patches=UnreachablePatches()))
    assert custom_id == "gpuplan:whatif:ctx8k:what if 8k ctx?"
    assert "context length: 4096 → 8192" in _field(response, "What changed")


async def test_an_expired_button_says_so_and_changes_nothing():
    now = [1_000_000.0]
    patches = MemoryPatchStore(ttl_s=60.0, clock=lambda: now[0])
    real = Conversation(patches=patches)

    class Late:
        """Posts the answer, then lets the button's patch outlive its store."""

        def handle(self, key: ThreadKey, text: object, user: str = "") -> Reply:
            if isinstance(text, Button):
                now[0] += 61.0
            return real.handle(key, text, user)

    custom_id, response = await _click_8k(Late())
    assert custom_id.startswith("gpuplan:whatif:p-")
    assert "This button has expired, ask again" in response.embeds[0].description


async def test_a_button_on_a_slash_answer_continues_that_commands_job(conversation):
    async with simcord.run(GpuplanClient(conversation, shard_count=1)) as env:
        _, channel, ana = _world(env)
        result = await ana.slash(channel, "gpuplan", query=QUESTION)
        clicked = await ana.click(result.response, label="8k context")
        assert "context length: 4096 → 8192" in _field(clicked.response, "What changed")
        (first_key, _), (click_key, text) = conversation.calls
        assert click_key == first_key and text.stored and text.text == "what if 8k ctx?"


async def test_an_oversize_answer_is_split_across_messages_discord_accepts():
    huge = _plan_reply(warnings=[f"warning {i}: " + "w" * 1000 for i in range(20)])
    async with simcord.run(GpuplanClient(Scripted(huge), shard_count=1)) as env:
        _, channel, ana = _world(env)
        result = await ana.slash(channel, "gpuplan", query="13B QLoRA")
        # SimCord answers 50035 for any embed over Discord's limits; none came back.
        assert env.errors == []
        assert result.followups, "the answer should continue in followup messages"
        for body in _message_bodies(env):
            assert schema_errors("IncomingWebhookInteractionRequest", body) == []
        _assert_never_pings(env)


async def test_the_chart_arrives_as_an_attachment_shown_in_the_embed():
    reply = _plan_reply(
        has_chart=True,
        table=[
            {
                "gpu_name": "RTX 4090",
                "count": 1,
                "verdict": "fits",
                "headroom_gib": 4.0,
                "hours": 10.0,
                "cost_usd": 8.0,
                "cost_usd_median": 8.0,
                "usd_per_hour": 0.8,
            }
        ],
    )
    async with simcord.run(GpuplanClient(Scripted(reply), shard_count=1)) as env:
        _, channel, ana = _world(env)
        result = await ana.slash(channel, "gpuplan", query="13B QLoRA")
        (attachment,) = result.response.attachments
        assert attachment.filename == CHART_FILENAME
        assert result.response.embeds[0].image.url.endswith(CHART_FILENAME)


async def test_without_thread_permission_the_bot_replies_in_place(conversation):
    client = GpuplanClient(conversation, shard_count=1)
    async with simcord.run(client) as env:
        guild, _, ana = _world(env)
        no_threads = discord.PermissionOverwrite(create_public_threads=False)
        locked = guild.create_text_channel("locked", overwrites={guild.default_role: no_threads})
        question = await ana.send(locked, f"{client.user.mention} {QUESTION}")
        assert locked.threads == []
        (answer,) = _bot_messages(locked, client)
        assert answer.reference and answer.reference.message_id == question.id
        _assert_never_pings(env)


async def test_the_synced_commands_are_valid_discord_commands():
    async with simcord.run(GpuplanClient(Scripted(_plan_reply()), shard_count=1)) as env:
        (sync,) = [r for r in env.http_requests if r.method == "PUT"]
    for command in sync.json:
        assert schema_errors("ApplicationCommandCreateRequest", command) == []
        names = [command["name"], *(o["name"] for o in command["options"])]
        assert all(1 <= len(n) <= 32 and n == n.lower() for n in names)
        descriptions = [command["description"], *(o["description"] for o in command["options"])]
        assert all(1 <= len(d) <= 100 for d in descriptions)
        assert len(command["options"]) <= 25


async def test_an_inverse_question_leads_with_the_number(conversation):
    client = GpuplanClient(conversation, shard_count=1)
    async with simcord.run(client) as env:
        _, channel, ana = _world(env)
        await ana.send(channel, f"{client.user.mention} 全参微调 7B 需要几张4090?")
        (thread,) = channel.threads
        (answer,) = _bot_messages(thread, client)
        assert "× NVIDIA GeForce RTX 4090" in answer.embeds[0].description
        assert "可以放下" in answer.embeds[0].description  # asked in Chinese, answered in Chinese
        _assert_never_pings(env)


TINY_CONFIG = {
    "architectures": ["LlamaForCausalLM"],
    "_name_or_path": "acme/tiny-llama-3b",
    "model_type": "llama",
    "hidden_size": 3072,
    "intermediate_size": 8192,
    "num_hidden_layers": 28,
    "num_attention_heads": 24,
    "num_key_value_heads": 8,
    "vocab_size": 128256,
    "max_position_embeddings": 131072,
}


async def test_a_config_json_attached_to_a_message_plans_that_model(conversation):
    import json

    client = GpuplanClient(conversation, shard_count=1)
    async with simcord.run(client) as env:
        _, channel, ana = _world(env)
        attachment = ("config.json", json.dumps(TINY_CONFIG).encode())
        await ana.send(channel, f"{client.user.mention} qlora 4k ctx", attachments=[attachment])
        (thread,) = channel.threads
        (answer,) = _bot_messages(thread, client)
        assert answer.embeds[0].title.startswith("tiny-llama-3b · QLoRA · 4,096 ctx")
        _assert_never_pings(env)
