"""Chat shorthands found by reading new realistic questions (tests/data/parse_realistic.jsonl,
batch 3): each rule is checked on several spellings, and on the look-alikes it must leave alone."""

from __future__ import annotations

from typing import Any

import pytest

from planner.parsing import parse


def _fields(text: str) -> dict[str, Any]:
    result = parse(text)
    assert result.error is None
    return result.fields


@pytest.mark.parametrize(
    ("text", "samples_tokens", "length"),
    [
        ("8b lora 20k pairs ~1k tokens", 20_000_000, 1000),
        ("8b lora 20k pairs, ~1k tokens each", 20_000_000, 1000),
        ("8b lora 10k samples x 2k tokens", 20_000_000, 2000),
        ("8b lora 1.5M samples @ 300 tok", 450_000_000, 300),
        ("8b lora 10k samples (~700 tokens)", 7_000_000, 700),
        ("8b lora 5k examples at ~800 tok", 4_000_000, 800),
    ],
)
def test_a_length_right_after_a_sample_count_is_each_samples(
    text: str, samples_tokens: int, length: int
) -> None:
    fields = _fields(text)
    assert fields["dataset_tokens"] == samples_tokens
    assert fields["mean_sample_len"] == length
    assert "seq_len" not in fields


def test_a_dataset_sized_total_after_a_count_stays_the_total() -> None:
    fields = _fields("8b lora 1k samples, 500k tokens")
    assert fields["dataset_tokens"] == 500_000
    assert "mean_sample_len" not in fields


def test_preference_pairs_take_the_same_length_phrase() -> None:
    fields = _fields("8b lora dpo 20k pairs ~1k tokens")
    assert fields["dataset_prompts"] == 20_000
    assert fields["seq_len"] == 1024
    assert "dataset_tokens" not in fields


def test_conversations_shortened_are_samples() -> None:
    assert _fields("8b lora 50k convos")["dataset_tokens"] == 50_000 * 512


def test_a_batch_key_ending_in_mbs_is_not_megabytes_of_text() -> None:
    fields = _fields("8b lora gbs 128 mbs 2 8xh100")
    assert "dataset_tokens" not in fields
    assert (fields["micro_batch"], fields["grad_accum"]) == (2, 8)


@pytest.mark.parametrize(
    ("text", "usd"),
    [
        ("8b lora 500 budget", 500),
        ("8b lora 1.5k budget", 1500),
        ("8b lora budget: 2k", 2000),
        ("8b lora, budget is about 150, 3 epochs", 150),
        ("8b lora max spend 400", 400),
    ],
)
def test_a_budget_without_a_currency_is_dollars_and_said_so(text: str, usd: int) -> None:
    result = parse(text)
    assert result.fields["budget_usd"] == usd
    assert "seq_len" not in result.fields
    assert any("US dollars" in str(note) for note in result.assumptions)


@pytest.mark.parametrize(
    "text", ["8b lora token budget 8k", "8b lora budget 24gb", "8b lora budget 200 gpu hours"]
)
def test_a_budget_of_tokens_memory_or_gpu_hours_is_not_money(text: str) -> None:
    assert "budget_usd" not in _fields(text)


@pytest.mark.parametrize(
    ("text", "gpu", "vram", "count"),
    [
        ("8b lora a100_80g", "A100 80GB", 80, None),
        ("8b lora h100 80", "H100", 80, None),
        ("8b lora 2 a100 40, 3 epochs", "A100 40GB", 40, 2),
        ("34b lora 2x a100 80", "A100 80GB", 80, 2),
        ("8b lora a100 80 x2", "A100 80GB", 80, 2),
        ("8b lora a100 40 微调", "A100 40GB", 40, None),
        ("use a100 80 instead", "A100 80GB", 80, None),
    ],
)
def test_a_bare_memory_size_after_the_card(
    text: str, gpu: str, vram: int, count: int | None
) -> None:
    fields = _fields(text)
    assert (fields["gpu"], fields["gpu_vram_gb"], fields.get("num_gpus")) == (gpu, vram, count)


@pytest.mark.parametrize("text", ["8b lora 4090 24 layers", "8b lora 4090 16 bit"])
def test_a_number_that_a_word_follows_is_not_the_cards_memory(text: str) -> None:
    assert "gpu_vram_gb" not in _fields(text)


@pytest.mark.parametrize(
    ("text", "gpu"),
    [
        ("what's the fewest a100s for 70b full", "A100"),
        ("minimum 4090s needed for 32b qlora", "RTX 4090"),
        ("What's the minimum number of H100s needed for Llama 3 70B full?", "H100"),
        ("number of gpus needed for 70b full ft", None),
        ("# of gpus do i need for 70b full", None),
    ],
)
def test_asking_for_the_fewest_cards_keeps_the_card(text: str, gpu: str | None) -> None:
    fields = _fields(text)
    assert fields["asked"] == "num_gpus"
    assert fields.get("gpu") == gpu


