"""One-off: build planner/data/models.json from the shared reference tables.

Run from the repository root: `python tools/build_model_catalog.py --shared ../shared/data` (the
folder holding the shared reference tables; it is read only from the path given). Not shipped in
the package; the output file is, with the source of every entry. Every entry carries a config.json
under HF field names: copied from model_configs_2026.json, or written from the shape tables'
fields (models.json, model_shapes_more.json); the planner counts parameters from it layer by layer.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
OUT = REPO / "planner" / "data" / "models.json"
TODAY = dt.date.today().isoformat()


# Config fields that make two entries the same architecture.
SHAPE_KEY = (
    "num_hidden_layers",
    "hidden_size",
    "intermediate_size",
    "moe_intermediate_size",
    "num_attention_heads",
    "num_key_value_heads",
    "head_dim",
    "vocab_size",
    "num_local_experts",
)


def _id_letters(name: str) -> str:
    """An HF id's repo name reduced to lower-case letters, digits and dots, for prefix matching."""
    return re.sub(r"[^a-z0-9.]", "", name.split("/")[-1].lower())


def _same_shape_parent(model: dict, models: list[dict]) -> dict | None:
    """A fine-tune or mirror folds into the curated entry with its shape and most similar name."""
    shape = tuple(model["config"].get(f) for f in SHAPE_KEY)
    name = _id_letters(model["hf_id"])
    best, best_len = None, 0
    for other in models:
        if tuple(other["config"].get(f) for f in SHAPE_KEY) != shape:
            continue
        other_name = _id_letters(other["hf_id"])
        common = next(
            (i for i, (a, b) in enumerate(zip(name, other_name, strict=False)) if a != b),
            min(len(name), len(other_name)),
        )
        if common > best_len:
            best, best_len = other, common
    return best if best_len >= 3 else None


def _display(name: str) -> str:
    """'Llama-2-13b-hf' → 'Llama-2-13B': sizes read as people write them."""
    return re.sub(r"(?<=\d)b(?=$|-)", "B", name.removesuffix("-hf"))


def _clean_alias(alias: str) -> str:
    return alias.split("(")[0].strip()


def _curated_model_type(entry: dict) -> str:
    """The HF model_type a curated shape row stands for (it decides biases, norms, fused
    experts): the table names the architecture and family, not the model_type."""
    family, arch, moe = entry["family"], entry["architecture"], bool(entry["num_experts"])
    hf_id = entry["hf_id"].lower()
    if arch == "falcon_gelu":
        return "falcon"
    if arch == "gptoss":
        return "gpt_oss"
    if arch == "gemma_geglu":
        return {"gemma2": "gemma2", "gemma3": "gemma3_text"}.get(family, "gemma")
    if family == "qwen3":
        return "qwen3_moe" if moe else "qwen3"
    if family == "qwen2.5" or "distill-qwen" in hf_id:
        return "qwen2"
    if family == "mistral":
        return "mixtral" if moe else "mistral"
    if family == "phi":
        return "phi3"
    return "llama"


def _config(entry: dict, model_type: str, *, heads_key: str = "num_attention_heads") -> dict:
    """A config.json under HF names from a shape row (only the fields the row holds)."""
    config = {
        "model_type": model_type,
        "num_hidden_layers": entry["num_hidden_layers"],
        "hidden_size": entry["hidden_size"],
        "intermediate_size": entry["intermediate_size"],
        "num_attention_heads": entry[heads_key],
        "num_key_value_heads": entry["num_key_value_heads"] or entry[heads_key],
        "head_dim": entry["head_dim"] or entry["hidden_size"] // entry[heads_key],
        "vocab_size": entry["vocab_size"],
        "tie_word_embeddings": bool(entry["tie_word_embeddings"]),
    }
    experts = entry.get("num_experts")
    if experts:
        config["num_local_experts"] = experts
        config["num_experts_per_tok"] = entry.get("num_experts_per_tok") or entry.get(
            "experts_per_token"
        )
        if entry.get("moe_intermediate_size"):
            config["moe_intermediate_size"] = entry["moe_intermediate_size"]
    if entry.get("max_position_embeddings"):
        config["max_position_embeddings"] = entry["max_position_embeddings"]
    for field in ("attention_bias", "sliding_window"):
        if entry.get(field):
            config[field] = entry[field]
    if entry.get("qk_norm"):
        config["use_qk_norm"] = True
    return config


