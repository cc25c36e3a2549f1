"""Every sentence a reply shows, in one module: what the conversation says back (clarify, error,
help) and the sentences around a plan (verdict, picks, changes, what-ifs).

The builders (bot.reply_builder, bot.changes, bot.conversation, the adapters' fallbacks) decide
what to say and pass the figures; the words live here, so a second language is one more module
with the same names, and a sentence is changed in one place. Figures are formatted by bot.format.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from bot import format as fmt
from planner.errors import field_label
from planner.messages import REPORTS
from planner.parsing.assemble import EXAMPLE
from planner.words import Catalog, Entry, Listing, Said

__all__ = ["EXAMPLE"]


class Message(NamedTuple):
    """A short answer with no plan: its title and its body."""

    title: str
    body: str


# --- The conversation's own answers -----------------------------------------------------------

# Each answer's English and Chinese, by message id (planner/words.py says why a catalog module).
CONVERSATION = Catalog(
    {
        "ask_something.title": Entry("What job should I plan?", "要规划什么任务？"),
        "ask_something.body": Entry(
            "Describe it in one line, e.g. “{example}”, or say “help”.",
            "用一句话描述它，例如：“{example}”，或者说“help”。",
        ),
        "too_long.title": Entry("That message is too long", "这条消息太长了"),
        "too_long.body": Entry(
            "Send just the job, e.g. “{example}”.", "只发任务本身，例如：“{example}”。"
        ),
        "went_wrong.title": Entry("Something went wrong", "出错了"),
        "went_wrong.body": Entry(
            "I could not answer that; the thread's job is unchanged. Please try again.",
            "这次没能回答；本帖的任务没有改动。请再试一次。",
        ),
        "busy.title": Entry("This thread is busy", "这个帖子正忙"),
        "busy.body": Entry(
            "Several answers were racing; please ask again.", "几个回答在同时计算；请再问一次。"
        ),
        "started_over.title": Entry("Started over", "已重新开始"),
        "started_over.body": Entry(
            "This thread has no job now. Ask a new one, e.g. “{example}”.",
            "这个帖子现在没有任务。请问一个新的，例如：“{example}”。",
        ),
        "no_job_yet.title": Entry("No job to change yet", "还没有可修改的任务"),
        "no_job_yet.body": Entry(
            "There is no job here to change yet, or the thread's job expired. Ask a full question "
            "first, e.g. “{example}”.",
            "这里还没有可修改的任务，或者已过期。请先完整地问一次，例如：“{example}”。",
        ),
        "which_model.title": Entry("Which model?", "哪个模型？"),
        "which_model.body": Entry(
            "Tell me the model or its size and the method, e.g. “{example}”.",
            "告诉我模型（或它的大小）和方法，例如：“{example}”。",
        ),
        "one_question.title": Entry("One question first", "先问一个问题"),
        "what_change.title": Entry("What should change?", "要改什么？"),
        "no_change_read.body": Entry(
            "I could not read a change to this thread's job from that, so it is unchanged. Try "
            "“what if 8k ctx?”, “and 2 epochs?”, “on 2x4090?” or “help”; say “new” to start "
            "another job.",
            "从这句话里读不出要对本帖任务做的修改，所以任务没变。可以试试“上下文改成8k呢？”、"
            "“换成2张4090呢？”、“撤销”或“help”；说“重来”开始另一个任务。",
        ),
        "unread_change.body": Entry(
            "I could not read “{shown}” in that, so the job is unchanged. Rephrase the change, "
            "e.g. “what if 8k ctx?” or “and 2 epochs?”.",
            "读不懂其中的“{shown}”，所以任务没变。请换个说法，例如：“上下文改成8k呢？”"
            "或“换成2张4090呢？”。",
        ),
        # Our own notes on what was set aside (catalog sentences, not the asker's words).
        "unread_change.noted": Entry(
            "The job is unchanged: {notes}. Rephrase the change, e.g. “what if 8k ctx?” or "
            "“and 2 epochs?”.",
            "任务没变：{notes}。请换个说法，例如：“上下文改成8k呢？”或“换成2张4090呢？”。",
        ),
        "unread_change.also": Entry("{body} Also: {notes}.", "{body}另外：{notes}。"),
        "nothing_to_undo.title": Entry("Nothing to undo", "没有可撤销的修改"),
        "nothing_to_undo.body": Entry(
            "This is the thread's first job as asked.", "这是本帖最初问的任务，没有可撤销的修改。"
        ),
        "button_expired.title": Entry("This button has expired", "这个按钮已过期"),
        "button_expired.body": Entry(
            "This button has expired, ask again: the change it stood for is no longer kept.",
            "这个按钮已过期，请重新提问：它代表的修改已不再保存。",
        ),
        "no_memory": Entry(
            "Thread memory is unavailable right now, so I answered this as a new question and "
            "will not remember it for follow-ups.",
            "帖子记忆暂时不可用，所以我把这当作新问题回答，之后的追问不会记得它。",
        ),
        "not_remembered": Entry(
            "Thread memory is unavailable right now, so this answer will not be remembered for "
            "follow-ups.",
            "帖子记忆暂时不可用，所以这个回答不会被记住，追问时用不上。",
        ),
        # What went wrong with the thread store, said without paths or codes (the log has both).
        "store.disk_full": Entry("The bot's disk is full", "机器人的磁盘已满"),
        "store.read_only": Entry("The bot's thread store is read-only", "机器人的帖子存储是只读的"),
        "store.locked": Entry(
            "The bot's thread store is locked by another program",
            "机器人的帖子存储被另一个程序锁住了",
        ),
        "store.corrupt": Entry("The bot's thread store is damaged", "机器人的帖子存储已损坏"),
        "store.unavailable": Entry(
            "The bot cannot open its thread store", "机器人打不开它的帖子存储"
        ),
        "store_not_read": Entry(
            "{trouble}, so I answered this as a new question and did not save it.",
            "{trouble}，所以我把这当作新问题回答，也没有保存。",
        ),
        "store_not_saved": Entry(
            "{trouble}, so this answer was not saved: a follow-up will not know it.",
            "{trouble}，所以这个回答没有保存：之后的追问不会知道它。",
        ),
        "config_default_lora": Entry(
            "no method named: planned as LoRA on the supplied model (say QLoRA or full)",
            "未指定方法：按提供的模型做 LoRA 规划（可以说 QLoRA 或全参）",
        ),
        "not_json.title": Entry("That JSON does not parse", "这段 JSON 解析不了"),
        "not_json.body": Entry(
            "I could not read the pasted JSON: {why}.", "读不了贴上来的 JSON：{why}。"
        ),
        "not_a_config": Entry(
            "That JSON is not a model config.json: {why}. Paste the model's config.json from its "
            "Hugging Face page (Files → config.json).",
            "这段 JSON 不是模型的 config.json：{why}。请从模型的 Hugging Face 页面贴上它的 "
            "config.json（Files → config.json）。",
        ),
        "cant_read": Entry("I can't read that", "看不懂这句话"),
        "report_doubt": Entry("Is that this job's peak?", "这是这个任务的峰值吗？"),
        "cant_plan": Entry("I can't plan that", "无法规划"),
        "cant_use": Entry("I can't use that", "无法使用"),
        "undid": Entry("Undid the last change.", "已撤销上一次修改。"),
        "nothing_changed": Entry(
            "Nothing changed: that is the job as it was.", "没有变化：任务和原来一样。"
        ),
        # The adapters' fallbacks when the conversation itself could not be reached.
        "adapter_error": Entry("gpuplan could not answer", "gpuplan 无法回答"),
        "plan_timed_out": Entry(
            "That took too long to plan. Try a simpler question.",
            "规划太久了。试试简单一点的问题。",
        ),
        "plan_crashed": Entry(
            "Something went wrong while planning that. Try rephrasing it.",
            "规划时出错了。换个说法试试。",
        ),
        "plan_failed": Entry(
            "I could not plan that one. Please try again, or ask `help`.",
            "这个没能规划出来。请再试一次，或者问 `help`。",
        ),
        "undeliverable": Entry(
            "Sorry, Discord would not take that answer. Try asking again.",
            "抱歉，Discord 不接受这个回答。请再问一次。",
        ),
        "planning_ack": Entry(
            "Planning… (the answer follows in a moment)", "规划中…（回答马上就来）"
        ),
        "nothing_to_scale.title": Entry("What should it be?", "改成多少？"),
        "nothing_to_scale.body": Entry(
            "This job has no {names} yet to change; say the value, e.g. “and 50M tokens?”.",
            "这个任务还没有可改的{names}；请说出数值，例如：“数据改成50M tokens呢？”。",
        ),
        "language.asker.title": Entry("Language: the asker's", "语言：跟随提问"),
        "language.asker.body": Entry(
            "Answers here follow each question's language again (English unless it is Chinese).",
            "这里的回答重新跟随提问的语言（中文提问用中文，其余用英文）。",
        ),
        "language.en": Entry("English", "英文"),
        "language.zh": Entry("Chinese", "中文"),
        "language.set.title": Entry("Language: {name}", "语言：{name}"),
        "language.set.body": Entry(
            "Questions that do not show their language are answered here in {name} from now on.",
            "今后这里看不出语言的问题都用{name}回答。",
        ),
        "rate_limited.title": Entry("One moment", "稍等"),
        "rate_limited.body": Entry(
            "That is a lot of questions at once. Try again in {wait}.",
            "一下子问得太多了。请 {wait} 后再试。",
        ),
        "nothing_cheaper.title": Entry("Nothing cheaper", "没有更便宜的"),
        "nothing_cheaper.budget": Entry(
            "No card fits this job within that budget.", "在这个预算内没有显卡放得下这个任务。"
        ),
        "nothing_cheaper.priced": Entry(
            "No card fits this job with a known price.", "没有已知价格的显卡放得下这个任务。"
        ),
        "did_not_understand": Entry("I did not understand: {unread}", "没看懂：{unread}"),
        "comparing_cards": Entry("Comparing {cards}.", "对比 {cards}。"),
        "comparing_jobs": Entry(
            "Comparing {count} jobs side by side; the details below are for the first, which this "
            "thread keeps for follow-ups.",
            "并排对比 {count} 个任务；下面的细节是第一个任务的，本帖的追问沿用它。",
        ),
        "first_of_variants": Entry(
            "You asked about {count} variants; this is the first. Ask about the others one at a "
            "time.",
            "你问了 {count} 种方案；这是第一种。其余的请一个一个问。",
        ),
    }
)
_say = CONVERSATION


def _message(key: str, **values: object) -> Message:
    return Message(_say(f"{key}.title"), _say(f"{key}.body", **values))


ASK_SOMETHING = _message("ask_something", example=EXAMPLE)
TOO_LONG_TITLE = _say("too_long.title")
TOO_LONG_BODY = _say("too_long.body", example=EXAMPLE)
SOMETHING_WENT_WRONG = _message("went_wrong")
THREAD_BUSY = _message("busy")
STARTED_OVER = _message("started_over", example=EXAMPLE)
NO_JOB_YET = _message("no_job_yet", example=EXAMPLE)
WHICH_MODEL_TITLE = _say("which_model.title")
ONE_QUESTION_TITLE = _say("one_question.title")
WHICH_MODEL_BODY = _say("which_model.body", example=EXAMPLE)
NO_CHANGE_READ = Message(_say("what_change.title"), _say("no_change_read.body"))
NOTHING_TO_UNDO = _message("nothing_to_undo")
BUTTON_EXPIRED = _message("button_expired")
NO_MEMORY = _say("no_memory")
NOT_REMEMBERED = _say("not_remembered")


def store_not_read(kind: str) -> str:
    return _say("store_not_read", trouble=_say(f"store.{kind}"))


def store_not_saved(kind: str) -> str:
    return _say("store_not_saved", trouble=_say(f"store.{kind}"))


CONFIG_DEFAULT_LORA = _say("config_default_lora")


def not_json(why: str) -> Message:
    return _message("not_json", why=why)


def not_a_config(why: str) -> str:
    return _say("not_a_config", why=why)


CANT_READ = _say("cant_read")
REPORT_DOUBT = _say("report_doubt")
CANT_PLAN = _say("cant_plan")
CANT_USE = _say("cant_use")
UNDID = _say("undid")
NOTHING_CHANGED = _say("nothing_changed")
ADAPTER_ERROR_TITLE = _say("adapter_error")
PLAN_TIMED_OUT = _say("plan_timed_out")
PLAN_CRASHED = _say("plan_crashed")
PLAN_FAILED = _say("plan_failed")
UNDELIVERABLE = _say("undeliverable")
PLANNING_ACK = _say("planning_ack")


def nothing_to_scale(fields: Sequence[str]) -> Message:
    return _message("nothing_to_scale", names=Listing(field_label(name) for name in fields))


def language_set(language: str | None) -> Message:
    if language is None:
        return _message("language.asker")
    name = _say(f"language.{language}")
    return Message(_say("language.set.title", name=name), _say("language.set.body", name=name))


def rate_limited(wait_text: str) -> Message:
    return _message("rate_limited", wait=wait_text)


def unread_change(unread: Sequence[str]) -> Message:
    """Why a what-if changed nothing: the asker's words we could not read, quoted, and our own
    notes (catalog sentences such as "a tower of powers is set aside") said as notes."""
    words = [part for part in unread if not isinstance(part, Said)]
    notes = Listing([part for part in unread if isinstance(part, Said)], en_sep="; ", zh_sep="；")
    if not words:
        return Message(_say("what_change.title"), _say("unread_change.noted", notes=notes))
    shown = Listing(words, en_sep="”, “", zh_sep="”、“")
    body = _say("unread_change.body", shown=shown)
    if notes:
        body = _say("unread_change.also", body=body, notes=notes)
    return Message(_say("what_change.title"), body)


def nothing_cheaper(within_budget: bool) -> Message:
    why = "budget" if within_budget else "priced"
    return Message(_say("nothing_cheaper.title"), _say(f"nothing_cheaper.{why}"))


def did_not_understand(unread: Sequence[str]) -> list[str]:
    """The asker's words we could not read, under "I did not understand"; our own notes (catalog
    sentences such as "2-bit training is not planned; read as 4-bit") each as its own line, since
    they were understood."""
    words = [part for part in unread if not isinstance(part, Said)]
    notes = [part for part in unread if isinstance(part, Said)]
    if not words:
        return notes
    return [*notes, _say("did_not_understand", unread=Listing(words, en_sep="; ", zh_sep="; "))]


def comparing_cards(cards: Sequence[str]) -> str:
    return _say("comparing_cards", cards=Listing(cards, en_sep=" vs ", zh_sep=" vs "))


def comparing_jobs(count: int) -> str:
    return _say("comparing_jobs", count=count)


def first_of_variants(count: int) -> str:
    return _say("first_of_variants", count=count)


SIDE_BY_SIDE = "Side by side"


# --- Help ---------------------------------------------------------------------------------------

HELP = Catalog(
    {
        "help.title": Entry(
            "gpuplan: will my fine-tuning job fit, and what will it cost?",
            "gpuplan：我的微调任务放得下吗，要花多少钱？",
        ),
        "help.body": Entry(
            "Describe the job in one line, e.g. “{example}”: model or size, method (full, LoRA,"
            " QLoRA), context, dataset tokens and epochs, and optionally a card (“on 2x4090”),"
            " a budget or a deadline.\n"
            "Then ask follow-ups in the same thread: “what if 8k ctx?”, “and 2 epochs?”,"
            " “rank 64”, “on 2x4090?”, “without checkpointing”, “cheapest under $20?”,"
            " “compare h100 and a100”, “config axolotl” (the files that run it), “undo”, or “new”"
            " to start over.",
            "用一句话描述任务，例如：“{example}”：模型或大小、方法（全参、LoRA、QLoRA）、"
            "上下文、数据集 token 数和轮数，也可以加上显卡（“单卡4090”）、预算或期限。\n"
            "然后在同一个帖子里追问：“上下文改成8k呢？”、“换成2张4090呢？”、“rank 64”、"
            "“开启梯度检查点”、“最便宜的卡，$20以内？”、“比较 h100 和 a100”、"
            "“config axolotl”（运行它的文件）、“撤销”，或者“重来”重新开始。",
        ),
        # Run configs (bot/run_configs.py).
        "config.none": Entry("No config for this job", "这个任务没有配置"),
        "config.title": Entry("{stack} config for {model}", "{model} 的 {stack} 配置"),
        "config.body": Entry(
            "Attached: {files}. Fill in the TODOs listed in README.txt, then run `{launch}` in "
            "the folder holding them.",
            "附件：{files}。先填好 README.txt 列出的 TODO，"
            "再在放这些文件的文件夹里运行 `{launch}`。",
        ),
        "config.needs_a_thread": Entry(
            "Files cannot be attached to a private answer: say “config” in a thread with gpuplan "
            "instead.",
            "私密回答无法附带文件：请在 gpuplan 的帖子里说“config”。",
        ),
        "config.not_expressed": Entry("Not in the files: {item}", "文件里表达不了：{item}"),
        "report.kept": Entry(
            "Thanks: this report is kept with the job for calibration (this workspace keeps "
            "reports; an admin can turn that off).",
            "谢谢：这份报告会和任务一起保存，用于校准（这个工作区保存报告；管理员可以关闭）。",
        ),
        "report.not_kept": Entry(
            "Thanks: the thread now plans from your measurement (reports are not kept here).",
            "谢谢：这个帖子现在按你的实测来规划（这里不保存报告）。",
        ),
    }
)
HELP_TITLE = HELP("help.title")
HELP_BODY = HELP("help.body", example=EXAMPLE)


# --- Around a plan ------------------------------------------------------------------------------

# An answer's title: "Llama-2-13B · QLoRA · 4,096 ctx · 20M tokens × 3".
TITLE = Catalog(
    {
        "method.full": Entry("full fine-tune", "全参微调"),
        "method.lora": Entry("LoRA", "LoRA"),
        "method.qlora": Entry("QLoRA", "QLoRA"),
        "method_objective": Entry(
            "{method} {objective}{generations}", "{method} {objective}{generations}"
        ),
        "generations": Entry(", G={count}", ", G={count}"),
        "context": Entry("{tokens:,} ctx", "{tokens:,} 上下文"),
        "tokens": Entry("{tokens} tokens{epochs}", "{tokens} token{epochs}"),
        "epochs": Entry(" × {epochs:g}", " × {epochs:g} 轮"),
        "title": Entry("{parts}", "{parts}"),
    }
)
METHOD_LABELS = {method: TITLE(f"method.{method}") for method in ("full", "lora", "qlora")}


def title_line(
    model: str,
    method: str,
    objective: str | None,
    generations: int,
    seq_len: int | None,
    tokens: str | None,
    epochs: float | None,
) -> str:
    """The job in one line; `objective` only when it is not plain SFT, `generations` when > 1."""
    parts: list[str] = [model, METHOD_LABELS[method]]
    if objective is not None:
        many = TITLE("generations", count=generations) if generations > 1 else ""
        parts[1] = TITLE("method_objective", method=parts[1], objective=objective, generations=many)
    if seq_len:
        parts.append(TITLE("context", tokens=seq_len))
    if tokens:
        times = TITLE("epochs", epochs=epochs) if epochs and epochs != 1 else ""
        parts.append(TITLE("tokens", tokens=tokens, epochs=times))
    return TITLE("title", parts=Listing(parts, en_sep=" · ", zh_sep=" · "))


# The verdict line: what the job needs per GPU and where it runs. Its full stop stays "." in
# Chinese, as the answers have always shown it.
VERDICT = Catalog(
    {
        "needs": Entry(
            "Needs {need} per GPU ({low:.1f}–{high:.1f})",
            "每张GPU需要 {need}（{low:.1f}–{high:.1f}）",
        ),
        "need_only": Entry("{need}.", "{need}."),
        "no_card_holds": Entry(
            "{need}; no card in the catalog holds it, even eight of them.",
            "{need}；目录里没有显卡放得下，八张也不行。",
        ),
        "cheapest_to_rent": Entry(
            "{need}. Cheapest to rent: {card}.", "{need}。最便宜的租法：{card}."
        ),
        "cheapest_run": Entry("{need}. Cheapest: {card}{cost}.", "{need}。最便宜：{card}{cost}."),
        "verdict.fits": Entry("fits", "放得下"),
        "verdict.tight": Entry("is tight", "勉强放得下"),
        "verdict.no": Entry("does not fit", "放不下"),
        "on_requested": Entry(
            "{need}; {verdict} on {card}{cost}{fix}{more}.",
            "{need}；{verdict}：{card}{cost}{fix}{more}.",
        ),
        "fits_with": Entry(
            ", but it fits with {change} ({need} per GPU)",
            "，但用「{change}」可以放下（每张GPU {need}）",
        ),
        "more_cards_hold": Entry("; {card} hold it", "；{card} 可以放下"),
        "on_the_card": Entry("{verdict} on {card}{cost}", "{verdict}：{card}{cost}"),
        "best_card": Entry("cheapest {card}{cost}", "最便宜 {card}{cost}"),
        "fastest_card": Entry("fastest {card}{cost}", "最快 {card}{cost}"),
        "no_card_holds_it": Entry("no card in the catalog holds it", "目录里没有显卡放得下"),
        "comparison_line": Entry(
            "{job}: {need} per GPU; {where}", "{job}：{need} 每张GPU；{where}"
        ),
        # How each multi-GPU layout places the job, said wherever a run on several GPUs is named.
        "with_layout": Entry("{card} with {layout}", "{card} 用 {layout}"),
        "layout.ddp": Entry("DDP (each GPU holds a full copy)", "DDP（每张GPU一份完整副本）"),
        "layout.fsdp": Entry(
            "FSDP (the model sharded across the GPUs)", "FSDP（模型切分到各张GPU）"
        ),
        "layout.zero3": Entry(
            "ZeRO-3 (the model sharded across the GPUs)", "ZeRO-3（模型切分到各张GPU）"
        ),
        "layout.zero2": Entry(
            "ZeRO-2 (gradients and optimizer state sharded; each GPU holds the weights)",
            "ZeRO-2（梯度和优化器状态切分；每张GPU保留完整权重）",
        ),
        "layout.device_map": Entry(
            "device_map (the layers split across the GPUs, one GPU busy at a time)",
            "device_map（各层分到各张GPU，同一时刻只有一张在算）",
        ),
        "layout.none": Entry(
            "no sharding (each GPU holds the whole job)", "不切分（每张GPU放整个任务）"
        ),
    }
)
VERDICT_WORDS = {verdict: VERDICT(f"verdict.{verdict}") for verdict in ("fits", "tight", "no")}
LAYOUTS = {
    key: VERDICT(f"layout.{key}") for key in ("ddp", "fsdp", "zero3", "zero2", "device_map", "none")
}
NO_CARD_HOLDS_IT = VERDICT("no_card_holds_it")
# The words of enumerated JobSpec values (see `value_word`).
_VALUE_WORDS: dict[str, dict[str, Said]] = {
    "method": METHOD_LABELS,
    "sharding": LAYOUTS,
    "measured_metric": {
        metric: REPORTS(f"metric.{metric}")
        for metric in ("allocated", "reserved", "nvidia-smi", "unknown", "oom")
    },
}


def needs(required_gib: float, low_gib: float, high_gib: float) -> str:
    return VERDICT("needs", need=fmt.gib(required_gib), low=low_gib, high=high_gib)


def need_only(need: str) -> str:
    return VERDICT("need_only", need=need)


def no_card_holds(need: str) -> str:
    return VERDICT("no_card_holds", need=need)


def cheapest_to_rent(need: str, card: str) -> str:
    return VERDICT("cheapest_to_rent", need=need, card=card)


def cheapest_run(need: str, card: str, cost: str) -> str:
    return VERDICT("cheapest_run", need=need, card=card, cost=cost)


def on_requested(
    need: str, verdict: str, card: str, cost: str, fix: str = "", more: str = ""
) -> str:
    """The named card's verdict, then a software change that makes it fit (`fits_with`) or how
    many of it hold the job (`more_cards_hold`)."""
    values = {"need": need, "verdict": VERDICT_WORDS[verdict], "card": card, "cost": cost}
    return VERDICT("on_requested", fix=fix, more=more, **values)


def more_cards_hold(card: str) -> str:
    return VERDICT("more_cards_hold", card=card)


def fits_with(change: str, required_gib: float) -> str:
    return VERDICT("fits_with", change=change, need=fmt.gib(required_gib))


def with_layout(card: str, sharding: str) -> str:
    return VERDICT("with_layout", card=card, layout=LAYOUTS.get(sharding, sharding))


def on_the_card(verdict: str, card: str, cost: str) -> str:
    return VERDICT("on_the_card", verdict=VERDICT_WORDS[verdict], card=card, cost=cost)


def best_card(card: str, cost: str) -> str:
    return VERDICT("best_card", card=card, cost=cost)


def fastest_card(card: str, cost: str) -> str:
    return VERDICT("fastest_card", card=card, cost=cost)


def comparison_line(job: str, need_gib: float, where: Sequence[str]) -> str:
    parts = Listing(where, en_sep="; ", zh_sep="；")
    return VERDICT("comparison_line", job=job, need=fmt.gib(need_gib), where=parts)


PLAN_LINES = Catalog(
    {
        "managed": Entry(
            "Managed instead: {service} ({model}), ≈ ${cost_usd:,.2f} for {mtokens:,.0f}M training "
            "tokens at ${price:,.2f} per 1M ({date}); no choice of card, billed per token{notes}",
            "托管微调：{service}（{model}）约 ${cost_usd:,.2f}，{mtokens:,.0f}M 训练 token，每 1M "
            "${price:,.2f}（{date}）；不能选卡，按 token 计费{notes}",
        ),
        "managed.status": Entry("; status: {note}", "；状态：{note}"),
        "managed.promo": Entry("; promo: {note}", "；促销：{note}"),
        "cost": Entry(" ({parts})", " ({parts})"),
        # The recommendation's picks, by their highlight label.
        "pick.cheapest": Entry("Cheapest: {card}{cost}", "最便宜：{card}{cost}"),
        "pick.fastest": Entry("Fastest: {card}{cost}", "最快：{card}{cost}"),
        "pick.best value": Entry("Best value: {card}{cost}", "最划算：{card}{cost}"),
        "pick.within budget": Entry("Within budget: {card}{cost}", "预算内：{card}{cost}"),
        "pick.meets deadline": Entry("Meets deadline: {card}{cost}", "赶得上期限：{card}{cost}"),
        "after_training": Entry(
            "After training: {adapter}serving needs ≈ {bf16} in 16-bit, {q4} in 4-bit{native}",
            "训练后：{adapter}推理需要约 {bf16}（16位）、{q4}（4位）{native}",
        ),
        "after_training.adapter": Entry("adapter ≈ {mb:,.0f} MB; ", "适配器约 {mb:,.0f} MB；"),
        "after_training.native": Entry(", {gib} in its native MXFP4", "、{gib}（原生 MXFP4）"),
    }
)


def pick_line(label: str, card: str, cost: str) -> str:
    return PLAN_LINES(f"pick.{label}", card=card, cost=cost)


def after_training_line(
    adapter_mb: float | None,
    serve_bf16_gib: float,
    serve_4bit_gib: float,
    serve_mxfp4_gib: float | None = None,
) -> str:
    adapter = PLAN_LINES("after_training.adapter", mb=adapter_mb) if adapter_mb else ""
    native = (
        PLAN_LINES("after_training.native", gib=fmt.gib(serve_mxfp4_gib)) if serve_mxfp4_gib else ""
    )
    values = {"bf16": fmt.gib(serve_bf16_gib), "q4": fmt.gib(serve_4bit_gib)}
    return PLAN_LINES("after_training", adapter=adapter, native=native, **values)


def managed_line(
    service: str,
    model: str,
    cost_usd: float,
    tokens: float,
    price: float,
    date: str,
    caveats: Sequence[str],
) -> Said:
    """The managed fine-tuning service beside the cheapest rental: what it would cost and the
    plain difference (no card to choose, billed per token), and whether the service is winding
    down (OpenAI, Mistral) or its price is a promotion: a caveat "status: …" or "promo: …"."""
    notes = [
        PLAN_LINES(f"managed.{kind}", note=note)
        for kind, _, note in (caveat.partition(": ") for caveat in caveats)
        if kind in ("status", "promo")
    ]
    return PLAN_LINES(
        "managed",
        service=service,
        model=model,
        cost_usd=cost_usd,
        mtokens=tokens / 1e6,
        price=price,
        date=date,
        notes=Listing(notes, "", ""),
    )


# What-if buttons and suggested follow-ups. A Chinese follow-up must read back as the same change
# (tests/test_language.py parses both), so its Chinese uses only forms the parser knows; "cheapest
# …" is a conversation intent (bot/followups.py reads it in both languages), not a parsed change.
BUTTONS = Catalog(
    {
        "context.label": Entry("{context} context", "{context} 上下文"),
        "context.text": Entry("what if {context} ctx?", "上下文改成{context}呢？"),
        "gpus.label": Entry("{count} GPUs", "{count} 张GPU"),
        "gpus.text": Entry("what if {count} GPUs?", "换成{count}张卡呢？"),
        "lora.label": Entry("LoRA instead", "改用 LoRA"),
        "lora.text": Entry("what if LoRA?", "改成LoRA呢？"),
        "qlora.label": Entry("QLoRA instead", "改用 QLoRA"),
        "qlora.text": Entry("what if QLoRA?", "改成QLoRA呢？"),
        "checkpointing.label": Entry("Checkpointing on", "开启检查点"),
        "checkpointing.text": Entry("with gradient checkpointing", "开启梯度检查点"),
        "cheapest.label": Entry("Cheapest card", "最便宜的卡"),
        "cheapest.text": Entry("cheapest card?", "最便宜的卡？"),
        "config.label": Entry("Get the config", "获取配置"),
        "config.text": Entry("config", "生成配置"),
        "on_one.text": Entry("and on an {card}?", "换成一张{card}呢？"),
        "on_many.text": Entry("and on {count}x{card}?", "换成{count}张{card}呢？"),
        "budget.text": Entry("cheapest under ${budget:,}?", "最便宜的卡，${budget:,}以内？"),
        "undo.text": Entry("undo", "撤销"),
    }
)


def _button(key: str, **values: object) -> tuple[str, str]:
    """A button: its label and the follow-up it reads as."""
    return BUTTONS(f"{key}.label", **values), BUTTONS(f"{key}.text", **values)


def longer_context_button(context: str) -> tuple[str, str]:
    return _button("context", context=context)


def more_gpus_button(count: int) -> tuple[str, str]:
    return _button("gpus", count=count)


LORA_BUTTON = _button("lora")
QLORA_BUTTON = _button("qlora")
CHECKPOINTING_BUTTON = _button("checkpointing")
CHEAPEST_BUTTON = _button("cheapest")
CONFIG_BUTTON = _button("config")

# --- Run configs (bot/run_configs.py) ---------------------------------------------------------

NO_CONFIG_TITLE = HELP("config.none")


def config_attached(stack: str, model: str, files: Sequence[str], launch: str) -> tuple[str, str]:
    """The title and body of an answer that attaches a run config's files."""
    body = HELP("config.body", files=Listing(files, zh_sep="、"), launch=launch)
    return HELP("config.title", stack=stack, model=model), body


