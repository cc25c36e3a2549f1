"""Issue #21's readers on sentences of their own (not in the realistic set): what the user rules
out or takes back, sizes inside names, config keys, counts after the card, limits, time words,
and the one short question asked instead of a guess."""

from __future__ import annotations

import pytest

from planner.parsing import parse


@pytest.mark.parametrize(
    ("text", "fields"),
    [
        ("not full fine-tuning, qlora: 34b on 2x4090", {"method": "qlora", "params_b": 34}),
        ("13b, full FT would be overkill", {"params_b": 13}),
        ("fine-tune the 7b weights themselves, no lora", {"method": "full"}),
        ("we don't have an A100, just a 4090; 7b lora", {"gpu": "RTX 4090", "num_gpus": 1}),
        ("8b lora on 2xh100 instead of the a100", {"gpu": "H100", "num_gpus": 2}),
        ("不要全参，lora就够了，qwen2.5-7b", {"method": "lora"}),
        ("rather not use unsloth; 8b qlora with axolotl", {"framework": "axolotl"}),
    ],
)
def test_ruled_out_is_never_read_as_chosen(text: str, fields: dict) -> None:
    read = parse(text).fields
    for name, value in fields.items():
        assert read.get(name) == value, read
    assert "method" in fields or read.get("method") != "full"


@pytest.mark.parametrize(
    ("text", "fields", "said"),
    [
        ("13b lora, 2 epochs... sorry, I mean 5 epochs", {"epochs": 5}, "epochs 5"),
        ("7b qlora on a t4, oh wait, an l4", {"gpu": "L4", "num_gpus": 1}, "gpu L4"),
        ("qwen2.5 7b lora 4k ctx, no, 8k ctx", {"seq_len": 8192, "params_b": 7}, "seq len 8192"),
        ("7b lora，单卡3090，不对，两张3090", {"num_gpus": 2, "gpu": "RTX 3090"}, "num gpus 2"),
    ],
)
def test_a_correction_replaces_what_it_corrects_and_says_so(
    text: str, fields: dict, said: str
) -> None:
    result = parse(text)
    for name, value in fields.items():
        assert result.fields.get(name) == value, result.fields
    assert any(said in assumption for assumption in result.assumptions), result.assumptions


@pytest.mark.parametrize(
    ("text", "params_b"),
    [
        ("lora on acme-coder22b, 4k", 22),
        ("full ft of zz-1b5 on a 4090", 1.5),
        ("LoRA on NorthWind-70B-instruct with 2x H100", 70),
        ("a ~125M parameters model, full", 0.125),
        ("13亿参数的模型全参微调", 1.3),
    ],
)
def test_sizes_inside_names_and_parameter_counts(text: str, params_b: float) -> None:
    assert parse(text).fields["params_b"] == pytest.approx(params_b)


@pytest.mark.parametrize(
    ("text", "fields"),
    [
        ("A6000 48G*4, 13b lora.", {"gpu": "RTX A6000", "num_gpus": 4, "gpu_vram_gb": 48}),
        ("7b lora, 4090一张", {"gpu": "RTX 4090", "num_gpus": 1}),
        ("my A10G can do 7b qlora?", {"gpu": "A10G", "num_gpus": 1}),
        ("70b qlora on a pair of h100s", {"gpu": "H100", "num_gpus": 2}),
        ("7b lora, 500M tokens on h100 80gb (4 of them)", {"num_gpus": 4}),
        ("7b lora micro_batch_size=2 a100", {"micro_batch": 2, "gpu": "A100"}),
    ],
)
def test_counts_and_cards(text: str, fields: dict) -> None:
    read = parse(text).fields
    for name, value in fields.items():
        assert read.get(name) == value, read


@pytest.mark.parametrize(
    ("text", "fields"),
    [
        ("7b lora, responses must stay under 2k tokens", {"seq_len": 2048}),
        (
            "7b lora, 10k samples of 500-700 tokens per sample",
            {"seq_len": 700, "dataset_tokens": 6e6},
        ),
        ("7b lora, 2048 max_seq_length", {"seq_len": 2048}),
        ("7b lora, 1000 steps of batch 32 at 4k ctx", {"dataset_tokens": 1000 * 32 * 4096}),
        ("7b lora on 2xa100 for 12 hours", {"deadline_hours": 12}),
        ("7b lora, 96 GPU-hours on 8xh100", {"deadline_hours": 12, "num_gpus": 8}),
        ("7b lora, it ran for 30 hours on a 4090 last time", {}),
        ("7b lora, 预算200刀，必须在10小时以内", {"budget_usd": 200, "deadline_hours": 10}),
    ],
)
def test_limits_and_time_words(text: str, fields: dict) -> None:
    read = parse(text).fields
    for name, value in fields.items():
        assert read.get(name) == pytest.approx(value), read
    if not fields:
        assert "deadline_hours" not in read


@pytest.mark.parametrize(
    "text",
    ["13b lora, 200 GPU-hours on A100s", "7b full ft, 5000 steps of batch 128"],
)
def test_an_unsure_reading_asks_one_short_question(text: str) -> None:
    result = parse(text)
    assert result.spec is None and result.doubt and result.clarify == result.doubt
    assert result.doubt.endswith("?") and len(result.doubt) < 120


def test_a_lora_key_alone_changes_the_rank_not_the_method() -> None:
    assert parse("with --lora_r 32").fields == {"lora_rank": 32}
    assert parse("13b --lora_r 32").fields["method"] == "lora"