def _from_curated(entry: dict) -> dict:
    published = entry.get("total_params_published") or {}
    total = published.get("total") or published.get("nominal") or ""
    return {
        "key": entry["key"],
        "name": _display(entry["hf_id"].split("/")[-1]),
        "hf_id": entry["hf_id"],
        "family": entry["family"],
        "kind": "moe" if entry["num_experts"] else "text",
        "aliases": sorted({_clean_alias(a) for a in entry["aliases"]}),
        "ids": [],
        "source": "; ".join(entry["sources"][:2]),
        "table": "models.json",
        "date": TODAY,
        "published_total": _nominal(total),
        "published_active": _nominal(published.get("active") or _active_in(total)),
        "config": _config(entry, _curated_model_type(entry)),
    }


def _nominal(text: str | None) -> str | None:
    """'46.7B total / 12.9B active (…)' → '46.7B'; '7B (7.3B per …)' → '7B'."""
    found = re.match(r"\s*(\d+(?:\.\d+)?\s*[BM])\b", text or "")
    return found.group(1).replace(" ", "") if found else None


def _active_in(text: str) -> str | None:
    found = re.search(r"(\d+(?:\.\d+)?[BM]) active", text)
    return found.group(1) if found else None


def _more_model_type(model_id: str, entry: dict) -> str:
    notes = (entry.get("notes") or "").lower()
    name = model_id.lower()
    if "non-gated" in notes:
        for stem, model_type in (("phi", "phi"), ("stablelm", "stablelm_alpha")):
            if stem in name:
                return model_type
        return "gpt_neox"
    if "qwen/qwen-" in name:
        return "qwen"
    return "llama"


def _from_more(model_id: str, entry: dict) -> dict:
    notes = entry.get("notes") or ""
    intermediate = entry["intermediate_size"]
    context = re.search(r"(?:max_sequence_length|seq_length) (\d+)", notes)
    org, _, name = model_id.partition("/")
    config = _config(
        {**entry, "intermediate_size": intermediate, "max_position_embeddings": None},
        _more_model_type(model_id, entry),
    )
    if context:
        config["max_position_embeddings"] = int(context.group(1))
    return {
        "key": name.lower(),
        "name": _display(name),
        "hf_id": model_id,
        "family": re.split(r"[-_.\d]", name.lower())[0] or org.lower(),
        "kind": "moe" if entry["num_experts"] else "text",
        "aliases": [],
        "ids": [],
        "source": f"{entry['architecture_source']} (confidence: {entry['confidence']})",
        "table": "model_shapes_more.json",
        "date": TODAY,
        "published_total": None,
        "published_active": None,
        "config": config,
    }


# ---- model_configs_2026.json ----------------------------------------------------------------

