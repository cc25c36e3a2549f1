"""`gpuplan parse TEXT` and `gpuplan parse --jsonl FILE|-`, run in-process through the router."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pytest

from adapters.cli import main


def test_text_prints_the_spec_and_assumptions(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["parse", "13B QLoRA, 4k ctx, 20M tokens x3"]) == 0
    out = capsys.readouterr().out
    spec = json.loads(out[: out.index("}") + 1])
    assert spec == {
        "params_b": 13.0,
        "method": "qlora",
        "seq_len": 4096,
        "dataset_tokens": 20_000_000.0,
        "epochs": 3.0,
    }
    assert "assumed: 4k read as 4096 tokens" in out


def test_text_without_a_model_asks(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["parse", "what if 8k ctx?"]) == 0
    out = capsys.readouterr().out
    assert '"seq_len": 8192' in out and "Which model" in out


def test_refused_text_exits_1_with_the_reason(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["parse", "x" * 2_001]) == 1
    assert "2,000" in capsys.readouterr().err


def test_jsonl_answers_every_line_in_order(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = [
        json.dumps({"id": "a", "text": "70b qlora 48gb?"}),
        "not json at all",
        json.dumps({"id": "c", "text": "13B, 1e999 tokens"}),
        json.dumps(["not", "an", "object"]),
        "",
        json.dumps({"id": "e"}),
        json.dumps({"id": 6, "text": "全参微调 7B 需要几张4090"}),
    ]
    source = tmp_path / "in.jsonl"
    source.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert main(["parse", "--jsonl", str(source)]) == 0
    answers = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [answer["id"] for answer in answers] == ["a", None, "c", None, "e", 6]
    assert answers[0]["spec"] == {"params_b": 70.0, "method": "qlora", "gpu_vram_gb": 48.0}
    assert answers[0]["assumptions"] == []
    assert "not JSON" in answers[1]["error"]
    assert "too large" in answers[2]["error"]
    assert "error" in answers[3] and "error" in answers[4]
    assert answers[5]["spec"]["method"] == "full" and answers[5]["spec"]["gpu"] == "RTX 4090"


def test_jsonl_reads_stdin(monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    monkeypatch.setattr(sys, "stdin", io.StringIO('{"id": 1, "text": "7b lora"}\n'))
    assert main(["parse", "--jsonl", "-"]) == 0
    assert json.loads(capsys.readouterr().out)["spec"]["params_b"] == 7


def test_jsonl_missing_file_exits_2(tmp_path: Path, capsys) -> None:
    assert main(["parse", "--jsonl", str(tmp_path / "nope.jsonl")]) == 2
    assert "cannot read" in capsys.readouterr().err


def test_activation_offloading_is_not_optimizer_offload() -> None:
    from planner.parsing import parse

    for text in ("8b lora with activation offloading", "8b lora, offload activations",
                 "8b lora enable_activation_offloading=True", "8b lora 激活卸载"):  # fmt: skip
        fields = parse(text).fields
        assert fields.get("activation_offloading") is True and "cpu_offload" not in fields, text
    both = parse("8b full, offload activations and cpu offload").fields
    assert both["activation_offloading"] is True and both["cpu_offload"] is True
    assert parse("8b lora no activation offloading").fields["activation_offloading"] is False


def test_a_tiled_mlp_is_read_in_its_spellings() -> None:
    from planner.parsing import parse

    for text in (
        "8b full 128k with tiled mlp",
        "8b lora, tiled_mlp_compute: true",
        "gpt-oss 20b qlora 500k unsloth_tiled_mlp = True",
        "8b lora 用 MLP 分块",
    ):
        assert parse(text).fields.get("tiled_mlp") is True, text
    assert parse("8b lora 32k without tiled mlp").fields["tiled_mlp"] is False
    assert "tiled_mlp" not in parse("8b lora 32k").fields
