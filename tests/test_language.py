"""Answers in the asker's language (issue #21): a question in Chinese gets the headline, verdict,
recommendation, suggestions and assumptions in Chinese, numbers and names as they are, in the
console, Slack and Discord; a workspace/server default applies to questions that say nothing."""

from __future__ import annotations

import json
import re

import pytest
import simcord

from adapters.cli import main
from adapters.discord.client import GpuplanClient
from adapters.discord.render import render_reply as discord_render
from adapters.slack.render import render_reply as slack_render
from bot import phrases
from bot.conversation import Conversation
from bot.language import language_default, question_language, reply_language
from bot.state.threads import MemoryStore
from bot.threads import ThreadKey
from planner.parsing import parse
from planner.words import Said
from tests.parse_cases import REALISTIC, load_cases

ZH_QUESTION = "qwen2.5-7b lora微调，单卡4090，上下文4k，数据3万条，每条平均500 token，训练3轮"
_CJK = re.compile(r"[\u4e00-\u9fff]")


def _answer(text: str) -> object:
    conversation = Conversation(MemoryStore(), limit_rate=False)
    return conversation.handle(ThreadKey(platform="test"), text)


def test_a_chinese_question_gets_every_section_in_chinese_with_numbers_and_names_kept() -> None:
    reply = _answer(ZH_QUESTION)
    assert reply.language == "zh"
    for text in (reply.title, reply.verdict, *reply.recommendation, *reply.suggestions):
        assert _CJK.search(text), text
    assert all(_CJK.search(line) for line in reply.assumptions), reply.assumptions
    assert "Qwen2.5-7B" in reply.title and "4,096" in reply.title
    assert "RTX 4090" in reply.verdict and "GiB" in reply.verdict


def test_chinese_questions_of_the_realistic_set_come_out_chinese() -> None:
    lines = chinese = 0
    for case in load_cases(REALISTIC):
        if case["lang"] != "zh" or case["family"] == "followup":
            continue
        reply = _answer(case["text"])
        assert reply.language == "zh"
        for text in (reply.title, reply.verdict, *reply.recommendation, *reply.suggestions,
                     *reply.assumptions):  # fmt: skip
            if text:
                lines += 1
                chinese += bool(_CJK.search(text))
    assert chinese / lines >= 0.9


def test_english_stays_english() -> None:
    reply = _answer("13B QLoRA, 4k ctx, 20M tokens x3")
    assert reply.language == "en"
    text = json.dumps(reply.model_dump(), ensure_ascii=False)
    assert not _CJK.search(text)


def test_an_admin_sets_the_workspace_default_for_questions_that_say_nothing(monkeypatch) -> None:
    monkeypatch.delenv("GPUPLAN_LANGUAGE", raising=False)
    conversation = Conversation(MemoryStore(), limit_rate=False)
    here = ThreadKey(platform="slack", workspace="T0ZH", channel="C1")
    elsewhere = ThreadKey(platform="slack", workspace="T0EN", channel="C1")
    refused = conversation.handle(here, "/gpuplan language zh", "U1")
    assert refused.kind == "error" and conversation.handle(here, "13b lora").language == "en"
    assert conversation.handle(here, "/gpuplan language zh", "U1", admin=True).language == "zh"
    assert conversation.handle(here, "13b lora on a 4090").language == "zh"
    assert conversation.handle(elsewhere, "13b lora on a 4090").language == "en"
    assert conversation.handle(here, "gpuplan language auto", "U1", admin=True).kind == "help"
    assert conversation.handle(here, "13b lora on a 4090").language == "en"
    monkeypatch.setenv("GPUPLAN_LANGUAGE", "zh")  # the default where a workspace sets none
    assert conversation.handle(elsewhere, "13b lora on a 4090").language == "zh"
    assert reply_language("8k?", language_default("en")) == "en"  # the workspace's own wins
    monkeypatch.setenv("GPUPLAN_LANGUAGE", "klingon")
    assert language_default(None) is None