DECODER_KINDS = ("text", "moe", "vlm")
OUT_OF_SCOPE_REASON = {
    "encoder": (
        "an encoder (bidirectional, trained with classification/embedding heads): gpuplan "
        "plans decoder LLM fine-tuning, whose memory is the causal-LM model's; encoder "
        "fine-tuning is out of scope"
    ),
    "speech": (
        "a speech encoder-decoder (audio frames in, text out): gpuplan plans decoder LLM "
        "fine-tuning; speech models are out of scope"
    ),
    "diffusion": (
        "an image diffusion model (UNet/DiT over image latents, not tokens): gpuplan plans "
        "decoder LLM fine-tuning; diffusion fine-tuning is out of scope"
    ),
}
# Names people type that the file's own names do not spell (English and Chinese), by HF id.
EXTRA_ALIASES: dict[str, tuple[str, ...]] = {
    "meta-llama/Llama-4-Scout-17B-16E-Instruct": (
        "llama 4 scout",
        "llama4 scout",
        "scout",
        "llama 4 scout 17b",
        "羊驼4 scout",
        "llama 4 109b",
    ),
    "meta-llama/Llama-4-Maverick-17B-128E-Instruct": (
        "llama 4 maverick",
        "llama4 maverick",
        "maverick",
        "llama 4 400b",
    ),
    "deepseek-ai/DeepSeek-V3": (
        "deepseek v3",
        "deepseek-v3",
        "dsv3",
        "深度求索 v3",
        "deepseek 671b",
    ),
    "deepseek-ai/DeepSeek-R1": ("deepseek r1", "deepseek-r1", "深度求索 r1", "r1 671b"),
    "deepseek-ai/DeepSeek-V3.1": ("deepseek v3.1", "deepseek-v3.1"),
    "deepseek-ai/DeepSeek-V3.2": ("deepseek v3.2", "deepseek-v3.2"),
    "deepseek-ai/DeepSeek-V2-Lite": ("deepseek v2 lite", "deepseek-v2-lite"),
    "deepseek-ai/DeepSeek-V2": ("deepseek v2", "deepseek-v2", "deepseek v2.5"),
    "moonshotai/Kimi-K2-Instruct": ("kimi k2", "k2", "kimi-k2", "月之暗面 k2", "kimi"),
    "zai-org/GLM-4.5": ("glm 4.5", "glm-4.5", "glm4.5", "智谱 glm-4.5", "glm 4.5 355b"),
    "zai-org/GLM-4.5-Air": ("glm 4.5 air", "glm-4.5-air", "glm4.5 air", "glm4.5-air"),
    "zai-org/GLM-4.7-Flash": ("glm 4.7 flash", "glm-4.7-flash", "glm4.7 flash"),
    "Qwen/Qwen3-Coder-480B-A35B-Instruct": ("qwen3 coder 480b", "qwen3-coder-480b"),
    "Qwen/Qwen3-Coder-30B-A3B-Instruct": ("qwen3 coder 30b", "qwen3-coder-30b", "qwen3 coder"),
    "Qwen/Qwen2.5-Coder-32B-Instruct": ("qwen2.5 coder 32b", "qwen2.5-coder-32b", "qwen coder 32b"),
    "mistralai/Mistral-Small-3.1-24B-Instruct-2503": (
        "mistral small 3.1",
        "mistral small 3.2",
        "mistral small 3",
        "mistral small 24b",
        "magistral small",
    ),
    "mistralai/Devstral-Small-2-24B-Instruct-2512": ("devstral", "devstral small", "devstral 2"),
    "mistralai/Ministral-3-3B-Instruct-2512": ("ministral 3 3b", "ministral 3b"),
    "mistralai/Mistral-Nemo-Base-2407": (
        "mistral nemo",
        "mistral-nemo",
        "nemo 12b",
        "mistral nemo 12b",
    ),
    "mistralai/Ministral-8B-Instruct-2410": ("ministral 8b", "ministral-8b"),
    "mistralai/Codestral-22B-v0.1": ("codestral", "codestral 22b"),
    "microsoft/Phi-3.5-mini-instruct": ("phi 3.5 mini", "phi-3.5-mini", "phi3.5 mini"),
    "microsoft/Phi-3.5-MoE-instruct": ("phi 3.5 moe", "phi-3.5-moe", "phi3.5 moe"),
    "microsoft/Phi-4-mini-instruct": ("phi 4 mini", "phi-4-mini", "phi4 mini"),
    "allenai/OLMo-2-1124-7B": ("olmo 2 7b", "olmo2 7b", "olmo-2-7b"),
    "allenai/OLMo-2-1124-13B": ("olmo 2 13b", "olmo2 13b", "olmo-2-13b"),
    "allenai/OLMo-2-0325-32B": ("olmo 2 32b", "olmo2 32b", "olmo-2-32b"),
    "allenai/Olmo-3-7B": ("olmo 3 7b", "olmo3 7b", "olmo-3-7b"),
    "allenai/Olmo-3.1-32B-Instruct": ("olmo 3.1 32b", "olmo 3 32b", "olmo3 32b"),
    "ibm-granite/granite-3.3-8b-instruct": ("granite 3.3 8b", "granite 8b", "granite-3.3-8b"),
    "ibm-granite/granite-3.1-2b-instruct": ("granite 3.1 2b", "granite 2b"),
    "CohereForAI/c4ai-command-r-v01": ("command r", "command-r", "command r 35b"),
    "CohereForAI/c4ai-command-r7b-12-2024": ("command r7b", "command-r7b", "command r 7b"),
    "internlm/internlm2_5-7b-chat": ("internlm 2.5 7b", "internlm2.5 7b", "书生 internlm2.5 7b"),
    "google/gemma-3n-E2B-it": ("gemma 3n e2b", "gemma3n e2b"),
    "google/gemma-3n-E4B-it": ("gemma 3n e4b", "gemma3n e4b"),
    "google/gemma-4-26B-A4B": ("gemma 4 26b", "gemma4 26b", "gemma 4 26b a4b"),
    "Qwen/Qwen3.5-35B-A3B": ("qwen3.5 35b", "qwen 3.5 35b a3b", "qwen3.5-35b-a3b"),
    # Llama 3.2 comes at 90B and 11B only as the vision models.
    "meta-llama/Llama-3.2-90B-Vision-Instruct": (
        "llama 3.2 90b vision",
        "llama 3.2 vision 90b",
        "llama 3.2 90b",
    ),
    "meta-llama/Llama-3.2-11B-Vision-Instruct": (
        "llama 3.2 11b vision",
        "llama 3.2 vision 11b",
        "llama 3.2 11b",
        "llama 3.2 vision",
    ),
}
# Names of the same model in Chinese (通义千问 = Qwen), applied to every Qwen entry.
CHINESE_FAMILY_NAMES = {"qwen": ("千问", "通义千问")}
# Entries of the 2026 file whose shape is already in the catalog under another key: folded in
# as an id so one architecture has one entry.
FOLD_INTO = {"meta-llama/Llama-3.3-70B-Instruct": "llama-3.1-70b"}
# Curated entries counted without the vision tower their checkpoints hold (Gemma 3 4B-27B are
# multimodal, pt and it alike): the 2026 file's full config replaces theirs.
REPLACE_CONFIG_OF = {
    "google/gemma-3-4b-it": "gemma-3-4b",
    "google/gemma-3-12b-it": "gemma-3-12b",
    "google/gemma-3-27b-it": "gemma-3-27b",
}
# Partial entries whose full shape is another catalog model's (the file's notes say so).
SAME_SHAPE_AS = {"Qwen/Qwen3-Coder-30B-A3B-Instruct": "qwen3-30b-a3b"}
# Releases their makers publish as another catalog model's architecture (the source says so):
# planned with that model's shapes under their own id.
SAME_SHAPE_IDS: dict[str, tuple[str, str] | tuple[str, str, tuple[str, ...]]] = {
    "zai-org/GLM-4.6": (
        "glm-4.5",
        "GLM-4.6 model card: GLM-4.5's 355B-A32B model with its context raised from 128K to 200K "
        "[uncertain: shape taken as GLM-4.5's config.json]",
        ("glm 4.6", "glm-4.6", "glm4.6", "智谱 glm-4.6"),
    ),
    "zai-org/GLM-4.7": (
        "glm-4.5",
        "GLM-4.7 model card: a 355B-A32B glm4_moe model [uncertain: shape taken as GLM-4.5's "
        "config.json]",
        ("glm 4.7", "glm-4.7", "glm4.7"),
    ),
    "mistralai/Magistral-Small-2506": (
        "mistral-small-3.1-24b-instruct-2503",
        "Magistral Small 1.0 model card: 'Built upon Mistral Small 3.1 (2503)'",
    ),
    "mistralai/Magistral-Small-2507": (
        "mistral-small-3.1-24b-instruct-2503",
        "Magistral Small 1.1 model card: 'Built upon Mistral Small 3.1 (2503)'",
    ),
    "Qwen/Qwen2.5-Coder-14B-Instruct": (
        "qwen2.5-14b",
        "Qwen2.5-Coder technical report (arXiv:2409.12186) Table 1: the Qwen2.5-14B architecture",
    ),
    "Qwen/Qwen2.5-Coder-14B": (
        "qwen2.5-14b",
        "Qwen2.5-Coder technical report (arXiv:2409.12186) Table 1: the Qwen2.5-14B architecture",
    ),
    "Qwen/Qwen2.5-Math-1.5B": (
        "qwen2.5-1.5b",
        "Qwen2.5-Math technical report (arXiv:2409.12122): initialised from Qwen2.5-1.5B",
    ),
    "Qwen/Qwen2.5-Math-7B": (
        "qwen2.5-7b",
        "Qwen2.5-Math technical report (arXiv:2409.12122): initialised from Qwen2.5-7B",
    ),
}


