"""Architecture switches in free text: images per sample and the vision tower (VLMs), expert
parallelism (MoE), the loss kernel and FP8. Read before the dataset reader, which would take
"2 images" as a sample count."""

from __future__ import annotations

from planner.parsing.reading import Reading
from planner.patterns import lazy_pattern

_IMAGES = lazy_pattern(
    r"(?<![\w.])(?P<n>\d{1,3}(?:\.\d)?)\s?(?:images?|pics?|pictures?|photos?|张图片?|幅图)\s?"
    r"(?:per|each|a|an|/|every|每)\s?(?:sample|example|row|conversation|turn|item|条|个样本|样本)"
    r"|(?:每条|每个)(?:样本|数据)?\s?(?P<cn>\d{1,3})\s?张图"
)
_TOWER = lazy_pattern(
    r"(?P<verb>train(?:ing)?|unfreez\w*|unfrozen|trainable|freez\w*|frozen|冻结|训练|解冻)\s?"
    r"(?:the\s)?(?:vision\s(?:tower|encoder|backbone)|vit|image\sencoder|视觉(?:塔|编码器))"
)
_EXPERT_PARALLEL = lazy_pattern(
    r"(?<![a-z])(?:ep|expert[-\s]parallel(?:ism)?|专家并行)\s?(?:=|:|of|size)?\s?(?P<n>\d{1,4})"
    r"(?![\d.])|(?P<way>\d{1,4})[-\s]way\sexpert[-\s]parallel"
)
_LOSS_KERNELS = (
    (lazy_pattern(r"(?<![a-z])liger(?:[-\s]kernels?)?(?![a-z])"), "liger"),
    (lazy_pattern(r"(?<![a-z])(?:cce|cut[-\s]cross[-\s]entropy)(?![a-z])"), "cce"),
    (lazy_pattern(r"(?<![a-z])chunked\s(?:ce|cross[-\s]entropy|loss)(?![a-z])"), "chunked"),
)
# MoE experts held quantised or not, adapted or not ("quantize_moe_experts: true", "experts not
# quantized", "lora_target_parameters", "LoRA on the experts"), and gpt-oss's native MXFP4.
_EXPERTS_QUANTIZED = lazy_pattern(
    r"quantize_moe_experts\s?[:=]?\s?(?P<flag>true|false)"
    r"|experts?\s(?P<not>not\s|un)?quanti[sz]ed|experts?\s(?:in\s)?4[-\s]?bit"
    r"|(?:4[-\s]?bit|quanti[sz]ed)\sexperts|(?P<zh_not>不)?量化专家"
)
_EXPERTS_ADAPTED = lazy_pattern(
    r"(?:lora_)?target_parameters|experts?\sadapted|(?<=lora\s)on\s(?:the\s)?(?:moe\s)?experts"
    r"|adapt(?:ing|s)?\s(?:the\s)?experts|专家也?(?:加|上|用)\s?lora"
)
_CONTEXT_PARALLEL = lazy_pattern(
    r"(?:ulysses(?:[-_\s]sp)?|sequence[-_\s]parallel(?:ism|_size)?|context[-_\s]parallel(?:ism|_size)?"
    r"|(?<![a-z_])(?:sp|cp)|序列并行|上下文并行)\s?(?:size|degree|of)?\s?[=:]?\s?(?P<n>\d{1,4})(?![\d.])"
)
_MXFP4 = lazy_pattern(r"(?<![a-z0-9])mxfp4(?![a-z0-9])")
_FP8 = lazy_pattern(r"(?<![a-z0-9])fp8(?:\s(?:training|matmuls?|mixed|precision))?(?![a-z0-9])")


def read_switches(r: Reading) -> None:
    for m in r.matches_if(("image", "pic", "photo", "图"), _IMAGES):
        r.put("images_per_sample", float(m.group("n") or m.group("cn")))
        r.take(m)
    for m in r.matches_if(("vision", "vit", "image", "视觉"), _TOWER):
        verb = m.group("verb")
        r.put("train_vision_tower", not verb.startswith(("freez", "frozen", "冻结")))
        r.take(m)
    for m in r.matches_if(("ep", "expert", "专家"), _EXPERT_PARALLEL):
        r.put("expert_parallel", int(m.group("n") or m.group("way")))
        r.take(m)
    r.put_spellings("loss_kernel", ("liger", "cce", "cross", "chunked"), _LOSS_KERNELS)
    for m in r.matches_if(("expert", "专家"), _EXPERTS_QUANTIZED):
        negated = m.group("flag") == "false" or bool(m.group("not")) or bool(m.group("zh_not"))
        r.put("experts_quantized", not negated)
        r.take(m)
    for m in r.matches_if(("target_parameters", "expert", "专家"), _EXPERTS_ADAPTED):
        # "LoRA on the experts": the method stays for the method reader.
        r.put("experts_adapted", True)
        r.take(m)
    for m in r.matches_if(("ulysses", "parallel", "sp", "cp", "并行"), _CONTEXT_PARALLEL):
        r.put("context_parallel", int(m.group("n")))
        r.take(m)
    for m in r.matches_if(("mxfp4",), _MXFP4):
        r.put("quant", "mxfp4")
        r.take(m)
    for m in r.matches_if(("fp8",), _FP8):
        r.put("precision", "fp8")
        r.take(m)
