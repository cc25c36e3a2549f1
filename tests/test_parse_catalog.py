"""The names the parser writes are ones the catalogs resolve: a model the user named plans with
that model's architecture, a card they named with that card."""

from __future__ import annotations

import pytest

from planner.catalog.gpus import resolve_gpu
from planner.catalog.models import resolve_model
from planner.errors import PlanningError
from planner.parsing import parse


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ("can I lora llama 3 8b?", "llama-3-8b"),
        ("llama370b qlora", "llama-3-70b"),
        ("l3.1-8b lora", "llama-3.1-8b"),
        ("Llama-2-13b qlora", "llama-2-13b"),
        ("mixtral 8x7b", "mixtral-8x7b"),
        ("8x22b qlora", "mixtral-8x22b"),
        ("qwen2.5-32B lora", "qwen2.5-32b"),
        ("Qwen3-30B-A3B lora", "qwen3-30b-a3b"),
        ("gemma-2-9b-it", "gemma-2-9b"),
        ("phi-3-mini lora", "phi-3-mini-4k"),
        ("DeepSeek-R1-Distill-Qwen-7B", "r1-distill-qwen-7b"),
        ("r1 distill llama 8b", "r1-distill-llama-8b"),
        ("gpt-oss-20b with unsloth", "gpt-oss-20b"),
        ("smollm2 135m full", "smollm2-135m"),
        ("unsloth/Meta-Llama-3.1-8B-bnb-4bit", "llama-3.1-8b"),
        ("mistralai/Mistral-7B-v0.1 lora", "mistral-7b-v0.1"),
    ],
)
def test_model_names_resolve_in_the_model_catalog(text: str, key: str) -> None:
    spec = parse(text).spec
    arch, _ = resolve_model(spec.model, spec.params_b)
    assert arch.key == key


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ("2x4090", "rtx4090"),
        ("rtx3090ti", "rtx3090ti"),
        ("8xA100 80G", "a100-80g"),
        ("4-A100-40g", "a100-40g"),
        ("V100(32GB)", "v100-32g"),
        ("4 * NVIDIA A10G", "a10g"),
        ("A6000", "rtx-a6000"),
        ("three L40s", "l40s"),
        ("single L4", "l4"),
        ("T4 colab", "t4"),
        ("H100", "h100"),
        ("H200", "h200"),
        ("MI300X", "mi300x"),
        ("RTX 6000 Ada", "rtx6000-ada"),
    ],
)
def test_gpu_names_resolve_in_the_gpu_catalog(text: str, key: str) -> None:
    card = resolve_gpu(parse(text).fields["gpu"])
    assert card is not None and card.key.startswith(key)


def test_catalog_names_read_back_as_their_own_model() -> None:
    # Every name and alias the model catalog lists, typed as a question, plans that model. A few
    # aliases are ambiguous in the catalog itself ("Qwen-7B" vs "qwen7b"), hence a rate.
    from planner.catalog.models import all_models

    names = [
        (arch.key, name)
        for arch in all_models()
        for name in (arch.name, *arch.aliases, arch.hf_id)
        if name and "(" not in name
    ]
    misread = []
    for key, name in names:
        spec = parse(f"{name} lora").spec
        try:
            resolved = spec and resolve_model(spec.model, spec.params_b)[0].key
        except PlanningError:
            resolved = None
        if resolved != key:
            misread.append((name, resolved))
    assert len(misread) <= 0.05 * len(names), misread
