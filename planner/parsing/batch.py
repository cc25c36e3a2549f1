"""Micro-batch, gradient accumulation and effective batch: "batch size 4", "bs=4", "batch_size 1",
"64 batch size", "批次 8", "batch 开 8", "per_device_train_batch_size 2", "micro_batch_size: 1",
"grad accum 8", "gradient_accumulation_steps=16", "Batch size per device = 6",
"global_batch_size 64", and the chat shorthands "bsz 4", "gas 16", "grad_acc 8", "gbs 128".

An effective (global) batch becomes gradient accumulation once the micro-batch and GPU count are
known: accumulation = effective ÷ (micro-batch × GPUs).
"""

from __future__ import annotations

from functools import partial

from planner.messages import NAMES
from planner.parsing.numbers import NUM
from planner.parsing.reading import Reading
from planner.patterns import lazy_pattern

# Chinese puts a verb between a setting and its value: "batch 开 8", "批次开到8", "批大小用 4".
_SEP = r"\s?(?:=|:|of|is|to|设置为|设为|为|是|开到|开成|开|调到|调成|改成|改为|用)?\s?"
_MICRO_KEYS = (
    r"(?:per_device_train_batch_size|per_device_batch_size|train_micro_batch_size_per_gpu|"
    r"micro_batch_size|micro_batch|micro_bs|microbatch(?:\ssize)?|micro\sbatch(?:\s?size)?|mbs?|"
    r"per[-\s]device\s(?:train\s)?batch\s?size|batch\s?size\sper\s(?:device|gpu)|"
    r"batch_size_training|batch_size|"
    r"batch-size|batch\s?size|train_batch_size|bsz|bs|batch|批次?大小|批量大小|批次|批量)"
)
_GLOBAL_KEYS = (
    r"(?:global_batch_size|total_batch_size|gbs|effective\sbatch(?:\s?size)?|global\sbatch(?:\s?size)?|"
    r"total\sbatch(?:\s?size)?)"
)
_ACCUM_KEYS = (
    r"(?:gradient_accumulation_steps|gradient_accumulation|grad_acc(?:um)?(?:_steps)?|accum_iter|"
    r"gradient\saccumulation(?:\ssteps)?|grad(?:ient)?\saccum(?:ulation)?(?:\ssteps)?|"
    r"accum(?:ulation)?|gas|ga|"
    r"梯度累积(?:步数)?)"
)
_VALUE = r"(?P<num>" + NUM + r")(?![a-z0-9_]|\.\d)"
# A word every match of the pattern after it contains.
_ACCUM_WORDS = ("acc", "ga", "梯度累积")
_MICRO_WORDS = ("batch", "micro", "bs", "mb", "批")
_ACCUM = lazy_pattern(r"(?<![a-z])-{0,2}" + _ACCUM_KEYS + _SEP + _VALUE)
_GLOBAL = lazy_pattern(r"(?<![a-z])" + _GLOBAL_KEYS + _SEP + _VALUE)
_MICRO = lazy_pattern(r"(?<![a-z])-{0,2}" + _MICRO_KEYS + _SEP + _VALUE)
_VALUE_MICRO = lazy_pattern(
    r"(?<![a-z0-9_.])" + _VALUE + r"\s?(?:batch\s?size|micro[-\s]?batch(?:es)?)"
)


# verl's micro-batches (stacks-2026.md): `*_micro_batch_size_per_gpu` is per GPU already; the
# older `ppo_micro_batch_size` / `log_prob_micro_batch_size` count the whole data-parallel group
# and verl divides them by its size.
_VERL_MICRO = lazy_pattern(
    r"(?<![a-z])(?:ppo|log_prob)_micro_batch_size(?P<per_gpu>_per_gpu)?" + _SEP + _VALUE
)


def read_verl_micro(r: Reading) -> None:
    """Read before the objective and GPU readers, which would take "ppo" and "gpu=8" out of
    the keys; the per-GPU figure is decided in `read_batch`, once the GPU count is known."""
    for m in r.matches_if(("_micro_batch_size",), _VERL_MICRO):
        if r.verl_micro is None:
            key = m.group(0).split("=")[0].split(":")[0].strip()
            r.verl_micro = (
                key,
                int(r.number(m, "num", "The batch size")),
                bool(m.group("per_gpu")),
            )
        r.take(m)


def _verl_micro_batch(r: Reading) -> None:
    if r.verl_micro is None:
        return
    key, value, per_gpu = r.verl_micro
    if per_gpu:
        r.put("micro_batch", value)
        return
    gpus = r.fields.get("num_gpus", 1)
    share = max(1, value // gpus)
    said = NAMES("verl_batch", key=key, value=value, share=share, gpus=gpus)
    r.put("micro_batch", share, said)


def read_batch(r: Reading) -> None:
    _verl_micro_batch(r)
    for m in r.matches_if(_ACCUM_WORDS, _ACCUM):
        r.put("grad_accum", int(r.number(m, "num", "Gradient accumulation")))
        r.take(m)
    effective = None
    for m in r.matches_if(("batch", "gbs"), _GLOBAL):
        effective = int(r.number(m, "num", "The batch size"))
        r.take(m)
    micro_keyed = False
    for find, pattern in (
        (partial(r.matches_if, _MICRO_WORDS), _MICRO),
        (r.matches_at_numbers, _VALUE_MICRO),
    ):
        for m in find(pattern):
            value = int(r.number(m, "num", "The batch size"))
            if micro_keyed and effective is None and value > r.fields["micro_batch"]:
                # alpaca-lora's "--micro_batch_size 8 --batch_size 128": the plain one is a step's.
                effective = value
            micro_keyed = micro_keyed or "micro" in m.group(0)
            r.put("micro_batch", value)
            r.take(m)
    r.global_batch = effective
    if effective and "grad_accum" not in r.fields:
        micro = r.fields.get("micro_batch", 1)
        gpus = r.fields.get("num_gpus", 1)
        accum = max(1, effective // (micro * gpus))
        r.put(
            "grad_accum",
            accum,
            f"effective batch {effective} read as {micro} × {gpus} GPU(s) × {accum} accumulation",
        )
