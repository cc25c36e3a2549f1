"""Parameter counts from config.json, layer by layer, against published figures; the 2026 catalog
by name; out-of-scope and did-you-mean answers; `gpuplan models`."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from adapters.cli import main
from planner.catalog.architecture import layer_types
from planner.catalog.models import (
    ModelArch,
    all_models,
    arch_from_hf_config,
    embedding_params,
    generic_model,
    get_model,
    resolve_model,
)
from planner.errors import PlanningError
from planner.estimate.memory import estimate_memory
from planner.parsing import parse
from planner.planner import make_plan
from planner.resolve.defaults import resolve
from planner.spec import JobSpec, Sharding

CATALOG = Path(__file__).resolve().parents[1] / "planner" / "data" / "models.json"


def _within_published(counted: float, published: float) -> bool:
    """Within 5 %, or inside the rounding of a whole-billion nominal figure ('3B' = 2.5–3.5B:
    names such as 'A3B' and model cards round)."""
    if abs(counted - published) <= 0.05 * published:
        return True
    return published % 1e9 == 0 and abs(counted - published) <= 0.5e9 * 1.05


def _active_conventions(arch: ModelArch) -> list[float]:
    """Active per token with embeddings and head (DeepSeek), without the input embedding (a
    lookup: OpenAI's gpt-oss figures), and without both (non-embedding)."""
    one = arch.vocab_size * arch.hidden_size
    return [arch.active_params, arch.active_params - one, arch.active_params - 2 * one]


PUBLISHED = [arch for arch in all_models() if arch.published_total]
PUBLISHED_MOE = [arch for arch in PUBLISHED if arch.is_moe and arch.published_active]


def test_at_least_25_models_are_checked_against_published_totals() -> None:
    assert len(PUBLISHED) >= 25
    assert len(PUBLISHED_MOE) >= 10


@pytest.mark.parametrize("arch", PUBLISHED, ids=lambda a: a.key)
def test_total_matches_the_published_total(arch: ModelArch) -> None:
    assert _within_published(arch.total_params, arch.published_total or 0), (
        f"{arch.total_params / 1e9:.2f}B vs {(arch.published_total or 0) / 1e9:.2f}B"
    )


@pytest.mark.parametrize("arch", PUBLISHED_MOE, ids=lambda a: a.key)
def test_moe_active_matches_the_published_active_in_one_convention(arch: ModelArch) -> None:
    published = arch.published_active or 0
    assert any(_within_published(c, published) for c in _active_conventions(arch))


@pytest.mark.parametrize(
    ("key", "total_b", "active_b"),
    [
        # architectures-2026.md §2.3 worked checks (embeddings and head in the active count).
        ("deepseek-v3", 671.0, 37.55),
        ("qwen3-30b-a3b", 30.53, 3.35),
        ("gpt-oss-20b", 20.91, 4.19),
        ("gpt-oss-120b", 116.8, 5.71),
        ("mixtral-8x7b", 46.7, 12.9),
    ],
)
def test_the_reference_worked_checks(key: str, total_b: float, active_b: float) -> None:
    arch = get_model(key)
    assert arch.total_params / 1e9 == pytest.approx(total_b, rel=0.005)
    assert arch.active_params / 1e9 == pytest.approx(active_b, rel=0.01)


def test_mla_attention_is_187m_per_deepseek_v3_layer() -> None:
    arch = get_model("deepseek-v3")
    attention = sum(g.params for g in arch.linears if g.target in ("q", "k", "v", "o"))
    assert attention / arch.num_layers / 1e6 == pytest.approx(187.1, abs=0.2)


def test_layer_types_follow_each_familys_rule() -> None:
    v3 = Counter(get_model("deepseek-v3").layer_types)
    assert v3 == {"mla+dense": 3, "mla+moe": 58}  # first_k_dense_replace = 3
    maverick = Counter(get_model("llama-4-maverick-17b-128e-instruct").layer_types)
    assert maverick["chunked+moe"] + maverick["nope+moe"] == 24  # interleave_moe_layer_step 2
    assert maverick["nope+dense"] + maverick["nope+moe"] == 12  # every 4th layer NoPE
    qwen35 = Counter(get_model("qwen3.5-35b-a3b").layer_types)
    assert qwen35 == {"linear+moe": 30, "full+moe": 10}  # Gated DeltaNet 3 : 1
    gemma = Counter(get_model("gemma-3-27b").layer_types)
    assert gemma["full+dense"] == 62 // 6  # 5 sliding : 1 global


@pytest.mark.parametrize("arch", all_models(), ids=lambda a: a.key)
def test_layer_type_lists_sum_to_the_layer_count(arch: ModelArch) -> None:
    assert len(arch.layer_types) == arch.num_layers
    assert sum(Counter(arch.layer_types).values()) == arch.num_layers
    assert arch.moe_layers == sum(t.endswith("+moe") for t in arch.layer_types)


QWEN2_MOE_LIKE = {
    "model_type": "qwen2_moe",
    "num_hidden_layers": 8,
    "hidden_size": 512,
    "intermediate_size": 1408,
    "moe_intermediate_size": 256,
    "shared_expert_intermediate_size": 1024,
    "num_attention_heads": 8,
    "num_key_value_heads": 2,
    "num_experts": 16,
    "num_experts_per_tok": 2,
    "decoder_sparse_step": 2,
    "mlp_only_layers": [7],
    "vocab_size": 1000,
    "tie_word_embeddings": False,
}


def test_an_unseen_config_follows_its_familys_formula() -> None:
    """Qwen2-MoE rules (§2.1/2.2): MoE where (i+1) % step == 0 and i not in mlp_only_layers;
    routed E·3·h·I_e, shared 3·h·I_s + h gate, router E·h; q/k/v biases."""
    arch = arch_from_hf_config(QWEN2_MOE_LIKE, "tiny-moe")
    h, layers = 512, 8
    moe_layers = [i for i in range(layers) if (i + 1) % 2 == 0 and i != 7]
    assert arch.moe_layers == len(moe_layers) == 3
    attention = h * 8 * 64 * 2 + 2 * h * 2 * 64 + (8 * 64 + 2 * 2 * 64)
    moe = 16 * 3 * h * 256 + 3 * h * 1024 + h + 16 * h
    dense = 3 * h * 1408
    norms = 2 * h
    expected = layers * (attention + norms) + 3 * moe + 5 * dense + h + 2 * 1000 * h
    assert arch.total_params == expected


def test_an_explicit_head_dim_is_not_hidden_over_heads() -> None:
    """Mistral Nemo: 32 heads × 128 = 4096 ≠ hidden 5120."""
    nemo = get_model("mistral-nemo-base-2407")
    q = next(g for g in nemo.linears if g.target == "q")
    assert (q.in_features, q.out_features) == (5120, 4096)
    assert nemo.params_b == pytest.approx(12.25, abs=0.01)


def test_vision_towers_are_counted_and_left_out_of_the_active_count() -> None:
    qwen_vl = get_model("qwen3-vl-8b-instruct")
    assert qwen_vl.vision_params > 0.5e9
    assert qwen_vl.total_params == pytest.approx(8_767_123_696, rel=0.001)
    scout = get_model("llama-4-scout-17b-16e-instruct")
    assert scout.active_params < scout.total_params - scout.vision_params


def _catalog_config(key: str) -> dict:
    entries = json.loads(CATALOG.read_text())["models"]
    return next(e["config"] for e in entries if e["key"] == key)


def test_mtp_layers_are_not_counted_for_hf_loading() -> None:
    """DeepSeek-V3 ships one MTP layer (num_nextn_predict_layers 1) that transformers drops on
    load: the count is the 671B main model either way."""
    config = _catalog_config("deepseek-v3")
    assert config["num_nextn_predict_layers"] == 1
    without = arch_from_hf_config({**config, "num_nextn_predict_layers": 0}, "no-mtp")
    assert without.total_params == get_model("deepseek-v3").total_params


def test_fused_experts_get_no_lora_and_stay_unquantised() -> None:
    qwen = get_model("qwen3-30b-a3b")
    assert qwen.fused_experts
    assert all(g.fused for g in qwen.linears if g.routed)
    deepseek = get_model("deepseek-v3")
    assert not deepseek.fused_experts


SHARED_2026_NAMES = [
    ("Llama 4 Scout 17B-16E Instruct", "llama-4-scout-17b-16e-instruct"),
    ("Llama 4 Scout", "llama-4-scout-17b-16e-instruct"),
    ("Llama4 Maverick", "llama-4-maverick-17b-128e-instruct"),
    ("unsloth/Llama-4-Scout-17B-16E-Instruct-unsloth-bnb-4bit", "llama-4-scout-17b-16e-instruct"),
    ("Qwen3 235B-A22B", "qwen3-235b-a22b"),
    ("千问3 235B-A22B", "qwen3-235b-a22b"),
    ("通义千问3-30B-A3B", "qwen3-30b-a3b"),
    ("K2", "kimi-k2-instruct"),
    ("Kimi K2", "kimi-k2-instruct"),
    ("月之暗面 K2", "kimi-k2-instruct"),
    ("GLM4.5 Air", "glm-4.5-air"),
    ("GLM-4.5", "glm-4.5"),
    ("DeepSeek V3", "deepseek-v3"),
    ("deepseek-ai/DeepSeek-V3", "deepseek-v3"),
    ("DeepSeek-R1", "deepseek-r1"),
    ("Phi-3.5-MoE", "phi-3.5-moe-instruct"),
    ("Phi-4-mini", "phi-4-mini-instruct"),
    ("mistralai/Mistral-Nemo-Base-2407", "mistral-nemo-base-2407"),
    ("Mistral Nemo", "mistral-nemo-base-2407"),
    ("Mistral Small 3.1", "mistral-small-3.1-24b-instruct-2503"),
    ("Qwen2.5-Coder-32B", "qwen2.5-coder-32b-instruct"),
    ("OLMo 2 13B", "olmo-2-1124-13b"),
    ("Codestral", "codestral-22b-v0.1"),
    ("Granite 3.3 8B", "granite-3.3-8b-instruct"),
    ("Qwen3-VL-8B-Instruct", "qwen3-vl-8b-instruct"),
    ("Llama 3.2 90B Vision", "llama-3.2-90b-vision-instruct"),
    ("Gemma 3 27B", "gemma-3-27b"),
]


@pytest.mark.parametrize(("name", "key"), SHARED_2026_NAMES)
def test_names_people_type_plan_their_model(name: str, key: str) -> None:
    plan = make_plan(parse(f"{name} qlora 2k ctx").spec)
    assert plan.model.key == key
    arch = get_model(key)
    if arch.is_moe:
        assert plan.model.active_params_b == pytest.approx(arch.active_params / 1e9, abs=0.001)


def _plans_as(name: str) -> str | None:
    try:
        return make_plan(parse(f"{name} qlora 2k ctx").spec).model.key
    except PlanningError:
        return None


def test_every_2026_decoder_plans_by_its_own_name() -> None:
    """Each model of model_configs_2026.json, asked for by its name, plans as itself."""
    entries = json.loads(CATALOG.read_text())["models"]
    new = [e for e in entries if e["table"] == "model_configs_2026.json"]
    assert len(new) >= 50
    assert [
        (e["name"], _plans_as(e["name"])) for e in new if _plans_as(e["name"]) != e["key"]
    ] == []


def test_display_names_of_the_whole_catalog_read_back() -> None:
    # Older entries' display names carry repo spellings ("stablelm-base-alpha-3B") that the
    # parser reads as family + size; a few resolve elsewhere, hence a rate.
    misread = [a.name for a in all_models() if _plans_as(a.name) != a.key]
    assert len(misread) <= 0.05 * len(all_models()), misread


def test_an_unknown_name_near_a_catalog_name_gets_did_you_mean() -> None:
    with pytest.raises(PlanningError) as caught:
        resolve_model("Llama 4 Scoot", None)
    assert "did you mean" in caught.value.message
    assert "Llama 4 Scout" in caught.value.message


def test_a_near_name_with_a_size_is_not_silently_generic() -> None:
    with pytest.raises(PlanningError) as caught:
        resolve_model("qwen3-coder-31b-a3b", None)
    assert "did you mean" in caught.value.message


@pytest.mark.parametrize("name", ["whisper large v3", "ModernBERT-base", "FLUX.1-dev"])
def test_encoders_speech_and_diffusion_are_plainly_out_of_scope(name: str) -> None:
    with pytest.raises(PlanningError) as caught:
        resolve_model(name, None)
    assert "out of scope" in caught.value.message


def _required(arch: ModelArch, **job: object) -> float:
    spec = JobSpec.model_validate({"method": "lora", "seq_len": 2048, **job})
    return estimate_memory(resolve(spec, arch), 1, Sharding.none).required_gib


MOE_MODELS = [a for a in all_models() if a.is_moe]


@pytest.mark.parametrize("arch", MOE_MODELS, ids=lambda a: a.key)
@pytest.mark.parametrize("method", ["lora", "qlora", "full"])
def test_moe_memory_is_never_below_a_dense_model_of_its_active_size(
    arch: ModelArch, method: str
) -> None:
    dense = generic_model(round(arch.active_params / 1e9, 3))
    assert _required(arch, method=method) >= _required(dense, method=method)


@settings(max_examples=40, deadline=None)
@given(
    experts=st.integers(min_value=2, max_value=64),
    more=st.integers(min_value=1, max_value=64),
    method=st.sampled_from(["lora", "qlora", "full"]),
    model_type=st.sampled_from(["qwen2_moe", "mixtral", "deepseek_v3"]),
)
def test_adding_experts_never_lowers_memory(
    experts: int, more: int, method: str, model_type: str
) -> None:
    def config(n: int) -> dict:
        return {
            **QWEN2_MOE_LIKE,
            "model_type": model_type,
            "num_experts": n,
            "num_experts_per_tok": 2,
        }

    fewer = arch_from_hf_config(config(experts), "fewer")
    many = arch_from_hf_config(config(experts + more), "more")
    assert many.total_params > fewer.total_params
    assert _required(many, method=method) >= _required(fewer, method=method)


def test_layer_types_of_a_raw_config_match_its_layer_count() -> None:
    assert len(layer_types(QWEN2_MOE_LIKE)) == QWEN2_MOE_LIKE["num_hidden_layers"]


def test_embeddings_follow_tying() -> None:
    tied = get_model("qwen3-vl-2b-instruct")
    assert embedding_params(tied) == tied.vocab_size * tied.hidden_size


def test_models_command_lists_total_active_context_and_source(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["models", "scout"]) == 0
    out = capsys.readouterr().out
    assert "Llama 4 Scout" in out and "108.64" in out and "17.17" in out
    assert main(["models", "--json", "moe"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert rows and all(r["active_params_b"] for r in rows if r["planned"] and r["kind"] == "moe")
    assert main(["models", "whisper"]) == 0
    assert "out of scope" in capsys.readouterr().out
    assert main(["models", "no-such-model-anywhere"]) == 1


def test_the_documented_model_table_is_the_generated_one() -> None:
    from planner.catalog.model_table import markdown_table, model_rows

    doc = (Path(__file__).resolve().parents[1] / "docs" / "method.md").read_text()
    start = doc.index("<!-- model table:")
    body = doc[doc.index("\n", start) + 1 : doc.index("<!-- end of model table -->")]
    assert body.strip() == markdown_table(model_rows()), "run: gpuplan models --markdown"


QWEN3_NEXT_LIKE = {
    "model_type": "qwen3_next",
    "num_hidden_layers": 4,
    "hidden_size": 256,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "head_dim": 64,
    "full_attention_interval": 4,
    "linear_num_key_heads": 2,
    "linear_key_head_dim": 32,
    "linear_num_value_heads": 4,
    "linear_value_head_dim": 32,
    "linear_conv_kernel_dim": 4,
    "num_experts": 8,
    "num_experts_per_tok": 2,
    "moe_intermediate_size": 64,
    "shared_expert_intermediate_size": 128,
    "decoder_sparse_step": 1,
    "mlp_only_layers": [],
    "intermediate_size": 512,
    "vocab_size": 1000,
    "tie_word_embeddings": False,
}


def test_an_unseen_gated_deltanet_config_follows_the_qwen3_next_formula() -> None:
    """architectures-2026.md §3.4: 3 Gated DeltaNet layers to 1 gated full-attention layer."""
    arch = arch_from_hf_config(QWEN3_NEXT_LIKE, "tiny-next")
    h = 256
    key_dim, value_dim, value_heads = 2 * 32, 4 * 32, 4
    gdn = (
        h * (2 * key_dim + 2 * value_dim)
        + h * 2 * value_heads
        + (2 * key_dim + value_dim) * 4
        + 2 * value_heads
        + 32
        + value_dim * h
    )
    full = h * 4 * 64 * 2 + 2 * h * 2 * 64 + 4 * 64 * h + 2 * 64
    moe = 8 * 3 * h * 64 + 8 * h + 3 * h * 128 + h
    expected = 3 * gdn + full + 4 * (moe + 2 * h) + h + 2 * 1000 * h
    assert arch.layer_types == ("linear+moe",) * 3 + ("full+moe",)
    assert arch.total_params == expected
    active_moe = 2 * 3 * h * 64 + 8 * h + 3 * h * 128 + h
    assert arch.active_params == expected - 4 * moe + 4 * active_moe
