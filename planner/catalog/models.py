"""Model architectures: the catalog in planner/data/models.json, loose-name lookup, HF configs.

Parameter counts are computed from the shapes (GQA, gated/plain MLPs, MoE experts, tied or untied
embeddings) so that every byte the memory model counts traces back to a real matrix.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field, replace
from functools import cache
from importlib import resources
from typing import Literal

from planner.errors import PlanningError

MlpKind = Literal["gated", "plain"]
LinearShape = tuple[int, int, int]  # (in_features, out_features, matrices per layer)

# A bare size names the model most people mean by it; a nominal size not listed here plans from a
# generic Llama-style shape. 13B is read as Llama-2-13B, as the seed guide does.
REPRESENTATIVE_BY_SIZE_B: dict[float, str] = {
    0.5: "qwen2.5-0.5b",
    1.0: "llama-3.2-1b",
    1.5: "qwen2.5-1.5b",
    2.0: "gemma-2-2b",
    3.0: "llama-3.2-3b",
    4.0: "qwen3-4b",
    7.0: "llama-2-7b",
    8.0: "llama-3.1-8b",
    9.0: "gemma-2-9b",
    13.0: "llama-2-13b",
    14.0: "qwen2.5-14b",
    27.0: "gemma-2-27b",
    32.0: "qwen2.5-32b",
    34.0: "yi-34b",
    70.0: "llama-3.1-70b",
    72.0: "qwen2.5-72b",
    405.0: "llama-3.1-405b",
}

# Words that name a variant, packaging or publisher rather than an architecture.
_NOISE_TOKENS = frozenset(
    {"hf", "instruct", "chat", "it", "base", "pt", "bnb", "4bit", "8bit", "gptq", "awq", "gguf"}
    | {"int4", "int8", "nf4", "meta", "sft", "dpo", "model", "unsloth", "fp16", "bf16"}
)
_SIZE_RE = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)\s*([bm])(?![a-z])", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class ModelArch:
    """One decoder-only transformer's shape. `intermediate_size` is one gate/up projection's
    width (per expert for MoE, where `moe_intermediate_size` wins when set)."""

    key: str
    name: str
    hf_id: str | None
    family: str
    mlp: MlpKind
    num_layers: int
    hidden_size: int
    intermediate_size: int
    num_heads: int
    num_kv_heads: int
    head_dim: int
    vocab_size: int
    tie_embeddings: bool
    max_context: int | None
    source: str
    moe_intermediate_size: int | None = None
    num_experts: int | None = None
    experts_per_token: int | None = None
    aliases: tuple[str, ...] = ()
    ids: tuple[str, ...] = ()
    total_params: int = field(default=0, compare=False)
    active_params: int = field(default=0, compare=False)

    @property
    def expert_width(self) -> int:
        return self.moe_intermediate_size or self.intermediate_size

    @property
    def params_b(self) -> float:
        return self.total_params / 1e9


def linear_shapes(arch: ModelArch, *, active_only: bool = False) -> dict[str, LinearShape]:
    """Per-layer linear layers by LoRA target name: (in, out, how many such matrices).

    q/o span num_heads·head_dim, k/v num_kv_heads·head_dim (GQA). Gated MLPs (SwiGLU/GeGLU)
    have gate, up and down; plain MLPs (GELU) only up and down. MoE repeats the MLP per expert.
    """
    h, q_out, kv_out = (
        arch.hidden_size,
        arch.num_heads * arch.head_dim,
        arch.num_kv_heads * arch.head_dim,
    )
    experts = arch.num_experts or 1
    if active_only and arch.num_experts:
        experts = arch.experts_per_token or 1
    width = arch.expert_width
    shapes: dict[str, LinearShape] = {
        "q": (h, q_out, 1),
        "k": (h, kv_out, 1),
        "v": (h, kv_out, 1),
        "o": (q_out, h, 1),
        "up": (h, width, experts),
        "down": (width, h, experts),
    }
    if arch.mlp == "gated":
        shapes["gate"] = (h, width, experts)
    return shapes


def linear_params_per_layer(arch: ModelArch, *, active_only: bool = False) -> int:
    """Σ in·out·matrices over `linear_shapes` (only the routed experts when `active_only`)."""
    return sum(i * o * n for i, o, n in linear_shapes(arch, active_only=active_only).values())


def embedding_params(arch: ModelArch) -> int:
    """Input embedding plus an untied lm_head (tied models share one V×h matrix)."""
    one = arch.vocab_size * arch.hidden_size
    return one if arch.tie_embeddings else 2 * one


def small_params(arch: ModelArch) -> int:
    """Norm weights (two per layer plus the final one) and MoE routers: kept in 16 bits or more."""
    router = arch.hidden_size * (arch.num_experts or 0)
    return arch.num_layers * (2 * arch.hidden_size + router) + arch.hidden_size


def _with_counts(arch: ModelArch) -> ModelArch:
    shared = embedding_params(arch) + small_params(arch)
    total = shared + arch.num_layers * linear_params_per_layer(arch)
    active = shared + arch.num_layers * linear_params_per_layer(arch, active_only=True)
    return replace(arch, total_params=total, active_params=active)


def _squash(text: str) -> str:
    """Normalise a loose name: drop publisher, variant words and separators ('Llama-3-8B-Instruct'
    and 'meta-llama/Meta-Llama-3-8B' both become 'llama38b')."""
    last = text.strip().lower().split("/")[-1]
    tokens = [t for t in re.split(r"[\s_\-:]+", last) if t and t not in _NOISE_TOKENS]
    return "".join(tokens)


@dataclass(frozen=True, slots=True)
class _Catalog:
    by_key: dict[str, ModelArch]
    by_id: dict[str, ModelArch]  # full HF ids, lower-case
    by_name: dict[str, ModelArch]  # squashed names, curated entries first


@cache
def _catalog() -> _Catalog:
    raw = json.loads(resources.files("planner").joinpath("data/models.json").read_text())
    by_key: dict[str, ModelArch] = {}
    by_id: dict[str, ModelArch] = {}
    by_name: dict[str, ModelArch] = {}
    for entry in raw["models"]:
        fields = {k: v for k, v in entry.items() if k not in {"aliases", "ids", "date"}}
        arch = _with_counts(
            ModelArch(**fields, aliases=tuple(entry["aliases"]), ids=tuple(entry["ids"]))
        )
        by_key[arch.key] = arch
        for model_id in (arch.hf_id or "", *arch.ids):
            if model_id:
                by_id.setdefault(model_id.lower(), arch)
    # Curated names first so that e.g. 'qwen7b' stays Qwen2.5-7B rather than the 2023 Qwen-7B.
    for arch in by_key.values():
        for name in (arch.key, arch.name, *arch.aliases):
            by_name.setdefault(_squash(name), arch)
    for arch in by_key.values():
        for model_id in (arch.hf_id or "", *arch.ids):
            if model_id:
                by_name.setdefault(_squash(model_id), arch)
    return _Catalog(by_key, by_id, by_name)


def get_model(key: str) -> ModelArch:
    return _catalog().by_key[key]


def all_models() -> list[ModelArch]:
    return list(_catalog().by_key.values())


@cache
def model_names() -> list[str]:
    """Display names, HF ids and common aliases: for autocomplete and for the parser."""
    names: list[str] = []
    for arch in all_models():
        names += [arch.name, *arch.aliases]
        names += [m for m in (arch.hf_id, *arch.ids) if m]
    return list(dict.fromkeys(names))


def lookup_model(name: str) -> ModelArch | None:
    """Exact HF id, then a loosely written name; None when the catalog does not know it."""
    catalog = _catalog()
    text = name.strip()
    found = catalog.by_id.get(text.lower()) or catalog.by_key.get(text.lower())
    return found or catalog.by_name.get(_squash(text))


def size_in_name_b(name: str) -> float | None:
    """The parameter count a name states ('13B', 'mystery-7b-chat', '360M'), in billions."""
    matches = _SIZE_RE.findall(name)
    if not matches:
        return None
    number, unit = matches[-1]
    return float(number) / (1000.0 if unit.lower() == "m" else 1.0)


def representative_for_size(params_b: float) -> ModelArch | None:
    """The named architecture a bare size stands for, when the size is a common nominal one."""
    for nominal_b, key in REPRESENTATIVE_BY_SIZE_B.items():
        if math.isclose(params_b, nominal_b, rel_tol=0.02):
            return get_model(key)
    return None


@cache
def generic_model(params_b: float) -> ModelArch:
    """A dense Llama-3-style shape with about `params_b` billion parameters.

    Llama proportions: head_dim 128, hidden = 128 × layers (so depth grows with width), SwiGLU
    width 3.5 × hidden, 8 KV heads, a 128,256-token untied vocabulary. The hidden size is the
    multiple of 128 whose count comes closest.
    """

    def build(hidden: int) -> ModelArch:
        heads = max(1, hidden // 128)
        return _with_counts(
            ModelArch(
                key=f"generic-{params_b:g}b",
                name=f"generic {params_b:g}B (Llama-style)",
                hf_id=None,
                family="generic",
                mlp="gated",
                num_layers=max(1, hidden // 128),
                hidden_size=hidden,
                intermediate_size=round(3.5 * hidden / 128) * 128,
                num_heads=heads,
                num_kv_heads=min(8, heads),
                head_dim=128,
                vocab_size=128_256,
                tie_embeddings=False,
                max_context=None,
                source="generic Llama-3-style shape scaled to the stated size",
            )
        )

    # The count grows with the width: bisect for the first width at or past the target, then
    # keep whichever neighbour is closer.
    target = params_b * 1e9
    low, high = 1, 400
    while low < high:
        middle = (low + high) // 2
        if build(128 * middle).total_params < target:
            low = middle + 1
        else:
            high = middle
    candidates = [build(128 * k) for k in {max(1, low - 1), low}]
    return min(candidates, key=lambda a: abs(a.total_params - target))


def resolve_model(name: str | None, params_b: float | None) -> tuple[ModelArch, list[str]]:
    """The architecture for a loosely named model and/or a size, and what was assumed.

    Order: a known name; else a size (stated or inside the name) that is a common nominal size →
    its representative; else any size → a generic Llama-style shape of that size.
    """
    if name and _SIZE_RE.fullmatch(name.strip()):  # "13B" in the model field is a bare size
        name, params_b = None, params_b or size_in_name_b(name)
    if name and name.strip():
        found = lookup_model(name)
        if found is not None:
            return found, []
        size_b = params_b or size_in_name_b(name)
        if size_b is None:
            raise PlanningError(
                f"unknown model {name.strip()!r}; give its size (e.g. '{name.strip()} 7B') "
                "or an HF config.json",
                field="model",
            )
        arch = generic_model(round(size_b, 3))
        return arch, [
            f"{name.strip()!r} is not in the catalog: planned as a generic dense Llama-style "
            f"model of {arch.params_b:.1f}B parameters"
        ]
    if params_b is None:
        raise PlanningError(
            "say which model (a name like 'llama 3 8b' or a size like '7B')", "model"
        )
    representative = representative_for_size(params_b)
    if representative is not None:
        return representative, [f"{params_b:g}B read as {representative.name}"]
    arch = generic_model(round(params_b, 3))
    return arch, [f"{params_b:g}B planned as a generic dense Llama-style model"]


_PLAIN_MLP_TYPES = frozenset({"falcon", "gpt_neox", "gpt2", "gptj", "phi", "stablelm_alpha", "mpt"})


# Shapes past these are typos or hostile input, not models.
MAX_CONFIG_DIMENSION = 10_000_000


def _positive_int(config: dict, *names: str) -> int | None:
    """The first of `names` holding a plausible positive integer (bools and strings are not)."""
    for key in names:
        value = config.get(key)
        if (
            isinstance(value, int)
            and not isinstance(value, bool)
            and 0 < value <= MAX_CONFIG_DIMENSION
        ):
            return value
    return None


def arch_from_hf_config(config: dict, name: str) -> ModelArch:
    """A ModelArch from a Hugging Face config.json (text_config used for multimodal models)."""
    if not isinstance(config, dict):
        raise PlanningError("config.json must be a JSON object", field="config")
    text = config.get("text_config") if isinstance(config.get("text_config"), dict) else config
    required = {
        "num_hidden_layers": _positive_int(text, "num_hidden_layers", "n_layer", "num_layers"),
        "hidden_size": _positive_int(text, "hidden_size", "n_embd", "d_model"),
        "num_attention_heads": _positive_int(text, "num_attention_heads", "n_head"),
        "vocab_size": _positive_int(text, "vocab_size", "padded_vocab_size"),
    }
    missing = [label for label, value in required.items() if value is None]
    if missing:
        raise PlanningError(f"config.json lacks a usable {', '.join(missing)}", field="config")
    layers, hidden, heads, vocab = (int(v or 0) for v in required.values())
    model_type = str(text.get("model_type", ""))
    plain = model_type in _PLAIN_MLP_TYPES
    width = _positive_int(text, "intermediate_size", "ffn_hidden_size", "n_inner")
    width = width or (4 if plain else 3) * hidden
    if model_type == "qwen":  # Qwen1 stores gate+up together
        width = max(1, width // 2)
    experts = _positive_int(text, "num_local_experts", "num_experts", "n_routed_experts")
    moe = experts is not None and experts > 1
    return _with_counts(
        ModelArch(
            key=_squash(name) or "custom",
            name=name,
            hf_id=str(config.get("_name_or_path") or "") or None,
            family=model_type or "custom",
            mlp="plain" if plain else "gated",
            num_layers=layers,
            hidden_size=hidden,
            intermediate_size=width,
            moe_intermediate_size=_positive_int(text, "moe_intermediate_size") if moe else None,
            num_heads=heads,
            num_kv_heads=_positive_int(
                text, "num_key_value_heads", "multi_query_group_num", "num_kv_heads"
            )
            or heads,
            head_dim=_positive_int(text, "head_dim", "kv_channels") or max(1, hidden // heads),
            vocab_size=vocab,
            tie_embeddings=text.get("tie_word_embeddings", config.get("tie_word_embeddings"))
            is True,
            num_experts=experts if moe else None,
            experts_per_token=(
                _positive_int(text, "num_experts_per_tok", "experts_per_token") if moe else None
            ),
            max_context=_positive_int(text, "max_position_embeddings", "seq_length", "n_positions"),
            source=f"config.json supplied for {name}",
        )
    )
