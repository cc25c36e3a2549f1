"""Dataset size: token totals ("20M tokens", "1.1T tokens", "409,600 tokens", "1.2万亿token"),
samples × length ("100k samples of ~512 tokens", "6000个样本", "each sample ~1,000 tokens"),
config keys ("max_samples 1000", "Num examples = 22,206") and text size in MB/GB.

JobSpec counts tokens, so samples become tokens: × the per-sample length the text gives, else × the
context length it gives, else × an assumed typical length, each stated as an assumption.
"""

from __future__ import annotations

import json
import re
from functools import cache, partial

from planner.data_files import DATA_DIR
from planner.messages import PARSING
from planner.parsing.numbers import COUNT_SUFFIX, NUM, scaled, whole
from planner.parsing.reading import Reading
from planner.patterns import lazy_pattern
from planner.units import convert

DATASETS_FILE = DATA_DIR / "datasets.json"
# Instruction-tuning samples are short; used only when the text gives no length at all.
TYPICAL_SAMPLE_TOKENS = 512
# Fewer rows than this, written in English, is a count of something else ("2 questions").
MIN_SAMPLES = 10
# Plain English text in BPE tokenizers of the Llama/Qwen families.
BYTES_PER_TOKEN = 4

_COUNT = r"(?P<num>" + NUM + r")\s?(?P<scale>" + COUNT_SUFFIX + r"|b)?\+?"
_SAMPLE_WORDS = (
    r"(?:samples?|examples?|instances?|rows?|records?|conversations?|convos?|dialogues?|dialogs?|pairs?|"
    r"triplets?|items?|images?|emails?|tickets?|messages?|articles?|posts?|entries|documents?|docs|questions?|instructions?|prompts?|molecules?|data\s?"
    r"points?|条数据|条样本|条|个样本|个数据|样本)"
)
_TOKENS = lazy_pattern(
    r"(?<![a-z0-9_.])(?<!\d,)" + _COUNT + r"\s?(?:training\s)?(?:tokens?|toks?)(?![a-z0-9_]|\.\d)"
)
_TOKENS_TIMES_EPOCHS = lazy_pattern(
    r"(?<![a-z0-9_.])(?<!\d,)" + _COUNT + r"\s?(?:tokens?\s?)?[*x]\s?(?P<epochs>\d{1,4})\s?epochs?"
)
# "5k customer emails", "1,000 image-caption pairs": one describing word may come between.
_SAMPLES = lazy_pattern(
    r"(?<![a-z0-9_.])(?<!\d,)~?"
    + _COUNT
    + r"\s?(?:[a-z]{2,14}[-\s])?"
    + _SAMPLE_WORDS
    + r"(?![a-z])"
)
# "20k pairs ~1k tokens", "10k samples x 2k tokens", "5k examples @ 800 tok": a length written
# right after the count is each sample's; a longer one than this is the whole dataset's
# ("1k samples, 500k tokens").
MAX_SAMPLE_TOKENS = 262_144
# Shared with the preference reader (planner.parsing.objective), which reads the same phrase.
LENGTH_AFTER_COUNT = (
    r"\s?[,(]?\s?(?:at\s|@|x|×|\*|of\s|with\s)?\s?(?:around\s|about\s|approx\.?\s|~|≈)?\s?"
    r"(?P<length>" + NUM + r")\s?(?P<lk>k)?\s?(?:tokens?|toks?)(?![a-z/])(?:\s?(?:each|apiece))?"
)
_LENGTH_AFTER = lazy_pattern(LENGTH_AFTER_COUNT)
_SAMPLE_KEYS = lazy_pattern(
    r"(?:max_samples|num_samples|num\sexamples|number\sof\s(?:samples|examples))\s?[=:]?\s?"
    + _COUNT
)
_PER_SAMPLE = lazy_pattern(
    r"(?:of|with|each|averag\w{0,4}|avg|per\s(?:sample|example|entry|row))\s(?:sample\s)?"
    r"(?:containing\s|having\s|of\s)?(?:length\s)?(?:is\s|of\s)?(?:around\s|about\s|~)?\s?"
    r"(?P<num>" + NUM + ")"
    r"(?P<k>k)?\s?(?:-\s?)?tokens?|(?P<num2>"
    + NUM
    + r")\s?tokens?\s(?:each|per\s(?:sample|example|entry|row))|"
    r"(?:每条|每个样本|平均)(?:平均)?(?:长度)?(?:约|大约|大概|为|是)?\s?(?P<num3>\d{1,6})\s?(?:个\s?)?"
    r"(?:tokens?|字)?"
)
_AVERAGE_SAMPLE = lazy_pattern(
    r"(?:samples?|examples?|conversations?|chats?|rows?)\s(?:are\s|is\s)?(?:on\s)?"
    r"(?:averag\w{0,4}|avg)\.?\s(?:of\s|about\s|around\s|~)?\s?(?P<num>\d{1,7})\s?tokens?"
    r"|(?:样本|数据)平均(?:长度)?(?:约|大约|为|是)?\s?(?P<zh>\d{1,7})\s?(?:个\s?)?(?:tokens?)?"
)
_TEXT_SIZE = lazy_pattern(
    r"(?<![a-z0-9_.])(?P<num>"
    + NUM
    + r")\s?(?P<unit>mb|gb|tb|g)(?![a-z])\s?(?:of\s)?(?:plain\s|raw\s|clean(?:ed)?\s)?"
    r"(?P<what>text|data(?:set)?|corpus|json\w{0,2}|csv|training\sdata|文本|数据|语料)?"
)