FILES_NEED_A_THREAD = HELP("config.needs_a_thread")


def not_expressed(item: str) -> str:
    return HELP("config.not_expressed", item=item)


def other_card_hint(named_4090: bool) -> str:
    if named_4090:
        return BUTTONS("on_one.text", card="H100")
    return BUTTONS("on_many.text", count=2, card="4090")


def budget_hint(budget_usd: int) -> str:
    return BUTTONS("budget.text", budget=budget_usd)


UNDO_HINT = BUTTONS("undo.text")
HELP_HINTS = (
    BUTTONS("context.text", context="8k"),
    BUTTONS("on_many.text", count=2, card="4090"),
    BUTTONS("budget.text", budget=20),
    BUTTONS("undo.text"),
)


def report_kept(kept: bool) -> str:
    return HELP("report.kept" if kept else "report.not_kept")


# --- What changed in a thread -------------------------------------------------------------------


CHANGES = Catalog(
    {
        "field_changed": Entry("{label}: {before} → {after}", "{label}：{before} → {after}"),
        "memory_changed": Entry(
            "memory per GPU: {before} → {after} ({delta})",
            "每张GPU显存：{before} → {after}（{delta}）",
        ),
        "more_flips": Entry(
            "…and {count} more cards changed verdict", "……另有 {count} 种显卡的结论变了"
        ),
        "value.default": Entry("default", "默认"),
        "value.on": Entry("on", "开"),
        "value.off": Entry("off", "关"),
        # The run a reader follows: the card they named, else the cheapest.
        "headline.your_card": Entry("your card", "所问的卡"),
        "headline.cheapest": Entry("cheapest", "最便宜"),
        "headline.none_fits": Entry("none fits", "都放不下"),
        "headline.card": Entry("{label}: {card}", "{label}：{card}"),
        "headline.figure": Entry("{before} → {after} ({delta})", "{before} → {after}（{delta}）"),
        "headline": Entry("{parts}", "{parts}"),
    }
)


