"""`gpuplan serve discord` settings and `gpuplan discord-commands`, without touching the network."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

import pytest

from adapters.cli import main
from adapters.discord.serve import (
    SettingsError,
    add_arguments,
    settings_from_args,
    settings_from_env,
)

TOKEN = "MTIz.secret-token-value"


def test_without_a_token_serve_explains_and_exits_2(capsys):
    assert main(["serve", "discord"]) == 2
    err = capsys.readouterr().err
    assert "DISCORD_TOKEN is not set" in err and "Developer Portal" in err
    assert "Traceback" not in err


def test_a_bad_setting_exits_2_without_echoing_the_token(monkeypatch, capsys):
    monkeypatch.setenv("DISCORD_TOKEN", TOKEN)
    monkeypatch.setenv("DISCORD_SHARD_COUNT", "two")
    assert main(["serve", "discord"]) == 2
    err = capsys.readouterr().err
    assert "DISCORD_SHARD_COUNT must be a whole number" in err
    assert TOKEN not in err


def test_settings_read_guild_shards_and_intent():
    settings = settings_from_env(
        {
            "DISCORD_TOKEN": f" {TOKEN} ",
            "DISCORD_GUILD_ID": "123456789012345678",
            "DISCORD_SHARD_COUNT": "8",
            "DISCORD_SHARD_IDS": "0-2, 6",
            "GPUPLAN_DISCORD_MESSAGE_CONTENT": "1",
        }
    )
    assert settings.token == TOKEN
    assert settings.sync_guild_id == 123456789012345678
    assert (settings.shard_count, settings.shard_ids) == (8, [0, 1, 2, 6])
    assert settings.message_content
    assert TOKEN not in repr(settings)


def test_defaults_leave_sharding_to_discord_and_the_intent_off():
    settings = settings_from_env({"DISCORD_TOKEN": TOKEN})
    assert (settings.sync_guild_id, settings.shard_count, settings.shard_ids) == (None, None, None)
    assert not settings.message_content


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"DISCORD_SHARD_IDS": "0"}, "needs DISCORD_SHARD_COUNT"),
        ({"DISCORD_SHARD_COUNT": "2", "DISCORD_SHARD_IDS": "0-2"}, "below DISCORD_SHARD_COUNT=2"),
        ({"DISCORD_SHARD_COUNT": "4", "DISCORD_SHARD_IDS": "1,1"}, "distinct"),
        ({"DISCORD_SHARD_COUNT": "4", "DISCORD_SHARD_IDS": "a-b"}, "must look like"),
        ({"DISCORD_SHARD_COUNT": "0"}, "≥ 1"),
        ({"DISCORD_GUILD_ID": "-5"}, "DISCORD_GUILD_ID must be a whole number"),
    ],
)
def test_malformed_settings_say_which_variable_and_why(env, message):
    with pytest.raises(SettingsError, match=message):
        settings_from_env({"DISCORD_TOKEN": TOKEN, **env})


def test_discord_commands_prints_the_command_json(capsys):
    assert main(["discord-commands"]) == 0
    (command,) = json.loads(capsys.readouterr().out)
    assert command["name"] == "gpuplan"
    assert [o["name"] for o in command["options"]] == ["query", "private", "model", "gpu"]


def test_importing_the_serve_module_does_not_import_discord_py():
    code = "import sys, adapters.discord.serve; print('discord' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.stdout.strip() == "False", result.stderr


def test_the_invite_url_asks_for_both_scopes_and_only_the_permissions_used(capsys):
    assert main(["discord-commands", "--invite", "123456789012345678"]) == 0
    url = capsys.readouterr().out.strip()
    assert url == (
        "https://discord.com/oauth2/authorize?client_id=123456789012345678"
        "&scope=bot+applications.commands&permissions=309237763072"
    )


def _serve_args(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    return parser.parse_args(argv)


def test_shard_flags_stand_beside_the_environment_and_win():
    env = {"DISCORD_TOKEN": TOKEN, "DISCORD_SHARD_COUNT": "8", "DISCORD_SHARD_IDS": "4-7"}
    assert settings_from_args(_serve_args(), env).shard_ids == [4, 5, 6, 7]
    flagged = settings_from_args(_serve_args("--shard-ids", "0-3", "--shard-count", "8"), env)
    assert flagged.shard_ids == [0, 1, 2, 3] and flagged.shard_count == 8
    only_flags = _serve_args("--shard-ids", "0-3", "--shard-count", "8")
    assert settings_from_args(only_flags, {"DISCORD_TOKEN": TOKEN}).shard_ids == [0, 1, 2, 3]
    with pytest.raises(SettingsError, match="--shard-count"):
        settings_from_args(_serve_args("--shard-ids", "0-3"), {"DISCORD_TOKEN": TOKEN})


def test_a_bad_shard_flag_or_state_url_exits_2(monkeypatch, capsys):
    monkeypatch.setenv("DISCORD_TOKEN", TOKEN)
    assert main(["serve", "discord", "--shard-ids", "0-9", "--shard-count", "8"]) == 2
    assert "below DISCORD_SHARD_COUNT=8" in capsys.readouterr().err
    monkeypatch.setenv("GPUPLAN_STATE_URL", "postgres://db")
    assert main(["serve", "discord"]) == 2
    err = capsys.readouterr().err
    assert "GPUPLAN_STATE_URL must be a Redis URL" in err and TOKEN not in err


def test_the_procfiles_shard_ranges_are_valid_and_cover_every_shard():
    procfile = (Path(__file__).resolve().parents[1] / "Procfile").read_text().splitlines()
    lines = [line.lstrip("# ") for line in procfile if "gpuplan serve discord --shard" in line]
    owned: list[int] = []
    for line in lines:
        argv = line.split("gpuplan serve discord", 1)[1].split()
        settings = settings_from_args(_serve_args(*argv), {"DISCORD_TOKEN": TOKEN})
        owned += settings.shard_ids or []
        count = settings.shard_count
    assert len(lines) >= 2 and sorted(owned) == list(range(count or 0))
