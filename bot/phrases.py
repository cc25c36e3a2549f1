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
from planner.parsing.assemble import EXAMPLE

__all__ = ["EXAMPLE"]


class Message(NamedTuple):
    """A short answer with no plan: its title and its body."""

    title: str
    body: str


# --- The conversation's own answers -----------------------------------------------------------

ASK_SOMETHING = Message(
    "What job should I plan?", f"Describe it in one line, e.g. “{EXAMPLE}”, or say “help”."
)
TOO_LONG_TITLE = "That message is too long"
TOO_LONG_BODY = f"Send just the job, e.g. “{EXAMPLE}”."
SOMETHING_WENT_WRONG = Message(
    "Something went wrong",
    "I could not answer that; the thread's job is unchanged. Please try again.",
)
THREAD_BUSY = Message("This thread is busy", "Several answers were racing; please ask again.")
STARTED_OVER = Message(
    "Started over", f"This thread has no job now. Ask a new one, e.g. “{EXAMPLE}”."
)
NO_JOB_YET = Message(
    "No job to change yet",
    "There is no job here to change yet, or the thread's job expired. Ask a full question first, "
    f"e.g. “{EXAMPLE}”.",
)
WHICH_MODEL_TITLE = "Which model?"
ONE_QUESTION_TITLE = "One question first"
WHICH_MODEL_BODY = f"Tell me the model or its size and the method, e.g. “{EXAMPLE}”."
NO_CHANGE_READ = Message(
    "What should change?",
    "I could not read a change to this thread's job from that, so it is unchanged. Try “what if "
    "8k ctx?”, “and 2 epochs?”, “on 2x4090?” or “help”; say “new” to start another job.",
)
NOTHING_TO_UNDO = Message("Nothing to undo", "This is the thread's first job as asked.")
BUTTON_EXPIRED = Message(
    "This button has expired",
    "This button has expired, ask again: the change it stood for is no longer kept.",
)
NO_MEMORY = (
    "Thread memory is unavailable right now, so I answered this as a new question and will not "
    "remember it for follow-ups."
)
NOT_REMEMBERED = (
    "Thread memory is unavailable right now, so this answer will not be remembered for follow-ups."
)
# What went wrong with the thread store, said to users without paths or codes (the log has both).
STORE_TROUBLE = {
    "disk_full": "The bot's disk is full",
    "read_only": "The bot's thread store is read-only",
    "locked": "The bot's thread store is locked by another program",
    "corrupt": "The bot's thread store is damaged",
    "unavailable": "The bot cannot open its thread store",
}


def store_not_read(kind: str) -> str:
    return f"{STORE_TROUBLE[kind]}, so I answered this as a new question and did not save it."


def store_not_saved(kind: str) -> str:
    return f"{STORE_TROUBLE[kind]}, so this answer was not saved: a follow-up will not know it."


CONFIG_DEFAULT_LORA = "no method named: planned as LoRA on the supplied model (say QLoRA or full)"


def not_json(why: str) -> Message:
    return Message("That JSON does not parse", f"I could not read the pasted JSON: {why}.")


def not_a_config(why: str) -> str:
    return (
        f"That JSON is not a model config.json: {why}. Paste the model's config.json from its "
        "Hugging Face page (Files → config.json)."
    )


CANT_READ = "I can't read that"
REPORT_DOUBT = "Is that this job's peak?"
CANT_PLAN = "I can't plan that"
CANT_USE = "I can't use that"
UNDID = "Undid the last change."
NOTHING_CHANGED = "Nothing changed: that is the job as it was."
# The adapters' fallbacks when the conversation itself could not be reached.
ADAPTER_ERROR_TITLE = "gpuplan could not answer"
PLAN_TIMED_OUT = "That took too long to plan. Try a simpler question."
PLAN_CRASHED = "Something went wrong while planning that. Try rephrasing it."
PLAN_FAILED = "I could not plan that one. Please try again, or ask `help`."
UNDELIVERABLE = "Sorry, Discord would not take that answer. Try asking again."
PLANNING_ACK = "Planning… (the answer follows in a moment)"


