"""Multi-turn threads through the real parser and planner, with the real SQLite store.

Only where a test needs a slow or failing planner is `plan_fn` wrapped around the real one.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from bot.backoff import Backoff
from bot.conversation import Conversation
from bot.patches import PATCH_ID_PREFIX, Patch
from bot.state.limits import BucketRule, RateLimiter
from bot.state.threads import SQLiteStore
from bot.threads import ThreadKey
from planner.errors import PlanningError
from planner.parsing.assemble import MAX_INPUT_CHARS
from planner.planner import make_plan
from planner.spec import JobSpec

SEED = "llama 3.1 8b QLoRA, 4k ctx, 20M tokens x3"
REPO_ROOT = Path(__file__).resolve().parents[1]


def _key(thread: str = "t1") -> ThreadKey:
    return ThreadKey(platform="test", workspace="w", channel="c", thread=thread)


def test_a_new_question_gets_a_plan() -> None:
    turn = Conversation().respond(_key(), SEED)
    assert turn.reply.kind == "plan" and turn.plan is not None
    assert turn.changes == {}
    assert turn.plan.spec.seq_len == 4096 and turn.plan.spec.epochs == 3
    assert turn.reply.table and turn.reply.verdict and turn.reply.required_gib
    longer = next(whatif for whatif in turn.reply.whatifs if whatif.patch == {"seq_len": 8192})
    assert longer.id.startswith(PATCH_ID_PREFIX) and longer.label == "8k context"


def test_three_follow_ups_in_a_row_each_build_on_the_last() -> None:
    conversation = Conversation()
    conversation.handle(_key(), SEED)

    longer = conversation.respond(_key(), "what if 8k ctx?")
    assert longer.changes["seq_len"] == (4096, 8192)
    assert any("4096" in line and "8192" in line for line in longer.reply.changes)
    assert any(line.startswith("memory per GPU") for line in longer.reply.changes)

    fewer_epochs = conversation.respond(_key(), "and 2 epochs?")
    assert fewer_epochs.changes["epochs"] == (3, 2)
    assert "seq_len" not in fewer_epochs.changes
    assert fewer_epochs.plan is not None and fewer_epochs.plan.spec.seq_len == 8192

    on_cards = conversation.respond(_key(), "and on 2x4090?")
    assert on_cards.plan is not None
    assert on_cards.plan.spec.num_gpus == 2 and on_cards.plan.requested is not None
    assert (on_cards.plan.spec.seq_len, on_cards.plan.spec.epochs) == (8192, 2)
    assert any(row.highlight and "requested" in row.highlight for row in on_cards.reply.table)


def test_a_restart_between_messages_keeps_the_thread() -> None:
    Conversation().handle(_key(), SEED)
    after_restart = Conversation().respond(_key(), "what if 8k ctx?")
    assert after_restart.changes["seq_len"] == (4096, 8192)


def test_an_expired_thread_asks_for_a_full_question_again(tmp_path: Path) -> None:
    now = [1_000.0]
    store = SQLiteStore(tmp_path, ttl_s=3600, clock=lambda: now[0])
    conversation = Conversation(store)
    conversation.handle(_key(), SEED)
    now[0] += 3601
    stale = conversation.handle(_key(), "what if 8k ctx?")
    assert stale.kind == "clarify" and "expired" in stale.body
    fresh = conversation.respond(_key(), SEED)
    assert fresh.reply.kind == "plan" and fresh.changes == {}


def test_undo_goes_back_one_step_at_a_time() -> None:
    conversation = Conversation()
    conversation.handle(_key(), SEED)
    conversation.handle(_key(), "what if 8k ctx?")
    conversation.handle(_key(), "and 2 epochs?")
    undone = conversation.respond(_key(), "undo")
    assert undone.changes == {"epochs": (2, 3)}
    assert undone.reply.changes[0] == "Undid the last change."
    assert conversation.respond(_key(), "undo").changes == {"seq_len": (8192, 4096)}
    nothing = conversation.handle(_key(), "undo")
    assert nothing.kind == "clarify"
    assert conversation.respond(_key(), "what if 8k ctx?").changes["seq_len"] == (4096, 8192)


@pytest.mark.parametrize(
    "unreadable",
    ["purple monkey dishwasher", "999999999999999999B full fine-tune, 10^30 ctx on 99999999 GPUs"],
)
def test_an_unreadable_follow_up_gets_a_clear_answer_and_leaves_the_job(unreadable: str) -> None:
    conversation = Conversation()
    conversation.handle(_key(), SEED)
    unclear = conversation.handle(_key(), unreadable)
    assert unclear.kind == "clarify" and "unchanged" in unclear.body
    after = conversation.respond(_key(), "and 2 epochs?")
    assert after.changes == {"epochs": (3, 2)}


def test_two_concurrent_follow_ups_in_one_thread_take_turns() -> None:
    in_flight = 0
    most_in_flight = 0
    guard = threading.Lock()

    def slow_plan(job: JobSpec):
        nonlocal in_flight, most_in_flight
        with guard:
            in_flight += 1
            most_in_flight = max(most_in_flight, in_flight)
        time.sleep(0.05)  # widen the window in which the two would overlap if not serialised
        with guard:
            in_flight -= 1
        return make_plan(job)

    conversation = Conversation(plan_fn=slow_plan)
    conversation.handle(_key(), SEED)
    turns = {}

    def ask(text: str) -> None:
        turns[text] = conversation.respond(_key(), text)

    askers = [threading.Thread(target=ask, args=(t,)) for t in ("what if 8k ctx?", "2 epochs")]
    for asker in askers:
        asker.start()
    for asker in askers:
        asker.join()

    assert most_in_flight == 1
    # Each answer is a diff against the job it followed, and neither change was lost.
    assert set(turns["what if 8k ctx?"].changes) == {"seq_len"}
    assert set(turns["2 epochs"].changes) == {"epochs"}
    final = conversation.respond(_key(), "rank 32").plan
    assert final is not None and (final.spec.seq_len, final.spec.epochs) == (8192, 2)


def test_a_failing_planner_answers_clearly_and_keeps_the_job() -> None:
    def flaky_plan(job: JobSpec):
        if job.seq_len == 8192:
            raise RuntimeError("planner bug")
        if job.epochs == 5:
            raise PlanningError("5 epochs is not allowed here", field="epochs")
        return make_plan(job)

    conversation = Conversation(plan_fn=flaky_plan)
    conversation.handle(_key(), SEED)
    broken = conversation.handle(_key(), "what if 8k ctx?")
    assert broken.kind == "error" and "unchanged" in broken.body
    assert "Traceback" not in broken.model_dump_json()
    refused = conversation.handle(_key(), "5 epochs")
    assert refused.kind == "error" and refused.body == "5 epochs is not allowed here"
    assert conversation.respond(_key(), "and 2 epochs?").changes == {"epochs": (3, 2)}


@pytest.mark.parametrize(
    ("text", "kind"),
    [("", "clarify"), ("   \n\t ", "clarify"), ("x" * 5_000, "error"), ("help", "help")],
)
def test_empty_oversized_and_help_messages(text: str, kind: str) -> None:
    reply = Conversation().handle(_key(), text)
    assert reply.kind == kind and reply.body and len(reply.body) < 1_000
    if kind == "error":
        assert f"{MAX_INPUT_CHARS:,}" in reply.body


def test_nonsense_as_a_first_message_asks_for_the_job() -> None:
    reply = Conversation().handle(_key(), "hello there, how are you")
    assert reply.kind in ("clarify", "error") and reply.body


def test_a_follow_up_in_a_thread_with_no_job_is_read_as_a_new_question() -> None:
    conversation = Conversation()
    assert conversation.handle(_key("a"), "what if 8k ctx?").kind == "clarify"
    assert conversation.handle(_key("b"), "7B lora").kind == "plan"


def test_new_starts_another_job_in_the_same_thread() -> None:
    conversation = Conversation()
    conversation.handle(_key(), SEED)
    fresh = conversation.respond(_key(), "new: 7B LoRA, 2k ctx")
    assert fresh.changes == {} and fresh.plan is not None and fresh.plan.spec.seq_len == 2048
    assert conversation.respond(_key(), "what if 8k ctx?").changes["seq_len"] == (2048, 8192)
    assert conversation.handle(_key(), "reset").kind == "clarify"
    assert conversation.handle(_key(), "and 2 epochs?").kind == "clarify"


def test_compare_shows_only_the_named_cards_and_keeps_the_job() -> None:
    conversation = Conversation()
    conversation.handle(_key(), SEED)
    compared = conversation.handle(_key(), "compare h100 and a100")
    assert compared.kind == "plan" and compared.table
    assert all(("H100" in row.gpu_name) or ("A100" in row.gpu_name) for row in compared.table)
    assert conversation.respond(_key(), "what if 8k ctx?").changes == {"seq_len": (4096, 8192)}


def test_cheapest_under_a_budget_moves_the_job_to_that_card() -> None:
    conversation = Conversation()
    conversation.handle(_key(), SEED)
    turn = conversation.respond(_key(), "cheapest under $100?")
    assert turn.plan is not None and turn.plan.spec.budget_usd == 100
    assert turn.plan.requested is not None and turn.plan.requested.cost_usd is not None
    assert turn.plan.requested.cost_usd <= 100


def test_rate_limited_users_get_a_friendly_wait() -> None:
    limiter = RateLimiter(BucketRule(burst=2, per_minute=1), BucketRule(burst=100, per_minute=60))
    conversation = Conversation(rate_limiter=limiter)
    assert conversation.handle(_key(), SEED, user="ana").kind == "plan"
    assert conversation.handle(_key(), "2 epochs", user="ana").kind == "plan"
    limited = conversation.handle(_key(), "3 epochs", user="ana")
    assert limited.kind == "rate_limited" and "Try again in" in limited.body
    assert conversation.handle(_key("other"), SEED, user="bob").kind == "plan"


def test_identical_questions_within_the_window_are_planned_once() -> None:
    planned: list[JobSpec] = []

    def counting_plan(job: JobSpec):
        planned.append(job)
        return make_plan(job)

    conversation = Conversation(plan_fn=counting_plan)
    first = conversation.handle(_key("a"), SEED)
    second = conversation.handle(_key("b"), SEED)
    assert len(planned) == 1 and first == second


def test_a_value_the_job_cannot_take_names_the_field_and_keeps_the_job() -> None:
    conversation = Conversation()
    conversation.handle(_key(), SEED)
    refused = conversation.handle(_key(), "cheapest under $5,000,000,000?")
    assert refused.kind == "error" and "budget" in refused.body.lower()
    assert conversation.respond(_key(), "and 2 epochs?").changes == {"epochs": (3, 2)}


def test_follow_ups_from_two_processes_to_one_thread_lose_nothing(tmp_path: Path) -> None:
    script = textwrap.dedent(
        """
        import sys
        from bot.conversation import Conversation
        from bot.threads import ThreadKey

        conversation = Conversation(limit_rate=False)
        key = ThreadKey(platform="test", thread="shared")
        for text in sys.argv[1:]:
            assert conversation.handle(key, text).kind == "plan"
        """
    )
    Conversation(SQLiteStore(tmp_path)).handle(ThreadKey(platform="test", thread="shared"), SEED)
    env = {**os.environ, "GPUPLAN_STATE_DIR": str(tmp_path)}
    ranks = ["rank 8", "rank 16", "rank 32", "rank 64"]
    epochs = ["1 epoch", "2 epochs", "4 epochs", "5 epochs"]
    writers = [
        subprocess.Popen([sys.executable, "-c", script, *texts], env=env, cwd=REPO_ROOT)
        for texts in (ranks, epochs)
    ]
    assert [writer.wait(timeout=120) for writer in writers] == [0, 0]
    history = SQLiteStore(tmp_path).load(str(ThreadKey(platform="test", thread="shared"))).history
    assert len(history) == 1 + len(ranks) + len(epochs)
    assert (history[-1]["lora_rank"], history[-1]["epochs"]) == (64, 5)


def test_a_new_question_comparing_cards_shows_those_cards() -> None:
    turn = Conversation().respond(_key(), "13B QLoRA 4k ctx 20M tokens: 4090 vs H100")
    assert turn.plan is not None and turn.reply.table
    assert all(("4090" in row.gpu_name) or ("H100" in row.gpu_name) for row in turn.reply.table)
    assert any(note.startswith("Comparing") for note in turn.reply.assumptions)


def test_a_comparison_of_jobs_plans_every_job_and_the_thread_keeps_the_first() -> None:
    turn = Conversation().respond(_key(), "7B or 13B lora")
    assert turn.plan is not None and turn.plan.model.params_b < 10
    assert [plan.model.params_b > 10 for plan in turn.alternatives] == [False, True]
    assert any("side by side" in note and "keeps" in note for note in turn.reply.assumptions)


class RivalWinsFirst:
    """The real SQLite store, where another process's follow-up commits between this writer's
    load and save for the first `rival_texts` saves, as happens with several bot processes."""

    def __init__(self, directory: Path, rival_texts: list[str]) -> None:
        self.real = SQLiteStore(directory)
        self.rival = Conversation(SQLiteStore(directory), limit_rate=False)
        self.rival_texts = rival_texts
        self.lost = 0

    def load(self, key: str):
        return self.real.load(key)

    def save(self, key: str, history, expected_version: int) -> bool:
        if self.rival_texts:
            rival_turn = self.rival.respond(_key(), self.rival_texts.pop(0))
            assert rival_turn.reply.kind == "plan"
        saved = self.real.save(key, history, expected_version)
        self.lost += not saved
        return saved


def test_a_writer_that_loses_races_waits_and_answers_from_the_winners_job(tmp_path: Path) -> None:
    store = RivalWinsFirst(tmp_path, [])
    conversation = Conversation(store, limit_rate=False)
    conversation.handle(_key(), SEED)
    store.rival_texts = ["rank 8", "rank 16", "rank 32"]
    turn = conversation.respond(_key(), "and 2 epochs?")
    assert store.lost == 3 and turn.reply.kind == "plan"
    history = store.real.load(str(_key())).history
    assert [job.get("lora_rank") for job in history[-4:]] == [8, 16, 32, 32]
    assert turn.plan is not None and (turn.plan.spec.lora_rank, turn.plan.spec.epochs) == (32, 2)


def test_a_writer_that_loses_for_the_whole_budget_says_the_thread_is_busy(
    tmp_path: Path, caplog
) -> None:
    store = RivalWinsFirst(tmp_path, [])
    Conversation(store, limit_rate=False).handle(_key(), SEED)
    store.rival_texts = [f"{2 + n % 2} epochs" for n in range(1000)]
    conversation = Conversation(
        store,
        limit_rate=False,
        # A budget that holds several tries even on a loaded machine (each re-plans the job;
        # ~50 fit in 0.5 s on an idle one).
        save_backoff=Backoff(first_delay_s=0.001, max_delay_s=0.004, budget_s=0.5),
    )
    reply = conversation.handle(_key(), "what if 8k ctx?")
    assert (reply.kind, reply.title) == ("error", "This thread is busy")
    assert store.lost >= 2  # it retried within the budget, not once
    (logged,) = [r.getMessage() for r in caplog.records if "lost the race" in r.getMessage()]
    assert logged.startswith(f"{_key()}: every save lost the race for ")
    assert store.real.load(str(_key())).history[-1]["seq_len"] == 4096  # only rivals' jobs kept


def test_a_typed_patch_changes_the_threads_job_like_the_follow_up_it_stands_for() -> None:
    conversation = Conversation()
    conversation.handle(_key("patch"), SEED)
    patched = conversation.respond(_key("patch"), Patch({"seq_len": 8192}, "8k context"))
    assert patched.changes["seq_len"] == (4096, 8192)
    typed = Conversation()
    typed.handle(_key("typed"), SEED)
    assert typed.respond(_key("typed"), "what if 8k ctx?").plan == patched.plan


def test_a_patch_with_no_job_yet_asks_for_one() -> None:
    reply = Conversation().handle(_key("empty"), Patch({"seq_len": 8192}, "8k context"))
    assert reply.kind == "clarify" and reply.title == "No job to change yet"