def _count(r: Reading, m: re.Match[str], what: str) -> float:
    value = r.number(m, "num", what)
    scale = (m.group("scale") or "").lower()
    return scaled(m.group("num"), "bn" if scale == "b" else scale) if scale else value


@cache
def _named_datasets() -> list[tuple[re.Pattern[str], str, int]]:
    entries = json.loads(DATASETS_FILE.read_text(encoding="utf-8"))["datasets"]
    return [(lazy_pattern(e["pattern"]), e["name"], int(e["samples"])) for e in entries]


@cache
def _any_named_dataset() -> re.Pattern[str]:
    """One pass that tells whether any named dataset is in the text at all."""
    return lazy_pattern("|".join(f"(?:{pattern.pattern})" for pattern, _, _ in _named_datasets()))


def _named_dataset_samples(r: Reading) -> float | None:
    """A dataset named instead of sized ("on Alpaca"): its published row count, stated."""
    if not _any_named_dataset().search(r.text):
        return None
    for pattern, name, samples in _named_datasets():
        m = pattern.search(r.text)
        if m:
            r.assume(PARSING("published_size", name=name, samples=samples))
            r.take(m)
            return samples
    return None


def read_dataset(r: Reading) -> None:
    for m in r.matches_at_numbers(_TOKENS_TIMES_EPOCHS, needs=("epoch",)):
        r.put("dataset_tokens", _count(r, m, "The dataset size"))
        r.put("epochs", int(m.group("epochs")))
        r.take(m)
    samples = length_after = None
    for pattern, find in (
        (_SAMPLE_KEYS, partial(r.matches_if, ("sample", "example"))),
        (_SAMPLES, r.matches_at_numbers),
    ):
        for m in find(pattern):
            counted = _count(r, m, "The number of samples")
            # "3 questions about ..." is not a dataset; Chinese counters ("5条数据") always are.
            if pattern is _SAMPLES and counted < MIN_SAMPLES and m.group(0).isascii():
                continue
            samples = counted
            r.take(m)
            if pattern is _SAMPLES:
                length_after = _length_after(r, m.end())
            break
        if samples:
            break
    if samples is None:
        samples = _named_dataset_samples(r)
    if samples is not None:
        _samples_with_length(r, samples, length_after)
    elif "verag" in r.text or "avg" in r.text or "平均" in r.text:
        # "samples average 600 tokens": the data's typical length, for time (not the peak).
        for m in r.matches(_AVERAGE_SAMPLE):
            group = "num" if m.group("num") else "zh"
            r.put("mean_sample_len", whole(r.number(m, group, "The sample length")))
            r.take(m)
    for m in r.matches_at_numbers(_TOKENS, needs=("tok",)):
        tokens = _count(r, m, "The dataset size")
        if m.group("scale") or tokens > 262_144 or "," in m.group("num"):
            r.put("dataset_tokens", whole(tokens))
            r.take(m)
    for m in r.matches_at_numbers(_TEXT_SIZE):
        if m.group("unit") == "mb" or m.group("what"):
            size_bytes = convert(r.number(m, "num", "The dataset size"), m.group("unit"), "byte")
            tokens = round(size_bytes / BYTES_PER_TOKEN)
            note = f"{m.group(0).strip()} read as ≈{tokens:,} tokens ({BYTES_PER_TOKEN} bytes each)"
            r.put("dataset_tokens", tokens, note)
            r.take(m)


