"""config.json wherever it is safe: pasted into any surface, a path in the terminal, never a path
opened by a bot."""

from __future__ import annotations

import json
from pathlib import Path

from adapters.cli import main
from bot.conversation import Conversation
from bot.state.threads import MemoryStore
from bot.threads import ThreadKey

TINY = {
    "architectures": ["LlamaForCausalLM"],
    "_name_or_path": "acme/tiny-llama-3b",
    "model_type": "llama",
    "hidden_size": 3072,
    "intermediate_size": 8192,
    "num_hidden_layers": 28,
    "num_attention_heads": 24,
    "num_key_value_heads": 8,
    "vocab_size": 128256,
    "max_position_embeddings": 131072,
}
PASTED = f"qlora 4k ctx on a 4090, 10M tokens ```json\n{json.dumps(TINY, indent=2)}\n```"


def _conversation() -> tuple[Conversation, ThreadKey]:
    return Conversation(MemoryStore(), limit_rate=False), ThreadKey(platform="test", thread="c")


def test_pasted_json_plans_the_supplied_model_with_the_job_around_it() -> None:
    conversation, key = _conversation()
    turn = conversation.respond(key, PASTED)
    assert turn.reply.kind == "plan" and turn.plan.model.name == "tiny-llama-3b"
    assert turn.plan.spec.method == "qlora" and turn.plan.spec.seq_len == 4096
    assert turn.plan.requested is not None and "4090" in turn.plan.requested.gpu_name
    assert any("supplied config" in said for said in turn.plan.assumptions)


def test_a_thread_keeps_the_supplied_model_for_follow_ups_until_a_new_job() -> None:
    conversation, key = _conversation()
    conversation.handle(key, PASTED)
    longer = conversation.respond(key, "what if 8k ctx?")
    assert longer.plan.model.name == "tiny-llama-3b" and longer.changes["seq_len"] == (4096, 8192)
    fresh = conversation.respond(key, "new: 7B lora")
    assert fresh.plan.model.name == "Llama-2-7B"


def test_json_that_is_not_a_config_names_what_is_missing() -> None:
    conversation, key = _conversation()
    reply = conversation.handle(key, '{"learning_rate": 0.0002, "epochs": 3} lora')
    assert reply.kind == "error"
    assert "not a model config.json" in reply.body and "num_hidden_layers" in reply.body
    broken = conversation.handle(key, '{"hidden_size": 4096, lora')
    assert broken.kind == "error" and "does not parse" in broken.title


def test_a_bot_never_opens_a_path_named_in_a_message(tmp_path: Path) -> None:
    config = tmp_path / "config.json"
    config.write_text(json.dumps(TINY))
    conversation, key = _conversation()
    reply = conversation.handle(key, f"{config} qlora")
    assert "tiny-llama" not in reply.title  # the path is only words to a bot


def test_the_terminal_reads_a_config_path_or_folder(tmp_path: Path, capsys) -> None:
    (tmp_path / "config.json").write_text(json.dumps(TINY))
    assert main(["ask", f"{tmp_path / 'config.json'} qlora 4k ctx"]) == 0
    assert capsys.readouterr().out.startswith("tiny-llama-3b · QLoRA · 4,096 ctx")
    assert main(["ask", "--json", f"{tmp_path} lora"]) == 0
    assert json.loads(capsys.readouterr().out)["model"]["name"] == "tiny-llama-3b"
    assert main(["ask", f"{tmp_path / 'missing.json'} lora"]) == 1
    assert "no file" in capsys.readouterr().err