def test_at_least_n_gpus_is_a_setting_not_a_question() -> None:
    fields = _fields("at least 2 gpus for 70b qlora")
    assert "asked" not in fields
    assert fields["num_gpus"] == 2


@pytest.mark.parametrize("text", ["7b lora，序列4096，4090", "8b模型dpo训练，lora，序列 2048"])
def test_chinese_sequence_alone_is_the_context_length(text: str) -> None:
    assert _fields(text)["seq_len"] in (4096, 2048)


def test_chinese_sequence_parallel_is_not_a_length() -> None:
    fields = _fields("序列并行 4 7b full")
    assert "seq_len" not in fields
    assert fields["context_parallel"] == 4


def test_a_card_number_after_epoch_is_the_card() -> None:
    fields = _fields("7b model lora 1 epoch 3090 10 hours ok?")
    assert (fields["epochs"], fields["gpu"]) == (1, "RTX 3090")


def test_how_many_gpu_hours_asks_for_time_not_a_count() -> None:
    assert "asked" not in _fields("how many gpu hours for 7b full ft on 1B tokens on h100")
    assert _fields("how many gpus for 70b full")["asked"] == "num_gpus"


@pytest.mark.parametrize(
    "text", ["lora on q_proj,v_proj only, 7b, 4090", "7b lora to q_proj and v_proj"]
)
def test_target_modules_named_in_chat_wording(text: str) -> None:
    assert _fields(text)["lora_targets"] == ["q", "v"]


# Catalog nicknames the parser leaves alone: "rtx 6000" is also the older Quadro RTX 6000, "g5"
# an AWS instance family, the rest marketing names nobody types next to a job.
NICKNAMES = {"rtx 6000", "pro 6000", "g5", "grace hopper", "blackwell ultra"}


def test_every_card_the_catalog_knows_is_read_as_a_card() -> None:
    from planner.catalog.gpus import all_gpus, resolve_gpu

    for card in all_gpus():
        for alias in set(card.aliases) - NICKNAMES:
            fields = _fields(f"7b lora on {alias}")
            assert "gpu" in fields and "model" not in fields, alias
            resolved = resolve_gpu(fields["gpu"])
            assert resolved is not None and resolved.chip_family == card.chip_family, alias


@pytest.mark.parametrize("text", ["lora epochs=3", "8b qlora epochs: 3"])
def test_the_a_ending_lora_is_not_an_article_before_epoch(text: str) -> None:
    assert _fields(text)["epochs"] == 3


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("8b lora bsz=4", {"micro_batch": 4}),
        ("8b lora mbs=2, gas=16", {"micro_batch": 2, "grad_accum": 16}),
        ("8b lora grad_acc 8", {"grad_accum": 8}),
        ("8b lora accumulation 4", {"grad_accum": 4}),
        ("8b lora 24 gigs vram", {"gpu_vram_gb": 24}),
        ("8b lora 12 gig card", {"gpu_vram_gb": 12}),
        ("8b lora 50 mil tokens", {"dataset_tokens": 50_000_000}),
        ("8b lora USD 200", {"budget_usd": 200}),
        ("8b lora 4096 tok ctx", {"seq_len": 4096}),
        ("8b lora 80gb x 8", {"gpu_vram_gb": 80, "num_gpus": 8}),
        ("grpo 7b rollout n=16", {"num_generations": 16}),
        ("grpo 7b actor_rollout_ref.rollout.n=8", {"num_generations": 8}),
    ],
)
def test_chat_units_and_key_shorthands(text: str, expected: dict[str, int]) -> None:
    fields = _fields(text)
    assert {key: fields.get(key) for key in expected} == expected
    assert "epochs" not in fields


@pytest.mark.parametrize(
    ("text", "model", "method"),
    [
        ("llama3_1/8B_lora_single_device 4090", "llama3.1 8b", "lora"),
        ("llama2/7B_full_low_memory 3090", "llama2 7b", "full"),
        ("qwen2_5 7b lora 4090", "qwen2.5 7b", "lora"),
    ],
)
def test_torchtune_config_names_and_underscored_versions(
    text: str, model: str, method: str
) -> None:
    fields = _fields(text)
    assert (fields["model"], fields["method"]) == (model, method)


def test_a_torchtune_recipe_names_the_method() -> None:
    assert _fields("tune run lora_finetune_single_device 8b 4090")["method"] == "lora"


@pytest.mark.parametrize(
    "text",
    ["2张3090全参微调7b，内存128G", "内存有256G，8张A100 40G，全参70b", "7b lora 32g内存 4090"],
)
def test_chinese_host_memory_before_or_after_the_amount_is_not_vram(text: str) -> None:
    assert _fields(text).get("gpu_vram_gb") in (None, 40)