def field_changed(label: str, before: str, after: str) -> str:
    return CHANGES("field_changed", label=label, before=before, after=after)


def value_word(name: str, raw: str) -> str | None:
    """A JobSpec field's value as the catalogs say it (a layout, how a peak was measured) in
    Chinese; in English the raw value, which is what an English reader types and searches
    ("sharding: none → fsdp"). None for values that read the same in both languages."""
    word = _VALUE_WORDS.get(name, {}).get(raw)
    if word is None:
        return None
    return Said(word.key, Entry(raw, word.entry.zh), word.values)


def memory_changed(before_gib: float, after_gib: float) -> str:
    delta = fmt.signed(after_gib - before_gib, fmt.gib)
    return CHANGES(
        "memory_changed", before=fmt.gib(before_gib), after=fmt.gib(after_gib), delta=delta
    )


def more_flips(count: int) -> str:
    return CHANGES("more_flips", count=count)


def verdict_word(verdict: str) -> str:
    """A card's verdict before and after, as the card table's key word ("fits", "tight", "no")."""
    return LABELS(verdict)


def headline_line(label: str, before: str, after: str | None, figures: Sequence[str]) -> str:
    """ "cheapest: 1× H100 → 2× A100, 3.0 h → 4.1 h (+1.1 h), $8 → $9 (+$1)"."""
    if after is None:
        card = CHANGES("headline.card", label=label, card=before)
    else:
        card = field_changed(label, before, after)  # the card moved, said as any change is
    return CHANGES("headline", parts=Listing([card, *figures], zh_sep="，"))