def _length_after(r: Reading, end: int) -> float | None:
    """A per-sample length written right after the count ("20k pairs ~1k tokens"), taken out."""
    m = _LENGTH_AFTER.match(r.text, end)
    if m is None:
        return None
    length = r.number(m, "length", "The sample length") * (1000 if m.group("lk") else 1)
    if length > MAX_SAMPLE_TOKENS:
        return None
    r.take(m)
    return length


def _samples_with_length(r: Reading, samples: float, length: float | None = None) -> None:
    """Samples × the per-sample length the text gives (`length`, written right after the count,
    or found elsewhere); without one, wait for the context length (a bare "2k" is read last) in
    `samples_to_tokens`."""
    if length is not None:
        note = PARSING("samples_length", samples=whole(samples), tokens=whole(length))
        r.put("dataset_tokens", whole(samples * length), note)
        r.put("mean_sample_len", whole(length))
        return
    if r.sample_tokens is not None:
        note = PARSING("samples_range", samples=whole(samples), tokens=whole(r.sample_tokens))
        r.put("dataset_tokens", whole(samples * r.sample_tokens), note)
        r.put("mean_sample_len", whole(r.sample_tokens))
        return
    for m in r.matches(_PER_SAMPLE):
        group = next(g for g in ("num", "num2", "num3") if m.group(g))
        length = r.number(m, group, "The sample length") * (1000 if m.group("k") else 1)
        r.take(m)
        note = PARSING("samples_length", samples=whole(samples), tokens=whole(length))
        r.put("dataset_tokens", whole(samples * length), note)
        r.put("mean_sample_len", whole(length))
        return
    r.samples = samples


def samples_to_tokens(r: Reading) -> None:
    """Samples with no length: × the context length if the text gave one, else a typical length."""
    samples = r.samples
    if samples is None or "dataset_tokens" in r.fields:
        return
    shown = f"{whole(samples):,}"
    if "seq_len" in r.fields:
        seq_len = r.fields["seq_len"]
        r.put(
            "dataset_tokens",
            whole(samples * seq_len),
            PARSING("samples_fill", samples=shown, seq_len=seq_len),
        )
    else:
        r.put(
            "dataset_tokens",
            whole(samples * TYPICAL_SAMPLE_TOKENS),
            PARSING("samples_typical", samples=shown, tokens=TYPICAL_SAMPLE_TOKENS),
        )
        r.put("mean_sample_len", TYPICAL_SAMPLE_TOKENS)


_STEPS = lazy_pattern(
    r"(?<![a-z0-9_.])(?P<steps>" + NUM + r")\s?(?P<k>k)?\+?\s?(?:training\s|optimi[sz]er\s)?"
    r"(?:steps|iterations|iters|步)\s?(?:,\s?)?(?:of|with|at|x|\*|每步)?\s?(?:a\s)?"
    r"(?:global\s|effective\s)?(?:batch(?:\s?size)?|bs)\s?(?:of\s|=|:)?\s?(?P<batch>\d{1,6})(?![\d.])"
)
_STEP_KEYS = lazy_pattern(
    r"(?<![a-z])(?:train_iters|train_steps)\s?[=:]?\s?(?P<steps>\d{1,9})(?![\d.])"
)


def read_steps(r: Reading) -> None:
    """ "3000 steps of batch 64", "训练3000步，每步batch 64", "train_iters=2000": steps × batch
    × context becomes the tokens (in `steps_to_tokens`); the batch is a whole step's, not a GPU's.
    """
    for m in r.matches_at_numbers(_STEPS, needs=("step", "iter", "步")):
        steps = r.number(m, "steps", "The number of steps") * (1000 if m.group("k") else 1)
        r.steps = (steps, int(m.group("batch")))
        r.take(m)
        return
    for m in r.matches_if(("train_",), _STEP_KEYS):
        r.steps = (float(m.group("steps")), None)
        r.take(m)
        return


def steps_to_tokens(r: Reading) -> None:
    if r.steps is None or "dataset_tokens" in r.fields:
        return
    steps, batch = r.steps
    batch = batch or r.global_batch
    seq_len = r.fields.get("seq_len")
    if batch is None or seq_len is None:
        r.doubt = r.doubt or PARSING("doubt.steps", steps=whole(steps))
        return
    tokens = whole(steps * batch * seq_len)
    r.put(
        "dataset_tokens",
        tokens,
        PARSING("steps_tokens", steps=whole(steps), batch=batch, seq_len=seq_len, tokens=tokens),
    )
