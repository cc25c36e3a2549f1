"""Parameter counts from a Hugging Face config.json, layer by layer.

Layers differ within one model (dense and MoE MLPs, sliding/global/chunked/NoPE attention,
Gated DeltaNet linear attention, MLA, cross-attention), so a model is a per-layer type list and
the matrices each layer type holds. Formulas follow /work/shared/docs/architectures-2026.md
(§1 blocks, §2 MoE, §3 attention, §7 vision towers), each read from the transformers modeling
file cited there. Everything is counted the way the HF loader builds the model for fine-tuning:
MTP layers (`num_nextn_predict_layers`, `mtp_num_hidden_layers`) are dropped on load and are not
counted (§2.4).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Literal

MlpKind = Literal["gated", "plain"]

# Families whose MLP is up → activation → down (no gate): GELU MLPs.
PLAIN_MLP_TYPES = frozenset(
    {"falcon", "gpt_neox", "gpt2", "gptj", "phi", "stablelm_alpha", "mpt", "starcoder2", "opt"}
)
# Families whose experts are one fused 3-D nn.Parameter per projection (gate_up_proj, down_proj)
# in current transformers: PEFT's LoRA cannot wrap them (transformers issue #36518) and
# bitsandbytes (which replaces nn.Linear) leaves them 16-bit (architectures-2026.md §2.7).
# DeepSeek/Kimi, GLM-4.5, Mixtral and Phi-3.5-MoE keep a ModuleList of nn.Linear experts.
# GLM-4.7-Flash (glm4_moe_lite) exists only in transformers 5, whose Glm4MoeLiteExperts holds
# gate_up_proj/down_proj as 3-D parameters (modeling_glm4_moe_lite.py, 5.25); axolotl's docs
# measure its QLoRA at ~127 GiB reserved until quantize_moe_experts quantises them (~23 GiB).
FUSED_EXPERT_TYPES = frozenset(
    {"gpt_oss", "qwen2_moe", "qwen3_moe", "qwen3_next", "qwen3_5_moe", "qwen3_vl_moe"}
    | {"llama4", "minimax_m2", "gemma4", "glm4_moe_lite"}
)
# q/k/v biases by default (Qwen1.5/2/2.5 `qkv_bias`, transformers' Qwen2Attention).
QKV_BIAS_TYPES = frozenset({"qwen2", "qwen2_moe", "qwen2_vl", "qwen2_5_vl", "qwen"})
# Per-head RMSNorm on q and k (2·head_dim per layer).
QK_NORM_TYPES = frozenset(
    {"qwen3", "qwen3_moe", "qwen3_next", "qwen3_5_moe", "qwen3_vl", "qwen3_vl_moe", "gemma3"}
    | {"gemma3_text"}
    | {"gemma3n", "gemma4", "olmo3", "cohere2"}
)
# Families whose config omits tie_word_embeddings because their default ties the lm_head.
TIED_BY_DEFAULT_TYPES = frozenset({"gemma", "gemma2", "gemma3", "gemma3_text", "gemma3n"})
# Four norms per layer (pre/post attention and MLP) instead of two.
FOUR_NORM_TYPES = frozenset({"gemma2", "gemma3", "gemma3_text", "gemma3n", "gemma4"})

MAX_CONFIG_DIMENSION = 100_000_000  # past this a shape is a typo or hostile input, not a model


@dataclass(frozen=True, slots=True)
class LinearGroup:
    """`count` matrices of in_features × out_features across the whole model, under one LoRA
    target name (q k v o gate up down). `routed`: one of a layer's routed experts (a token
    visits experts_per_token of num_experts). `fused`: stored as a 3-D nn.Parameter."""

    target: str
    in_features: int
    out_features: int
    count: int
    routed: bool = False
    fused: bool = False

    @property
    def params(self) -> int:
        return self.in_features * self.out_features * self.count


@dataclass(frozen=True, slots=True)
class ModelArch:
    """One model as the planner sees it: the summary shape the activation and attention terms
    read (hidden size, heads, the width a token's MLP passes through), and the parameter census
    the weight, gradient, optimizer and adapter terms read (`linears`, `other_params`,
    embeddings, the vision tower)."""

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
    kind: str = "text"  # text | moe | vlm | encoder | speech | diffusion
    linears: tuple[LinearGroup, ...] = field(default=(), compare=False)
    other_params: int = field(default=0, compare=False)  # norms, routers, biases, convs, sinks
    vision_params: int = field(default=0, compare=False)  # vision tower + projector
    unshaped_params: int = field(default=0, compare=False)  # published but not in the config
    layer_types: tuple[str, ...] = field(default=(), compare=False)
    token_mlp_width: int = field(default=0, compare=False)  # mean MLP width a token visits
    largest_layer_params: int = field(default=0, compare=False)  # one layer's linears, at most
    fused_experts: bool = False
    moe_layers: int = 0
    attention_window: int | None = None  # sliding window / attention chunk of local layers
    image_tokens: int = 0  # LM-sequence tokens one image (or tile) adds, markers included
    vision_patches: int = 0  # patches one image puts through the vision tower
    vision_hidden: int = 0
    vision_layers: int = 0
    published_total: float | None = field(default=None, compare=False)
    published_active: float | None = field(default=None, compare=False)
    # Compared (and hashed): two configs under one name differ in their counts.
    total_params: int = 0
    active_params: int = 0

    @property
    def expert_width(self) -> int:
        return self.moe_intermediate_size or self.intermediate_size

    @property
    def params_b(self) -> float:
        return self.total_params / 1e9

    @property
    def is_moe(self) -> bool:
        return bool(self.num_experts)

    @property
    def routed_expert_params(self) -> int:
        """All routed experts' matrices (what expert parallelism splits)."""
        return sum(g.params for g in self.linears if g.routed)


def linear_params(arch: ModelArch, *, active_only: bool = False) -> int:
    """Σ in·out·count over the decoder's linears; routed experts × k/E when `active_only`."""
    total = 0
    for group in arch.linears:
        if active_only and group.routed and arch.num_experts:
            total += group.params * (arch.experts_per_token or 1) // arch.num_experts
        else:
            total += group.params
    return total


def embedding_params(arch: ModelArch) -> int:
    """Input embedding plus an untied lm_head (tied models share one V×h matrix)."""
    one = arch.vocab_size * arch.hidden_size
    return one if arch.tie_embeddings else 2 * one


def frozen_tower_params(arch: ModelArch) -> int:
    """Parameters held 16-bit outside the decoder: the vision tower and projector, and what a
    published total holds beyond the sourced config (audio/vision encoders of partial configs)."""
    return arch.vision_params + arch.unshaped_params


def with_counts(arch: ModelArch) -> ModelArch:
    """Total = embeddings + head + Σ layers (linears, norms, routers) + towers (§2.3). Active
    (per text token, DeepSeek's convention: embeddings and head included) counts the routed
    experts a token visits (top-k) and the rest of the decoder whole; towers run per image,
    not per token, and are left out, as the published active figures leave them out."""
    shared = embedding_params(arch) + arch.other_params
    total = shared + linear_params(arch) + frozen_tower_params(arch)
    active = shared + linear_params(arch, active_only=True)
    return replace(arch, total_params=total, active_params=active)


# ---- reading a config ---------------------------------------------------------------------


class ConfigError(ValueError):
    """A config.json that cannot describe a model (the message names the field)."""


def positive_int(config: Mapping[str, Any], *names: str) -> int | None:
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


def text_config(config: Mapping[str, Any]) -> Mapping[str, Any]:
    """The language model's fields: `text_config` for multimodal configs, else the config."""
    nested = config.get("text_config")
    return nested if isinstance(nested, dict) else config


def model_type_of(config: Mapping[str, Any]) -> str:
    """The outer model_type for family rules (`llama4`, not `llama4_text`), falling back to
    the text config's."""
    outer = config.get("model_type")
    inner = text_config(config).get("model_type")
    value = outer if isinstance(outer, str) and outer else inner
    return str(value or "")


@dataclass
class _Shape:
    """The text tower's fields under their HF names, with family defaults applied."""

    model_type: str
    layers: int
    hidden: int
    heads: int
    kv_heads: int
    head_dim: int
    vocab: int
    width: int
    plain: bool
    config: Mapping[str, Any]

    def get(self, name: str, default: Any = None) -> Any:
        return self.config.get(name, default)

    def int_of(self, *names: str, default: int = 0) -> int:
        value = positive_int(self.config, *names)
        return default if value is None else value


def _shape(config: Mapping[str, Any]) -> _Shape:
    text = text_config(config)
    required = {
        "num_hidden_layers": positive_int(text, "num_hidden_layers", "n_layer", "num_layers"),
        "hidden_size": positive_int(text, "hidden_size", "n_embd", "d_model"),
        "num_attention_heads": positive_int(text, "num_attention_heads", "n_head"),
        "vocab_size": positive_int(text, "vocab_size", "padded_vocab_size"),
    }
    missing = [label for label, value in required.items() if value is None]
    if missing:
        raise ConfigError(f"config.json lacks a usable {', '.join(missing)}")
    layers, hidden, heads, vocab = (int(v or 0) for v in required.values())
    model_type = model_type_of(config)
    plain = model_type in PLAIN_MLP_TYPES or str(text.get("model_type", "")) in PLAIN_MLP_TYPES
    width = positive_int(text, "intermediate_size", "ffn_hidden_size", "n_inner")
    width = width or (4 if plain else 3) * hidden
    if model_type == "qwen":  # Qwen1 stores gate+up together
        width = max(1, width // 2)
    kv_heads = positive_int(text, "num_key_value_heads", "multi_query_group_num", "num_kv_heads")
    head_dim = positive_int(text, "head_dim", "kv_channels") or max(1, hidden // heads)
    return _Shape(
        model_type=model_type,
        layers=layers,
        hidden=hidden,
        heads=heads,
        kv_heads=kv_heads or heads,
        head_dim=head_dim,
        vocab=vocab,
        width=width,
        plain=plain,
        config=text,
    )


# ---- layer types ----------------------------------------------------------------------------


def attention_types(s: _Shape) -> list[str]:
    """Per-layer attention: full | sliding | chunked | nope | linear | mla | cross (§3)."""
    n = s.layers
    listed = s.get("layer_types")
    if s.get("kv_lora_rank"):
        return ["mla"] * n
    if isinstance(listed, list) and len(listed) == n and all(isinstance(t, str) for t in listed):
        names = {"full_attention": "full", "sliding_attention": "sliding"}
        names |= {"linear_attention": "linear", "chunked_attention": "chunked"}
        return [names.get(t, "full") for t in listed]
    if s.model_type in ("qwen3_next", "qwen3_5_moe", "qwen3_5"):
        interval = s.int_of("full_attention_interval", default=4)
        return ["full" if (i + 1) % interval == 0 else "linear" for i in range(n)]
    cross = s.get("cross_attention_layers")
    if isinstance(cross, list):
        return ["cross" if i in cross else "full" for i in range(n)]
    if s.model_type == "llama4":
        interval = s.int_of("no_rope_layer_interval", default=4)
        return ["nope" if (i + 1) % interval == 0 else "chunked" for i in range(n)]
    pattern = s.int_of("sliding_window_pattern", "layer_switch")
    if s.model_type == "gemma2":
        pattern = 2
    if s.model_type == "modernbert":
        pattern = s.int_of("global_attn_every_n_layers", default=1)
        return ["full" if i % pattern == 0 else "sliding" for i in range(n)]
    if pattern > 1 and s.get("sliding_window"):
        # Cohere2's global layers carry no positional embedding (NoPE).
        global_kind = "nope" if s.model_type == "cohere2" else "full"
        return [global_kind if (i + 1) % pattern == 0 else "sliding" for i in range(n)]
    return ["full"] * n


def mlp_types(s: _Shape, num_experts: int) -> list[str]:
    """Per-layer MLP: dense | moe, by each family's rule (§2.1)."""
    n = s.layers
    if num_experts <= 1:
        return ["dense"] * n
    if s.model_type == "llama4":
        listed = s.get("moe_layers")
        if isinstance(listed, list):
            moe = set(listed)
        else:
            step = s.int_of("interleave_moe_layer_step", default=1)
            moe = set(range(step - 1, n, step))
        return ["moe" if i in moe else "dense" for i in range(n)]
    if s.get("first_k_dense_replace") is not None or s.get("n_routed_experts"):
        first_dense = s.int_of("first_k_dense_replace")
        freq = s.int_of("moe_layer_freq", default=1)
        return ["moe" if i >= first_dense and i % freq == 0 else "dense" for i in range(n)]
    if s.get("decoder_sparse_step") is not None or s.get("mlp_only_layers") is not None:
        step = s.int_of("decoder_sparse_step", default=1)
        dense_only = set(s.get("mlp_only_layers") or [])
        return ["moe" if i not in dense_only and (i + 1) % step == 0 else "dense" for i in range(n)]
    return ["moe"] * n


def layer_types(config: Mapping[str, Any]) -> list[str]:
    """'attention+mlp' per decoder layer, e.g. 'linear+moe', 'mla+dense' (one per layer)."""
    s = _shape(config)
    experts = _experts(s)
    return [f"{a}+{m}" for a, m in zip(attention_types(s), mlp_types(s, experts), strict=True)]


def _experts(s: _Shape) -> int:
    return s.int_of("num_local_experts", "num_experts", "n_routed_experts")


# ---- per-layer blocks -----------------------------------------------------------------------


@dataclass
class _Census:
    """Matrices by (target, in, out, routed) and everything small, summed over layers."""

    matrices: dict[tuple[str, int, int, bool], int] = field(default_factory=dict)
    other: int = 0
    fused: bool = False

    def add(self, target: str, fan_in: int, fan_out: int, count: int = 1, routed: bool = False):
        if fan_in and fan_out and count:
            key = (target, fan_in, fan_out, routed)
            self.matrices[key] = self.matrices.get(key, 0) + count

    def groups(self) -> tuple[LinearGroup, ...]:
        return tuple(
            LinearGroup(t, i, o, n, routed=r, fused=r and self.fused)
            for (t, i, o, r), n in self.matrices.items()
        )


def _gqa(c: _Census, s: _Shape, kind: str) -> None:
    """GQA/MQA/MHA (§1): q and o span heads·d, k and v kv_heads·d; biases and qk-norm by
    family; gated attention (Qwen3-Next) doubles q; Gemma 4's global layers use their own head
    size and KV heads with K = V (no v_proj)."""
    h, d, heads, kv = s.hidden, s.head_dim, s.heads, s.kv_heads
    has_v = True
    if s.model_type == "gemma4" and kind == "full":
        d = s.int_of("global_head_dim", default=d)
        kv = s.int_of("num_global_key_value_heads", default=kv)
        has_v = not s.get("attention_k_eq_v", False)
    gate = 2 if s.get("attn_output_gate") or s.model_type == "qwen3_next" else 1
    c.add("q", h, heads * d * gate)
    c.add("k", h, kv * d)
    if has_v:
        c.add("v", h, kv * d)
    c.add("o", heads * d, h)
    if s.get("attention_bias") or s.get("qkv_bias") or s.model_type in QKV_BIAS_TYPES:
        c.other += heads * d * gate + (2 if has_v else 1) * kv * d
        if s.model_type == "gpt_oss":  # o_proj bias and one attention sink per head
            c.other += h + heads
    if s.model_type == "olmo2":  # q/k norms over the full projection width
        c.other += heads * d + kv * d
    elif s.model_type in QK_NORM_TYPES or (s.get("use_qk_norm") and s.model_type != "llama4"):
        c.other += 2 * d
    if kind == "cross":  # mllama: q/k norms and two tanh gates
        c.other += 2 * d + 2


def _mla(c: _Census, s: _Shape) -> None:
    """MLA (§3.2): q through a rank-r_q bottleneck (or one projection), kv through a
    (r_kv + d_rope) latent, decompressed per head; DeepSeek-V3.2's sparse-attention indexer."""
    h, heads = s.hidden, s.heads
    nope, rope = s.int_of("qk_nope_head_dim"), s.int_of("qk_rope_head_dim")
    v_dim, r_kv = s.int_of("v_head_dim"), s.int_of("kv_lora_rank")
    r_q = s.int_of("q_lora_rank")
    if r_q:
        c.add("q", h, r_q)
        c.add("q", r_q, heads * (nope + rope))
        c.other += r_q
    else:
        c.add("q", h, heads * (nope + rope))
    c.add("k", h, r_kv + rope)
    c.other += r_kv
    c.add("v", r_kv, heads * (nope + v_dim))
    c.add("o", heads * v_dim, h)
    index_heads, index_dim = s.int_of("index_n_heads"), s.int_of("index_head_dim")
    if index_heads and index_dim:
        c.add("q", r_q or h, index_heads * index_dim)
        c.add("k", h, index_dim)
        c.other += h * index_heads + 2 * index_dim


def _gated_deltanet(c: _Census, s: _Shape) -> None:
    """Gated DeltaNet (§3.4): in_proj_qkvz, in_proj_ba, a depthwise conv, dt_bias/A_log, a gated
    RMSNorm and out_proj."""
    h = s.hidden
    key_dim = s.int_of("linear_num_key_heads") * s.int_of("linear_key_head_dim")
    value_heads = s.int_of("linear_num_value_heads")
    value_head_dim = s.int_of("linear_value_head_dim")
    value_dim = value_heads * value_head_dim
    kernel = s.int_of("linear_conv_kernel_dim", default=4)
    c.add("q", h, 2 * key_dim + 2 * value_dim)
    c.add("v", h, 2 * value_heads)
    c.other += (2 * key_dim + value_dim) * kernel + 2 * value_heads + value_head_dim
    c.add("o", value_dim, h)


def _dense_mlp(c: _Census, s: _Shape, width: int) -> None:
    """SwiGLU/GeGLU: gate, up, down (3·h·I); a plain GELU MLP: up, down."""
    if not s.plain:
        c.add("gate", s.hidden, width)
    c.add("up", s.hidden, width)
    c.add("down", width, s.hidden)


def _moe(c: _Census, s: _Shape, experts: int) -> int:
    """One MoE block (§2.2): routed experts, shared expert(s), router. Returns the shared
    experts' total width (what every token passes through besides its top-k)."""
    h = s.hidden
    expert_width = s.int_of("moe_intermediate_size", default=s.width)
    if s.model_type == "llama4":
        expert_width = s.width
    if not s.plain:
        c.add("gate", h, expert_width, experts, routed=True)
    c.add("up", h, expert_width, experts, routed=True)
    c.add("down", expert_width, h, experts, routed=True)
    c.other += experts * h  # router
    if s.model_type == "gpt_oss":  # biases on gate_up and down, and on the router
        c.other += experts * (2 * expert_width + h) + experts
    shared = 0
    if s.model_type == "llama4":
        shared = s.width
    elif s.get("n_shared_experts"):
        shared = expert_width * s.int_of("n_shared_experts")
    elif s.int_of("shared_expert_intermediate_size"):
        shared = s.int_of("shared_expert_intermediate_size")
        c.other += h  # shared_expert_gate, Linear(h, 1)
    if shared:
        _dense_mlp(c, s, shared)
    if s.model_type == "gemma4" and s.get("enable_moe_block"):
        # Gemma 4 runs its dense MLP alongside the experts in every layer.
        _dense_mlp(c, s, s.width)
        shared += s.width
    return shared


@dataclass(frozen=True, slots=True)
class TextCensus:
    linears: tuple[LinearGroup, ...]
    other_params: int
    layer_types: tuple[str, ...]
    token_mlp_width: int
    largest_layer_params: int
    moe_layers: int
    expert_width: int | None
    experts_per_token: int | None
    fused_experts: bool


def text_census(config: Mapping[str, Any]) -> tuple[_Shape, TextCensus]:
    """Every decoder layer's matrices and small parameters, by its attention and MLP type."""
    s = _shape(config)
    experts = _experts(s)
    fused = experts > 1 and s.model_type in FUSED_EXPERT_TYPES
    c = _Census(fused=fused)
    top_k = s.int_of("num_experts_per_tok", "top_k_experts", "experts_per_token", default=1)
    expert_width = s.int_of("moe_intermediate_size", default=s.width)
    if s.model_type == "llama4":
        expert_width = s.width
    dense_width = s.width
    if s.model_type == "llama4":
        dense_width = s.int_of("intermediate_size_mlp", default=s.width)
    norms = 4 if s.model_type in FOUR_NORM_TYPES else 2
    attention = attention_types(s)
    mlps = mlp_types(s, experts)
    widths = 0
    largest_layer = 0
    for kind, mlp in zip(attention, mlps, strict=True):
        before = sum(i * o * n for (_, i, o, _), n in c.matrices.items())
        if kind == "mla":
            _mla(c, s)
        elif kind == "linear":
            _gated_deltanet(c, s)
        else:
            _gqa(c, s, kind)
        c.other += norms * s.hidden
        if mlp == "moe":
            widths += _moe(c, s, experts) + top_k * expert_width
        else:
            _dense_mlp(c, s, dense_width)
            widths += dense_width
        after = sum(i * o * n for (_, i, o, _), n in c.matrices.items())
        largest_layer = max(largest_layer, after - before)
    c.other += s.hidden  # final norm
    if s.model_type == "gemma3n":
        # Per-layer embeddings: a (vocab_per_layer × layers·d_ple) table and its projection.
        per_layer = s.int_of("hidden_size_per_layer_input")
        vocab = s.int_of("vocab_size_per_layer_input", default=s.vocab)
        c.other += vocab * s.layers * per_layer + s.hidden * s.layers * per_layer
    moe_layers = mlps.count("moe")
    return s, TextCensus(
        linears=c.groups(),
        other_params=c.other,
        layer_types=tuple(f"{a}+{m}" for a, m in zip(attention, mlps, strict=True)),
        token_mlp_width=round(widths / max(1, s.layers)),
        largest_layer_params=largest_layer,
        moe_layers=moe_layers,
        expert_width=expert_width if moe_layers else None,
        experts_per_token=top_k if moe_layers else None,
        fused_experts=fused,
    )


# ---- vision towers (§7) ---------------------------------------------------------------------


def vision_tower_params(config: Mapping[str, Any], text_hidden: int) -> int:
    """A ViT tower plus its projector, from `vision_config`: per layer 4·h² attention (+ biases)
    and an MLP of 2·h·i (3·h·i when gated: Qwen2.5-VL, Pixtral), two norms; the patch embedding
    (3·p²·h, × the temporal patch for Qwen); position embeddings; the projector into the text
    width (through a 2×2 merge where the family merges patches). 0 without a vision_config."""
    vision = config.get("vision_config")
    if not isinstance(vision, dict):
        return 0
    h = positive_int(vision, "hidden_size", "embed_dim")
    layers = positive_int(vision, "depth", "num_hidden_layers", "num_layers")
    if not h or not layers:
        return 0
    inner = positive_int(vision, "intermediate_size", "ffn_hidden_size") or 4 * h
    vision_type = str(vision.get("model_type", ""))
    gated = vision_type in ("pixtral",) or config.get("model_type") == "qwen2_5_vl"
    layers += positive_int(vision, "num_global_layers") or 0
    per_layer = 4 * h * h + 4 * h + (3 if gated else 2) * h * inner + inner + h + 4 * h
    patch = positive_int(vision, "patch_size", "patch_dim", "spatial_patch_size") or 14
    channels = positive_int(vision, "num_channels", "in_channels", "in_chans") or 3
    temporal = positive_int(vision, "temporal_patch_size") or 1
    image = positive_int(vision, "image_size") or 0
    positions = positive_int(vision, "num_position_embeddings")
    positions = positions or ((image // patch) ** 2 if image else 0)
    tower = layers * per_layer + channels * patch * patch * temporal * h + positions * h
    merge = positive_int(vision, "spatial_merge_size") or positive_int(config, "spatial_merge_size")
    out = positive_int(vision, "out_hidden_size", "projector_output_dim") or text_hidden
    if merge:
        merged = h * merge * merge
        projector = merged * merged + merged * out
        deepstack = vision.get("deepstack_visual_indexes")
        if isinstance(deepstack, list):
            projector *= 1 + len(deepstack)
    else:
        vision_out = positive_int(vision, "vision_output_dim") or h
        projector = vision_out * text_hidden
        if vision_type == "llama4_vision_model":
            shuffled = int(h / (float(vision.get("pixel_shuffle_ratio", 0.5)) ** 2))
            projector += shuffled * vision_out + vision_out * vision_out
    return tower + projector


# Dynamic-resolution towers (Qwen2.5/3-VL, Pixtral) take an image at its own size: planned at
# this side length, a 1-megapixel image.
REFERENCE_IMAGE_PX = 1024
# Begin/end-of-image markers around each image's tokens.
IMAGE_MARKER_TOKENS = 2


@dataclass(frozen=True, slots=True)
class ImageTokens:
    """What one image costs: LM-sequence tokens and vision-tower patches (§7)."""

    lm_tokens: int
    patches: int
    hidden: int
    layers: int


def image_tokens(config: Mapping[str, Any]) -> ImageTokens:
    """Per image: Gemma 3's fixed `mm_tokens_per_image` (Gemma 4: `vision_soft_tokens_per_image`),
    Llama 4's tile of (image/patch)² patches pixel-shuffled by ratio², a merging tower's
    (px/(patch·merge))² for a REFERENCE_IMAGE_PX image, else (image/patch)²; plus the markers.
    Llama 3.2 Vision attends to images through cross-attention: no LM tokens."""
    vision = config.get("vision_config")
    if not isinstance(vision, dict):
        return ImageTokens(0, 0, 0, 0)
    hidden = positive_int(vision, "hidden_size", "embed_dim") or 0
    layers = positive_int(vision, "depth", "num_hidden_layers", "num_layers") or 0
    patch = positive_int(vision, "patch_size", "patch_dim", "spatial_patch_size") or 14
    image = positive_int(vision, "image_size") or REFERENCE_IMAGE_PX
    merge = positive_int(vision, "spatial_merge_size") or positive_int(config, "spatial_merge_size")
    fixed = positive_int(config, "mm_tokens_per_image", "vision_soft_tokens_per_image")
    if config.get("model_type") == "mllama":
        return ImageTokens(0, (image // patch) ** 2, hidden, layers)
    if fixed:
        return ImageTokens(fixed + IMAGE_MARKER_TOKENS, (image // patch) ** 2, hidden, layers)
    if merge:
        patches = (REFERENCE_IMAGE_PX // patch) ** 2
        return ImageTokens(patches // merge**2 + IMAGE_MARKER_TOKENS, patches, hidden, layers)
    patches = (image // patch) ** 2
    ratio = float(vision.get("pixel_shuffle_ratio", 1.0) or 1.0)
    return ImageTokens(round(patches * ratio**2) + IMAGE_MARKER_TOKENS, patches, hidden, layers)
