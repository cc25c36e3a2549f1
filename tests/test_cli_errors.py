"""Every `gpuplan` subcommand meets bad arguments, bad files and a damaged environment with a short
message and a non-zero exit: never a traceback, never a hang."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from adapters.cli import main
from bot.state.sqlite import DB_NAME

GARBAGE = bytes(range(256)) * 8  # not UTF-8, full of newlines and NULs
JOB = "llama 3 8b lora on a 4090, 20M tokens"


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return code, out, err


def _usage_error(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    """argparse's refusal: exit 2 and an `error:` line naming what is wrong."""
    with pytest.raises(SystemExit) as exit_info:
        main(list(argv))
    err = capsys.readouterr().err
    assert exit_info.value.code == 2 and "error:" in err and "Traceback" not in err
    return err


def _one_line(err: str) -> str:
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err
    return lines[0]


@pytest.fixture
def garbage_file(tmp_path: Path) -> Path:
    path = tmp_path / "garbage.bin"
    path.write_bytes(GARBAGE)
    return path


# estimate


def test_estimate_a_missing_spec_file_is_named(capsys) -> None:
    code, out, err = _run(capsys, "estimate", "--spec", "/nonexistent/job.json")
    assert code == 1 and out == ""
    assert "cannot read /nonexistent/job.json: No such file" in _one_line(err)


def test_estimate_a_spec_that_is_not_json(tmp_path: Path, capsys) -> None:
    spec = tmp_path / "job.json"
    spec.write_text('{"method": "lora",')
    code, out, err = _run(capsys, "estimate", "--spec", str(spec))
    assert code == 1 and out == "" and "not JSON" in _one_line(err)


def test_estimate_a_binary_spec_or_config_is_not_utf8(garbage_file: Path, capsys) -> None:
    for flag in ("--spec", "--config"):
        code, out, err = _run(capsys, "estimate", flag, str(garbage_file))
        assert code == 1 and out == ""
        assert f"{garbage_file} is not UTF-8 text" in _one_line(err)


def test_estimate_a_binary_spec_on_stdin(monkeypatch, capsys) -> None:
    stdin = io.TextIOWrapper(io.BytesIO(GARBAGE), encoding="utf-8", errors="strict")
    monkeypatch.setattr("sys.stdin", stdin)
    code, out, err = _run(capsys, "estimate", "--spec", "-")
    assert code == 1 and out == "" and "standard input is not UTF-8 text" in _one_line(err)


def test_estimate_a_directory_as_spec(tmp_path: Path, capsys) -> None:
    code, _, err = _run(capsys, "estimate", "--spec", str(tmp_path))
    assert code == 1 and f"cannot read {tmp_path}" in _one_line(err)


def test_estimate_jsonl_of_binary_garbage_answers_each_line_with_an_error(
    garbage_file: Path, capsys
) -> None:
    code, out, _ = _run(capsys, "estimate", "--jsonl", str(garbage_file))
    answers = [json.loads(line) for line in out.splitlines()]
    assert code == 0 and answers
    assert all("error" in answer and "plan" not in answer for answer in answers)


def test_estimate_jsonl_missing_file(capsys) -> None:
    code, out, err = _run(capsys, "estimate", "--jsonl", "/nonexistent/jobs.jsonl")
    assert code == 1 and out == "" and "cannot read /nonexistent/jobs.jsonl" in _one_line(err)


# parse, render, ask, discord-commands, bench, serve


def test_parse_jsonl_of_binary_garbage_answers_each_line_with_an_error(
    garbage_file: Path, capsys
) -> None:
    code, out, _ = _run(capsys, "parse", "--jsonl", str(garbage_file))
    answers = [json.loads(line) for line in out.splitlines()]
    assert code == 0 and answers and all("error" in answer for answer in answers)


@pytest.mark.parametrize("command", ["parse", "estimate"])
def test_jsonl_from_binary_stdin_answers_each_line(command: str, monkeypatch, capsys) -> None:
    # errors="strict" is what stdin gets in most UTF-8 locales (C.UTF-8 escapes instead).
    stdin = io.TextIOWrapper(io.BytesIO(GARBAGE), encoding="utf-8", errors="strict")
    monkeypatch.setattr("sys.stdin", stdin)
    code, out, _ = _run(capsys, command, "--jsonl", "-")
    answers = [json.loads(line) for line in out.splitlines()]
    assert code == 0 and answers and all("error" in answer for answer in answers)