def figure_changed(before: str, after: str, delta: str) -> str:
    return CHANGES("headline.figure", before=before, after=after, delta=delta)


# The labels of highlighted table rows and of the recommendation's picks.
REQUESTED = "requested"
FEWEST_OF_YOUR_CARD = "fewest of your card"
CHEAPEST = "cheapest"
FASTEST = "fastest"
BEST_VALUE = "best value"
WITHIN_BUDGET = "within budget"
MEETS_DEADLINE = "meets deadline"
SPOT = "spot"  # the row's price is interruptible (the job accepts spot)

DOES_NOT_FIT = "does not fit"
NO_PRICE = "no price"  # a card that holds the job but no one quotes
CHART_VERDICTS = {
    "fits": "fits",
    "tight": "tight (under 10 % headroom)",
    "no": "does not fit: no hours, no cost",
}
NONE_FITS = CHANGES("headline.none_fits")
YOUR_CARD = CHANGES("headline.your_card")
CHEAPEST_RUN = CHANGES("headline.cheapest")
ON = CHANGES("value.on")
OFF = CHANGES("value.off")
DEFAULT_VALUE = CHANGES("value.default")


# --- Inverse answers ("max context?", "how many 4090s?") --------------------------------------

STACK_NAMES = {
    "hf": "HF + PEFT",
    "unsloth": "Unsloth",
    "torchtune": "torchtune",
    "litgpt": "LitGPT",
    "axolotl": "axolotl",
    "llama-factory": "LLaMA-Factory",
    "ms-swift": "ms-swift",
    "trl": "TRL",
    "verl": "verl",
    "openrlhf": "OpenRLHF",
}
INVERSE = Catalog(
    {
        "searched_over": Entry("searched over {tolerance}", "搜索范围：{tolerance}"),
        "method.full": Entry("a full fine-tune", "全参微调"),
        "method.lora": Entry("LoRA", "LoRA"),
        "method.qlora": Entry("QLoRA", "QLoRA"),
        "layout.ddp": Entry(
            " with DDP (each GPU holds a full copy)", " 用 DDP（每张GPU一份完整副本）"
        ),
        "layout.zero2": Entry(
            " with ZeRO-2 (optimizer state and gradients sharded)",
            " 用 ZeRO-2（优化器状态和梯度切分）",
        ),
        "layout.fsdp": Entry(
            " with FSDP/ZeRO-3 (everything sharded)", " 用 FSDP/ZeRO-3（全部切分）"
        ),
        "layout.zero3": Entry(" with ZeRO-3 (everything sharded)", " 用 ZeRO-3（全部切分）"),
        "layout.device_map": Entry(" split layer by layer (device_map)", " 逐层切分（device_map）"),
        "with_headroom": Entry(" ({value} with 10 % headroom)", "（留 10 % 余量为 {value}）"),
        "with_accumulation": Entry(
            "{sentence} Gradient accumulation gives a larger effective batch at no memory cost.",
            "{sentence}用梯度累积可以加大有效批次，不多占显存。",
        ),
        "one_card": Entry("one {gpu}", "一张 {gpu}"),
        "cards": Entry("{count}× {gpu}", "{count}× {gpu}"),
        "context_limit": Entry(
            "Up to {tokens} tokens fit {where} with {stack}{headroom}.",
            "用 {stack} 时 {where} 最多放得下 {tokens} token{headroom}。",
        ),
        "context_window_fits": Entry(
            "The model's whole context window, {tokens} tokens, fits {where} with {stack}.",
            "用 {stack} 时 {where} 放得下模型的整个上下文窗口（{tokens} token）。",
        ),
        "no_context_fits": Entry(
            "No context of even 256 tokens fits {where} for {model} {method} with {stack}"
            "{smallest}.",
            "{model} {method} 用 {stack} 时 {where} 连 256 token 的上下文都放不下{smallest}。",
        ),
        "batch_limit": Entry(
            "Up to micro-batch {batch} fits {where} at {tokens:,} tokens with {stack}{headroom}.",
            "{tokens:,} token 时，用 {stack} 的 {where} 最多放得下 micro-batch {batch}{headroom}。",
        ),
        "no_batch_fits": Entry(
            "Not even micro-batch 1 fits {where} at {tokens:,} tokens with {stack}{smallest}.",
            "{tokens:,} token 时，用 {stack} 的 {where} 连 micro-batch 1 都放不下{smallest}。",
        ),
        "largest_model": Entry(
            "The largest catalog model that fits {where} for {method} with {stack}: "
            "{model} ({size_b:.1f}B){easy}.",
            "用 {stack} 做{method}时 {where} 放得下的最大目录模型："
            "{model}（{size_b:.1f}B）{easy}。",
        ),
        "comfortable_model": Entry("; with 10 % headroom, {model}", "；留 10 % 余量则为 {model}"),
        "no_model_fits": Entry(
            "No catalog model fits {where} for {method} with {stack}.",
            "用 {stack} 做{method}时，{where} 放不下目录里的任何模型。",
        ),
        # FSDP's CPUOffload and ZeRO-3's offload_param move the parameters and gradients too.
        "offloaded.sharded": Entry(
            " and the parameters, gradients and optimizer state offloaded to CPU RAM",
            " 且参数、梯度和优化器状态卸载到CPU内存",
        ),
        "offloaded": Entry(
            " and the optimizer state offloaded to CPU RAM", " 且优化器状态卸载到CPU内存"
        ),
        "fewer_do_not": Entry("; fewer do not", "；更少则不行"),
        "fewest_cards": Entry(
            "{count}× {gpu}{layout}{offloaded} hold it{fewer}.",
            "{count}× {gpu}{layout}{offloaded} 可以放下{fewer}。",
        ),
        "no_count_holds": Entry(
            "Even {most}× {gpu} do not hold this job.", "即使 {most}× {gpu} 也放不下这个任务。"
        ),
        "smallest_card_holding": Entry(
            "; the smallest card that holds {tokens:,} tokens is {gpu}",
            "；放得下 {tokens:,} token 的最小显卡是 {gpu}",
        ),
        "met.budget": Entry(
            "The cheapest run that meets a {limit} budget: {run}.",
            "满足 {limit} 预算的最便宜方案：{run}。",
        ),
        "met.deadline": Entry(
            "The cheapest run that meets a {limit} deadline: {run}.",
            "{limit} 内完成的最便宜方案：{run}。",
        ),
        "missed.budget": Entry(
            "Nothing meets a {limit} budget: no priced card holds this job.",
            "没有方案满足 {limit} 预算：没有标价的显卡放得下这个任务。",
        ),
        "missed.deadline": Entry(
            "Nothing meets a {limit} deadline: no priced card holds this job.",
            "没有方案能在 {limit} 内完成：没有标价的显卡放得下这个任务。",
        ),
        "over.budget": Entry(
            "Nothing meets a {limit} budget: the cheapest run, {run}, is {over} over.",
            "没有方案满足 {limit} 预算：最便宜的方案（{run}）超出 {over}。",
        ),
        "over.deadline": Entry(
            "Nothing meets a {limit} deadline: the fastest run, {run}, is {over} over.",
            "没有方案能在 {limit} 内完成：最快的方案（{run}）超出 {over}。",
        ),
        "run": Entry("{card}, {hours}, {cost}", "{card}, {hours}, {cost}"),
        "levers": Entry("{sentence}; {moved}.", "{sentence}；{moved}。"),
        # What a software lever of planner.solve moves the limit to ("8k with Unsloth").
        "lever": Entry("{value} {change}", "{change}则为 {value}"),
        "lever.with CPU offload": Entry("{value} with CPU offload", "卸载到CPU则 {value} 张即可"),
        "lever.with Unsloth": Entry("{value} with Unsloth", "用 Unsloth 则为 {value}"),
        "lever.with QLoRA": Entry("{value} with QLoRA", "用 QLoRA 则为 {value}"),
        "lever.with gradient checkpointing": Entry(
            "{value} with gradient checkpointing", "开启梯度检查点则为 {value}"
        ),
        # The lead of an inverse answer before the plan's own verdict.
        "lead_and_verdict": Entry("{lead} {verdict}", "{lead} {verdict}"),
    }
)
METHOD_NOUNS = {method: INVERSE(f"method.{method}") for method in ("full", "lora", "qlora")}
LAYOUT_PHRASES = {
    "none": "",
    **{key: INVERSE(f"layout.{key}") for key in ("ddp", "zero2", "fsdp", "zero3", "device_map")},
}