def test_question_language() -> None:
    assert question_language("两张4090够吗") == "zh"
    assert question_language("what if 8k ctx?") is None


def test_console_answers_in_chinese(capsys) -> None:
    assert main(["ask", ZH_QUESTION]) == 0
    out = capsys.readouterr().out
    assert "推荐" in out and "建议" in out and "假设" in out and "每张GPU需要" in out


def test_slack_blocks_are_chinese() -> None:
    wire = json.dumps(slack_render(_answer(ZH_QUESTION)), ensure_ascii=False)
    assert "推荐" in wire and "每张GPU需要" in wire and "假设" in wire


@pytest.mark.asyncio
async def test_discord_answers_a_chinese_mention_in_chinese() -> None:
    client = GpuplanClient(Conversation(MemoryStore(), limit_rate=False), shard_count=1)
    async with simcord.run(client) as env:
        guild = env.create_guild()
        channel = guild.create_text_channel("ml")
        ana = guild.add_member(env.create_user("ana"))
        await ana.send(channel, f"{client.user.mention} {ZH_QUESTION}")
        (thread,) = channel.threads
        (answer,) = [m for m in thread.history() if m.author.id == client.user.id]
        embed = answer.embeds[0]
        assert "上下文" in embed.title
        assert any(field.name == "推荐" for field in embed.fields)
    assert "推荐" in json.dumps(discord_render(_answer(ZH_QUESTION)), ensure_ascii=False)


@pytest.mark.parametrize(
    "followup",
    [
        phrases.longer_context_button("8k")[1],
        phrases.longer_context_button("1k")[1],
        phrases.more_gpus_button(16)[1],
        phrases.QLORA_BUTTON[1],
        phrases.LORA_BUTTON[1],
        phrases.other_card_hint(True),
        phrases.other_card_hint(False),
        phrases.CHECKPOINTING_BUTTON[1],
    ],
    ids=str,
)
def test_a_suggested_follow_up_in_chinese_reads_as_the_same_change(followup: Said) -> None:
    chinese = followup.to("zh")
    assert _CJK.search(chinese)
    assert parse(chinese).fields == parse(followup).fields


def test_buttons_and_hints_of_a_chinese_answer_are_chinese() -> None:
    reply = _answer(ZH_QUESTION)
    assert reply.whatifs and all(_CJK.search(w.label) for w in reply.whatifs)
    assert any(_CJK.search(text) for text in reply.followups)


def test_the_card_table_breakdown_and_price_date_are_chinese_and_line_up() -> None:
    """Columns, verdicts, highlighted rows, the memory components, durations and the price date
    all read Chinese; the console pads by display width (a CJK character takes two columns)."""
    from adapters.console.text import render_text
    from bot import format as fmt

    reply = _answer(ZH_QUESTION)
    assert {line.component for line in reply.memory} >= {"权重", "激活", "开销"}
    assert any(row.highlight == "requested" for row in reply.table)  # data; shown as 所问
    assert reply.price_date and reply.price_date.startswith("报价")
    lines = render_text(reply).splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith("显卡"))
    table = lines[header : header + 1 + len(reply.table)]
    assert "结论" in table[0] and "每GPU小时" in table[0]
    assert all(("放得下" in row or "勉强" in row or "放不下" in row) for row in table[1:])
    assert not re.search(r"\b(fits|tight|requested|cheapest)\b", "\n".join(table))
    # The headroom column (right-aligned, after the Chinese verdicts) ends at one display column.
    ends = {fmt.display_width(row[: row.index(" GiB") + 4]) for row in table[1:]}
    header_end = fmt.display_width(table[0][: table[0].index("余量") + 2])
    assert ends == {header_end}, table
    slack = json.dumps(slack_render(reply), ensure_ascii=False)
    discord = json.dumps(discord_render(reply), ensure_ascii=False)
    for wire in (slack, discord):
        assert "放得下" in wire and "所问" in wire and "权重" in wire