def test_chat_from_binary_stdin_answers_and_goes_on(monkeypatch, capsys) -> None:
    piped = GARBAGE + f"\n{JOB}\n".encode()
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(piped), encoding="utf-8"))
    code, out, _ = _run(capsys, "chat", "--json")
    answers = [json.loads(line) for line in out.splitlines()]
    assert code == 0 and "error" in answers[0] and "plan" in answers[-1]


def test_render_an_unknown_platform(capsys) -> None:
    assert "invalid choice: 'teams'" in _usage_error(capsys, "render", "teams", "x")


def test_ask_without_text(capsys) -> None:
    assert "required: text" in _usage_error(capsys, "ask")


def test_ask_empty_text_asks_for_a_job(capsys) -> None:
    code, out, _ = _run(capsys, "ask", "")
    assert code == 1 and "What job should I plan?" in out


def test_discord_commands_extra_arguments(capsys) -> None:
    assert "unrecognized arguments: extra args" in _usage_error(
        capsys, "discord-commands", "extra", "args"
    )


@pytest.mark.parametrize("application_id", ["0", "-5", "abc"])
def test_discord_commands_invite_needs_a_positive_id(application_id: str, capsys) -> None:
    assert "--invite" in _usage_error(capsys, "discord-commands", "--invite", application_id)


@pytest.mark.parametrize("rounds", ["0", "-3", "many"])
def test_bench_needs_at_least_one_round(rounds: str, capsys) -> None:
    assert "--rounds" in _usage_error(capsys, "bench", "--rounds", rounds)


@pytest.mark.parametrize(
    ("platform", "says"),
    [("slack", "set SLACK_SIGNING_SECRET, SLACK_BOT_TOKEN"), ("discord", "DISCORD_TOKEN")],
)
def test_serve_without_the_environment(platform: str, says: str, capsys) -> None:
    code, _, err = _run(capsys, "serve", platform)
    assert code == 2 and says in _one_line(err)


def test_serve_an_unknown_platform(capsys) -> None:
    assert "invalid choice: 'teams'" in _usage_error(capsys, "serve", "teams")


# chat and the state directory


def _chat(monkeypatch, capsys, *argv: str, stdin: str = f"{JOB}\n") -> tuple[int, str, str]:
    monkeypatch.setattr("sys.stdin", io.StringIO(stdin))
    return _run(capsys, "chat", *argv)


@pytest.mark.parametrize("thread", ["", "   "])
def test_chat_an_empty_thread_id_is_refused(thread: str, monkeypatch, capsys) -> None:
    code, out, err = _chat(monkeypatch, capsys, "--thread", thread)
    assert code == 2 and out == "" and "--thread needs an id" in _one_line(err)


def test_chat_when_the_state_dir_is_a_file_answers_without_saving(
    tmp_path: Path, monkeypatch, capsys
) -> None:
    not_a_dir = tmp_path / "state"
    not_a_dir.write_text("")
    monkeypatch.setenv("GPUPLAN_STATE_DIR", str(not_a_dir))
    code, out, err = _chat(monkeypatch, capsys, "--thread", "t1")
    assert code == 0 and "QLoRA" in out
    assert _one_line(err) == (
        f"gpuplan chat: thread store {not_a_dir}/threads.db: unavailable (File exists);"
        " answering without saving"
    )


@pytest.fixture
def corrupt_state(tmp_path: Path, monkeypatch) -> Path:
    (tmp_path / DB_NAME).write_bytes(GARBAGE)
    monkeypatch.setenv("GPUPLAN_STATE_DIR", str(tmp_path))
    return tmp_path


def test_chat_with_a_corrupt_thread_db(corrupt_state: Path, monkeypatch, capsys) -> None:
    code, out, err = _chat(monkeypatch, capsys, "--thread", "t1")
    assert code == 0 and "QLoRA" in out
    assert _one_line(err) == (
        f"gpuplan chat: thread store {corrupt_state}/threads.db: corrupt (file is not a database);"
        " answering without saving"
    )


def _serve_slack_err(monkeypatch, capsys) -> str:
    monkeypatch.setenv("SLACK_SIGNING_SECRET", "secret")
    monkeypatch.setenv("SLACK_BOT_TOKEN", "xoxb-token")
    code, _, err = _run(capsys, "serve", "slack", "--port", "0")
    assert code == 1
    return _one_line(err)


def test_serve_with_a_corrupt_thread_db(corrupt_state: Path, monkeypatch, capsys) -> None:
    assert _serve_slack_err(monkeypatch, capsys) == (
        f"gpuplan serve slack: thread store {corrupt_state}/threads.db: corrupt"
        " (file is not a database)"
    )


