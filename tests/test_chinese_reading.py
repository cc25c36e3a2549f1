"""Chinese questions and follow-ups are read as their English twins are (issue 33, item 5): bits,
batch, days × hours, OOM reports, inverse questions, help and comparisons; and a Chinese thread's
answers say values and notes in Chinese words."""

from __future__ import annotations

import pytest

from bot import phrases
from bot.changes import change_line
from bot.conversation import Conversation
from bot.followups import Help, read_intent
from bot.state.threads import MemoryStore
from bot.threads import ThreadKey
from planner.parsing import parse
from planner.parsing.report import oom_reported
from planner.words import Said

JOB_ZH = "qwen2.5-7b lora微调，单卡4090，上下文4k"
JOB_EN = "qwen2.5-7b lora, 4090, 4k context"


def _conversation() -> tuple[Conversation, ThreadKey]:
    return Conversation(MemoryStore(), limit_rate=False), ThreadKey(platform="test", thread="t")


def _fields(text: str) -> dict:
    return parse(text).fields


@pytest.mark.parametrize(
    ("chinese", "english"),
    [
        ("llama 8b 4位 lora 4090", "llama 8b 4bit lora 4090"),
        ("llama 8b 8 位 lora 4090", "llama 8b 8 bit lora 4090"),
        ("llama 8b 2 位量化 lora 4090", "llama 8b 2 bit lora 4090"),
        ("llama 8b 4 位量化微调 4090", "llama 8b 4 bit qlora 4090"),
    ],
)
def test_bits_in_chinese_are_the_quantisation_bits(chinese: str, english: str) -> None:
    zh, en = _fields(chinese), _fields(english)
    assert zh["quant"] == en["quant"] and zh["method"] == en["method"] == "qlora"


def test_wei_before_other_words_is_not_bits() -> None:
    """位 is also the measure word for people: "2位同事" is two colleagues."""
    assert "quant" not in _fields("llama 8b lora 4090 我们2位同事在用")


@pytest.mark.parametrize(
    "text", ["批次 8", "批大小 8", "batch 开 8", "批次开到8", "批量大小为 8", "batch 改成 8"]
)
def test_chinese_batch_phrasings_set_the_micro_batch(text: str) -> None:
    assert _fields(f"llama 8b lora 4090 {text}")["micro_batch"] == 8


@pytest.mark.parametrize(
    "text", ["3天x24 GPU 小时", "3天*24小时", "3 days x 24 gpu hours", "3 days × 24 hours"]
)
def test_days_times_hours_is_a_deadline(text: str) -> None:
    result = parse(f"llama 8b lora 2张4090 {text}")
    assert result.fields["deadline_hours"] == 72
    assert result.clarify is None and not result.unread
    said = [note for note in result.assumptions if isinstance(note, Said)]
    assert any(note.to("zh") == "3 天 × 24 小时按 72 小时期限计" for note in said)


def test_days_times_hours_times_gpus_is_a_deadline_on_that_many_gpus() -> None:
    """phrasing.md's "5x24x8 A100(40G) GPU hours": days × hours × GPUs."""
    fields = _fields("llama 8b lora 5x24x8 A100(40G) GPU hours")
    assert (fields["deadline_hours"], fields["num_gpus"], fields["gpu"]) == (120, 8, "A100 40GB")


def test_days_times_hours_already_spent_is_not_a_deadline() -> None:
    assert "deadline_hours" not in _fields("llama 8b lora 4090 跑了3天x24小时")


@pytest.mark.parametrize(
    ("chinese", "english"), [("跑3天", "for 3 days"), ("训练 12 小时", "for 12 hours")]
)
def test_running_for_a_time_is_a_deadline_in_either_language(chinese: str, english: str) -> None:
    zh, en = _fields(f"llama 8b lora 4090 {chinese}"), _fields(f"llama 8b lora 4090 {english}")
    assert zh["deadline_hours"] == en["deadline_hours"]
    assert "deadline_hours" not in _fields("llama 8b lora 4090 跑了3天")


@pytest.mark.parametrize(
    "text", ["OOM 了", "4090上OOM了", "在 4090 上 oom 了", "爆显存了", "显存不够", "显存炸了"]
)
def test_chinese_oom_reports_are_read(text: str) -> None:
    assert oom_reported(text.lower())