def with_headroom(value: str) -> str:
    return INVERSE("with_headroom", value=value)


def with_accumulation_note(sentence: str) -> str:
    return INVERSE("with_accumulation", sentence=sentence)


def on_cards(count: int, gpu_name: str) -> str:
    if count == 1:
        return INVERSE("one_card", gpu=gpu_name)
    return INVERSE("cards", count=count, gpu=gpu_name)


def context_limit(tokens: str, where: str, stack: str, headroom: str) -> str:
    return INVERSE("context_limit", tokens=tokens, where=where, stack=stack, headroom=headroom)


def context_window_fits(tokens: str, where: str, stack: str) -> str:
    return INVERSE("context_window_fits", tokens=tokens, where=where, stack=stack)


def no_context_fits(where: str, model: str, method: str, stack: str, smallest: str) -> str:
    values = {"where": where, "model": model, "method": method, "stack": stack}
    return INVERSE("no_context_fits", smallest=smallest, **values)


def batch_limit(batch: str, where: str, tokens: int, stack: str, headroom: str) -> str:
    values = {"batch": batch, "where": where, "tokens": tokens, "stack": stack}
    return INVERSE("batch_limit", headroom=headroom, **values)


def no_batch_fits(where: str, tokens: int, stack: str, smallest: str) -> str:
    return INVERSE("no_batch_fits", where=where, tokens=tokens, stack=stack, smallest=smallest)