def nothing_to_scale(fields: Sequence[str]) -> Message:
    names = ", ".join(name.replace("_", " ") for name in fields)
    return Message(
        "What should it be?",
        f"This job has no {names} yet to change; say the value, e.g. “and 50M tokens?”.",
    )


def language_set(language: str | None) -> Message:
    if language is None:
        return Message(
            "Language: the asker's",
            "Answers here follow each question's language again (English unless it is Chinese).",
        )
    name = {"en": "English", "zh": "Chinese"}[language]
    return Message(
        f"Language: {name}",
        f"Questions that do not show their language are answered here in {name} from now on.",
    )


def rate_limited(wait_text: str) -> Message:
    return Message("One moment", f"That is a lot of questions at once. Try again in {wait_text}.")


def unread_change(unread: Sequence[str]) -> Message:
    shown = "”, “".join(unread)
    return Message(
        "What should change?",
        f"I could not read “{shown}” in that, so the job is unchanged. Rephrase the change, e.g. "
        "“what if 8k ctx?” or “and 2 epochs?”.",
    )


def nothing_cheaper(within_budget: bool) -> Message:
    why = "within that budget" if within_budget else "with a known price"
    return Message("Nothing cheaper", f"No card fits this job {why}.")


def did_not_understand(unread: Sequence[str]) -> str:
    return f"I did not understand: {'; '.join(unread)}"


def comparing_cards(cards: Sequence[str]) -> str:
    return f"Comparing {' vs '.join(cards)}."


def comparing_jobs(count: int) -> str:
    return (
        f"Comparing {count} jobs side by side; the details below are for the first, which this "
        "thread keeps for follow-ups."
    )


SIDE_BY_SIDE = "Side by side"


def comparison_line(job: str, need_gib: float, where: str) -> str:
    return f"{job}: {fmt.gib(need_gib)} per GPU; {where}"


def on_the_card(verdict: str, card: str, cost: str) -> str:
    return f"{VERDICT_WORDS[verdict]} on {card}{cost}"


def best_card(card: str, cost: str) -> str:
    return f"cheapest {card}{cost}"


def fastest_card(card: str, cost: str) -> str:
    return f"fastest {card}{cost}"


NO_CARD_HOLDS_IT = "no card in the catalog holds it"


def first_of_variants(count: int) -> str:
    return (
        f"You asked about {count} variants; this is the first. Ask about the others one at a time."
    )


# --- Help ---------------------------------------------------------------------------------------

HELP_TITLE = "gpuplan: will my fine-tuning job fit, and what will it cost?"
HELP_BODY = (
    f"Describe the job in one line, e.g. “{EXAMPLE}”: model or size, method (full, LoRA,"
    " QLoRA), context, dataset tokens and epochs, and optionally a card (“on 2x4090”),"
    " a budget or a deadline.\n"
    "Then ask follow-ups in the same thread: “what if 8k ctx?”, “and 2 epochs?”,"
    " “rank 64”, “on 2x4090?”, “without checkpointing”, “cheapest under $20?”,"
    " “compare h100 and a100”, “config axolotl” (the files that run it), “undo”, or “new” to"
    " start over."
)
HELP_HINTS = ("what if 8k ctx?", "and on 2x4090?", "cheapest under $20?", "undo")


# --- Around a plan ------------------------------------------------------------------------------

METHOD_LABELS = {"full": "full fine-tune", "lora": "LoRA", "qlora": "QLoRA"}
VERDICT_WORDS = {"fits": "fits", "tight": "is tight", "no": "does not fit"}


def needs(required_gib: float, low_gib: float, high_gib: float) -> str:
    return f"Needs {fmt.gib(required_gib)} per GPU ({low_gib:.1f}–{high_gib:.1f})"