def test_a_chinese_chart_draws_chinese_only_with_a_font_that_has_the_glyphs() -> None:
    from bot.chart import chart_png, chart_words

    reply = _answer(ZH_QUESTION)
    drawn = chart_words(reply, "Noto Sans CJK SC")
    assert drawn.title == reply.title and drawn.hours == "小时" and drawn.requested == "所问"
    assert drawn.verdicts["tight"].startswith("勉强")
    # Without such a font: English words, and the title without the runs it would draw as boxes.
    fallback = chart_words(reply, None)
    assert fallback.hours == "hours" and fallback.requested == "requested"
    assert not re.search(r"[\u4e00-\u9fff]", fallback.title) and "Qwen2.5-7B" in fallback.title
    assert "4,096" in fallback.title and "  " not in fallback.title
    assert chart_png(reply).startswith(b"\x89PNG")


@pytest.mark.parametrize(
    ("follow_up", "expected"),
    [
        ("20美元以内最便宜的？", "预算的最便宜方案"),
        ("预算2美元最便宜的方案？", "没有方案满足 $2.00 预算"),
    ],
)
def test_a_chinese_budget_question_is_answered_in_chinese(follow_up: str, expected: str) -> None:
    conversation = Conversation(MemoryStore(), limit_rate=False)
    key = ThreadKey(platform="test", thread="budget")
    conversation.handle(key, "13B QLoRA 在4090上训练，4k 上下文，2000万 token 3 轮")
    reply = conversation.handle(key, follow_up)
    assert expected in reply.verdict
    assert not re.search(r"\b(cheapest|meets|budget)\b", reply.verdict)


def test_the_cheapest_button_and_budget_hint_move_a_chinese_thread_as_in_english() -> None:
    """Their Chinese texts are the same intent as their English, answered in Chinese."""
    english_hint = phrases.budget_hint(20)
    for english in (phrases.CHEAPEST_BUTTON[1], english_hint):
        moved = {}
        for text in (english, english.to("zh")):
            conversation = Conversation(MemoryStore(), limit_rate=False)
            key = ThreadKey(platform="test", thread="cheapest")
            conversation.handle(key, "13B QLoRA 在4090上训练，4k 上下文，2000万 token 3 轮")
            reply = conversation.respond(key, text)
            moved[text] = reply.plan.spec
            assert (reply.reply.language == "zh") == (text != english)
        assert _CJK.search(english.to("zh"))
        assert len(set(map(repr, moved.values()))) == 1


def test_the_config_button_asks_for_the_files_in_chinese() -> None:
    from bot.run_configs import ConfigRequest, read_config_request

    chinese = phrases.CONFIG_BUTTON[1].to("zh")
    assert _CJK.search(chinese) and read_config_request(chinese) == ConfigRequest(None)


@pytest.mark.parametrize(
    "question",
    [
        "qwen2.5 7b grpo 在 h100 上",
        "llama 3 8b dpo 全参 在 8张 a100 上",
        "qwen2.5 7b ppo 在 4张 h100 上",
        "llama 3.1 8b orpo 在 a100 上",
        "qwen3 30b a3b lora 在 2 张 h100 上",
        "qwen2.5 vl 7b lora 在 4090 上",
        "7b 和 13b 对比 lora 在4090上",
    ],
)
def test_post_training_moe_and_vision_answers_in_chinese_have_no_english_sentences(
    question: str,
) -> None:
    """Every sentence is Chinese: at most names, flags and quoted phrases stay in English (no run
    of three English words outside quotes)."""
    reply = _answer(question)
    english_run = re.compile(r"(?:\b[a-z]{2,}\b[ ,;:()'-]+){3,}")
    for text in (reply.verdict, *reply.recommendation, *reply.suggestions, *reply.assumptions,
                 *reply.warnings, *reply.comparison):  # fmt: skip
        unquoted = re.sub(r"“[^”]*”", "", text)
        assert not english_run.search(unquoted), text
