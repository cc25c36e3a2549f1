"""Sharding ("zero3", "ZeRO stage 2", "deepspeed z3", "FSDP", "DDP", "device_map=auto") and the
training framework (unsloth, axolotl, torchtune, litgpt, LLaMA-Factory, ms-swift, TRL, verl,
OpenRLHF, HF) with the release a question names ("trl 0.19", "unsloth==2025.11.4")."""

from __future__ import annotations

import re

from planner.messages import NAMES
from planner.parsing.reading import Reading
from planner.patterns import lazy_pattern

_SHARDING_SPELLINGS = [
    (r"zero[-_\s]?(?:stage[-_\s]?)?3|(?<![a-z])z3(?![a-z0-9])|ds_?z3|stage\s?[=:]?\s?3", "zero3"),
    (
        r"zero[-_\s]?(?:stage[-_\s]?)?[12]|(?<![a-z])z[12](?![a-z0-9])|ds_?z[12]|stage\s?[=:]?\s?2",
        "zero2",
    ),
    (r"(?<![a-z])fsdp\d?(?![a-z])", "fsdp"),
    (r"(?<![a-z])ddp(?![a-z])|data[-\s]parallel", "ddp"),
    (r"device_map\s?[=:]?\s?['\"]?auto|device\smap|naive\spipeline|model\sparallel", "device_map"),
]
_FRAMEWORK_SPELLINGS = [
    (r"unsloth", "unsloth"),
    (r"axolotl", "axolotl"),
    (r"torchtune|torch\stune|(?<![a-z])tune\srun(?![a-z])", "torchtune"),
    (r"lit[-\s]?gpt", "litgpt"),
    (r"llama[-_\s]?factory", "llama-factory"),
    (r"ms[-_\s]?swift|(?<![a-z])swift(?![a-z])", "ms-swift"),
    (r"open[-_\s]?rlhf", "openrlhf"),
    (r"(?<![a-z])verl(?![a-z])", "verl"),
    # TRL's own trainers name it too.
    (r"(?<![a-z])(?:trl|(?:sft|dpo|grpo|kto|orpo|rloo|ppo)(?:trainer|config))(?![a-z])", "trl"),
    (r"(?<![a-z])(?:transformers|hugging\s?face|hf\strainer)(?![a-z])", "hf"),
]
# Stacks without a profile of their own, planned with the nearest one (said in the assumptions):
# PyTorch-native FSDP2 trainers plan as torchtune, HF-based ones as HF Trainer + PEFT.
_UNPROFILED_SPELLINGS = [
    (r"torch[-_\s]?titan", "torchtitan", "torchtune"),
    (r"nemo[-_\s]?(?:rl|automodel|aligner|framework)|nvidia\snemo", "NeMo", "hf"),
    (r"megatron(?:[-_\s]?(?:lm|core|bridge))?", "Megatron", "hf"),
    (r"(?<![a-z])x[-_]?tuner(?![a-z])", "XTuner", "hf"),
    (r"(?<![a-z])oumi(?![a-z])", "Oumi", "hf"),
    (r"arctic[-_\s]?training", "ArcticTraining", "hf"),
    (r"colossal[-_\s]?ai", "ColossalAI", "hf"),
    (r"deepspeed[-_\s]?chat", "DeepSpeed-Chat", "hf"),
]
# A release right after the stack's name: "trl 0.19", "trl==0.19.1", "unsloth v2025.11.4".
_VERSION_AFTER = lazy_pattern(
    r"\s?(?:==|>=|~=|@|\sv|v|\sversion\s)?\s?(?P<v>\d{1,4}(?:\.\d{1,4}){1,3})(?![\d.])"
)

# The FSDP implementation: "fsdp2", "FSDP-2", "fsdp_version: 2" (axolotl's and Accelerate's key).
_FSDP_VERSION = lazy_pattern(r"(?<![a-z])fsdp(?:_version\s?[=:]?\s?|[-_]?v?)(?P<v>[12])(?![\d.])")

# A word every spelling in each table contains.
_SHARDING_WORDS = ("zero", "z1", "z2", "z3", "stage", "fsdp", "ddp", "parallel", "device")
_SHARDING_WORDS += ("pipeline",)
_FRAMEWORK_WORDS = ("unsloth", "axolotl", "torch", "lit", "factory", "swift", "trl", "transformers")
_FRAMEWORK_WORDS += ("hugging", "hf", "tune run", "verl", "rlhf")
_FRAMEWORK_WORDS += tuple(
    f"{objective}{kind}"
    for objective in ("sft", "dpo", "grpo", "kto", "orpo", "rloo", "ppo")
    for kind in ("trainer", "config")
)
_UNPROFILED_WORDS = ("titan", "nemo", "megatron", "tuner", "oumi", "arctic", "colossal")
_UNPROFILED_WORDS += ("speed-chat", "speed chat", "speedchat", "speed_chat")
_SHARDING = [(lazy_pattern(pattern), value) for pattern, value in _SHARDING_SPELLINGS]
_FRAMEWORKS = [(lazy_pattern(pattern), value) for pattern, value in _FRAMEWORK_SPELLINGS]
_UNPROFILED = [(lazy_pattern(pattern), name, near) for pattern, name, near in _UNPROFILED_SPELLINGS]


def read_distributed(r: Reading) -> None:
    if "fsdp" in r.text and (m := _FSDP_VERSION.search(r.text)):
        r.put("fsdp_version", int(m.group("v")))
    r.put_spellings("sharding", _SHARDING_WORDS, _SHARDING)
    if any(word in r.text for word in _FRAMEWORK_WORDS):
        for pattern, value in _FRAMEWORKS:
            if m := pattern.search(r.text):
                _put_stack(r, m, value)
    if "framework" not in r.fields and any(word in r.text for word in _UNPROFILED_WORDS):
        for pattern, name, near in _UNPROFILED:
            if m := pattern.search(r.text):
                r.assume(NAMES("unprofiled_stack", name=name, near=near))
                _put_stack(r, m, near, with_version=False)


def _put_stack(r: Reading, m: re.Match[str], value: str, with_version: bool = True) -> None:
    """Record the stack (the first one named wins) and a release written right after it."""
    first = r.put("framework", value)
    r.take(m)
    version = _VERSION_AFTER.match(r.text, m.end())
    if version is not None:
        if first and with_version:
            r.put("framework_version", version.group("v"))
        r.take(version)
