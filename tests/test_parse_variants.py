"""Gaps a stress test of the reader found (PCIe/SXM/NVL boards, optimizer precision, epoch keys,
budgets in yuan, bare Apple M chips): each rule on several spellings."""

from __future__ import annotations

import re
from typing import Any

import pytest

from planner.catalog.gpus import GpuSpec, all_gpus, is_apple_silicon, read_gpu
from planner.parsing import parse
from planner.words import in_language

_FORM = re.compile(r"\b(PCIe|SXM\d?|NVL)\b")


def _fields(text: str) -> dict[str, Any]:
    result = parse(text)
    assert result.error is None
    return result.fields


def _spellings(gpu: GpuSpec) -> list[str]:
    """How people write a board: "H100 PCIe 80GB", "a100 80gb sxm4", "A100-SXM4-80GB"."""
    form = _FORM.search(gpu.name).group(1)
    family = re.search(r"\b([A-Z]\d{2,3})\b", gpu.name).group(1)
    memory = f"{gpu.marketed_gb:g}"
    return [
        f"{family} {form} {memory}GB",
        f"{family.lower()} {form.lower()} {memory}g",
        f"{family.lower()} {memory}gb {form.lower()}",
        f"4x NVIDIA {family}-{form.upper()}-{memory}GB",
    ]


_BOARDS = [gpu for gpu in all_gpus() if _FORM.search(gpu.name)]


@pytest.mark.parametrize("gpu", _BOARDS, ids=[gpu.key for gpu in _BOARDS])
def test_every_board_form_in_the_catalog_is_reachable_from_a_question(gpu: GpuSpec) -> None:
    for spelling in _spellings(gpu):
        written = _fields(f"lora llama 3 8b on {spelling}")["gpu"]
        match = read_gpu(written)
        assert match is not None and match.gpu.key == gpu.key, (spelling, written)


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ("8b lora on h100 pcie", "h100-pcie"),
        ("8b lora on h100 sxm", "h100-sxm"),
        ("8b lora on h100 nvl", "h100-nvl"),
        ("8b lora on h200 nvl", "h200-nvl"),
        ("8b lora on 2x a800 pcie", "a800-80g-pcie"),
        ("8b lora on v100 sxm2", "v100-16g-sxm2"),
        ("8b lora on l40s", "l40s"),
    ],
)
def test_a_form_without_memory_picks_that_board(text: str, key: str) -> None:
    assert read_gpu(_fields(text)["gpu"]).gpu.key == key


def test_two_forms_of_one_chip_are_a_comparison() -> None:
    result = parse("8b lora h100 pcie vs h100 sxm")
    assert result.fields["gpu"] == "H100 PCIe"
    assert [job.gpu for job in result.alternatives] == ["H100 SXM"]


@pytest.mark.parametrize(
    ("text", "optimizer"),
    [
        ("lora llama 3 8b on 4090 lion 8bit", "adamw_8bit"),
        ("full ft 1b 4090 8-bit lion", "adamw_8bit"),
        ("full ft 1b 4090 optim=lion_8bit", "adamw_8bit"),
        ("full ft 1b 4090 paged_lion_8bit", "paged_adamw_8bit"),
        ("full ft 1b 4090 lion", "sgd"),
        ("full ft 1b 4090 --optim lion_32bit", "sgd"),
        ("lora 8b 4090 adamw 8bit", "adamw_8bit"),
        ("lora 8b 4090 paged adamw 8-bit", "paged_adamw_8bit"),
    ],
)
def test_8bit_after_an_optimizer_is_the_optimizers_and_lion_says_how_it_was_read(
    text: str, optimizer: str
) -> None:
    result = parse(text)
    assert result.fields["optimizer"] == optimizer
    assert "quant" not in result.fields
    assert result.fields["method"] != "qlora"
    if "lion" in text:
        assert any("Lion" in said for said in result.assumptions)


def test_a_word_holding_lion_is_no_optimizer() -> None:
    assert "optimizer" not in _fields("lora 8b on 1 million samples, 4090")


@pytest.mark.parametrize("text", ["lion optimizer (8-bit)", "adamw optimizer 8bit", "adam (8-bit)"])
def test_bits_a_word_after_an_optimizer_name_are_its_own(text: str) -> None:
    fields = _fields(f"lora llama 3 8b on a 3090, {text}")
    assert fields["optimizer"] == "adamw_8bit"
    assert fields["method"] == "lora"


@pytest.mark.parametrize(
    ("text", "epochs", "num_gpus"),
    [
        ("llama 8b lora epochs 3 4090", 3, None),
        ("llama 8b lora epochs 3 4090s", 3, None),
        ("llama 8b lora epoch 3 4090 x2", 3, 2),
        ("7b lora, 3 epochs 2 4090s", 3, 2),
        ("7b lora 3 epochs 2 a100", 3, 2),
        ("8b lora 1.5 epochs 2 h100", 1.5, 2),
    ],
)
def test_a_number_next_to_the_epochs_key_is_the_epoch_count_and_the_next_one_the_cards(
    text: str, epochs: float, num_gpus: int | None
) -> None:
    fields = _fields(text)
    assert fields["epochs"] == epochs
    assert fields.get("num_gpus") == num_gpus


@pytest.mark.parametrize(
    "budget",
    [
        "预算 5000 元",
        "5000块预算",
        "2000 元以内",
        "RMB 3000",
        "¥2000",
        "￥2000",
        "CNY 1000",
        "budget 5000 rmb",
        "预算 3000 块",
    ],
)
def test_a_budget_in_yuan_is_not_converted_and_asks_for_dollars(budget: str) -> None:
    result = parse(f"qwen2.5 7b lora on 2块4090, {budget}")
    assert result.error is None and result.spec is not None
    assert "budget_usd" not in result.fields
    assert result.fields["num_gpus"] == 2
    assert any("US dollars" in str(note) for note in result.unread)


def test_the_yuan_note_speaks_chinese_to_a_chinese_question() -> None:
    note = parse("用lora微调qwen2.5 7b，一张4090，预算 5000 元").unread[0]
    assert "美元" in str(in_language(note, "zh"))


@pytest.mark.parametrize(
    ("text", "gpu"),
    [
        ("lora llama 8b on my M2 macbook", "Apple M2"),
        ("lora llama 8b on macbook air m2", "Apple M2"),
        ("qlora 7b on an M3 16gb macbook", "Apple M3"),
        ("lora 8b m4 mac mini", "Apple M4"),
        ("lora 8b on apple m1", "Apple M1"),
        ("M2 Pro mac mini lora 3b", "Apple M2 Pro"),
        ("lora 8b macbook pro m3 max 64gb", "Apple M3 Max"),
        ("lora 8b on my macbook pro", "Mac (Apple silicon)"),
    ],
)
def test_a_bare_m_chip_beside_a_mac_word_is_one_apple_machine(text: str, gpu: str) -> None:
    result = parse(text)
    assert result.fields["gpu"] == gpu
    assert result.alternatives == [] and result.unread == []
    assert is_apple_silicon(result.fields["gpu"])


def test_a_bare_m_in_a_model_name_is_no_mac() -> None:
    fields = _fields("bge-m3 lora on a 4090")
    assert fields["gpu"] == "RTX 4090"


def test_a_dotted_epochs_key_still_reads_its_value() -> None:
    assert (
        _fields("litgpt finetune_lora 1b --train.micro_batch_size 4 --train.epochs 2")["epochs"]
        == 2
    )