def _hf_names(raw: dict) -> dict:
    """A config written under non-HF field names (the file's `_format` says which), mapped to HF
    names by the mapping the file's notes give. Other configs are returned as they are."""
    fmt = str(raw.get("_format", ""))
    if fmt.startswith("DeepSeek inference ModelArgs"):
        return {
            "model_type": "deepseek_v2",
            "num_hidden_layers": raw["n_layers"],
            "hidden_size": raw["dim"],
            "intermediate_size": raw["inter_dim"],
            "moe_intermediate_size": raw["moe_inter_dim"],
            "first_k_dense_replace": raw["n_dense_layers"],
            "num_attention_heads": raw["n_heads"],
            "num_key_value_heads": raw["n_heads"],
            "n_routed_experts": raw["n_routed_experts"],
            "n_shared_experts": raw["n_shared_experts"],
            "num_experts_per_tok": raw["n_activated_experts"],
            "q_lora_rank": raw["q_lora_rank"],
            "kv_lora_rank": raw["kv_lora_rank"],
            "qk_nope_head_dim": raw["qk_nope_head_dim"],
            "qk_rope_head_dim": raw["qk_rope_head_dim"],
            "v_head_dim": raw["v_head_dim"],
            "vocab_size": raw["vocab_size"],
            "tie_word_embeddings": False,
            "max_position_embeddings": 163840,
        }
    if fmt.startswith("NeMo/Megatron"):
        language = next(v for k, v in raw.items() if k.startswith("language"))
        vision = next(v for k, v in raw.items() if k.startswith("vision"))
        projector = raw["projector"]
        return {
            "model_type": "qwen2_5_vl",
            "num_hidden_layers": language["num_layers"],
            "hidden_size": language["hidden_size"],
            "num_attention_heads": language["num_attention_heads"],
            "num_key_value_heads": language["num_query_groups"],
            "intermediate_size": language["ffn_hidden_size"],
            "vocab_size": language["vocab_size"],
            "max_position_embeddings": language.get("seq_length", 128000),
            "tie_word_embeddings": False,
            "vision_config": {
                "depth": vision["num_layers"],
                "hidden_size": vision["hidden_size"],
                "intermediate_size": vision["ffn_hidden_size"],
                "num_heads": vision["num_attention_heads"],
                "patch_size": vision["patch_dim"],
                "temporal_patch_size": vision["temporal_patch_size"],
                "spatial_merge_size": vision["spatial_merge_size"],
                "out_hidden_size": projector["hidden_size"],
            },
        }
    if fmt.startswith("Meta arch_args"):
        text = raw["nemo CrossAttentionTextConfig (11B)"]
        vision = raw["nemo CrossAttentionVisionConfig"]
        self_layers, cross = text["num_layers"], text["num_cross_attention_layers"]
        # HF mllama counts the cross-attention layers inside num_hidden_layers, one after every
        # fourth self-attention layer (the 90B file's list: 3, 8, 13, …).
        return {
            "model_type": "mllama",
            "text_config": {
                "model_type": "mllama_text_model",
                "num_hidden_layers": self_layers + cross,
                "cross_attention_layers": [3 + 5 * i for i in range(cross)],
                "hidden_size": text["hidden_size"],
                "intermediate_size": text["ffn_hidden_size"],
                "num_attention_heads": text["num_attention_heads"],
                "num_key_value_heads": raw["meta_arch_args (Llama-3.2-11B-Vision-Instruct)"][
                    "n_kv_heads"
                ],
                "vocab_size": text["vocab_size"],
                "max_position_embeddings": 131072,
                "tie_word_embeddings": False,
            },
            "vision_config": {
                "model_type": "mllama_vision_model",
                "num_hidden_layers": vision["num_layers"],
                "num_global_layers": vision["num_global_layers"],
                "hidden_size": vision["hidden_size"],
                "intermediate_size": 4 * vision["hidden_size"],
                "patch_size": 14,
                "image_size": 560,
                "vision_output_dim": 6 * vision["hidden_size"],
            },
        }
    config = {k: v for k, v in raw.items() if k != "_format"}
    text = config.get("text_config")
    if isinstance(text, dict) and isinstance(text.get("layer_types"), str):
        # Gemma 3n's fixture writes the pattern as an expression: spelled out per layer.
        found = re.fullmatch(r"\(\[(\w+)\]\*(\d+) \+ \[(\w+)\]\) \* (\d+)", text["layer_types"])
        if found:
            local, repeat, other, times = found.groups()
            text["layer_types"] = ([local] * int(repeat) + [other]) * int(times)
        else:
            del text["layer_types"]
    if isinstance(text, dict) and "activation_sparsity_pattern" in text:
        del text["activation_sparsity_pattern"]
    if isinstance(text, dict) and fmt.startswith("partial text_config"):
        text.setdefault("model_type", "gemma3n")
    return config


