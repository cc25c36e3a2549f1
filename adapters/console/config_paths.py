"""In the terminal a question may name a config.json by path ("./llama/config.json qlora 4k"):
the file is the user's own, on their machine, so it is read and its JSON put in the question.
Only here: a bot never opens a path named in a chat message (bot/configs.py)."""

from __future__ import annotations

from pathlib import Path

from planner.patterns import lazy_pattern

MAX_CONFIG_BYTES = 1_000_000
# A path token ending in .json, or a folder holding a config.json ("~/models/llama-3b/").
_PATH = lazy_pattern(r"(?<!\S)(?P<path>[~./\w][^\s\"']*)(?!\S)")


def with_config_files(text: str) -> tuple[str, str | None]:
    """The question with the first config file it names replaced by the file's JSON, and an
    error sentence when a named .json file cannot be read."""
    for match in _PATH.finditer(text):
        raw = match["path"]
        path = Path(raw).expanduser()
        try:
            folder = path.is_dir() and (path / "config.json").is_file()
        except OSError:  # a word too long to be a file name, say
            continue
        if folder:
            path = path / "config.json"
        elif not raw.lower().endswith(".json"):
            continue
        try:
            if path.stat().st_size > MAX_CONFIG_BYTES:
                return text, f"{raw} is over {MAX_CONFIG_BYTES // 1_000_000} MB: not a config.json"
            content = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return text, f"there is no file {raw}"
        except (OSError, UnicodeDecodeError) as error:
            return text, f"cannot read {raw} ({getattr(error, 'strerror', None) or error})"
        return text[: match.start()] + content + text[match.end() :], None
    return text, None
