"""Training method, quantisation, optimizer, precision and on/off switches.

Method: QLoRA/LoRA in any casing (and "LORO"), PEFT/adapter (LoRA), full fine-tuning ("full
parameter", "全参", "全量", "not lora", pretraining, "from scratch"), "SFT" alone (full, stated).
Bits: "4bit LoRA", "8 bit Qlora", "4位", "2 位量化", "load_in_8bit", "train_4bit", "4bit peft" mean
a quantised base under the adapter, i.e. QLoRA with those bits. "8-bit adam" is an optimizer, not
quantisation.
"""

from __future__ import annotations

from planner.messages import PARSING
from planner.parsing.reading import COMPARING, Reading
from planner.patterns import lazy_pattern

_QLORA = lazy_pattern(r"(?<![a-z])q[-\s]?lora(?![a-z])|量化微调")
# torchtune's recipes ("lora_finetune_single_device") name the method too.
_LORA = lazy_pattern(
    r"(?<![a-z])(?:lora|peft|adapters?|dora)(?![a-z_])|(?<![a-z])lora(?=_finetune)"
)
# "lora_r 16" names LoRA only in a whole question: alone, in a follow-up ("with --lora_r 32"), it
# changes the rank of whichever adapter the thread has.
_LORA_KEY = lazy_pattern(r"(?<![a-z])lora_(?:r|rank|alpha|target\w*|dropout)(?![a-z])")
_SIZE_HINT = lazy_pattern(r"\d\s?[bm](?![a-z0-9])|/")
# "full" alone is the method ("7b full 4xa100") unless it describes something else: "the full
# dataset", "full precision", "full shard", "full three epochs".
_FULL_ALONE = (
    r"(?<![a-z])(?<!the\s)(?<!a\s)(?<!in\s)(?<!at\s)full(?![a-z])(?!\s?(?:the|a|an|dataset|data|"
    r"corpus|precision|batch|context|ctx|length|seq|sequence|shard|node|nodes|card|gpu|vram|memory|"
    r"size|range|list|set|power|speed|load|run\sof|\d{1,5}\s?(?:epochs?|eps?|轮|rounds?|passes))"
    r"(?![a-z0-9]))"
)
_FULL = lazy_pattern(
    r"full[-\s_]?(?:parameter|param|weights?|model|precision\sfine|fine[-\s]?tun\w*|finetun\w*|ft|"
    r"sft|training|train)|(?<![a-z])fft(?![a-z])|sft\sfull|全参数?|全量|全参微调|continued?\s(?:pre-?)?"
    r"train\w*|continual\spre-?train\w*|(?<![a-z_])pre-?train\w*|from\sscratch|预训练|增量预训练|"
    r"finetuning_type\s?[=:]\s?full|" + _FULL_ALONE
)
_SFT = lazy_pattern(r"(?<![a-z])sft(?![a-z])")