def test_serve_slack_when_the_state_dir_cannot_be_created(
    tmp_path: Path, monkeypatch, capsys
) -> None:
    (tmp_path / "file").write_text("")
    monkeypatch.setenv("GPUPLAN_STATE_DIR", str(tmp_path / "file" / "state"))
    assert _serve_slack_err(monkeypatch, capsys) == (
        f"gpuplan serve slack: thread store {tmp_path}/file/state/threads.db: unavailable"
        " (Not a directory)"
    )


def test_ask_does_not_need_the_state_dir(tmp_path: Path, monkeypatch, capsys) -> None:
    not_a_dir = tmp_path / "state"
    not_a_dir.write_text("")
    monkeypatch.setenv("GPUPLAN_STATE_DIR", str(not_a_dir))
    code, out, _ = _run(capsys, "ask", JOB)
    assert code == 0 and "4090" in out


# GPUPLAN_PRICES


def test_prices_pointing_at_a_missing_file(monkeypatch, capsys) -> None:
    monkeypatch.setenv("GPUPLAN_PRICES", "/nonexistent/prices.csv")
    code, out, _ = _run(capsys, "ask", JOB)
    assert code == 1 and "GPUPLAN_PRICES=/nonexistent/prices.csv: cannot read it" in out
    monkeypatch.setattr("sys.stdin", io.StringIO('{"method": "lora", "params_b": 7}'))
    code, _, err = _run(capsys, "estimate", "--spec", "-")
    assert code == 1 and "cannot read it (No such file or directory)" in _one_line(err)


def test_prices_with_the_wrong_columns(tmp_path: Path, monkeypatch, capsys) -> None:
    prices = tmp_path / "prices.csv"
    prices.write_text("card,usd\n4090,0.3\n")
    monkeypatch.setenv("GPUPLAN_PRICES", str(prices))
    monkeypatch.setattr("sys.stdin", io.StringIO('{"method": "lora", "params_b": 7}'))
    code, out, err = _run(capsys, "estimate", "--spec", "-")
    assert code == 1 and out == "" and "missing column(s) key" in _one_line(err)
    code, out, _ = _run(capsys, "ask", "--json", JOB)
    assert code == 1 and "missing column(s)" in json.loads(out)["error"]


def test_prices_file_of_binary_garbage(garbage_file: Path, monkeypatch, capsys) -> None:
    monkeypatch.setenv("GPUPLAN_PRICES", str(garbage_file))
    code, out, _ = _run(capsys, "ask", JOB)
    assert code == 1 and "GPUPLAN_PRICES" in out and "not a UTF-8 CSV file" in out
    code, out, err = _run(capsys, "bench", "--rounds", "1")
    assert code == 1 and out == "" and err.startswith("gpuplan bench: ")
    _one_line(err)


@pytest.mark.parametrize(("port_env", "argv"), [("abc", []), ("", ["--port", "99999"])])
def test_serve_slack_a_bad_port(port_env: str, argv: list[str], monkeypatch, capsys) -> None:
    monkeypatch.setenv("PORT", port_env)
    assert "a port (--port or PORT) is a whole number" in _usage_error(
        capsys, "serve", "slack", *argv
    )


# the router's last line of defence


def test_an_unexpected_failure_is_one_line_unless_debugging(monkeypatch, capsys) -> None:
    def broken(args: object) -> int:
        raise RuntimeError("disk on fire")

    monkeypatch.setattr("adapters.console.parse_cmd.run", broken)
    code, _, err = _run(capsys, "parse", "x")
    assert code == 1 and _one_line(err).startswith("gpuplan parse: RuntimeError: disk on fire")
    monkeypatch.setenv("GPUPLAN_DEBUG", "1")
    with pytest.raises(RuntimeError, match="disk on fire"):
        main(["parse", "x"])


def test_ask_chart_into_a_missing_directory(capsys) -> None:
    code, out, err = _run(capsys, "ask", "--chart", "/nonexistent/dir/chart.png", JOB)
    assert code == 1 and "4090" in out
    assert (
        _one_line(err)
        == "gpuplan ask: cannot write /nonexistent/dir/chart.png: No such file or directory"
    )


def test_chat_when_the_state_dir_cannot_be_created(tmp_path: Path, monkeypatch, capsys) -> None:
    # Even root cannot make a directory inside a file: the read-only case, for any user.
    blocker = tmp_path / "file"
    blocker.write_text("")
    monkeypatch.setenv("GPUPLAN_STATE_DIR", str(blocker / "state"))
    code, out, err = _chat(monkeypatch, capsys, "--thread", "t1")
    assert code == 0 and "QLoRA" in out
    assert _one_line(err) == (
        f"gpuplan chat: thread store {blocker}/state/threads.db: unavailable (Not a directory);"
        " answering without saving"
    )
