"""Words with one home (issue 33, item 5): every catalog entry says its sentence in English and
Chinese with the same values; a Chinese thread reads Chinese all the way (what changed, errors,
inverse leads); Chinese follow-up verbs and counts act as their English."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from bot import phrases
from bot.conversation import Conversation
from bot.followups import Reset, Undo, read_intent
from bot.state.threads import MemoryStore
from bot.threads import ThreadKey
from planner import errors, messages
from planner.parsing import parse
from planner.words import Catalog, Entry, Listing, Said, placeholders

CATALOGS: dict[str, Catalog] = {
    "bot.phrases.CONVERSATION": phrases.CONVERSATION,
    "bot.phrases.CHANGES": phrases.CHANGES,
    "bot.phrases.INVERSE": phrases.INVERSE,
    "bot.phrases.HELP": phrases.HELP,
    "bot.phrases.VERDICT": phrases.VERDICT,
    "bot.phrases.BUTTONS": phrases.BUTTONS,
    "bot.phrases.LABELS": phrases.LABELS,
    "bot.phrases.PLAN_LINES": phrases.PLAN_LINES,
    "bot.phrases.TITLE": phrases.TITLE,
    "bot.phrases.MCP": phrases.MCP,
    "bot.phrases.SETTINGS": phrases.SETTINGS,
    "planner.errors.FIELD_LABELS": errors.FIELD_LABELS,
    "planner.messages.DEFAULTS": messages.DEFAULTS,
    "planner.messages.SUGGESTIONS": messages.SUGGESTIONS,
    "planner.messages.POST_TRAINING": messages.POST_TRAINING,
    "planner.messages.MODEL_SWITCHES": messages.MODEL_SWITCHES,
    "planner.messages.PARSING": messages.PARSING,
    "planner.messages.STACKS": messages.STACKS,
    "planner.messages.MARKET": messages.MARKET,
    "planner.messages.STACK_NOTES": messages.STACK_NOTES,
    "planner.messages.PRICES": messages.PRICES,
    "planner.messages.NAMES": messages.NAMES,
    "planner.messages.MODELS": messages.MODELS,
    "planner.messages.CARDS": messages.CARDS,
    "planner.messages.REPORTS": messages.REPORTS,
    "planner.messages.AFTER_TRAINING": messages.AFTER_TRAINING,
}
GOLDEN = Path(__file__).resolve().parent / "data" / "golden"
_CJK = re.compile(r"[\u4e00-\u9fff]")


def _entries() -> list[tuple[str, Entry]]:
    return [
        (f"{name}[{key!r}]", entry)
        for name, catalog in CATALOGS.items()
        for key, entry in catalog.entries.items()
    ]


@pytest.mark.parametrize(
    ("where", "entry"), _entries(), ids=lambda v: v if isinstance(v, str) else ""
)
def test_every_entry_has_both_languages_with_the_same_placeholders(
    where: str, entry: Entry
) -> None:
    assert entry.en.strip() and entry.zh.strip(), where
    assert placeholders(entry.en) == placeholders(entry.zh), where
    # Chinese text is Chinese: a template of words has CJK (names and symbols may stay as they are).
    words = re.sub(r"\{[^}]*\}", "", entry.en)
    # Chinese text is Chinese: an entry of two or more English words has CJK in its Chinese
    # (names, symbols and loanwords such as "token" may stay as they are).
    if len(re.findall(r"[a-z]{4,}", words)) >= 2 and entry.en != entry.zh:
        assert _CJK.search(entry.zh), where


def _english_sentences() -> set[str]:
    """The catalog's English sentences with no placeholders and some words: none may show up in
    a Chinese answer (a Chinese answer that fell back to English)."""
    return {
        entry.en.strip(" ;.")
        for _, entry in _entries()
        if not placeholders(entry.en) and len(entry.en.split()) >= 3
    }


def _chinese_golden_answers() -> list[Path]:
    answers = []
    for path in sorted(GOLDEN.rglob("*.txt")):
        first = path.read_text(encoding="utf-8").splitlines()[:2]
        if any(_CJK.search(line) for line in first):
            answers.append(path)
    return answers


def test_no_chinese_golden_answer_says_a_catalog_sentence_in_english() -> None:
    answers = _chinese_golden_answers()
    assert len(answers) > 20
    sentences = _english_sentences()
    for path in answers:
        text = path.read_text(encoding="utf-8")
        for sentence in sentences:
            assert sentence not in text, (path, sentence)


def test_a_said_sentence_is_its_english_and_renders_its_chinese_with_the_same_values() -> None:
    catalog = Catalog(
        {
            "n": Entry("{count:,} GPUs on {card}", "{card} 上 {count:,} 张GPU"),
            "card": Entry("your card", "所问的卡"),
        }
    )
    said = catalog("n", count=1200, card=catalog("card"))
    assert said == "1,200 GPUs on your card" and isinstance(said, Said)
    assert said.to("zh") == "所问的卡 上 1,200 张GPU"
    listed = Catalog({"l": Entry("Comparing {items}.", "对比 {items}。")})
    items = Listing([catalog("card"), "H100"])
    assert listed("l", items=items) == "Comparing your card, H100."
    assert listed("l", items=items).to("zh") == "对比 所问的卡、H100。"


@pytest.mark.parametrize("text", ["撤销", "撤回", "undo"])
def test_chinese_undo_reads_as_undo(text: str) -> None:
    assert read_intent(text) == Undo()


@pytest.mark.parametrize(
    ("text", "rest"), [("重来", ""), ("重新开始", ""), ("重来：13B lora", "13B lora"), ("new", "")]
)
def test_chinese_start_over_reads_as_new(text: str, rest: str) -> None:
    assert read_intent(text) == Reset(question=rest)


def test_wan_and_qian_count_preference_pairs() -> None:
    assert parse("llama 3 8b DPO lora, 1万对偏好数据").fields["dataset_prompts"] == 10_000
    assert parse("llama 3 8b DPO lora, 5千对偏好数据").fields["dataset_prompts"] == 5_000


def _thread() -> tuple[Conversation, ThreadKey]:
    return Conversation(MemoryStore(), limit_rate=False), ThreadKey(platform="test", thread="t")


def test_a_chinese_thread_undoes_and_starts_over_in_chinese() -> None:
    conversation, key = _thread()
    first = conversation.respond(key, "qwen2.5-7b lora微调，单卡4090，上下文4k")
    changed = conversation.respond(key, "上下文改成8k呢？")
    assert changed.plan is not None and changed.plan.spec.seq_len == 8192
    assert changed.reply.changes and all(_CJK.search(line) for line in changed.reply.changes)
    undone = conversation.respond(key, "撤销")
    assert undone.plan is not None and first.plan is not None
    assert undone.plan.spec.seq_len == first.plan.spec.seq_len  # the thread's plan, re-rendered
    assert undone.reply.kind == "plan" and _CJK.search(undone.reply.verdict)
    assert all(_CJK.search(line) for line in undone.reply.changes)
    again = conversation.respond(key, "撤销")
    assert again.reply.title == "没有可撤销的修改"
    reset = conversation.respond(key, "重来")
    assert reset.reply.title == "已重新开始" and "例如" in reset.reply.body
    assert conversation.respond(key, "上下文改成8k呢？").reply.title == "还没有可修改的任务"


def test_an_unreadable_change_in_a_chinese_thread_is_answered_in_chinese() -> None:
    conversation, key = _thread()
    conversation.respond(key, "qwen2.5-7b lora微调，单卡4090，上下文4k")
    reply = conversation.respond(key, "改成紫色的大象呢？").reply
    assert reply.kind in ("clarify", "error")
    assert _CJK.search(reply.title) and _CJK.search(reply.body)
    assert "I could not" not in reply.body


def test_an_english_thread_stays_english() -> None:
    conversation, key = _thread()
    first = conversation.respond(key, "13B QLoRA on a 4090, 4k ctx").reply
    reply = conversation.respond(key, "what if 8k ctx?").reply
    assert reply.changes and not any(_CJK.search(line) for line in reply.changes)
    assert conversation.respond(key, "undo").reply.title == first.title


def test_help_and_settings_answers_follow_the_workspace_language(monkeypatch) -> None:
    monkeypatch.setenv("GPUPLAN_LANGUAGE", "zh")
    conversation, key = _thread()
    help_reply = conversation.respond(key, "help").reply
    assert help_reply.title.startswith("gpuplan：") and "撤销" in help_reply.body
    refused = conversation.respond(key, "/gpuplan language en").reply
    assert refused.title == "只有管理员可以修改" and "回答语言" in refused.body


def test_the_plan_json_keeps_english_strings_beside_a_chinese_answer() -> None:
    conversation, key = _thread()
    turn = conversation.respond(key, "qwen2.5-7b lora微调，单卡4090，上下文4k")
    assert turn.plan is not None and "AdamW optimizer" in turn.plan.model_dump()["assumptions"]
    assert "AdamW 优化器" in turn.reply.assumptions


def test_switch_to_in_chinese_moves_the_thread_to_the_card() -> None:
    conversation, key = _thread()
    conversation.respond(key, "qwen2.5-7b lora微调，单卡4090，上下文4k")
    turn = conversation.respond(key, "换成h100")
    assert turn.plan is not None and turn.plan.spec.gpu == "H100"
    assert turn.reply.changes and all(_CJK.search(line) for line in turn.reply.changes)


def test_no_regex_translates_english_output() -> None:
    """Every Chinese answer comes from catalog entries: the rule file and its translator are
    gone, and no module outside tests/ reads rules that rewrite English into Chinese."""
    root = Path(__file__).resolve().parents[1]
    assert not (root / "bot" / "zh_rules.tsv").exists()
    assert not (root / "bot" / "zh.py").exists()
    sources = [
        p for package in ("bot", "planner", "adapters") for p in (root / package).rglob("*.py")
    ]
    assert not [p for p in sources if "zh_rules" in p.read_text(encoding="utf-8")]


def test_a_duration_and_the_market_summary_are_said_in_chinese() -> None:
    from planner.units import hours_text

    assert isinstance(hours_text(4.3), Said) and hours_text(4.3).to("zh") == "4.3 小时"
    assert hours_text(0.2).to("zh") == "12 分钟" and hours_text(72).to("zh") == "3.0 天"
    summary = messages.MARKET(
        "summary",
        lines=Listing([messages.MARKET("cheapest", run="1× H100"), "as it is"], " ", " "),
    )
    assert summary == "Cheapest: 1× H100. as it is"
    assert summary.to("zh") == "最便宜：1× H100. as it is"


def test_a_re_anchored_job_says_so_in_chinese() -> None:
    """A measured peak re-anchors the job; a Chinese thread reads the sentence in Chinese."""
    conversation, key = _thread()
    reply = conversation.respond(
        key, "llama 3 8b qlora 4k 上下文，实测 nvidia-smi 峰值 30 GiB"
    ).reply
    anchored = [line for line in reply.assumptions if "校准" in line]
    assert anchored and not any("re-anchored" in line for line in reply.assumptions)
    # A peak that does not say how it was read names its metric in Chinese too.
    conversation, key = _thread()
    reply = conversation.respond(key, "llama 3 8b qlora 4k 上下文，实测峰值 12 GiB").reply
    (anchored,) = [line for line in reply.assumptions if "校准" in line]
    assert "口径：未说明" in anchored and "unknown" not in anchored


def test_what_the_reader_set_aside_is_said_in_chinese() -> None:
    """Notes the parser adds (a power too large, 2-bit read as 4-bit) are catalog sentences: a
    Chinese question gets them in Chinese, an English one in English."""
    result = parse("用 2-bit 微调 llama 3 8b，2^999 token")
    assert all(isinstance(note, Said) for note in result.unread[:2])
    chinese = [note.to("zh") for note in result.unread[:2]]
    assert chinese == ["2 的 999 次方太大，无法用来规划", "不规划 2 位训练；按 4 位读取"]
    conversation, key = _thread()
    warnings = conversation.respond(key, "用 2-bit 微调 llama 3 8b，4k 上下文").reply.warnings
    assert any("不规划 2 位训练" in line for line in warnings)
    assert not any("2-bit training" in line for line in warnings)


def test_after_training_notes_are_catalog_sentences() -> None:
    from planner import make_plan
    from planner.spec import JobSpec

    plan = make_plan(JobSpec(model="13B", method="qlora", dataset_tokens=2e9))
    notes = plan.after_training.notes if plan.after_training else []
    assert len(notes) == 3 and all(isinstance(note, Said) for note in notes)
    assert all(_CJK.search(note.to("zh")) for note in notes)


def test_a_note_the_reader_adds_is_a_line_of_its_own_not_something_it_did_not_understand() -> None:
    """The reader understood "2-bit" (and says how it read it): the note is a warning line of its
    own in either language, never under "I did not understand"."""
    for text, note, lost in (
        ("用 2-bit 微调 llama 3 8b，4k 上下文", "不规划 2 位训练；按 4 位读取", "没看懂"),
        (
            "2-bit finetune llama 3 8b, 4k ctx",
            "2-bit training is not planned; read as 4-bit",
            "I did",
        ),
    ):
        conversation, key = _thread()
        warnings = conversation.respond(key, text).reply.warnings
        assert note in warnings and not any(line.startswith(lost) for line in warnings)