@pytest.mark.parametrize("text", ["显存不够吗？", "会不会爆显存", "显存够不够", "zoom in"])
def test_questions_about_memory_are_not_oom_reports(text: str) -> None:
    assert not oom_reported(text.lower())


@pytest.mark.parametrize("report", ["4090 上 OOM 了", "显存不够"])
def test_a_chinese_oom_report_reanchors_the_thread_as_the_english_one(report: str) -> None:
    conversation, key = _conversation()
    conversation.respond(key, JOB_ZH)
    zh = conversation.respond(key, report)
    conversation, key = _conversation()
    conversation.respond(key, JOB_EN)
    en = conversation.respond(key, "OOM on my 4090")
    assert zh.plan is not None and en.plan is not None
    assert zh.plan.spec.measured_metric == en.plan.spec.measured_metric == "oom"
    assert "实测指标：默认 → 显存不足（OOM）" in zh.reply.changes
    assert "measured as: default → oom" in en.reply.changes  # English keeps the raw value


def test_how_many_cards_in_chinese_gets_the_inverse_headline() -> None:
    conversation, key = _conversation()
    conversation.respond(key, "llama 70b lora 用 h100")
    zh = conversation.respond(key, "最少需要几张 4090？")
    conversation, key = _conversation()
    conversation.respond(key, "llama 70b lora on h100")
    en = conversation.respond(key, "how many 4090s?")
    assert zh.plan is not None and en.plan is not None
    assert zh.plan.spec.num_gpus == en.plan.spec.num_gpus == 2
    assert "更少则不行" in zh.reply.verdict and "fewer do not" in en.reply.verdict


@pytest.mark.parametrize("text", ["帮助", "怎么用？", "help"])
def test_help_is_asked_in_either_language(text: str) -> None:
    assert isinstance(read_intent(text), Help)


def test_the_chinese_help_suggests_a_comparison_the_reader_accepts() -> None:
    conversation, key = _conversation()
    conversation.respond(key, JOB_ZH)
    body = conversation.respond(key, "帮助").reply.body
    assert "比较 h100 和 a100" in body and "compare" not in body
    compared = [
        conversation.respond(key, text) for text in ("比较 h100 和 a100", "h100 和 a100 对比")
    ]
    conversation, key = _conversation()
    conversation.respond(key, JOB_EN)
    english = conversation.respond(key, "compare h100 and a100")
    cards = [row.gpu_name for row in english.reply.table]
    assert len(cards) == 2
    assert all([row.gpu_name for row in turn.reply.table] == cards for turn in compared)


def test_change_lines_say_layouts_in_words_in_chinese_and_raw_in_english() -> None:
    line = change_line("sharding", "none", "fsdp")
    assert line == "sharding: none → fsdp"
    assert isinstance(line, Said)
    assert line.to("zh") == "多卡切分：不切分（每张GPU放整个任务） → FSDP（模型切分到各张GPU）"
    method = change_line("method", "lora", "full")
    assert method == "method: lora → full" and method.to("zh") == "方法：LoRA → 全参微调"
    metric = change_line("measured_metric", None, "nvidia-smi")
    assert metric == "measured as: default → nvidia-smi"
    assert isinstance(metric, Said) and "unknown" not in change_line(
        "measured_metric", None, "unknown"
    ).to("zh")


def test_a_refused_what_if_shows_our_notes_as_notes_not_as_quoted_words() -> None:
    tower = "连续乘方（比如 9 的 9 的 9 次方）已搁置，不做计算"
    conversation, key = _conversation()
    conversation.respond(key, JOB_ZH)
    body = conversation.respond(key, "上下文改成8k, 9^9^9 呢？").reply.body
    assert tower in body and f"“{tower}”" not in body
    conversation, key = _conversation()
    conversation.respond(key, JOB_EN)
    body = conversation.respond(key, "what if 8k ctx and 9^9^9?").reply.body
    assert body.startswith("The job is unchanged: a tower of powers") and "“a tower" not in body


def test_a_refused_what_if_quotes_the_askers_words_and_adds_our_notes() -> None:
    message = phrases.unread_change(["紫色大象", parse("9^9^9 llama 8b").unread[0]])
    assert "“紫色大象”" in message.body.to("zh")
    assert "另外：连续乘方" in message.body.to("zh")
