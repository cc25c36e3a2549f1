"""Settings that do not change memory or time (learning rate, seed, logging): read and set aside,
so their numbers are not mistaken for a batch size or an epoch count."""

from __future__ import annotations

from planner.parsing.numbers import NUM
from planner.parsing.reading import Reading
from planner.patterns import lazy_pattern

# A word every match of _IGNORED contains.
_IGNORED_WORDS = (
    "lr",
    "learning",
    "学习率",
    "seed",
    "warmup",
    "weight_decay",
    "steps",
    "limit",
    "dropout",
    "max_grad",
    "temperature",
    "top_p",
    "workers",
    "trainable",
)
_IGNORED = lazy_pattern(
    r"(?<![a-z])-{0,2}(?:lr|learning[_\s]rate|学习率|seed|warmup(?:_steps|_ratio)?|weight_decay|"
    r"logging_steps|save_steps|eval_steps|save_total_limit|lora_dropout|dropout|max_grad_norm|"
    r"temperature|top_p|num_workers|dataloader_num_workers|total\ssteps|max_steps|"
    r"(?:number\sof\s)?trainable\sparam(?:eter)?s)\s?[=:]?\s?(?P<num>" + NUM + r")"
)


def read_ignored(r: Reading) -> None:
    for m in r.matches_if(_IGNORED_WORDS, _IGNORED):
        r.take(m)


# "{'loss': 1.83, 'epoch': 0.37}": a training log's progress, not how many epochs the run has.
_LOG_EPOCH = lazy_pattern(r"(?<![a-z_])epoch\s{0,2}[=:]\s?\d{1,4}\.\d{1,6}")
# "--config llama3_1/8B_lora": a recipe's file name, not the model the question names.
_CONFIG_FILE = lazy_pattern(r"--config(?:_file|-name)?\s?[=\s]\s?\S{1,120}")


def read_logs(r: Reading) -> None:
    if "loss" in r.text:
        for m in r.matches_if(("epoch",), _LOG_EPOCH):
            r.take(m)
    for m in r.matches_if(("--config",), _CONFIG_FILE):
        r.take(m)
