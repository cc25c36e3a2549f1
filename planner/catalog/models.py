"""Model architectures: the catalog in planner/data/models.json, loose-name lookup, HF configs.

Every catalog entry holds a config.json (HF field names); parameter counts are computed from it
layer by layer (planner.catalog.architecture) so that every byte the memory model counts traces
back to a real matrix.
"""

from __future__ import annotations

import dataclasses
import difflib
import json
import math
import re
from dataclasses import dataclass
from functools import cache
from typing import Any

from planner.catalog.architecture import (
    TIED_BY_DEFAULT_TYPES,
    ConfigError,
    LinearGroup,
    ModelArch,
    embedding_params,
    frozen_tower_params,
    image_tokens,
    linear_params,
    positive_int,
    text_census,
    vision_tower_params,
    with_counts,
)
from planner.data_files import DATA_DIR
from planner.errors import PlanningError
from planner.messages import MODELS
from planner.words import Listing

__all__ = [
    "LinearGroup",
    "ModelArch",
    "embedding_params",
    "frozen_tower_params",
    "linear_params",
]

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

MODELS_JSON = DATA_DIR / "models.json"
# Words that name a variant, packaging or publisher rather than an architecture.
_NOISE_TOKENS = frozenset(
    {"hf", "instruct", "chat", "it", "base", "pt", "bnb", "4bit", "8bit", "gptq", "awq", "gguf"}
    | {"int4", "int8", "nf4", "meta", "sft", "dpo", "model", "unsloth", "fp16", "bf16"}
)
_SIZE_RE = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)\s*([bm])(?![a-z])", re.IGNORECASE)


def small_params(arch: ModelArch) -> int:
    """Parameters never quantised and kept in 16 bits or more: norms, routers, biases, convs,
    and the vision tower / unshaped towers (frozen_tower_params)."""
    return arch.other_params + frozen_tower_params(arch)


def largest_linear(arch: ModelArch, *, quantised_only: bool = False) -> int:
    """The biggest single matrix of the decoder (a fused expert tensor counts as one expert's
    matrix: that is the slice a grouped GEMM dequantises or reads at a time)."""
    sizes = [
        g.in_features * g.out_features for g in arch.linears if not (quantised_only and g.fused)
    ]
    return max(sizes, default=0)


def quantisable_linear_params(arch: ModelArch) -> int:
    """Linears bitsandbytes/GPTQ replace: every nn.Linear; fused 3-D expert parameters are not
    nn.Linear and stay 16-bit (architectures-2026.md §2.7)."""
    return sum(g.params for g in arch.linears if not g.fused)


def _squash(text: str) -> str:
    """Normalise a loose name: drop publisher, variant words and separators ('Llama-3-8B-Instruct'
    and 'meta-llama/Meta-Llama-3-8B' both become 'llama38b')."""
    last = text.strip().lower().split("/")[-1]
    tokens = [t for t in re.split(r"[\s_\-:]+", last) if t and t not in _NOISE_TOKENS]
    return "".join(tokens)


@dataclass(frozen=True, slots=True)
class OutOfScope:
    """A catalog model gpuplan knows but does not plan: encoders, speech and diffusion models,
    whose training memory is not the decoder memory model's (no causal-LM loss over a
    vocabulary; a UNet/DiT's activations follow image latents, not tokens)."""

    key: str
    name: str
    hf_id: str | None
    kind: str
    published_total: str | int | None
    reason: str
    source: str


@dataclass(frozen=True, slots=True)
class _Catalog:
    """The catalog's names and ids, read without counting any model: a question names one or
    two models, so each entry becomes a ModelArch (its config counted layer by layer, the
    costly part) only when asked for (get_model)."""

    entries: dict[str, dict[str, Any]]  # models.json's entries by key
    by_id: dict[str, str | OutOfScope]  # full HF ids, lower-case → a model's key
    by_name: dict[str, str | OutOfScope]  # squashed names → a model's key, curated entries first
    out_of_scope: tuple[OutOfScope, ...]

    def found(self, value: str | OutOfScope) -> ModelArch | OutOfScope:
        return value if isinstance(value, OutOfScope) else get_model(value)

    def display_name(self, value: str | OutOfScope) -> str:
        return value.name if isinstance(value, OutOfScope) else self.entries[value]["name"]