def largest_model(where: str, method: str, stack: str, model: str, size_b: float, easy: str):
    values = {"where": where, "method": method, "stack": stack, "model": model}
    return INVERSE("largest_model", size_b=size_b, easy=easy, **values)


def comfortable_model(model: str) -> str:
    return INVERSE("comfortable_model", model=model)


def no_model_fits(where: str, method: str, stack: str) -> str:
    return INVERSE("no_model_fits", where=where, method=method, stack=stack)


def fewest_cards(
    count: int, gpu_name: str, layout: str, offload: bool, sharded: bool = False
) -> str:
    offloaded = INVERSE("offloaded.sharded" if sharded else "offloaded") if offload else ""
    fewer = "" if count == 1 else INVERSE("fewer_do_not")
    values = {"count": count, "gpu": gpu_name, "layout": layout}
    return INVERSE("fewest_cards", offloaded=offloaded, fewer=fewer, **values)


def no_count_holds(gpu_name: str, most: int) -> str:
    return INVERSE("no_count_holds", gpu=gpu_name, most=most)


def smallest_card_holding(tokens: int, gpu_name: str) -> str:
    return INVERSE("smallest_card_holding", tokens=tokens, gpu=gpu_name)


def constraint_met(kind: str, limit: str, run: str) -> str:
    """`kind` is "budget" (`limit` "$100") or "deadline" (`limit` "5 h")."""
    return INVERSE(f"met.{kind}", limit=limit, run=run)