def _key_of(hf_id: str) -> str:
    return hf_id.split("/")[-1].split(" ")[0].lower()


def _name_of(model: dict) -> str:
    return re.sub(r"\s*\(.*\)\s*$", "", model["name"]).strip()


def _aliases_of(model: dict, hf_id: str) -> list[str]:
    return sorted({_name_of(model).lower(), *EXTRA_ALIASES.get(hf_id, ())})


def _chinese_aliases(hf_id: str) -> set[str]:
    """'Qwen/Qwen3-235B-A22B' → {'千问3235b-a22b', '通义千问3235b-a22b'}: the family in Chinese."""
    aliases = set()
    for stem, spellings in CHINESE_FAMILY_NAMES.items():
        short = hf_id.split("/")[-1].lower()
        if short.startswith(stem):
            aliases |= {f"{spelling}{short[len(stem) :]}" for spelling in spellings}
    return aliases


def _unshaped(model: dict, config: dict, counted: int) -> int:
    """What an exact published total holds beyond a partial config (unsourced towers)."""
    del config
    total = model.get("params_total")
    if not isinstance(total, int) or not str(model["config"].get("_format", "")).startswith(
        "partial"
    ):
        return 0
    return max(0, total - counted)


# Fields a partial config lacks, from the file's own notes (low confidence, said in the source).
PARTIAL_FILL: dict[str, dict] = {
    "ibm-granite/granite-3.1-2b-instruct": {
        "model_type": "granite",
        "num_attention_heads": 32,
        "num_key_value_heads": 8,
        "tie_word_embeddings": True,
    },
    # The notes: vocabulary from Aya-23 (same Cohere architecture); Cohere shares the embedding.
    "CohereForAI/c4ai-command-r-v01": {
        "model_type": "cohere",
        "vocab_size": 256000,
        "tie_word_embeddings": True,
    },
    # litgpt's Falcon3 rows: a Llama architecture.
    **{
        f"tiiuae/Falcon3-{size}-Base": {"model_type": "llama"} for size in ("1B", "3B", "7B", "10B")
    },
}


