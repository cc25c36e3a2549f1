"""Model names and sizes: HF ids, family + version + size (spaced, hyphenated or glued), MoE
"8x7b", size-first "70b llama2", slash lists "llama7/13/70b", and bare "13B".

Traps handled here (phrasing.md): "LLaVA 1.6B" is version 1.6; "Qwen3.5-27B" carries a version;
"8B tokens" is data, not a model (the dataset reader runs first and takes it); "40B is
sufficient" after a model size is a typo for 40 GB.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from planner.catalog.models import names_in_text, squash
from planner.messages import PARSING
from planner.parsing.numbers import whole
from planner.parsing.reading import COMPARING, Reading
from planner.patterns import lazy_pattern

# family stem → (canonical spelling, known versions). A number equal to a known version right
# after the stem is the version ("llama370b" = llama3 + 70b); anything else is the size.
FAMILIES: dict[str, tuple[str, tuple[str, ...]]] = {
    r"code[-\s]?llama": ("codellama", ()),
    r"tiny[-\s]?llama": ("tinyllama", ()),
    r"open[-_\s]?llama": ("open_llama", ()),
    r"llama": ("llama", ("3.1", "3.2", "3.3", "1", "2", "3", "4")),
    r"l(?=[23])": ("llama", ("3.1", "3.2", "3.3", "2", "3")),
    r"llava": ("llava", ("1.5", "1.6", "1")),
    r"mixtral": ("mixtral", ()),
    r"ministral": ("ministral", ()),
    r"mistral[-\s]?nemo": ("mistral-nemo", ()),
    r"mistral": ("mistral", ()),
    r"qwq": ("qwq", ()),
    # "qw" is 千问 (Qwen in Chinese) as normalize spells it.
    r"qw(?:en)?": ("qwen", ("1.5", "2.5", "3.5", "2", "3")),
    r"gemma": ("gemma", ("3n", "2", "3", "4", "1")),
    r"phi": ("phi", ("3.5", "1.5", "1", "2", "3", "4")),
    r"falcon": ("falcon", ("2", "3")),
    r"(?:deepseek[-\s]?)?r1[-\s]distill[-\s]llama": ("r1-distill-llama", ()),
    r"(?:deepseek[-\s]?)?r1[-\s]distill(?:[-\s]qwen)?": ("r1-distill-qwen", ()),
    r"deepseek": ("deepseek", ()),
    r"baichuan": ("baichuan", ("2",)),
    r"chatglm": ("chatglm", ("2", "3")),
    r"glm": ("glm", ("4.5", "4.6", "4.7", "4")),
    r"internlm": ("internlm", ("2.5", "2", "3")),
    r"internvl": ("internvl", ("2.5", "2", "3")),
    r"yi": ("yi", ("1.5",)),
    r"bloomz?": ("bloom", ()),
    r"vicuna": ("vicuna", ()),
    r"starcoder": ("starcoder", ("2",)),
    r"codegen": ("codegen", ("2",)),
    r"gpt[-\s]?oss": ("gpt-oss", ()),
    r"gpt[-\s]?neox": ("gpt-neox", ()),
    r"gpt[-\s]?j": ("gpt-j", ()),
    r"pythia": ("pythia", ()),
    r"mpt": ("mpt", ()),
    r"opt": ("opt", ()),
    r"olmo": ("olmo", ("2",)),
    r"smollm": ("smollm", ("2", "3")),
    r"stablelm": ("stablelm", ("2",)),
    r"zephyr": ("zephyr", ()),
    r"solar": ("solar", ()),
    r"granite": ("granite", ("3.1", "3", "4")),
    r"minicpm": ("minicpm", ("3", "4")),
    r"nemotron": ("nemotron", ()),
    r"command[-\s]?r": ("command-r", ()),
    r"wizardlm": ("wizardlm", ("2",)),
    r"guanaco": ("guanaco", ()),
    r"dolly": ("dolly", ()),
    r"orca": ("orca", ("2",)),
    r"t5": ("t5", ()),
    r"prover": ("prover", ()),
}
# Words between a family and its size that change the architecture; "chat", "instruct", "hf"
# and friends do not and are dropped from the name.
VARIANT_WORDS = ("vl", "coder", "math", "moe", "r1", "v2", "v3", "v2.5", "distill", "vision")
_FILLER_WORDS = r"(?:chat|instruct|it|hf|base|pt|sft|alpha|beta|preview|v0\.\d|v\d)"

_FAMILY = "|".join(FAMILIES)
# A version is followed by a separator ("llama 3 8b", "qwen2.5-7b"); glued forms ("llama370b")
# are split after matching, using the sizes models are actually released in.
_VERSION = r"(?:[-\s_]?v?(?P<ver>\d{1,2}(?:\.\d{1,2})?n?)(?=[-\s_(]))?"
_ANY_VERSION = r"(?:[-\s_]?v?(?P<ver>\d{1,2}(?:\.\d{1,2})?n?))?"
_MID = r"(?P<mid>(?:[-\s_](?:" + "|".join(map(re.escape, VARIANT_WORDS)) + r"))?)"
_FILL = r"(?:[-\s_]" + _FILLER_WORDS + r"){0,2}"
# "8x7b", "e2b", "6.7b", "7/13/70b", "30b-a3b"; "135m" only where a family makes it a size.
_ONE_SIZE = r"\d{1,4}(?:\.\d{1,2})?"
_SIZE = (
    r"(?P<size>(?:"
    + _ONE_SIZE
    + r"b?\s?/\s?){0,4}(?P<moe>\d{1,2}x)?e?"
    + _ONE_SIZE
    + r"\s?(?P<unit>b|m)"
    r"(?![a-z0-9]))(?P<active>-a\d{1,3}(?:\.\d)?b)?(?:[-\s_](?:instruct|chat|it|hf|base))?"
    r"(?P<tag>[-\s_]v\d(?:\.\d{1,2})?(?![a-z0-9]))?"
)
# The end of every _SIZE ("7b", "8x7 b", "360m"): text without one has no family + size.
_SIZE_HINT = lazy_pattern(r"\d\s?[bm](?![a-z0-9])")
# The letters a family name can start with ("(?:deepseek)?r1..." starts with d or r): other
# positions fail at once instead of trying every family.
_FAMILY_START = (
    "(?=["
    + "".join(sorted({name[0] for name in FAMILIES if name[0].isalpha()} | {"d", "r"}))
    + "])"
)
_FAMILY_SIZE = lazy_pattern(
    _FAMILY_START
    + r"(?:(?<![a-z])|(?<=tune))(?P<fam>"
    + _FAMILY
    + r")"
    + _VERSION
    + _MID
    + _FILL
    + r"[-\s_(:]{0,2}"
    + _SIZE
)
_SIZE_FAMILY = lazy_pattern(
    r"(?<![a-z0-9_.])(?P<size>" + _ONE_SIZE + r")\s?b\s?(?:的|-)?\s?(?P<fam>" + _FAMILY + r")"
    r"(?P<ver>\d{1,2}(?:\.\d{1,2})?)?"
)
_FAMILY_ONLY = lazy_pattern(
    _FAMILY_START
    + r"(?<![a-z])(?P<fam>"
    + _FAMILY
    + r")"
    + _ANY_VERSION
    + r"(?:[-\s_](?P<tier>mini|small|medium|large|tiny|nano))?(?![a-z])"
    # "the guanaco dataset", "alpaca format": a family name used for data, not the model.
    r"(?!\s?(?:dataset|data|format|template|style|prompt))"
)
_BARE_SIZES = lazy_pattern(
    r"(?<![a-z0-9_.])(?P<size>(?:" + _ONE_SIZE + r"b?\s?/\s?){0,4}" + _ONE_SIZE + r")\s?"
    r"(?:b\b|bn\s?(?:param|model)|b(?=[^\x00-\x7f])|b(?=param|model))"
)
_BILLION_PARAMS = lazy_pattern(r"(?<![a-z0-9_.])(?P<size>" + _ONE_SIZE + r")\s?(?:bn|b)\s?param")
_MILLION_PARAMS = lazy_pattern(
    r"(?<![a-z0-9_.])(?P<size>\d{1,4})\s?(?:m|mn)\s?(?:-\s?)?(?:param\w{0,6}|model)(?![a-z])"
)
# An MoE size with no family ("8x7b") names the model; it is never a GPU count.
_BARE_MOE = lazy_pattern(r"(?<![a-z0-9_.])(?P<moe>\d{1,2}x\d{1,3}b)(?![a-z0-9])")
_GB_TYPO = lazy_pattern(
    r"(?<![a-z0-9_.])(?P<size>\d{1,3})\s?b\s(?:is|are|should be)\s(?:sufficient|enough)"
)
_VERSION_SIZE_TRAP = lazy_pattern(r"\s?b?\s?\(?\s?\d{1,3}\s?b\b")

# HF repo ids: org/name with a letter in each and a digit or hyphen in the name (not "tokens/s").
_HF_ID = lazy_pattern(
    r"(?<![a-z0-9_./-])(?P<id>(?P<org>[a-z][a-z0-9_.-]{1,38}[a-z0-9])/(?P<name>[a-z0-9][a-z0-9_.-]"
    r"{1,95}))"
    r"(?![a-z0-9_]|\.\d)"
)
_ID_SIZE = lazy_pattern(
    r"(?<![a-z0-9.])(?P<moe>\d{1,2}x)?(?P<size>\d{1,4}(?:\.\d{1,2})?)b(?![a-z])"
)
_ID_QUANT = lazy_pattern(r"bnb[-_]?4bit|-4bit|gptq|awq|int4|int8|-8bit")


# Sizes models are commonly released at: only these split a glued "llama370b" into 3 + 70b.
RELEASED_SIZES_B = {0.5, 1, 1.1, 1.5, 1.7, 2, 3, 4, 6, 6.7, 7, 8, 9, 11, 12, 13, 14, 15, 20, 22, 27}
RELEASED_SIZES_B |= {30, 32, 33, 34, 35, 40, 65, 70, 72, 90, 110, 120, 123, 180, 235, 405, 671}


@dataclass
class _Family:
    """A family as written ("qwen2-vl"), naming each size it is asked about."""

    name: str
    version: str
    variant: str = ""
    size_prefix: str = ""  # "e" of Gemma's "E2B"
    size_suffix: str = ""  # "-a3b" of an MoE, " v0.3" of a release

    @property
    def label(self) -> str:
        return self.name + self.version + (f"-{self.variant}" if self.variant else "")

    def billions(self, size_b: float) -> str:
        return f"{self.label} {self.size_prefix}{whole(size_b)}b{self.size_suffix}"

    def millions(self, size_b: float) -> str:
        return f"{self.label} {whole(round(size_b * 1000, 3))}m"


_FAMILY_PATTERNS = [(lazy_pattern(pattern), info) for pattern, info in FAMILIES.items()]


def _family_of(m: re.Match[str]) -> tuple[str, tuple[str, ...]]:
    """The FAMILIES entry whose pattern matched the `fam` group (in place: some look ahead)."""
    start, end = m.span("fam")
    for pattern, info in _FAMILY_PATTERNS:
        if pattern.fullmatch(m.string, start, end):
            return info
        found = pattern.match(m.string, start)
        if found and found.end() == end:
            return info
    raise KeyError(m.group("fam"))


def _sizes(written: str) -> list[float]:
    return [float(part.strip().rstrip("b").lstrip("e")) for part in written.split("/")]


def _put_sizes(r: Reading, sizes: list[float], name_for: Callable[[float], str] | None) -> None:
    """The first size is the job; the others ("7/13/70b") are the comparison's other jobs. A model
    named after the job ("Llama-3-8B vs Llama-3-70B") is another job when the text compares."""
    if "params_b" in r.fields:
        others = [size for size in sizes if whole(size) != r.fields["params_b"]]
        if not COMPARING.search(r.text):
            return
        first = None
    else:
        first, *others = sizes
        r.put("params_b", whole(first))
    if name_for and first is not None:
        r.put("model", name_for(first))
    for size in others:
        alternative: dict[str, Any] = {"params_b": whole(size)}
        if name_for:
            alternative["model"] = name_for(size)
        r.alternatives.append(alternative)


def _read_hf_ids(r: Reading) -> None:
    for m in r.matches_if(("/",), _HF_ID):
        name = m.group("name")
        if not (re.search(r"[a-z]", name) and re.search(r"[\d-]", name)):
            continue
        if "model" in r.fields:
            continue
        r.put("model", r.cased.get(m.group("id"), m.group("id")))
        size = _ID_SIZE.search(name)
        if size and not size.group("moe"):
            r.put("params_b", whole(float(size.group("size"))))
        quant = _ID_QUANT.search(name)
        if quant:
            bits = quant.group()
            value = (
                "int8" if "8" in bits else ("int4" if bits in ("gptq", "awq", "int4") else "nf4")
            )
            r.put("quant", value, PARSING("quant_in_id", bits=bits.strip("-"), value=value))
        r.take(m)


def _split_glued(size_text: str, versions: tuple[str, ...]) -> tuple[str, str]:
    """ "370b" after "llama" is llama3 + 70b: split when only the split gives a released size."""
    digits = size_text[:-1]
    if float(digits) in RELEASED_SIZES_B:
        return "", size_text
    for version in versions:
        rest = digits[len(version) :]
        if digits.startswith(version) and rest and float(rest) in RELEASED_SIZES_B:
            return version, rest + "b"
    return "", size_text


def _read_family_sizes(r: Reading) -> None:
    for m in r.matches_when(_SIZE_HINT, _FAMILY_SIZE):
        canonical, versions = _family_of(m)
        version = m.group("ver") or ""
        size_text = m.group("size").replace(" ", "")
        if version and version not in versions:
            continue
        if not version and not m.group("moe") and size_text.rstrip("bm") in versions:
            # "LLaVA 1.6B (7B, 13B)": a known version written with a B, sizes follow.
            rest = r.text[m.end() : m.end() + 24]
            if _VERSION_SIZE_TRAP.match(rest):
                r.assume(PARSING("version_not_size", model=canonical, size=size_text.rstrip("b")))
                # Drop the "B" so the sizes that follow are named "llava1.6 7b".
                b_at = m.end("size") - 1
                r.text = r.text[:b_at] + " " + r.text[b_at + 1 :]
                continue
        if not version and versions and re.fullmatch(r"\d{2,4}b", size_text):
            version, size_text = _split_glued(size_text, versions)
        family = _Family(canonical, version, variant=m.group("mid").strip(" -_"))
        if m.group("moe"):
            r.put("model", f"{canonical}{version} {size_text}")
        elif m.group("unit") == "m":
            millions = _sizes(size_text.replace("m", ""))
            _put_sizes(r, [size / 1000 for size in millions], family.millions)
        else:
            # "mistral-7b-v0.3": a release tag after the size stays in the name.
            family.size_suffix = (m.group("active") or "") + (m.group("tag") or "").replace(
                "-", " "
            )
            family.size_prefix = "e" if size_text.startswith("e") else ""
            _put_sizes(r, _sizes(size_text), family.billions)
            if size_text.startswith("e"):
                r.assume(PARSING("effective_size", written=size_text.upper(), size=size_text[1:]))
        r.take(m)


def _read_size_families(r: Reading) -> None:
    for m in r.matches_at_numbers(_SIZE_FAMILY):
        canonical, versions = _family_of(m)
        version = m.group("ver") or ""
        version = version if version in versions else ""
        size = float(m.group("size"))
        r.put("params_b", whole(size))
        r.put("model", f"{canonical}{version} {whole(size)}b")
        r.take(m)


def _read_bare_sizes(r: Reading, family: _Family | None) -> None:
    for m in r.matches_at_numbers(_GB_TYPO):
        other_size = _BARE_SIZES.search(r.text[: m.start()] + r.text[m.end() :])
        if "params_b" in r.fields or other_size:
            size = m.group("size")
            r.put("gpu_vram_gb", int(size), PARSING("typo_gb", size=size))
            r.take(m)
    sizes: list[float] = []
    for m in r.matches_at_numbers(_MILLION_PARAMS):
        sizes.append(int(m.group("size")) / 1000)
        r.take(m)
    for pattern in (_BILLION_PARAMS, _BARE_SIZES):
        for m in r.matches_at_numbers(pattern):
            sizes += [s for s in _sizes(m.group("size")) if s not in sizes]
            r.take(m)
    if not sizes:
        return
    if "params_b" in r.fields:
        _compare_with_named(r, sizes)
        return
    _put_sizes(r, sizes, family.billions if family else None)


def _compare_with_named(r: Reading, sizes: list[float]) -> None:
    """ "llama 3 8b vs 70b": bare sizes after a named model are the same family at that size."""
    first = r.fields["params_b"]
    if not COMPARING.search(r.text):
        return
    named = r.fields.get("model", "")
    for size in sizes:
        if size == first:
            continue
        alternative: dict[str, object] = {"params_b": whole(size)}
        if named.endswith(f" {first}b"):
            alternative["model"] = f"{named[: -len(f'{first}b')]}{whole(size)}b"
        r.alternatives.append(alternative)


# Words of a name as the catalog compares them: ASCII words (dots kept: "4.5") and runs of
# other letters ("千问"); a name is at most this many words long.
_NAME_WORD = lazy_pattern(r"[a-z0-9.]+|[^\x00-\x7f\s,;:!?()，。？！、]+")
_MAX_NAME_WORDS = 7


def _family_reader_names(text: str, name: str) -> bool:
    """Whether the family reader (read_sizes) reads `text` alone as the same model, as it
    writes it ("phi3 mini", "mixtral"): then it is left to that reader."""
    m = _FAMILY_ONLY.fullmatch(text)
    if m is None:
        return False
    canonical, versions = _family_of(m)
    version = m.group("ver") or ""
    label = canonical + (version if version in versions else "")
    if m.group("tier"):
        label += f" {m.group('tier')}"
    return names_in_text().get(squash(label)) == name


def _read_catalog_names(r: Reading) -> None:
    """A catalog model named without a size the family readers know ("Kimi K2", "GLM4.5 Air",
    "Llama4 Maverick", "DeepSeek V3"): the longest run of words whose loose form is a catalog
    name."""
    known = names_in_text()
    words = list(_NAME_WORD.finditer(r.text))
    for first in range(len(words)):
        for last in range(min(len(words), first + _MAX_NAME_WORDS) - 1, first - 1, -1):
            start, end = words[first].start(), words[last].end()
            name = known.get(squash(r.text[start:end]))
            if name is not None and not _family_reader_names(r.text[start:end], name):
                r.put("model", name)
                # The span as a match, so that `take` blanks exactly the name.
                span = lazy_pattern(f".{{{end - start}}}", re.DOTALL).match(r.text, start)
                if span:
                    r.take(span)
                return


def read_model(r: Reading) -> None:
    """HF ids and family names (run before GPUs so "mixtral 8x7b" is never a GPU count), then
    catalog names the family readers do not spell."""
    _read_hf_ids(r)
    _read_family_sizes(r)
    _read_size_families(r)
    for m in r.matches_at_numbers(_BARE_MOE, needs=("x",)):
        r.put("model", m.group("moe"))
        r.take(m)
    if "model" not in r.fields:
        _read_catalog_names(r)


def read_sizes(r: Reading) -> None:
    """Bare sizes ("13B"), read after data and GPU readers have taken "8B tokens" and "80G"."""
    family = None
    if "model" not in r.fields:
        for m in r.matches(_FAMILY_ONLY):
            canonical, versions = _family_of(m)
            version = m.group("ver") or ""
            family = _Family(canonical, version if version in versions else "")
            if m.group("tier"):
                r.put("model", f"{family.name}{family.version} {m.group('tier')}")
            r.take(m)
            break
    _read_bare_sizes(r, family)
    if family and "model" not in r.fields:
        r.put("model", family.name + family.version)