def constraint_missed(kind: str, limit: str, run: str = "", over: str = "") -> str:
    """Nothing meets the limit: the best run that misses it and by how much, if any is priced."""
    if not run:
        return INVERSE(f"missed.{kind}", limit=limit)
    return INVERSE(f"over.{kind}", limit=limit, run=run, over=over)


def run_line(card: str, hours: str, cost: str) -> str:
    return INVERSE("run", card=card, hours=hours, cost=cost)


def lever_moved(value: str, change: str) -> str:
    """A lever by its planner label (planner.solve.levers names four)."""
    key = f"lever.{change}"
    if key in INVERSE.entries:
        return INVERSE(key, value=value)
    return INVERSE("lever", value=value, change=change)


def levers_line(sentence: str, moved: Sequence[str]) -> str:
    return INVERSE("levers", sentence=_without_full_stop(sentence), moved=Listing(moved))


def _without_full_stop(sentence: str) -> str:
    """A catalog sentence as a clause: its full stop dropped in each language."""
    if not isinstance(sentence, Said):
        return sentence.removesuffix(".")
    entry = Entry(sentence.entry.en.removesuffix("."), sentence.entry.zh.removesuffix("。"))
    return Said(sentence.key, entry, sentence.values)


def lead_and_verdict(lead: str, verdict: str) -> str:
    return INVERSE("lead_and_verdict", lead=lead, verdict=verdict)


def searched_over(tolerance: str) -> str:
    return INVERSE("searched_over", tolerance=tolerance)


# --- Prices: provider preferences and freshness ---------------------------------------------

SETTINGS = Catalog(
    {
        "providers.title": Entry("Providers", "供应商"),
        "providers.saved": Entry("Provider preference saved", "已保存供应商偏好"),
        "providers.unknown": Entry("Unknown provider", "未知供应商"),
        "cant_price": Entry("I can't price that", "无法给出价格"),
        "only_admins.title": Entry("Only admins can change this", "只有管理员可以修改"),
        "only_admins.body": Entry(
            "{setting} applies to everyone here, so only workspace admins (Slack) or members with "
            "Manage Server (Discord) can change it.",
            "{setting}对这里的所有人生效，所以只有工作区管理员（Slack）或有“管理服务器”权限的成员"
            "（Discord）可以修改。",
        ),
        "setting.providers": Entry("The provider preference", "供应商偏好"),
        "setting.language": Entry("The answer language", "回答语言"),
        "setting.reports": Entry("Keeping run reports", "保存运行报告"),
        "reports.kept": Entry(
            "This workspace {keeps} the peaks people report from real runs (“it peaked at "
            "21 GiB”) with their job, to calibrate estimates (`gpuplan calibration`). “reports "
            "off” stops it.",
            "这个工作区{keeps}大家从实际运行中报告的峰值（“it peaked at 21 GiB”）和对应任务，"
            "用于校准估算（`gpuplan calibration`）。说“reports off”可以停止。",
        ),
        "reports.now_keeps": Entry("now keeps", "现在会保存"),
        "reports.keeps": Entry("keeps", "会保存"),
        "reports.not_kept": Entry(
            "This workspace does not keep run reports: a reported peak re-plans its thread and "
            "is then forgotten. An admin can say “reports on” to keep them for calibration.",
            "这个工作区不保存运行报告：报告的峰值只用来重新规划它所在的帖子，之后就不再保留。"
            "管理员可以说“reports on”来保存它们用于校准。",
        ),
        "not_saved.title": Entry("Not saved", "没有保存"),
        "not_saved.body": Entry(
            "I could not save that setting (the state store refused the write); try again.",
            "没能保存这个设置（状态存储拒绝了写入）；请再试一次。",
        ),
        "providers.every": Entry(
            "Answers here use every provider's prices.", "这里的回答使用所有供应商的价格。"
        ),
        "providers.only": Entry(
            "Answers here use prices from {names} only.", "这里的回答只使用 {names} 的价格。"
        ),
        "providers.unquoted": Entry(
            " No feed quotes {unquoted} right now.", "目前没有数据源报出 {unquoted} 的价格。"
        ),
        "providers.default": Entry(
            " (This is the bot's default, GPUPLAN_PROVIDERS.)",
            "（这是机器人的默认设置，GPUPLAN_PROVIDERS。）",
        ),
        "providers.in_use": Entry(
            "{said}{unquoted}{default} Change it with “/gpuplan providers runpod, vast.ai” or go "
            "back to every provider with “/gpuplan providers all” (admins only).",
            "{said}{unquoted}{default}用“/gpuplan providers runpod, vast.ai”修改，或用"
            "“/gpuplan providers all”恢复为所有供应商（仅限管理员）。",
        ),
    }
)
PROVIDERS_TITLE = SETTINGS("providers.title")
PROVIDERS_SAVED_TITLE = SETTINGS("providers.saved")
UNKNOWN_PROVIDER_TITLE = SETTINGS("providers.unknown")
CANT_PRICE_TITLE = SETTINGS("cant_price")


def _only_admins(setting: str) -> Message:
    """A workspace setting someone without the role tried to change."""
    body = SETTINGS("only_admins.body", setting=SETTINGS(f"setting.{setting}"))
    return Message(SETTINGS("only_admins.title"), body)


ONLY_ADMINS_PROVIDERS = _only_admins("providers")
ONLY_ADMINS_LANGUAGE = _only_admins("language")
ONLY_ADMINS_REPORTS = _only_admins("reports")
REPORTS_SETTING_TITLE = SETTINGS("setting.reports")