def no_card_holds(need: str) -> str:
    return f"{need}; no card in the catalog holds it, even eight of them."


def cheapest_to_rent(need: str, card: str) -> str:
    return f"{need}. Cheapest to rent: {card}."


def cheapest_run(need: str, card: str, cost: str) -> str:
    return f"{need}. Cheapest: {card}{cost}."


def on_requested(need: str, verdict: str, card: str, cost: str) -> str:
    return f"{need}; {VERDICT_WORDS[verdict]} on {card}{cost}"


def more_cards_hold(card: str, *, first: bool) -> str:
    return f"; {card} hold it" if first else f"; or {card} hold it"


def fits_with(change: str, required_gib: float) -> str:
    return f", but it fits with {change} ({fmt.gib(required_gib)} per GPU)"


# How each multi-GPU layout places the job, said wherever a run on several GPUs is named.
LAYOUTS = {
    "ddp": "DDP (each GPU holds a full copy)",
    "fsdp": "FSDP (the model sharded across the GPUs)",
    "zero3": "ZeRO-3 (the model sharded across the GPUs)",
    "zero2": "ZeRO-2 (gradients and optimizer state sharded; each GPU holds the weights)",
    "device_map": "device_map (the layers split across the GPUs, one GPU busy at a time)",
    "none": "no sharding (each GPU holds the whole job)",
}


def with_layout(card: str, sharding: str) -> str:
    return f"{card} with {LAYOUTS.get(sharding, sharding)}"


def pick_line(label: str, card: str, cost: str) -> str:
    return f"{label.capitalize()}: {card}{cost}"


def after_training_line(
    adapter_mb: float | None,
    serve_bf16_gib: float,
    serve_4bit_gib: float,
    serve_mxfp4_gib: float | None = None,
):
    adapter = f"adapter ≈ {adapter_mb:,.0f} MB; " if adapter_mb else ""
    native = f", {fmt.gib(serve_mxfp4_gib)} in its native MXFP4" if serve_mxfp4_gib else ""
    return (
        f"After training: {adapter}serving needs ≈ {fmt.gib(serve_bf16_gib)} in 16-bit, "
        f"{fmt.gib(serve_4bit_gib)} in 4-bit{native}"
    )


def managed_line(
    service: str, model: str, cost_usd: float, tokens: float, price: float, date: str
) -> str:
    """The managed fine-tuning service beside the cheapest rental: what it would cost and the
    plain difference (no card to choose, billed per token)."""
    return (
        f"Managed instead: {service} ({model}), ≈ ${cost_usd:,.2f} for {tokens / 1e6:,.0f}M "
        f"training tokens at ${price:,.2f} per 1M ({date}); no choice of card, billed per token"
    )


# What-if buttons: (label, the follow-up it reads as).
def longer_context_button(context: str) -> tuple[str, str]:
    return f"{context} context", f"what if {context} ctx?"


def more_gpus_button(count: int) -> tuple[str, str]:
    return f"{count} GPUs", f"what if {count} GPUs?"


LORA_BUTTON = ("LoRA instead", "what if LoRA?")
QLORA_BUTTON = ("QLoRA instead", "what if QLoRA?")
CHECKPOINTING_BUTTON = ("Checkpointing on", "with gradient checkpointing")
CHEAPEST_BUTTON = ("Cheapest card", "cheapest card?")
CONFIG_BUTTON = ("Get the config", "config")

# --- Run configs (bot/run_configs.py) ---------------------------------------------------------

NO_CONFIG_TITLE = "No config for this job"


def config_attached(stack: str, model: str, files: Sequence[str], launch: str) -> tuple[str, str]:
    """The title and body of an answer that attaches a run config's files."""
    return (
        f"{stack} config for {model}",
        f"Attached: {', '.join(files)}. Fill in the TODOs listed in README.txt, then run "
        f"`{launch}` in the folder holding them.",
    )