def arch_from_entry(entry: dict[str, Any]) -> ModelArch:
    """A catalog entry: its config counted layer by layer, with the catalog's names; a
    published context window (`max_context`, sourced) replaces the config's position limit."""
    arch = arch_from_hf_config(
        entry["config"],
        entry["name"],
        key=entry["key"],
        hf_id=entry.get("hf_id"),
        family=entry.get("family"),
        kind=entry.get("kind"),
        source=entry["source"],
        aliases=tuple(entry.get("aliases", ())),
        ids=tuple(entry.get("ids", ())),
        published=(entry.get("published_total"), entry.get("published_active")),
        unshaped_params=entry.get("unshaped_params", 0),
    )
    published = entry.get("max_context")
    return dataclasses.replace(arch, max_context=published) if published else arch


@cache
def _catalog() -> _Catalog:
    raw = json.loads(MODELS_JSON.read_text(encoding="utf-8"))
    entries = {entry["key"]: entry for entry in raw["models"]}
    out_of_scope = tuple(
        OutOfScope(
            key=e["key"],
            name=e["name"],
            hf_id=e.get("hf_id"),
            kind=e["kind"],
            published_total=e.get("published_total"),
            reason=e["reason"],
            source=e["source"],
        )
        for e in raw.get("out_of_scope", ())
    )
    # Every entry names its hf_id (tools/build_model_catalog.py requires one), which its
    # ModelArch keeps, with the key, name, aliases and ids as written here.
    by_id: dict[str, str | OutOfScope] = {}
    by_name: dict[str, str | OutOfScope] = {}
    for key, entry in entries.items():
        for model_id in (entry["hf_id"], *entry.get("ids", ())):
            by_id.setdefault(model_id.lower(), key)
    for other in out_of_scope:
        if other.hf_id:
            by_id.setdefault(other.hf_id.lower(), other)
    # Curated names first so that e.g. 'qwen7b' stays Qwen2.5-7B rather than the 2023 Qwen-7B.
    for key, entry in entries.items():
        for name in (key, entry["name"], *entry.get("aliases", ())):
            by_name.setdefault(_squash(name), key)
    for key, entry in entries.items():
        for model_id in (entry["hf_id"], *entry.get("ids", ())):
            by_name.setdefault(_squash(model_id), key)
    for other in out_of_scope:
        for name in (other.key, other.name, other.hf_id or ""):
            if name:
                by_name.setdefault(_squash(name), other)
    return _Catalog(entries, by_id, by_name, out_of_scope)


@cache
def get_model(key: str) -> ModelArch:
    return arch_from_entry(_catalog().entries[key])


def all_models() -> list[ModelArch]:
    return [get_model(key) for key in _catalog().entries]


def out_of_scope_models() -> list[OutOfScope]:
    return list(_catalog().out_of_scope)


@cache
def model_names() -> list[str]:
    """Display names, HF ids and common aliases: for autocomplete and for the parser."""
    names: list[str] = []
    for arch in all_models():
        names += [arch.name, *arch.aliases]
        names += [m for m in (arch.hf_id, *arch.ids) if m]
    return list(dict.fromkeys(names))


def lookup_model(name: str) -> ModelArch | None:
    """Exact HF id, then a loosely written name; None when the catalog does not know it or does
    not plan it (out_of_scope says why)."""
    found = _lookup(name)
    return found if isinstance(found, ModelArch) else None


def _lookup(name: str) -> ModelArch | OutOfScope | None:
    catalog = _catalog()
    text = name.strip()
    key = text.lower()
    found = catalog.by_id.get(key) or (key if key in catalog.entries else None)
    found = found or catalog.by_name.get(_squash(text))
    return catalog.found(found) if found is not None else None


def out_of_scope(name: str) -> OutOfScope | None:
    """The catalog's encoder/speech/diffusion entry a name means, if it means one."""
    found = _lookup(name)
    return found if isinstance(found, OutOfScope) else None


# A squashed name this short, or a bare size ("405b", "8x7b"), is left to the size readers.
_SIZE_ONLY = re.compile(r"(?:\d+x)?\d+(?:\.\d+)?[bm]?")


@cache
def names_in_text() -> dict[str, str]:
    """Squashed catalog names → the display name to plan, for finding a model named without a
    size ("Kimi K2", "GLM4.5 Air", "Llama4 Maverick", "千问3 235b") inside free text."""
    catalog = _catalog()
    return {
        squashed: catalog.display_name(found)
        for squashed, found in catalog.by_name.items()
        if len(squashed) >= 2 and not _SIZE_ONLY.fullmatch(squashed)
    }


def squash(text: str) -> str:
    """The loose form names are compared in (publisher, variant words and separators dropped)."""
    return _squash(text)


# How alike a squashed name and a catalog name must be to be offered (difflib's ratio).
DID_YOU_MEAN_CUTOFF = 0.75


