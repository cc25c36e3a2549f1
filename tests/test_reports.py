"""Reports from real runs: read in a thread, re-anchoring the job (what-ifs scale from the
measurement), kept only where the workspace allows, scored and exported by gpuplan calibration."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from bot.conversation import Conversation
from bot.reports import report_json_line
from bot.state.reports import MemoryReports, Report, SQLiteReports
from bot.state.threads import MemoryStore
from bot.threads import ThreadKey
from planner.anchor import MAX_SCALE
from planner.parsing import parse
from planner.parsing.report import oom_reported
from planner.planner import make_plan
from planner.spec import JobSpec

REPO_ROOT = Path(__file__).resolve().parents[1]
JOB = {"model": "llama 3.1 8b", "method": "qlora", "gpu": "RTX 4090", "seq_len": 4096}


class Settings:
    def __init__(self, **values: str) -> None:
        self.values = values

    def get(self, scope: str, name: str) -> str | None:
        return self.values.get(name)


@pytest.mark.parametrize(
    ("text", "peak_gib", "metric"),
    [
        ("it actually peaked at 21.3 GiB", 21.3, "unknown"),
        ("nvidia-smi showed 23 GB", 23.0, "nvidia-smi"),
        ("torch.cuda.max_memory_allocated() = 18.2GB", 18.2, "allocated"),
        ("max_memory_reserved was 19500 MiB", 19500 / 1024, "reserved"),
        ("实际显存占用 21G", 21.0, "unknown"),
    ],
)
def test_measured_peaks_are_read_with_how_they_were_read(text, peak_gib, metric) -> None:
    fields = parse(text).fields
    assert fields["measured_peak_gib"] == pytest.approx(peak_gib, abs=0.01)
    assert fields["measured_metric"] == metric
    assert "gpu_vram_gb" not in fields


def test_sizes_that_are_not_measurements_stay_card_sizes() -> None:
    assert "measured_peak_gib" not in parse("7B lora on a 24GB card").fields
    assert parse("70b qlora 48gb?").fields["gpu_vram_gb"] == 48


@pytest.mark.parametrize(
    ("text", "reported"),
    [
        ("OOM at step 3", True),
        ("it OOMed on the first batch", True),
        ("CUDA out of memory. Tried to allocate 2.00 GiB", True),
        ("爆显存了", True),
        ("would 16k context OOM on an 80GB H100?", False),
        ("会不会爆显存", False),
    ],
)
def test_an_oom_is_a_report_only_when_it_happened(text: str, reported: bool) -> None:
    assert oom_reported(text) is reported


@pytest.mark.parametrize("metric", ["nvidia-smi", "allocated", "reserved"])
def test_a_measured_peak_re_anchors_the_estimate_of_its_kind(metric: str) -> None:
    plan = make_plan(JobSpec(**JOB, measured_peak_gib=21.3, measured_metric=metric))
    memory = plan.memory
    figure = {"nvidia-smi": memory.required_gib, "allocated": memory.peak_allocated_gib}
    assert figure.get(metric, memory.peak_reserved_gib) == pytest.approx(21.3, abs=0.01)
    # A what-if keeps the scale: 8k tokens is the measured ratio times our 8k estimate.
    longer = make_plan(plan.spec.model_copy(update={"seq_len": 8192}))
    ours = make_plan(JobSpec(**{**JOB, "seq_len": 8192}))
    ratio = plan.spec.memory_scale
    # (allocated: the reserved pool is capped by the 24 GB card, which the scale does not touch)
    allocated = ours.memory.peak_allocated_gib * ratio
    assert longer.memory.peak_allocated_gib == pytest.approx(allocated, rel=1e-3)


def test_an_oom_makes_the_job_no_longer_fit_its_card_and_a_wild_figure_is_capped() -> None:
    assert make_plan(JobSpec(**JOB)).requested.verdict != "no"
    assert make_plan(JobSpec(**JOB, measured_metric="oom")).requested.verdict == "no"
    wild = make_plan(JobSpec(**JOB, measured_peak_gib=900, measured_metric="reserved"))
    assert wild.spec.memory_scale == MAX_SCALE
    assert any("capped" in said for said in wild.assumptions)


def _key(workspace: str = "T1") -> ThreadKey:
    return ThreadKey(platform="slack", workspace=workspace, channel="C1", thread="1.1")


def test_a_thread_report_is_kept_only_where_the_workspace_allows() -> None:
    for setting, expected in (("on", 1), ("off", 0)):
        reports = MemoryReports()
        conversation = Conversation(
            MemoryStore(), limit_rate=False, settings=Settings(keep_reports=setting),
            reports=reports,
        )  # fmt: skip
        conversation.respond(_key(), "llama 3.1 8b qlora on a 4090, 4k ctx")
        turn = conversation.respond(_key(), "nvidia-smi showed 21.3 GB")
        assert turn.plan.memory.required_gib == pytest.approx(21.3, abs=0.01)
        assert len(reports.all()) == expected
        assert ("is kept" in turn.reply.changes[0]) is bool(expected)


def test_a_kept_report_records_the_job_as_said_and_our_estimate_before_re_anchoring() -> None:
    reports = MemoryReports()
    conversation = Conversation(
        MemoryStore(), limit_rate=False, settings=Settings(keep_reports="on"), reports=reports
    )
    first = conversation.respond(_key(), "llama 3.1 8b qlora on a 4090, 4k ctx")
    conversation.respond(_key(), "it actually peaked at 20 GiB (max_memory_reserved)")
    (report,) = reports.all("slack/T1")
    assert report.metric == "reserved" and report.measured_gib == 20
    assert report.estimated_gib == first.plan.memory.peak_reserved_gib
    assert "measured_peak_gib" not in report.spec and report.spec["gpu"] == "RTX 4090"
    row = json.loads(report_json_line(report, 1))
    assert row["truth"] == {"kind": "measurement", "metric": "max_memory_reserved", "peak_gib": 20}
    # A later what-if still scales from the measurement.
    after = conversation.respond(_key(), "what if 8k ctx?")
    assert after.plan.spec.memory_scale == pytest.approx(20 / report.estimated_gib, rel=1e-2)


def test_an_oom_in_a_thread_never_undoes_a_measured_scale() -> None:
    conversation = Conversation(MemoryStore(), limit_rate=False)
    conversation.respond(_key(), "llama 3.1 8b qlora on a 4090, 8k ctx")
    measured = conversation.respond(_key(), "nvidia-smi showed 30 GB")
    oom = conversation.respond(_key(), "OOM at step 3")
    assert oom.plan.spec.memory_scale == measured.plan.spec.memory_scale
    assert oom.reply.kind == "plan" and oom.plan.requested.verdict == "no"


def test_sqlite_reports_persist_and_forget(tmp_path: Path) -> None:
    store = SQLiteReports(tmp_path)
    report = Report(
        scope="discord/G1", spec={"method": "lora"}, planned={"method": "lora"}, metric="oom",
        measured_gib=None, estimated_gib=20.0, range_gib=(15.0, 26.0), card_gib=23.6,
        reported_at=0.0,
    )  # fmt: skip
    store.add(report)
    assert SQLiteReports(tmp_path).all("discord/G1") == [report]
    assert json.loads(report_json_line(report, 7))["truth"] == {
        "kind": "oom_lower_bound",
        "capacity_gib": 23.6,
    }
    assert store.forget("discord/G1") == 1 and store.all() == []


def test_redis_reports_follow_the_same_contract(redis_url: str) -> None:
    from bot.state.redis_link import RedisLink
    from bot.state.reports import RedisReports

    store = RedisReports(RedisLink(redis_url))
    report = Report(
        scope="slack/T9", spec={"method": "qlora"}, planned={"method": "qlora"},
        metric="nvidia-smi", measured_gib=21.0, estimated_gib=19.0, range_gib=(12.0, 28.0),
        card_gib=23.6, reported_at=0.0,
    )  # fmt: skip
    store.add(report)
    store.add(report.model_copy(update={"scope": "slack/T8"}))
    assert store.all("slack/T9") == [report] and len(store.all()) == 2
    assert store.forget("slack/T9") == 1 and [r.scope for r in store.all()] == ["slack/T8"]


def test_calibration_from_a_console_thread_end_to_end(tmp_path: Path) -> None:
    env = {**os.environ, "GPUPLAN_STATE_DIR": str(tmp_path)}

    def gpuplan(*args: str, stdin: str = "") -> str:
        done = subprocess.run(
            [sys.executable, "-m", "adapters.cli", *args],
            input=stdin, capture_output=True, text=True, env=env, cwd=REPO_ROOT, check=True,
        )  # fmt: skip
        return done.stdout

    thread = "llama 3.1 8b qlora on a 4090, 4k ctx\nnvidia-smi showed 21.3 GB\n"
    gpuplan("chat", "--keep-reports", stdin=thread)
    # --keep-reports stays on, as "reports on" does, until "reports off".
    gpuplan("chat", stdin="reports off\nllama 3.1 8b lora on an A100 80GB\nit peaked at 30 GiB\n")
    rows = json.loads(gpuplan("calibration", "--json"))
    assert [(r["method"], r["card"], r["reports"]) for r in rows] == [("qlora", "RTX 4090", 1)]
    assert rows[0]["range_held"] == "1/1" and rows[0]["mape_pct"] < 30
    gpuplan("calibration", "--export", str(tmp_path / "rows.jsonl"))
    (line,) = (tmp_path / "rows.jsonl").read_text(encoding="utf-8").splitlines()
    assert json.loads(line)["truth"]["peak_gib"] == 21.3


def test_only_admins_turn_keeping_reports_on_and_the_setting_is_per_workspace() -> None:
    from bot.state.settings import MemorySettings

    conversation = Conversation(MemoryStore(), limit_rate=False, settings=MemorySettings())
    refused = conversation.respond(_key(), "/gpuplan reports on")
    assert refused.reply.kind == "error" and "admins" in refused.reply.title.lower()
    assert "does not keep" in conversation.respond(_key(), "reports").reply.body
    assert "now keeps" in conversation.respond(_key(), "reports on", admin=True).reply.body
    assert "keeps" in conversation.respond(_key(), "reports").reply.body
    assert "does not keep" in conversation.respond(_key("T2"), "reports").reply.body
    bad = conversation.respond(_key(), "reports maybe", admin=True)
    assert bad.reply.kind == "error" and "reports on" in bad.reply.body