FILES_NEED_A_THREAD = (
    "Files cannot be attached to a private answer: say “config” in a thread with gpuplan instead."
)


def not_expressed(item: str) -> str:
    return f"Not in the files: {item}"


def other_card_hint(named_4090: bool) -> str:
    return "and on an H100?" if named_4090 else "and on 2x4090?"


def budget_hint(budget_usd: int) -> str:
    return f"cheapest under ${budget_usd:,}?"


UNDO_HINT = "undo"


def report_kept(kept: bool) -> str:
    if kept:
        return (
            "Thanks: this report is kept with the job for calibration (this workspace keeps "
            "reports; an admin can turn that off)."
        )
    return "Thanks: the thread now plans from your measurement (reports are not kept here)."


# --- What changed in a thread -------------------------------------------------------------------


def field_changed(label: str, before: str, after: str) -> str:
    return f"{label}: {before} → {after}"


def memory_changed(before_gib: float, after_gib: float) -> str:
    return (
        f"memory per GPU: {fmt.gib(before_gib)} → {fmt.gib(after_gib)} "
        f"({fmt.signed(after_gib - before_gib, fmt.gib)})"
    )


def more_flips(count: int) -> str:
    return f"…and {count} more cards changed verdict"


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
NONE_FITS = "none fits"
YOUR_CARD = "your card"
ON = "on"
OFF = "off"
DEFAULT_VALUE = "default"


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
METHOD_NOUNS = {"full": "a full fine-tune", "lora": "LoRA", "qlora": "QLoRA"}
LAYOUT_PHRASES = {
    "none": "",
    "ddp": " with DDP (each GPU holds a full copy)",
    "zero2": " with ZeRO-2 (optimizer state and gradients sharded)",
    "fsdp": " with FSDP/ZeRO-3 (everything sharded)",
    "zero3": " with ZeRO-3 (everything sharded)",
    "device_map": " split layer by layer (device_map)",
}
WITH_HEADROOM = " ({value} with 10 % headroom)"
ACCUMULATION_NOTE = " Gradient accumulation gives a larger effective batch at no memory cost."


def on_cards(count: int, gpu_name: str) -> str:
    return f"{'one' if count == 1 else f'{count}×'} {gpu_name}"


def context_limit(tokens: str, where: str, stack: str, headroom: str) -> str:
    return f"Up to {tokens} tokens fit {where} with {stack}{headroom}."


def context_window_fits(tokens: str, where: str, stack: str) -> str:
    return f"The model's whole context window, {tokens} tokens, fits {where} with {stack}."


def no_context_fits(where: str, model: str, method: str, stack: str, smallest: str) -> str:
    return (
        f"No context of even 256 tokens fits {where} for {model} {method} with {stack}{smallest}."
    )


def batch_limit(batch: str, where: str, tokens: int, stack: str, headroom: str) -> str:
    return f"Up to micro-batch {batch} fits {where} at {tokens:,} tokens with {stack}{headroom}."


def no_batch_fits(where: str, tokens: int, stack: str, smallest: str) -> str:
    return f"Not even micro-batch 1 fits {where} at {tokens:,} tokens with {stack}{smallest}."


def largest_model(where: str, method: str, stack: str, model: str, size_b: float, easy: str):
    return (
        f"The largest catalog model that fits {where} for {method} with {stack}: "
        f"{model} ({size_b:.1f}B){easy}."
    )


def comfortable_model(model: str) -> str:
    return f"; with 10 % headroom, {model}"


def no_model_fits(where: str, method: str, stack: str) -> str:
    return f"No catalog model fits {where} for {method} with {stack}."


def fewest_cards(
    count: int, gpu_name: str, layout: str, offload: bool, sharded: bool = False
) -> str:
    # FSDP's CPUOffload and ZeRO-3's offload_param move the parameters and gradients too.
    moved = "the parameters, gradients and optimizer state" if sharded else "the optimizer state"
    offloaded = f" and {moved} offloaded to CPU RAM" if offload else ""
    fewer = "" if count == 1 else "; fewer do not"
    return f"{count}× {gpu_name}{layout}{offloaded} hold it{fewer}."