def closest_names(name: str, limit: int = 3) -> list[str]:
    """Display names of the catalog models whose names are most like `name` (did you mean)."""
    catalog = _catalog()
    wanted = _squash(name)
    if not wanted:
        return []
    close = difflib.get_close_matches(
        wanted, catalog.by_name, n=limit * 4, cutoff=DID_YOU_MEAN_CUTOFF
    )
    names = [catalog.display_name(catalog.by_name[found]) for found in close]
    return list(dict.fromkeys(names))[:limit]


def size_in_name_b(name: str) -> float | None:
    """The parameter count a name states ('13B', 'mystery-7b-chat', '360M'), in billions."""
    matches = _SIZE_RE.findall(name)
    if not matches:
        return None
    number, unit = matches[-1]
    return float(number) / (1000.0 if unit.lower() == "m" else 1.0)


# "-A3B", "A22B": the active parameters an MoE's name states (Qwen3-30B-A3B, Qwen3-Next-80B-A3B).
_ACTIVE_IN_NAME = re.compile(r"(?<![a-z0-9])a(\d+(?:\.\d+)?)b(?![a-z0-9])", re.IGNORECASE)


def active_in_name_b(name: str) -> float | None:
    """The active parameter count an MoE's name states, in billions."""
    found = _ACTIVE_IN_NAME.search(name)
    return float(found.group(1)) if found else None


def representative_for_size(params_b: float) -> ModelArch | None:
    """The named architecture a bare size stands for, when the size is a common nominal one."""
    for nominal_b, key in REPRESENTATIVE_BY_SIZE_B.items():
        if math.isclose(params_b, nominal_b, rel_tol=0.02):
            return get_model(key)
    return None


