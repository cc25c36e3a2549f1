"""The model catalog: loose names, bare sizes, unknown models and HF configs."""

from __future__ import annotations

import pytest

from planner.catalog.models import (
    arch_from_hf_config,
    model_names,
    resolve_model,
)
from planner.errors import PlanningError


@pytest.mark.parametrize(
    ("name", "key"),
    [
        ("llama 3 8b", "llama-3-8b"),
        ("Llama-3-8B-Instruct", "llama-3-8b"),
        ("meta-llama/Meta-Llama-3.1-8B", "llama-3.1-8b"),
        ("unsloth/Meta-Llama-3.1-8B-bnb-4bit", "llama-3.1-8b"),
        ("qwen2.5-32b", "qwen2.5-32b"),
        ("mixtral 8x7b", "mixtral-8x7b"),
        ("mistral 7b", "mistral-7b-v0.1"),
        ("mistralai/Mixtral-8x7B-Instruct-v0.1", "mixtral-8x7b"),
        ("Qwen/Qwen-7B-Chat-Int4", "qwen-7b"),
        ("NousResearch/Llama-2-70b-hf", "llama-2-70b"),
        ("deepseek-ai/DeepSeek-R1-0528-Qwen3-8B", "qwen3-8b"),
        ("  GEMMA 2 9B  ", "gemma-2-9b"),
    ],
)
def test_loose_names_and_mirror_ids_resolve(name: str, key: str) -> None:
    arch, assumptions = resolve_model(name, None)
    assert arch.key == key
    assert assumptions == []


@pytest.mark.parametrize(
    ("size_b", "key"),
    [(13, "llama-2-13b"), (7, "llama-2-7b"), (70, "llama-3.1-70b"), (8, "llama-3.1-8b")],
)
def test_a_bare_size_names_its_representative_and_says_so(size_b: float, key: str) -> None:
    arch, assumptions = resolve_model(None, size_b)
    assert arch.key == key
    assert arch.name in assumptions[0]


def test_bare_size_in_the_model_field_reads_like_params() -> None:
    arch, assumptions = resolve_model("13B", None)
    assert arch.key == "llama-2-13b"
    assert assumptions


def test_unknown_name_with_a_size_plans_a_generic_shape_of_that_size() -> None:
    arch, assumptions = resolve_model("acme-wizard-11b-chat", None)
    assert arch.family == "generic"
    assert arch.params_b == pytest.approx(11, rel=0.05)
    assert "generic" in assumptions[0]


def test_unknown_name_without_a_size_is_a_model_error() -> None:
    with pytest.raises(PlanningError) as caught:
        resolve_model("blorp", None)
    assert caught.value.field == "model"


def test_neither_name_nor_size_is_a_model_error() -> None:
    with pytest.raises(PlanningError) as caught:
        resolve_model(None, None)
    assert caught.value.field == "model"


def test_parameter_counts_come_from_real_shapes() -> None:
    llama2, _ = resolve_model("llama 2 7b", None)
    assert llama2.total_params == 6_738_415_616  # published: 6.74B
    mixtral, _ = resolve_model("mixtral 8x7b", None)
    assert mixtral.params_b == pytest.approx(46.7, abs=0.05)
    assert mixtral.active_params / 1e9 == pytest.approx(12.9, abs=0.05)


def test_gqa_makes_k_and_v_narrow_and_plain_mlps_have_no_gate() -> None:
    llama3, _ = resolve_model("llama 3 8b", None)
    shapes = {g.target: (g.in_features, g.out_features, g.count) for g in llama3.linears}
    assert shapes["k"] == (4096, 1024, 32)
    assert "gate" in shapes
    falcon, _ = resolve_model("falcon 7b", None)
    assert "gate" not in {g.target for g in falcon.linears}


def test_model_names_cover_display_names_aliases_and_ids() -> None:
    names = model_names()
    assert "Mixtral-8x7B-v0.1" in names
    assert "llama 3 8b" in names
    assert "meta-llama/Llama-3.1-8B-Instruct" in names
    assert len(names) == len(set(names))


LLAMA_3_8B_CONFIG = {
    "model_type": "llama",
    "num_hidden_layers": 32,
    "hidden_size": 4096,
    "intermediate_size": 14336,
    "num_attention_heads": 32,
    "num_key_value_heads": 8,
    "vocab_size": 128256,
    "tie_word_embeddings": False,
    "max_position_embeddings": 8192,
}


def test_an_hf_config_gives_the_same_shape_as_the_catalog() -> None:
    arch = arch_from_hf_config(LLAMA_3_8B_CONFIG, "my-llama")
    catalog, _ = resolve_model("llama 3 8b", None)
    assert arch.total_params == catalog.total_params
    assert arch.max_context == 8192


def test_an_hf_moe_config_counts_every_expert() -> None:
    config = {**LLAMA_3_8B_CONFIG, "num_local_experts": 8, "num_experts_per_tok": 2}
    arch = arch_from_hf_config(config, "moe")
    assert arch.num_experts == 8
    assert arch.total_params > 5 * arch.active_params / 2


def test_an_incomplete_hf_config_names_what_is_missing() -> None:
    with pytest.raises(PlanningError) as caught:
        arch_from_hf_config({"hidden_size": 4096}, "broken")
    assert caught.value.field == "config"
    assert "num_hidden_layers" in caught.value.message