def reports_setting(kept: bool, *, changed: bool) -> Message:
    if not kept:
        return Message(REPORTS_SETTING_TITLE, SETTINGS("reports.not_kept"))
    keeps = SETTINGS("reports.now_keeps" if changed else "reports.keeps")
    return Message(REPORTS_SETTING_TITLE, SETTINGS("reports.kept", keeps=keeps))


SETTING_NOT_SAVED = Message(SETTINGS("not_saved.title"), SETTINGS("not_saved.body"))


def providers_in_use(names: str | None, unquoted: str | None, is_default: bool) -> str:
    """What `/gpuplan providers` says: whose prices answers here use."""
    said = SETTINGS("providers.every") if names is None else SETTINGS("providers.only", names=names)
    missing = SETTINGS("providers.unquoted", unquoted=unquoted) if names and unquoted else ""
    default = SETTINGS("providers.default") if is_default else ""
    return SETTINGS("providers.in_use", said=said, unquoted=missing, default=default)


# --- Section headings and table words the renderers show ----------------------------------------

# Keyed by the word itself: a renderer names its heading or column in English and
# bot.language.label shows the entry in the reply's language.
LABELS = Catalog(
    {
        # Section headings and table words the renderers show, keyed by their English.
        "Recommendation": Entry("Recommendation", "推荐"),
        "Side by side": Entry("Side by side", "并排对比"),
        "Ways to make it fit or cost less": Entry(
            "Ways to make it fit or cost less", "放得下或更省钱的办法"
        ),
        "Suggestions": Entry("Suggestions", "建议"),
        "What changed": Entry("What changed", "变化"),
        "Warnings": Entry("Warnings", "提醒"),
        "You could also tell me": Entry("You could also tell me", "还可以这样问"),
        "Try asking": Entry("Try asking", "可以试试问"),
        "Assumptions": Entry("Assumptions", "假设"),
        "Memory per GPU": Entry("Memory per GPU", "每张GPU显存"),
        "Memory": Entry("Memory", "显存"),
        "Cards": Entry("Cards", "显卡"),
        "card": Entry("card", "显卡"),
        "verdict": Entry("verdict", "结论"),
        "hours": Entry("hours", "小时"),
        "cost": Entry("cost", "费用"),
        "fits": Entry("fits", "放得下"),
        "tight": Entry("tight", "勉强"),
        "no": Entry("no", "放不下"),
        "does not fit": Entry("does not fit", "放不下"),
        "Prices": Entry("Prices", "价格"),
        "range": Entry("range", "范围"),
        "Try": Entry("Try", "可以试试"),
        "Assumed": Entry("Assumed", "假设"),
        "Prices as of": Entry("Prices as of", "价格日期"),
        "Prices from": Entry("Prices from", "价格来自"),
        "prices": Entry("prices", "价格"),
        # The chart's legend (bot/phrases.py CHART_VERDICTS).
        "tight (under 10 % headroom)": Entry(
            "tight (under 10 % headroom)", "勉强（余量不足 10 %）"
        ),
        "does not fit: no hours, no cost": Entry(
            "does not fit: no hours, no cost", "放不下：无时长、无费用"
        ),
        # The chart's memory-against-context panel (bot/chart.py).
        "no price": Entry("no price", "无报价"),
        "context (tokens)": Entry("context (tokens)", "上下文（token）"),
        "memory per GPU (GiB)": Entry("memory per GPU (GiB)", "每张GPU显存（GiB）"),
        # The card table's columns (console, Slack, Discord).
        "fit": Entry("fit", "结论"),
        "headroom": Entry("headroom", "余量"),
        "free GiB": Entry("free GiB", "余量 GiB"),
        "±GiB": Entry("±GiB", "余量"),
        "time": Entry("time", "时长"),
        "cost $": Entry("cost $", "费用 $"),
        "$/GPU-h": Entry("$/GPU-h", "每GPU小时"),
        "$/h": Entry("$/h", "每小时"),
        # Highlighted rows (bot/phrases.py).
        "requested": Entry("requested", "所问"),
        "fewest of your card": Entry("fewest of your card", "所问卡最少张数"),
        "cheapest": Entry("cheapest", "最便宜"),
        "fastest": Entry("fastest", "最快"),
        "best value": Entry("best value", "最划算"),
        "within budget": Entry("within budget", "预算内"),
        "meets deadline": Entry("meets deadline", "赶得上期限"),
        "spot": Entry("spot", "竞价"),
        # Memory components (planner.plan.MemoryBreakdown).
        "weights": Entry("weights", "权重"),
        "adapter": Entry("adapter", "适配器"),
        "gradients": Entry("gradients", "梯度"),
        "optimizer": Entry("optimizer", "优化器"),
        "activations": Entry("activations", "激活"),
        "logits": Entry("logits", "logits"),
        "overhead": Entry("overhead", "开销"),
        "reference": Entry("reference", "参考模型"),
        "value": Entry("value", "价值模型"),
        "reward": Entry("reward", "奖励模型"),
        "rollout": Entry("rollout", "推理引擎"),
    }
)


# --- The MCP tools' refusals (adapters/mcp) ------------------------------------------------------

MCP = Catalog(
    {
        "no_question.title": Entry("Nothing to plan", "没有可规划的任务"),
        "no_question.body": Entry(
            "Give `question` (plain words) or `spec` (a JobSpec).",
            "请给出 `question`（用文字描述）或 `spec`（一个 JobSpec）。",
        ),
        "question_or_spec.title": Entry("Two jobs given", "给了两个任务"),
        "question_or_spec.body": Entry(
            "Give `question` or `spec`, not both.", "请只给 `question` 或 `spec` 其中之一。"
        ),
        "unknown_plan.title": Entry("No such plan", "没有这个方案"),
        "unknown_plan.body": Entry(
            "This session was given no plan with that plan_id, or it was dropped since: ask again "
            "with `plan`.",
            "本会话没有这个 plan_id 对应的方案，或它已被清除：请用 `plan` 重新提问。",
        ),
        "not_a_limit.title": Entry("That asks for no limit", "这个问题没有问上限"),
        "not_a_limit.body": Entry(
            "`solve` answers a question about a limit, e.g. “max context for 8B LoRA on a 24 GB "
            "card?”; `plan` answers this one.",
            "`solve` 回答关于上限的问题，例如“max context for 8B LoRA on a 24 GB card?”；"
            "这个问题请用 `plan`。",
        ),
        "nothing_to_compare.title": Entry("Nothing to compare", "没有可对比的任务"),
        "nothing_to_compare.body": Entry(
            "Give `questions` (two or more jobs) or one `question` naming the alternatives, e.g. "
            "“7B vs 13B QLoRA on a 4090”.",
            "请给出 `questions`（两个或更多任务），或一个列出备选项的 `question`，例如"
            "“7B vs 13B QLoRA on a 4090”。",
        ),
        "nothing_to_explain.title": Entry("Which plan?", "哪个方案？"),
        "nothing_to_explain.body": Entry(
            "Give `plan_id` (from `plan`) or `question`.",
            "请给出 `plan_id`（来自 `plan`）或 `question`。",
        ),
        "no_such_figure.title": Entry("No such figure", "没有这个数字"),
        "no_such_figure.body": Entry("I can explain: {figures}.", "我能解释：{figures}。"),
        "unknown_card.title": Entry("Unknown card", "未知显卡"),
        "unknown_card.body": Entry(
            "I don't know a card called “{card}”.", "我不认识叫“{card}”的显卡。"
        ),
    }
)


def mcp_refusal(key: str, **values: object) -> Message:
    return Message(MCP(f"{key}.title"), MCP(f"{key}.body", **values))