# Lion (Chen et al. 2023, arXiv:2302.06675) keeps one momentum buffer per weight; JobSpec has no
# Lion, so it is read as the known optimizer with the same state (SGD with momentum) or, for the
# 8-bit and paged bitsandbytes ones, with at least as much: each reading says so. "8bit" right
# after an optimizer name is that optimizer's precision, never the base model's quantisation.
# Between an optimizer's name and its bits: "lion optimizer (8-bit)", "adamw 8bit".
_THEN_BITS = r"(?:\s?optimi[sz]er)?[-_\s(]{0,2}8[-_\s]?bit"
_LION_SPELLINGS = [
    (r"paged[-_\s]?lion[-_\s]?8[-_\s]?bit", "paged_adamw_8bit", "paged_lion_as_paged_adam"),
    (r"paged[-_\s]?lion(?:[-_\s]?32[-_\s]?bit)?", "paged_adamw", "paged_lion_as_paged_adam"),
    (
        r"(?<![a-z])lion" + _THEN_BITS + r"|8[-_\s]?bit\slion(?![a-z])",
        "adamw_8bit",
        "lion_8bit_as_adam",
    ),
    (r"(?<![a-z])lion(?:[-_\s]?32[-_\s]?bit)?(?![a-z0-9])", "sgd", "lion_as_sgd"),
]
_OPTIMIZER_SPELLINGS = [
    (r"paged[-_\s]?adamw?[-_\s]?8[-_\s]?bit", "paged_adamw_8bit"),
    (r"paged[-_\s]?adamw?(?:[-_\s]?32[-_\s]?bit)?", "paged_adamw"),
    (
        r"adamw?(?:[-_\s]?bnb)?" + _THEN_BITS + r"|8[-_\s]?bit\s?adamw?|adam8bit|bnb\sadam",
        "adamw_8bit",
    ),
    (r"adafactor", "adafactor"),
    (r"(?<![a-z])sgd(?![a-z])", "sgd"),
    (r"(?<![a-z])adamw?(?:_torch(?:_fused)?|_hf)?(?![a-z0-9])", "adamw"),
]
# "4位", "8 位 lora", "2 位量化": 位 is Chinese for bit; followed by another Chinese word it is
# bits only when that word is about quantisation ("2位同事" is two colleagues).
_CN_BIT = r"位(?![\u4e00-\u9fff])|位(?=量化|精度|加载|整数|浮点|权重|模型|基座)"
_BITS = lazy_pattern(
    r"(?<![a-z0-9_.])(?:quantization_bit\s?[=:]?\s?(?P<qbits>[48])(?![\d.])|(?:load_in_|train_|"
    r"quantization_bit\s?[=:]?\s?|bits\s?[=:]\s?|int|in\s)?"
    r"(?P<bits>[248])\s?[-_]?\s?(?:bits?(?![a-z])|"
    + _CN_BIT
    + r")|(?<![a-z])(?P<kind>nf4|int4|int8|gptq|awq|bnb|"
    r"bitsandbytes|fp4)(?![a-z])|load_in_(?P<load>[48])bit)"
)
_PRECISION_SPELLINGS = [
    (r"(?<![a-z])(?:pure\sbf16|bf16\sonly|bf16[-_]true)(?![a-z])", "bf16"),
    (r"(?<![a-z])(?:bf16|bfloat16)(?:[-_]mixed)?(?![a-z0-9])", "bf16-mixed"),
    (
        r"(?<![a-z])(?:fp16|float16|half\sprecision|16[-\s]?mixed)(?:[-_]mixed)?(?![a-z0-9])",
        "fp16-mixed",
    ),
    (r"(?<![a-z])(?:fp32|float32|full\sprecision|32[-\s]?bit\sprecision)(?![a-z0-9])", "fp32"),
]
_OFF = (
    r"(?:(?:without|no|disable[ds]?|turn(?:ed)?\soff|w/o|not\susing|don'?t\suse|skip)\s|"
    r"不开|不用|关闭|关掉|不要)"
    r"(?:the\s|any\s)?"
)
_SWITCHES = {
    "gradient_checkpointing": r"(?:grad(?:ient)?[-_\s]?(?:checkpointing|ckpt|checkpoint)|activation"
    r"[-_\s]checkpointing|checkpointing|use_gradient_checkpointing|梯度检查点|重计算)",
    "flash_attention": r"(?:flash[-_\s]?attn(?:[-_\s]?2)?|flash[-_\s]?attention(?:[-_\s]?2)?|"
    r"(?<![a-z])fa2(?![a-z])|attn_implementation\s?[=:]\s?['\"]?flash_attention_2)",
    "packing": r"(?:sample[-_\s]packing|(?<![a-z])packing|(?<![a-z])pack(?:ed)?\s(?:sequences|"
    r"samples)|(?<![a-z])packed(?![a-z]))",
    "activation_offloading": r"(?:activation[-_\s]offload(?:ing)?|offload(?:ing)?[-_\s](?:the\s)?"
    r"activations|enable_activation_offloading|激活(?:值)?(?:卸载|offload))",
    "tiled_mlp": r"(?:tiled[-_\s]?mlp(?:_compute)?|mlp[-_\s]tiling|unsloth_tiled_mlp|mlp\s?分块)",
    # Not the activations' offloading, read above: "activation offloading" is not optimizer
    # offload.
    "cpu_offload": r"(?:cpu[-_\s]offload\w*|(?<!activation[-_\s])(?<!activation_)offload(?:ing)?"
    r"(?:_optimizer|_param)?(?:\sto\scpu)?(?![-_\s](?:the\s)?activations))",
}
_FALSE_VALUE = r"(?:\s?[=:]\s?['\"]?(?:false|0|none|off|no)\b|\s(?:off|disabled)\b)"
_TRUE_VALUE = r"\s?[=:]\s?['\"]?(?:true|1|on|yes|unsloth|auto)\b"
# A word every precision spelling contains.
_PRECISION_WORDS = ("bf16", "bfloat", "fp16", "float", "half", "mixed", "fp32", "precision")
_OPTIMIZERS = [(lazy_pattern(pattern), name) for pattern, name in _OPTIMIZER_SPELLINGS]
_LIONS = [(lazy_pattern(pattern), name, said) for pattern, name, said in _LION_SPELLINGS]
_PRECISION = [(lazy_pattern(pattern), name) for pattern, name in _PRECISION_SPELLINGS]
# A word every spelling of each switch contains: without one, its forms are not searched.
_SWITCH_WORDS = {
    "gradient_checkpointing": ("checkpoint", "ckpt", "梯度检查点", "重计算"),
    "flash_attention": ("flash", "fa2"),
    "packing": ("pack",),
    "activation_offloading": ("activation", "激活"),
    "tiled_mlp": ("tiled", "tiling", "分块"),
    "cpu_offload": ("offload",),
}
_SWITCH_PATTERNS = {
    field: (
        _SWITCH_WORDS[field],
        (
            (lazy_pattern(_OFF + words), False),
            (lazy_pattern(words + _FALSE_VALUE), False),
            (lazy_pattern(words + _TRUE_VALUE), True),
            (lazy_pattern(words), True),
        ),
    )
    for field, words in _SWITCHES.items()
}


