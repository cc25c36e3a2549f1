"""Config dumps pasted instead of prose: YAML (`key: value`), CLI flags (`--key value`,
`--key=value`), Python/JSON dicts (`'lora_r': 16`) and unsloth banners (`Num Epochs = 2 |`).

The field readers already accept `key = value` and `key: value`; this step only makes dict syntax
look like that, and drops switches set to false so "load_in_4bit: false" does not read as 4-bit.
"""

from __future__ import annotations

from planner.parsing.reading import Reading
from planner.patterns import lazy_pattern

_QUOTED_KEY = lazy_pattern(r"['\"](?P<key>[a-z_][a-z0-9_.]{0,40})['\"]\s?(?P<sep>[:=])")
_QUOTED_VALUE = lazy_pattern(r"(?P<sep>[:=])\s?['\"](?P<value>[\w./-]{1,120})['\"]")
_FALSE_SWITCH = lazy_pattern(
    r"(?:load_in_[48]bit|bf16|fp16|tf32|train_4bit|quantization_bit|double_quant|use_peft|"
    r"sample_packing|packing|use_flash_attention_2)\s?[=:]\s?(?:false|none|null|0)(?![a-z0-9_]|\.\d)"
)


def read_config(r: Reading) -> None:
    # Quotes become spaces, keeping every position (the sign check reads the unblanked copy).
    r.text = _QUOTED_KEY.sub(lambda m: f" {m.group('key')} {m.group('sep')}", r.text)
    r.text = _QUOTED_VALUE.sub(lambda m: f"{m.group('sep')}  {m.group('value')} ", r.text)
    r.source = r.text
    for m in r.matches_if(("=", ":"), _FALSE_SWITCH):
        if m.group(0).startswith(("sample_packing", "packing")):
            r.put("packing", False)
        r.take(m)
