"""Sharding ("zero3", "ZeRO stage 2", "deepspeed z3", "FSDP", "DDP", "device_map=auto") and the
training framework (unsloth, axolotl, torchtune, litgpt, LLaMA-Factory, ms-swift, HF/TRL)."""

from __future__ import annotations

import re

from planner.parsing.reading import Reading

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
    (
        r"(?<![a-z])(?:trl|transformers|hugging\s?face|hf\strainer|sfttrainer|sftconfig)(?![a-z])",
        "hf",
    ),
]

# A word every spelling in each table contains.
_SHARDING_WORDS = ("zero", "z1", "z2", "z3", "stage", "fsdp", "ddp", "parallel", "device")
_SHARDING_WORDS += ("pipeline",)
_FRAMEWORK_WORDS = ("unsloth", "axolotl", "torch", "lit", "factory", "swift", "trl", "transformers")
_FRAMEWORK_WORDS += ("hugging", "hf", "sfttrainer", "sftconfig", "tune run")
_SHARDING = [(re.compile(pattern), value) for pattern, value in _SHARDING_SPELLINGS]
_FRAMEWORKS = [(re.compile(pattern), value) for pattern, value in _FRAMEWORK_SPELLINGS]


def read_distributed(r: Reading) -> None:
    r.put_spellings("sharding", _SHARDING_WORDS, _SHARDING)
    r.put_spellings("framework", _FRAMEWORK_WORDS, _FRAMEWORKS)