def read_method(r: Reading) -> None:
    _read_optimizer(r)
    quant = _read_bits(r)
    compared = _compared_methods(r.text)
    if len(compared) > 1:
        r.put("method", compared[0])
        r.alternatives.extend({"method": other} for other in compared[1:])
    if _QLORA.search(r.text):
        r.put("method", "qlora")
    elif _LORA.search(r.text) or (
        _LORA_KEY.search(r.text) and ("model" in r.fields or _SIZE_HINT.search(r.text))
    ):
        r.put("method", "qlora" if quant else "lora")
        if quant:
            r.assume(PARSING("lora_on_quant", quant=quant))
    elif _FULL.search(r.text):
        r.put("method", "full")
    elif quant and quant != "int8":
        r.put("method", "qlora", PARSING("quant_as_qlora", quant=quant))
    elif _SFT.search(r.text):
        r.put("method", "full", PARSING("sft_as_full"))
    elif r.ruled_out & {"lora", "qlora"} and "full" not in r.ruled_out:
        # "finetune the model itself, not lora": with adapters ruled out, the weights are trained;
        # with only QLoRA ruled out ("no qlora"), the adapter trains on a 16-bit base.
        if "lora" in r.ruled_out:
            r.put("method", "full", PARSING("lora_ruled_out"))
        else:
            r.put("method", "lora", PARSING("qlora_ruled_out"))
    # Method words stay in the text: "lora_r 8" still has to give the LoRA reader its rank.
    _read_precision(r)
    _read_switches(r)


def _compared_methods(text: str) -> list[str]:
    """ "lora vs qlora", "QLoRA or full?": methods in the order written, when compared."""
    if not COMPARING.search(text):
        return []
    found = [(m.start(), "qlora") for m in _QLORA.finditer(text)]
    found += [(m.start(), "lora") for m in _LORA.finditer(text)]
    found += [(m.start(), "full") for m in _FULL.finditer(text)]
    return list(dict.fromkeys(method for _, method in sorted(found)))


def _read_optimizer(r: Reading) -> None:
    if "lion" in r.text:
        for pattern, name, said in _LIONS:
            m = pattern.search(r.text)
            if m:
                r.put("optimizer", name, PARSING(said, written=m.group(0).strip()))
                r.take(m)
    if not any(word in r.text for word in ("adam", "adafactor", "sgd")):
        return
    for pattern, name in _OPTIMIZERS:
        m = pattern.search(r.text)
        if m:
            r.put("optimizer", name)
            r.take(m)


def _read_bits(r: Reading) -> str | None:
    quant = None
    for m in r.matches_if(("bit", "int", "nf4", "gptq", "awq", "bnb", "fp4", "位"), _BITS):
        bits = m.group("bits") or m.group("load") or m.group("qbits")
        kind = m.group("kind")
        if bits == "2":
            r.notes.append(PARSING("note.two_bit"))
            bits = "4"
        if kind in ("gptq", "awq", "int4"):
            value = "int4"
        elif kind == "int8" or bits == "8":
            value = "int8"
        else:
            value = "nf4"
        if r.put("quant", value) and value == "nf4" and not kind:
            r.assume(PARSING("bits_as_nf4", bits=bits))
        quant = quant or value
        r.take(m)
    return quant


def _read_precision(r: Reading) -> None:
    if not any(word in r.text for word in _PRECISION_WORDS):
        return
    for pattern, name in _PRECISION:
        m = pattern.search(r.text)
        if m:
            r.put("precision", name)
            if name == "bf16-mixed" and "mixed" not in m.group(0):
                r.assume(PARSING("bf16_mixed"))
            r.take(m)


def _read_switches(r: Reading) -> None:
    for field, (mentions, settings) in _SWITCH_PATTERNS.items():
        r.put_spellings(field, mentions, settings)