def no_count_holds(gpu_name: str, most: int) -> str:
    return f"Even {most}× {gpu_name} do not hold this job."


def smallest_card_holding(tokens: int, gpu_name: str) -> str:
    return f"; the smallest card that holds {tokens:,} tokens is {gpu_name}"


def deadline_limit(hours: str) -> str:
    return f"a {hours} deadline"


def budget_limit(usd: str) -> str:
    return f"a {usd} budget"


def constraint_met(limit: str, run: str) -> str:
    return f"The cheapest run that meets {limit}: {run}."


def constraint_missed(limit: str, best: str = "", run: str = "", over: str = "") -> str:
    if not run:
        return f"Nothing meets {limit}: no priced card holds this job."
    return f"Nothing meets {limit}: the {best} run, {run}, is {over} over."


def run_line(card: str, hours: str, cost: str) -> str:
    return f"{card}, {hours}, {cost}"


def levers_line(sentence: str, moved: Sequence[str]) -> str:
    return sentence.removesuffix(".") + "; " + ", ".join(moved) + "."


def searched_over(tolerance: str) -> str:
    return f"searched over {tolerance}"


# --- Prices: provider preferences and freshness ---------------------------------------------

PROVIDERS_TITLE = "Providers"
PROVIDERS_SAVED_TITLE = "Provider preference saved"
UNKNOWN_PROVIDER_TITLE = "Unknown provider"
CANT_PRICE_TITLE = "I can't price that"


def only_admins(setting: str) -> Message:
    """A workspace setting someone without the role tried to change."""
    return Message(
        "Only admins can change this",
        f"{setting} applies to everyone here, so only workspace admins (Slack) or members with "
        "Manage Server (Discord) can change it.",
    )


ONLY_ADMINS_PROVIDERS = only_admins("The provider preference")
ONLY_ADMINS_LANGUAGE = only_admins("The answer language")
ONLY_ADMINS_REPORTS = only_admins("Keeping run reports")
REPORTS_SETTING_TITLE = "Keeping run reports"


def reports_setting(kept: bool, *, changed: bool) -> Message:
    now = "now keeps" if changed else "keeps"
    if kept:
        return Message(
            REPORTS_SETTING_TITLE,
            f"This workspace {now} the peaks people report from real runs (“it peaked at 21 GiB”)"
            " with their job, to calibrate estimates (`gpuplan calibration`). “reports off” "
            "stops it.",
        )
    return Message(
        REPORTS_SETTING_TITLE,
        "This workspace does not keep run reports: a reported peak re-plans its thread and is "
        "then forgotten. An admin can say “reports on” to keep them for calibration.",
    )


SETTING_NOT_SAVED = Message(
    "Not saved", "I could not save that setting (the state store refused the write); try again."
)
PROVIDERS_HOW = (
    "Change it with “/gpuplan providers runpod, vast.ai” or go back to every provider with "
    "“/gpuplan providers all” (admins only)."
)


def providers_in_use(names: str | None, unquoted: str | None, is_default: bool) -> str:
    """What `/gpuplan providers` says: whose prices answers here use."""
    if names is None:
        said = "Answers here use every provider's prices."
    else:
        said = f"Answers here use prices from {names} only."
        if unquoted:
            said += f" No feed quotes {unquoted} right now."
    if is_default:
        said += " (This is the bot's default, GPUPLAN_PROVIDERS.)"
    return f"{said} {PROVIDERS_HOW}"


def prices_fresh(freshness: str) -> str:
    """The line an answer opens its assumptions with: "Prices from 4 providers, 2 h ago."."""
    return f"{freshness[0].upper()}{freshness[1:]}."
