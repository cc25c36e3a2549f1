"""`gpuplan estimate`: --spec, --jsonl (bad lines never stop the stream) and --config."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from adapters.cli import main


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["estimate", *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_spec_file_prints_the_plan(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    spec = tmp_path / "job.json"
    spec.write_text(json.dumps({"model": "llama 3 8b", "method": "qlora", "seq_len": 4096}))
    code, out, _ = _run(capsys, "--spec", str(spec))
    plan = json.loads(out)
    assert code == 0
    assert plan["spec"]["quant"] == "nf4"
    assert plan["model"]["key"] == "llama-3-8b"
    assert set(plan["memory"]["breakdown_gib"]) == {
        "weights",
        "adapter",
        "gradients",
        "optimizer",
        "activations",
        "logits",
        "overhead",
        "reference",
        "value",
        "reward",
        "rollout",
    }


def test_spec_from_stdin(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO('{"method": "lora", "params_b": 7}'))
    code, out, _ = _run(capsys, "--spec", "-")
    assert code == 0
    assert json.loads(out)["model"]["key"] == "llama-2-7b"


def test_a_bad_spec_is_one_line_naming_the_field(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO('{"method": "lora", "micro_batch": 0}'))
    code, out, err = _run(capsys, "--spec", "-")
    assert code == 1
    assert out == ""
    assert "micro_batch" in err
    assert "Traceback" not in err


def test_jsonl_answers_every_line_in_order(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = [
        json.dumps({"id": "ok", "spec": {"model": "mistral 7b", "method": "lora"}}),
        "{not json",
        json.dumps({"id": "no-method", "spec": {"model": "mistral 7b"}}),
        json.dumps({"id": "mb0", "spec": {"method": "lora", "params_b": 7, "micro_batch": 0}}),
        json.dumps({"id": "seq", "spec": {"method": "lora", "params_b": 7, "seq_len": -1}}),
        json.dumps({"id": "opt", "spec": {"method": "lora", "params_b": 7, "optimizer": "lion"}}),
        json.dumps({"id": "who", "spec": {"method": "lora", "model": "blorp"}}),
        json.dumps({"id": "nospec"}),
        "[1, 2]",
        "",
        json.dumps({"id": 7, "spec": {"method": "full", "params_b": 1}}),
    ]
    path = tmp_path / "jobs.jsonl"
    path.write_text("\n".join(lines) + "\n")
    code, out, err = _run(capsys, "--jsonl", str(path))
    answers = [json.loads(line) for line in out.splitlines()]
    assert code == 0
    assert "Traceback" not in err
    assert [a["id"] for a in answers] == [
        "ok",
        None,
        "no-method",
        "mb0",
        "seq",
        "opt",
        "who",
        "nospec",
        None,
        7,
    ]
    assert "plan" in answers[0] and "plan" in answers[-1]
    errors = {a["id"]: a["error"] for a in answers if "error" in a and a["id"]}
    assert errors["no-method"].startswith("method")
    assert errors["mb0"].startswith("micro_batch")
    assert errors["seq"].startswith("seq_len")
    assert errors["opt"].startswith("optimizer")
    assert errors["who"].startswith("model")
    assert errors["nospec"].startswith("spec")


def test_config_plans_a_custom_model_offline(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "my-model"
    folder.mkdir()
    (folder / "config.json").write_text(
        json.dumps(
            {
                "model_type": "llama",
                "num_hidden_layers": 24,
                "hidden_size": 2048,
                "intermediate_size": 5632,
                "num_attention_heads": 16,
                "num_key_value_heads": 4,
                "vocab_size": 32000,
                "max_position_embeddings": 4096,
            }
        )
    )
    code, out, _ = _run(capsys, "--config", str(folder / "config.json"))
    plan = json.loads(out)
    assert code == 0
    assert plan["spec"]["method"] == "lora"
    assert plan["model"]["name"] == "my-model"
    assert plan["model"]["num_layers"] == 24


def test_config_combines_with_a_spec(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "config.json"
    config.write_text(
        json.dumps(
            {
                "num_hidden_layers": 4,
                "hidden_size": 512,
                "num_attention_heads": 8,
                "vocab_size": 1000,
            }
        )
    )
    spec = tmp_path / "job.json"
    spec.write_text(json.dumps({"method": "full", "seq_len": 512}))
    code, out, _ = _run(capsys, "--config", str(config), "--spec", str(spec))
    assert code == 0
    assert json.loads(out)["spec"]["method"] == "full"


def test_a_broken_config_is_a_short_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "config.json"
    config.write_text("{oops")
    code, _, err = _run(capsys, "--config", str(config))
    assert code == 1
    assert "config" in err
    assert "Traceback" not in err


def test_no_input_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = _run(capsys)
    assert code == 2
    assert "--spec" in err