def _from_2026(model: dict, counted_total, config: dict | None = None) -> dict:
    hf_id = model["hf_id"].split(" ")[0]
    config = config or {**_hf_names(model["config"]), **PARTIAL_FILL.get(hf_id, {})}
    entry = {
        "key": _key_of(hf_id),
        "name": _name_of(model),
        "hf_id": hf_id,
        "family": model["family"].split(" ")[0],
        "kind": model["kind"],
        "aliases": _aliases_of(model, hf_id),
        "ids": [],
        "source": model["source"],
        "table": "model_configs_2026.json",
        "date": TODAY,
        "published_total": model.get("params_total"),
        "published_active": model.get("params_active"),
        "config": config,
    }
    if hf_id in PARTIAL_FILL:
        filled = ", ".join(sorted(PARTIAL_FILL[hf_id]))
        entry["source"] += f"; {filled} filled from the file's notes (low confidence)"
    unshaped = _unshaped(model, config, counted_total(entry))
    if unshaped:
        entry["unshaped_params"] = unshaped
        entry["source"] += (
            f"; {unshaped / 1e9:.2f}B of the published total are towers whose shapes the "
            "config does not give (held as frozen 16-bit weights)"
        )
    return entry


# Context windows the makers publish where config.json's max_position_embeddings is a position
# limit, not the trained window (the catalog's context check: gpuplan models).
PUBLISHED_CONTEXT: dict[str, tuple[int, str]] = {
    "mistralai/Mistral-Nemo-Base-2407": (
        131_072,
        "Mistral NeMo announcement (mistral.ai/news/mistral-nemo, 2024-07-18): 'a large context "
        "window of up to 128k tokens'; config.json's max_position_embeddings 1,024,000 is a "
        "position limit",
    ),
    "Qwen/Qwen3-Next-80B-A3B-Instruct": (
        262_144,
        "Qwen3-Next-80B-A3B-Instruct model card: context length 262,144 tokens natively",
    ),
    "baidu/ERNIE-4.5-21B-A3B-PT": (
        131_072,
        "ERNIE-4.5-21B-A3B-PT model card: context length 131,072 (128K)",
    ),
    "meta-llama/Llama-4-Scout-17B-16E-Instruct": (
        10_485_760,
        "Llama 4 model card (meta-llama/llama-models models/llama4/MODEL_CARD.md): 10M context",
    ),
    "meta-llama/Llama-4-Maverick-17B-128E-Instruct": (
        1_048_576,
        "Llama 4 model card (meta-llama/llama-models models/llama4/MODEL_CARD.md): 1M context",
    ),
}
# A config past a million positions is checked against what its maker publishes: most such
# values are RoPE limits (Mistral NeMo's 1,024,000), a few are real (Llama 4).
CONTEXT_TO_CHECK = 1_000_000