def generic_config(hidden: int) -> dict[str, Any]:
    """A dense Llama-3-style config.json of width `hidden`: head_dim 128, one layer per 128 of
    width (so depth grows with width), SwiGLU width 3.5 × hidden, 8 KV heads, a 128,256-token
    untied vocabulary."""
    heads = max(1, hidden // 128)
    return {
        "model_type": "llama",
        "num_hidden_layers": heads,
        "hidden_size": hidden,
        "intermediate_size": round(3.5 * hidden / 128) * 128,
        "num_attention_heads": heads,
        "num_key_value_heads": min(8, heads),
        "head_dim": 128,
        "vocab_size": 128_256,
        "tie_word_embeddings": False,
    }


# A generic MoE is laid out as Qwen3-MoE is (its config.json: 8 experts per token, no shared
# expert, every layer MoE), the family most "-A{n}B" names belong to; the expert count is the
# power of two that lets top-8 reach the stated active share (128 for Qwen3-30B-A3B's 1/10,
# 512 at most, Qwen3-Next's count).
GENERIC_MOE_PER_TOKEN = 8
GENERIC_MOE_MAX_EXPERTS = 512


@cache
def generic_moe_model(params_b: float, active_b: float) -> ModelArch:
    """An MoE of about `params_b` total and `active_b` active billion parameters: generic_config
    attention and embeddings at a width found by bisection on the active count, with the expert
    width that makes the total."""

    ratio = max(1.0, params_b / active_b)
    experts = min(GENERIC_MOE_MAX_EXPERTS, GENERIC_MOE_PER_TOKEN * 2 ** math.ceil(math.log2(ratio)))

    def build(hidden: int) -> ModelArch:
        dense = generic_config(hidden)
        layers, vocab = dense["num_hidden_layers"], dense["vocab_size"]
        attention = (
            hidden * 128 * (2 * dense["num_attention_heads"] + 2 * dense["num_key_value_heads"])
        )
        embeddings = 2 * vocab * hidden
        per_expert = (params_b * 1e9 - embeddings - layers * attention) / (
            layers * experts * 3 * hidden
        )
        config = {
            **dense,
            "model_type": "qwen3_moe",
            "num_local_experts": experts,
            "num_experts_per_tok": GENERIC_MOE_PER_TOKEN,
            "moe_intermediate_size": max(64, round(per_expert / 64) * 64),
        }
        return arch_from_hf_config(
            config,
            f"generic {params_b:g}B-A{active_b:g}B MoE",
            key=f"generic-{params_b:g}b-a{active_b:g}b",
            family="generic",
            source="generic Qwen3-MoE-style shape (top-8) scaled to the stated sizes",
        )

    target = active_b * 1e9
    candidates = [build(128 * k) for k in range(4, 65)]
    fitting = [a for a in candidates if a.params_b > 0.9 * params_b]
    return min(fitting or candidates, key=lambda a: abs(a.active_params - target))


@cache
def generic_model(params_b: float) -> ModelArch:
    """A dense Llama-3-style shape (generic_config) with about `params_b` billion parameters;
    the hidden size is the multiple of 128 whose count comes closest."""

    def build(hidden: int) -> ModelArch:
        return arch_from_hf_config(
            generic_config(hidden),
            f"generic {params_b:g}B (Llama-style)",
            key=f"generic-{params_b:g}b",
            family="generic",
            source="generic Llama-3-style shape scaled to the stated size",
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


def _either(names: list[str]) -> str:
    """ "a, b or c": the catalog's closest names, said as alternatives."""
    if len(names) == 1:
        return names[0]
    return MODELS("either", head=Listing(names[:-1], zh_sep="、"), last=names[-1])


def resolve_model(name: str | None, params_b: float | None) -> tuple[ModelArch, list[str]]:
    """The architecture for a loosely named model and/or a size, and what was assumed.

    Order: a known name; else a size (stated or inside the name) that is a common nominal size →
    its representative; else any size → a generic Llama-style shape of that size.
    """
    if name and _SIZE_RE.fullmatch(name.strip()):  # "13B" in the model field is a bare size
        name, params_b = None, params_b or size_in_name_b(name)
    if name and name.strip():
        found = _lookup(name)
        if isinstance(found, ModelArch):
            return _as_named(found, name)
        if found is not None:
            raise PlanningError(f"{found.name} is {found.reason}", field="model")
        derived = _derivative_of(name, params_b)
        if derived is not None:
            return derived, [MODELS("checkpoint_of", name=name.strip(), base=derived.name)]
        size_b = params_b or size_in_name_b(name)
        close = closest_names(name)
        # A size only inside a name that is close to a known one is likely a typo of it.
        if size_b is None or (close and params_b is None):
            hint = (
                MODELS("did_you_mean", names=_either(close))
                if close
                else MODELS("give_size", name=name.strip())
            )
            raise PlanningError(MODELS("unknown", name=name.strip(), hint=hint), field="model")
        return _generic_for(name.strip(), size_b, close)
    if params_b is None:
        raise PlanningError(MODELS("say_which"), "model")
    representative = representative_for_size(params_b)
    if representative is not None:
        return representative, [MODELS("size_as", size=params_b, model=representative.name)]
    arch = generic_model(round(params_b, 3))
    return arch, [MODELS("generic_size", size=params_b)]


# A catalog name this long, with its size in it, inside an unknown id is taken as its base, not
# a coincidence (a name without a size, "qwen3 coder", would pass a typo'd size silently).
DERIVATIVE_MIN_CHARS = 8
_SIZED_NAME = re.compile(r"\d(?:b|m)(?![a-z])|\d(?:b|m)a\d|e\d+b")


def _derivative_of(name: str, params_b: float | None) -> ModelArch | None:
    """The catalog model an unknown checkpoint id derives from, when the id's repository name
    contains a catalog name ("axolotl-ai-co/gpt-oss-120b-dequantized" → gpt-oss-120b): the
    longest such name, and only when a stated size agrees with it (within 25 %)."""
    repo = name.split("(")[0].strip().lower().split("/")[-1]
    squashed = "".join(t for t in re.split(r"[\s_\-:.]+", repo) if t)
    best_key: str | None = None
    best_len = 0
    for name_key, found in _catalog().by_name.items():
        plain = name_key.replace(".", "")
        if (
            isinstance(found, str)
            and len(plain) >= DERIVATIVE_MIN_CHARS
            and _SIZED_NAME.search(plain)
            and len(plain) > best_len
            and plain in squashed
        ):
            best_key, best_len = found, len(plain)
    if best_key is None:
        return None
    best = get_model(best_key)
    if params_b and abs(best.params_b - params_b) > 0.25 * best.params_b:
        return None
    return best


def _generic_for(name: str, size_b: float, close: list[str]) -> tuple[ModelArch, list[str]]:
    """A model the catalog does not know but whose size is stated: a generic shape of that size
    (an MoE when the name states its active parameters), the assumption said."""
    active_b = active_in_name_b(name)
    if active_b is not None and active_b < size_b:
        arch = generic_moe_model(round(size_b, 3), active_b)
        active = arch.active_params / 1e9
        values = {"size_b": arch.params_b, "active_b": active, "experts": arch.num_experts}
        shape = MODELS("shape.moe", **values)
    else:
        arch = generic_model(round(size_b, 3))
        shape = MODELS("shape.dense", size_b=arch.params_b)
    known = MODELS("known_near", names=_either(close)) if close else ""
    return arch, [MODELS("not_in_catalog", name=name, shape=shape, known=known)]


_VERSION = re.compile(r"(?<![\d.])(\d+\.\d+)(?![\d.])")


def _as_named(found: ModelArch, name: str) -> tuple[ModelArch, list[str]]:
    """A model asked for by a newer release's name that the catalog files under an older one
    with the same architecture (Llama 3.3 70B is Llama 3.1 70B's shape): shown by the name asked
    for, the shared architecture said."""
    asked = _VERSION.search(name.replace("-", " ").replace("_", " "))
    own = _VERSION.search(found.name)
    if asked is None or own is None or asked[1] == own[1]:
        return found, []
    newer = found.name.replace(own[1], asked[1])
    hf_id = next(
        (i for i in found.ids if asked[1] in i.replace("-", ".").replace("_", ".")), found.hf_id
    )
    shown = dataclasses.replace(found, name=newer, hf_id=hf_id)
    return shown, [MODELS("shares", newer=newer, base=found.name)]


def _published(value: object) -> float | None:
    """A published count ('109B', '36.7B', '1550M', 30532122624) in parameters; None when it
    is missing or only approximate ('~2B effective')."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    if isinstance(value, str):
        found = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([BM])\s*", value)
        if found:
            return float(found.group(1)) * (1e9 if found.group(2) == "B" else 1e6)
    return None


def arch_from_hf_config(
    config: dict,
    name: str,
    *,
    key: str | None = None,
    hf_id: str | None = None,
    family: str | None = None,
    kind: str | None = None,
    source: str | None = None,
    aliases: tuple[str, ...] = (),
    ids: tuple[str, ...] = (),
    published: tuple[object, object] = (None, None),
    unshaped_params: int = 0,
) -> ModelArch:
    """A ModelArch from a Hugging Face config.json (text_config for multimodal models, with the
    vision tower counted from vision_config), counted layer by layer."""
    if not isinstance(config, dict):
        raise PlanningError("config.json must be a JSON object", field="config")
    try:
        shape, census = text_census(config)
    except ConfigError as exc:
        raise PlanningError(str(exc), field="config") from None
    text = shape.config
    experts = positive_int(text, "num_local_experts", "num_experts", "n_routed_experts")
    moe = census.moe_layers > 0 and experts is not None and experts > 1
    tie = text.get("tie_word_embeddings", config.get("tie_word_embeddings"))
    if tie is None:
        tie = shape.model_type in TIED_BY_DEFAULT_TYPES
    if text.get("use_embedding_sharing") is True:
        tie = True
    num_kv = shape.kv_heads
    head_dim = shape.head_dim
    if text.get("kv_lora_rank"):  # MLA trains with K/V decompressed per head (§3.2)
        num_kv = shape.heads
        head_dim = positive_int(text, "qk_nope_head_dim") or head_dim
        head_dim += positive_int(text, "qk_rope_head_dim") or 0
    vision = vision_tower_params(config, shape.hidden)
    per_image = image_tokens(config)
    default_kind = "vlm" if vision else ("moe" if moe else "text")
    arch = ModelArch(
        key=key or _squash(name) or "custom",
        name=name,
        hf_id=hf_id or str(config.get("_name_or_path") or "") or None,
        family=family or shape.model_type or "custom",
        mlp="plain" if shape.plain else "gated",
        num_layers=shape.layers,
        hidden_size=shape.hidden,
        intermediate_size=shape.width,
        moe_intermediate_size=census.expert_width if moe else None,
        num_heads=shape.heads,
        num_kv_heads=num_kv,
        head_dim=head_dim,
        vocab_size=shape.vocab,
        tie_embeddings=tie is True,
        num_experts=experts if moe else None,
        experts_per_token=census.experts_per_token if moe else None,
        max_context=positive_int(text, "max_position_embeddings", "seq_length", "n_positions"),
        source=source or f"config.json supplied for {name}",
        aliases=aliases,
        ids=ids,
        kind=kind or default_kind,
        linears=census.linears,
        other_params=census.other_params,
        vision_params=vision,
        unshaped_params=unshaped_params,
        layer_types=census.layer_types,
        token_mlp_width=census.token_mlp_width,
        largest_layer_params=census.largest_layer_params,
        fused_experts=census.fused_experts,
        moe_layers=census.moe_layers,
        attention_window=positive_int(text, "sliding_window", "attention_chunk_size"),
        image_tokens=per_image.lm_tokens,
        vision_patches=per_image.patches,
        vision_hidden=per_image.hidden,
        vision_layers=per_image.layers,
        published_total=_published(published[0]),
        published_active=_published(published[1]),
    )
    return with_counts(arch)