# Families the 2026 file lacks, from the transformers wheel's configuration classes.
TRANSFORMERS_CONFIGS = Path(__file__).resolve().parent / "transformers_configs.json"


def _from_transformers(model: dict) -> dict:
    """An entry of tools/transformers_configs.json (class defaults copied, source named)."""
    return {
        "key": _key_of(model["hf_id"]),
        "name": model["name"],
        "hf_id": model["hf_id"],
        "family": model["family"],
        "kind": model["kind"],
        "aliases": sorted({model["name"].lower(), *model["aliases"]}),
        "ids": list(model["ids"]),
        "source": model["source"],
        "table": "transformers_configs.json",
        "date": TODAY,
        "published_total": model["params_total"],
        "published_active": model["params_active"],
        "config": dict(model["config"]),
    }


def _out_of_scope(model: dict) -> dict:
    hf_id = model["hf_id"].split(" ")[0]
    return {
        "key": _key_of(hf_id),
        "name": _name_of(model),
        "hf_id": hf_id,
        "kind": model["kind"],
        "published_total": model.get("params_total"),
        "reason": OUT_OF_SCOPE_REASON[model["kind"]],
        "source": model["source"],
    }


def _counted_total(entry: dict) -> int:
    """The planner's own count of an entry (what the catalog will say), for partial configs."""
    sys.path.insert(0, str(REPO))
    from planner.catalog.models import arch_from_entry

    return arch_from_entry({**entry, "unshaped_params": 0}).total_params


def main(shared_data: Path) -> None:
    curated = json.loads((shared_data / "models.json").read_text())["models"]
    more = json.loads((shared_data / "model_shapes_more.json").read_text())["models"]
    new = json.loads((shared_data / "model_configs_2026.json").read_text())["models"]
    models = [_from_curated(m) for m in curated]
    by_id = {m["hf_id"].lower(): m for m in models}
    by_key = {m["key"]: m for m in models}
    pointers: list[tuple[str, str, str]] = []
    for raw_id, entry in more.items():
        model_id, _, note = raw_id.partition(" (")
        if entry.get("same_architecture_as"):
            pointers.append((model_id, entry["same_architecture_as"], note.rstrip(")")))
            continue
        if model_id.lower() in by_id or entry.get("num_hidden_layers") is None:
            continue  # already curated, or no verified shape to plan from
        model = _from_more(model_id, entry)
        if note:
            model["aliases"].append(note.rstrip(")"))
        parent = _same_shape_parent(model, models)
        if parent is not None:
            parent["ids"].append(model_id)
            by_id[model_id.lower()] = parent
            continue
        models.append(model)
        by_id[model_id.lower()] = model
        by_key[model["key"]] = model
    for model_id, target, note in pointers:
        canonical = by_id[target.lower()]
        if model_id.lower() != canonical["hf_id"].lower():
            canonical["ids"].append(model_id)
        if note:
            canonical["aliases"].append(note)
    out_of_scope = []
    for model in new:
        hf_id = model["hf_id"].split(" ")[0]
        if model["kind"] not in DECODER_KINDS:
            out_of_scope.append(_out_of_scope(model))
        elif hf_id in FOLD_INTO:
            by_key[FOLD_INTO[hf_id]]["ids"].append(hf_id)
        elif hf_id in REPLACE_CONFIG_OF:
            base = by_key[REPLACE_CONFIG_OF[hf_id]]
            full = _from_2026(model, _counted_total)
            base["ids"].append(hf_id)
            base["aliases"] = sorted({*base["aliases"], *full["aliases"]})
            base.update(
                kind=full["kind"],
                config=full["config"],
                source=f"{full['source']}; text tower also in {base['source']}",
                published_total=full["published_total"],
                published_active=full["published_active"],
            )
        elif hf_id in SAME_SHAPE_AS:
            base = by_key[SAME_SHAPE_AS[hf_id]]
            entry = _from_2026(model, _counted_total, base["config"])
            entry["source"] += f"; shape of {base['name']} (the file's notes: same architecture)"
            models.append(entry)
        else:
            models.append(_from_2026(model, _counted_total))
    for model in json.loads(TRANSFORMERS_CONFIGS.read_text())["models"]:
        models.append(_from_transformers(model))
    every = {m["key"]: m for m in models}
    for model_id, (key, why, *names) in SAME_SHAPE_IDS.items():
        every[key]["ids"].append(model_id)
        every[key]["source"] += f"; {model_id}: {why}"
        every[key]["aliases"] = sorted({*every[key]["aliases"], *(names[0] if names else ())})
    for entry in models:
        entry["config"] = {k: v for k, v in entry["config"].items() if v is not None}
        if entry["hf_id"] in PUBLISHED_CONTEXT:
            entry["max_context"], why = PUBLISHED_CONTEXT[entry["hf_id"]]
            entry["source"] += f"; context: {why}"
        context = entry["config"].get("max_position_embeddings") or 0
        if context > CONTEXT_TO_CHECK and "max_context" not in entry:
            raise SystemExit(f"{entry['hf_id']}: context {context:,} needs a published source")
        entry["aliases"] = sorted({*entry["aliases"], *_chinese_aliases(entry["hf_id"])})
    doc = {
        "about": (
            "Models gpuplan plans from. Built by tools/build_model_catalog.py from the "
            "project's reference tables (models.json: configs read from litgpt/mlc-llm/HF; "
            "model_shapes_more.json: config.json copies; model_configs_2026.json: config.json "
            "copies of the 2025-26 families). Each entry's config holds HF config.json fields "
            "(written from the shape tables where no copy was kept); parameters are counted "
            "from it layer by layer. table: the reference table the entry came from. "
            "published_total/active: the figure its source publishes. "
            "ids: fine-tunes, mirrors and quantised repacks with the same shape. out_of_scope: "
            "models known but not planned, and why."
        ),
        "built": TODAY,
        "models": models,
        "out_of_scope": out_of_scope,
    }
    OUT.write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n")
    print(f"wrote {len(models)} models and {len(out_of_scope)} out-of-scope entries to {OUT}")


def arguments(argv: list[str] | None = None) -> Path:
    parser = argparse.ArgumentParser(description="build planner/data/models.json")
    parser.add_argument(
        "--shared",
        type=Path,
        required=True,
        metavar="PATH",
        help="the shared reference tables' folder (models.json, model_shapes_more.json, "
        "model_configs_2026.json), e.g. ../shared/data",
    )
    shared = parser.parse_args(argv).shared
    if not shared.is_dir():
        parser.error(f"--shared {shared}: not a folder")
    return shared


if __name__ == "__main__":
    main(arguments())
