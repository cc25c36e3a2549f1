"""Preference and RL fine-tuning: the objective and what only those jobs say.

Objective: DPO ("direct preference optimization", 偏好优化, 直接偏好优化), KTO, ORPO, SimPO, CPO,
GRPO ("RL with verifiable rewards", RLVR, DAPO, 强化学习), RLOO, PPO (RLHF); "DPO vs ORPO" is a
comparison. Generations: "G=8", "num_generations 8", "8 generations/samples/completions/rollouts per
prompt", "group size 8", "每个prompt 8个回答"; the round: "generation_batch_size 512",
"generation batch 512", "2048 rollouts per step", "每步 2048 条 rollout". Lengths ("k" = 1024 as
for context): "1k prompt", "prompt length 512", "2k completion", "max_completion_length 2048",
"max_new_tokens", "response length 1k". Rollout: "vllm colocate", "vLLM server", "vLLM on a separate
GPU" / "on 2 extra GPUs", "HF generate", "gpu_memory_utilization 0.5"; the colocated engine's "vLLM
TP 4", "tensor_parallel_size=2", "sleep mode", "free_cache_engine", "no sleep mode". A reward model:
"7B reward model", "RM 8b", "reward model Skywork/Skywork-Reward-Llama-3.1-8B". The reference:
"without the reference model", "precompute reference log-probs", "beta 0.04". RL datasets in
prompts: "2000 prompts", "500 steps of 64 prompts"; for preference/online jobs also "10k
pairs/samples/examples".

`read_objective` runs right before the method reader (after the model's), ahead of the context,
dataset and GPU readers, and blanks what it reads: "1k prompt" is a length, not 1,000 samples;
"8 generations" is not 8 GPUs. `read_reward_model` runs before the model reader.
"""

from __future__ import annotations

import re

from planner.messages import PARSING
from planner.parsing.dataset import LENGTH_AFTER_COUNT
from planner.parsing.numbers import COUNT_SUFFIX, NUM, scaled, whole
from planner.parsing.reading import COMPARING, Reading
from planner.patterns import lazy_pattern

_OBJECTIVE_SPELLINGS = [
    (
        r"(?<![a-z])(?:dpo|direct\spreference(?:\soptimi[sz]ation)?)(?![a-z])|直接偏好优化|偏好优化",
        "dpo",
    ),
    (r"(?<![a-z])kto(?![a-z])", "kto"),
    (r"(?<![a-z])orpo(?![a-z])", "orpo"),
    (r"(?<![a-z])simpo(?![a-z])", "simpo"),
    (r"(?<![a-z])cpo(?![a-z])", "cpo"),
    (
        r"(?<![a-z])(?:grpo|dapo|rlvr|group\srelative\spolicy\soptimi[sz]ation|rl\swith\s"
        r"verifiable\srewards?|reinforcement\slearning\swith\sverifiable\srewards?)(?![a-z])|"
        r"可验证奖励的?强化学习|强化学习",
        "grpo",
    ),
    (r"(?<![a-z])(?:rloo|reinforce\sleave[-\s]one[-\s]out)(?![a-z])", "rloo"),
    (r"(?<![a-z])(?:ppo|rlhf|proximal\spolicy\soptimi[sz]ation)(?![a-z])", "ppo"),
]
_OBJECTIVES = [(lazy_pattern(pattern), name) for pattern, name in _OBJECTIVE_SPELLINGS]
# A word every objective spelling contains.
_OBJECTIVE_WORDS = ("po", "kto", "rl", "preference", "偏好", "强化", "reinforce", "relative")
_LOOSE_RL = lazy_pattern(r"强化学习|reinforcement")
# Fewer than this is a count of something else ("3 prompts I tried").
MIN_PROMPTS = 10
_PREFERENCE_OR_ONLINE = frozenset({"dpo", "kto", "orpo", "simpo", "cpo", "grpo", "rloo", "ppo"})

_PER_PROMPT = r"(?:\s?(?:per|each|for\seach|/)\s?(?:prompt|question|query|problem)s?)"
_GENERATIONS = lazy_pattern(
    r"(?:(?<![a-z_.])g\s?[=:]|(?:num_generations|n_samples_per_prompt|rollout[._\s]n|group[-_\s]"
    r"size|num[-_\s]generations|generations)\s?[=:]?)\s?(?P<a>\d{1,4})(?![\d.a-z])|"
    r"(?<![\d.])(?P<b>\d{1,4})\s?(?:generations?|samples?|completions?|rollouts?|responses?|"
    r"answers?|outputs?)(?:" + _PER_PROMPT + r"|(?=\s?(?:,|$|\sand|\swith|\son|\.)))|"
    r"(?<![\d.])(?P<c>\d{1,4})\s?(?:generations?|samples?|completions?|rollouts?|responses?)"
    + _PER_PROMPT
    + r"|每个?(?:prompt|问题|提示)\s?(?:采样|生成)?\s?(?P<d>\d{1,4})\s?(?:个|条|次)"
)
_GENERATION_WORDS = ("g", "generation", "sample", "completion", "rollout", "response", "answer")
# The whole job's round of completions (TRL's generation_batch_size, NeMo RL's G-GBS).
_GENERATION_BATCH = re.compile(
    r"generation[-_\s]batch(?:[-_\s]size)?\s?(?:of|=|:|is)?\s?(?P<a>\d{1,6})(?![\d.a-z])|"
    r"(?<![\d.])(?P<b>\d{1,6})\s?(?:rollouts?|completions?|generations?)\s?(?:per|each|/)\s?"
    r"(?:step|round|iteration)(?![a-z])|"
    r"每(?:步|轮)\s?(?P<c>\d{1,6})\s?(?:条|个)?\s?(?:rollouts?|回答|生成|样本)"
)
_GENERATION_BATCH_WORDS = ("batch", "step", "round", "iteration", "每步", "每轮")
_LENGTH = r"(?P<num>" + NUM + r")\s?(?P<k>k)?(?![a-z0-9_]|\.\d)"
_PROMPT_WORDS = r"(?:prompts?|questions?|queries)"
_COMPLETION_WORDS = r"(?:completions?|responses?|answers?|generations?|outputs?)"
_PROMPT_LEN = (
    lazy_pattern(
        r"(?:max_prompt_length|max_prompt_len|prompt[-_\s](?:length|len|tokens?))\s?"
        r"(?:of|=|:|is)?\s?" + _LENGTH
    ),
    lazy_pattern(
        r"(?<![\d.])" + _LENGTH + r"[-\s]?(?:tokens?\s|token[-\s])?prompt(?![a-z])"
        r"(?!\s?(?:per|each))"
    ),
)
_COMPLETION_LEN = (
    lazy_pattern(
        r"(?:max_completion_length|max_response_length|max_new_tokens|response_length|"
        r"(?:completion|response|generation|output)[-_\s](?:length|len|tokens?))\s?"
        r"(?:of|=|:|is)?\s?" + _LENGTH
    ),
    lazy_pattern(
        r"(?<![\d.])"
        + _LENGTH
        + r"[-\s]?(?:tokens?\s|token[-\s])?"
        + _COMPLETION_WORDS
        + r"(?![a-z])(?!\s?(?:per|each|/))"
    ),
)
_ROLLOUT_SERVER = lazy_pattern(
    r"vllm\s(?:server|serve|in\sserver\smode|on\s(?:a\s|its\sown\s|an?\s?other\s|a\ssecond\s|"
    r"(?P<n>\d{1,3})\s)?(?:separate|extra|more|dedicated|own|other|second|additional)?\s?"
    r"(?:gpus?|cards?))|(?:separate|dedicated)\svllm(?:\sserver)?|trl\svllm-serve|"
    r"vllm_mode\s?[=:]\s?['\"]?server"
)
_ROLLOUT_COLOCATE = lazy_pattern(
    r"vllm\s(?:colocated?|colocation|in\scolocate\smode)|colocated?\svllm|"
    r"vllm_mode\s?[=:]\s?['\"]?colocate|(?:with|using|use|via|\+)\svllm|use_vllm\s?[=:]\s?true|"
    r"(?<![a-z])vllm(?![a-z_])"
)
_ROLLOUT_TENSOR_PARALLEL = lazy_pattern(
    r"(?:vllm|rollout|engine)\s?(?:with\s|at\s)?(?:tp|tensor[-_\s]parallel(?:_size|ism)?)\s?[=:]?\s?"
    r"(?P<tp>\d{1,2})(?!\d)|(?:vllm_)?tensor_parallel_size\s?[=:]?\s?(?P<tp2>\d{1,2})(?!\d)|"
    r"(?<![a-z])(?:tp|tensor[-\s]parallel)\s?[=:]?\s?(?P<tp3>\d{1,2})\s(?:for|on|in)\s(?:the\s)?"
    r"(?:vllm|rollouts?|engine)"
)
_ROLLOUT_AWAKE = lazy_pattern(
    r"(?:no|without|w/o|not\susing)\s(?:vllm\s)?sleep(?:[-_\s]mode)?|"
    r"(?:vllm_)?enable_sleep_mode\s?[=:]\s?false"
)
_ROLLOUT_SLEEP = lazy_pattern(
    r"(?:vllm\s)?sleep[-_\s]mode|vllm\s(?:sleeps?|asleep)|(?:vllm[-_.]|--)?enable[-_]sleep(?:_mode)?|"
    r"free_cache_engine|sleep\slevel\s?[12]|睡眠模式"
)
_ROLLOUT_HF = lazy_pattern(
    r"(?:without|no|not\susing|w/o)\svllm|hf\sgenerate|use_vllm\s?[=:]\s?false|"
    r"transformers\sgenerate"
)
_FRACTION = lazy_pattern(
    r"(?:vllm_)?gpu_memory_utili[sz]ation\s?[=:]?\s?(?P<fraction>0?\.\d{1,3})|"
    r"vllm\s(?:at|with|using|taking)\s(?P<percent>\d{1,2})\s?%"
)
_REWARD_SIZE = lazy_pattern(
    r"(?<![a-z0-9.])(?P<size>\d{1,4}(?:\.\d{1,3})?)\s?b\s(?:reward\smodel|rm|奖励模型)(?![a-z])|"
    r"(?:reward\smodel|(?<![a-z])rm|奖励模型)\s?(?:of\s|is\s|=|:)?\s?(?:an?\s)?"
    r"(?P<size2>\d{1,4}(?:\.\d{1,3})?)\s?b(?![a-z0-9])|"
    r"(?:reward\smodel|reward_model(?:_path)?)\s?[=:]?\s?(?P<name>[a-z0-9_.-]{2,40}/[a-z0-9_.-]{2,96})"
)
_REFERENCE_OFF = lazy_pattern(
    r"(?:without|no|drop|skip|w/o|remove)\s(?:the\s|a\s)?ref(?:erence)?(?:\smodel)?(?![a-z])|"
    r"reference[-\s]free|precomput\w*\s(?:the\s)?ref(?:erence)?(?:\smodel)?[-_\s]?log[-_\s]?probs?|"
    r"precompute_ref_log_probs\s?[=:]?\s?true|beta\s?[=:]?\s?0(?:\.0+)?(?![\d.])"
)
_REFERENCE_ON = lazy_pattern(
    r"(?:with|keep|plus)\s(?:the\s|a\s)?ref(?:erence)?\smodel|"
    r"(?:kl\s)?beta\s?[=:]?\s?0?\.\d*[1-9]\d*|kl\s(?:penalty|term|loss)"
)
_STEPS_OF_PROMPTS = lazy_pattern(
    r"(?<![\d.])(?P<steps>" + NUM + r")\s?(?P<ss>k)?\s?(?:steps?|iterations?)\s?(?:of|x|×|\*)\s?"
    r"(?P<prompts>\d{1,6})\s?prompts?|(?<![\d.])(?P<prompts2>\d{1,6})\s?prompts?\s?(?:per|each|/|a)"
    r"\s?(?:step|iteration|batch)\s?(?:for|x|×|\*|,)?\s?(?P<steps2>" + NUM + r")\s?(?P<ss2>k)?"
    r"\s?(?:steps?|iterations?)"
)
_PROMPT_COUNT = lazy_pattern(
    r"(?<![\d.a-z])(?P<num>"
    + NUM
    + r")\s?(?P<scale>"
    + COUNT_SUFFIX
    + r")?\+?\s?(?:[a-z]{2,14}\s)?"
    r"(?:prompts|problems)(?![a-z])(?!\s?(?:per|each))"
)
_EXAMPLE_COUNT = lazy_pattern(
    r"(?<![\d.a-z])(?P<num>"
    + NUM
    + r")\s?(?P<scale>"
    + COUNT_SUFFIX
    + r")?\+?\s?(?:[a-z]{2,14}\s)?"
    # "1万对偏好数据": 对 counts pairs (the number before it already read, 万 and 千 included).
    r"(?:pairs?|samples?|examples?|rows?|preference\spairs?|偏好对|对(?:偏好)?(?:数据|样本)?|条)"
    r"(?![a-z])(?!\s?(?:per|each))(?:" + LENGTH_AFTER_COUNT + ")?"
)


def read_objective(r: Reading) -> None:
    objective = _read_objective_name(r)
    _read_generations(r)
    _read_lengths(r)
    _read_rollout(r)
    _read_reference(r)
    _read_prompts(r, objective)


def _read_objective_name(r: Reading) -> str | None:
    if not any(word in r.text for word in _OBJECTIVE_WORDS):
        return None
    found = []
    for pattern, name in _OBJECTIVES:
        for m in pattern.finditer(r.text):
            found.append((m.start(), name, m))
    if not found:
        return None
    found.sort(key=lambda item: item[0])
    names = list(dict.fromkeys(name for _, name, _ in found))
    r.put("objective", names[0])
    if len(names) > 1 and COMPARING.search(r.text):
        r.alternatives.extend({"objective": other} for other in names[1:])
    loose = next((m for _, name, m in found if name == "grpo" and _LOOSE_RL.fullmatch(m[0])), None)
    if loose is not None and names[0] == "grpo":
        r.assume("RL read as GRPO with rule-based rewards (say PPO for a reward model and critic)")
    for _, _, m in found:
        r.take(m)
    return names[0]


def _read_generations(r: Reading) -> None:
    for m in r.matches_if(_GENERATION_BATCH_WORDS, _GENERATION_BATCH):
        count = int(next(value for value in m.groups() if value))
        if count >= 1:
            r.put("generation_batch", count)
            r.take(m)
    for m in r.matches_if((*_GENERATION_WORDS, "每"), _GENERATIONS):
        written = next(value for value in m.groups() if value)
        count = int(written)
        if count >= 1:
            r.put("num_generations", count)
            r.take(m)


def _length(r: Reading, m: re.Match[str], what: str) -> int:
    value = r.number(m, "num", f"The {what.lower()} length")
    if m.group("k"):
        tokens = int(value * 1024)
        r.assume(f"{m.group('num')}k {what.lower()} read as {tokens:,} tokens")
        return tokens
    return int(value)


def _read_lengths(r: Reading) -> None:
    for name, patterns, what, words in (
        ("prompt_len", _PROMPT_LEN, "Prompt", ("prompt",)),
        (
            "completion_len",
            _COMPLETION_LEN,
            "Completion",
            ("completion", "response", "answer", "generation", "output", "new_tokens"),
        ),
    ):
        for pattern in patterns:
            for m in r.matches_if(words, pattern):
                tokens = _length(r, m, what)
                if tokens >= 1:
                    r.put(name, tokens)
                    r.take(m)


def _read_rollout(r: Reading) -> None:
    # The engine's own switches first, so "vllm tp 8" is not read as the mode alone; they imply
    # a colocated engine (planner.resolve.post_training), so a thread's "what if vllm tp 8?" keeps
    # its rollout and fraction.
    _read_engine(r)
    if "vllm" in r.text or "generate" in r.text or "utili" in r.text:
        for m in r.matches(_FRACTION):
            fraction = m.group("fraction")
            value = float(fraction) if fraction else int(m.group("percent")) / 100
            if 0 < value < 1:
                r.put("rollout_memory_fraction", value)
                r.take(m)
        if m := _ROLLOUT_HF.search(r.text):
            r.put("rollout", "hf")
            r.take(m)
        if m := _ROLLOUT_SERVER.search(r.text):
            r.put("rollout", "vllm-server")
            r.put("rollout_gpus", int(m.group("n")) if m.group("n") else 1)
            r.take(m)
        if m := _ROLLOUT_COLOCATE.search(r.text):
            if r.put("rollout", "vllm-colocate") and "coloc" not in m.group(0):
                r.assume(PARSING("vllm_colocated"))
            r.take(m)


def _read_engine(r: Reading) -> None:
    """A colocated vLLM engine's tensor-parallel size and sleep switch."""
    if "sleep" in r.text or "free_cache" in r.text or "睡眠" in r.text:
        for pattern, value in ((_ROLLOUT_AWAKE, False), (_ROLLOUT_SLEEP, True)):
            if m := pattern.search(r.text):
                r.put("rollout_sleep", value)
                r.take(m)
    if ("tp" in r.text or "tensor" in r.text) and (m := _ROLLOUT_TENSOR_PARALLEL.search(r.text)):
        r.put("rollout_tensor_parallel", int(m.group("tp") or m.group("tp2") or m.group("tp3")))
        r.take(m)


def read_reward_model(r: Reading) -> None:
    """Before the model reader, which would take a reward model's size or HF id for the
    policy's."""
    for m in r.matches_if(("reward", "rm", "奖励"), _REWARD_SIZE):
        size = m.group("size") or m.group("size2")
        name = m.group("name")
        if name:
            r.put("reward_model", r.cased.get(name, name))
        elif size:
            r.put("reward_model", f"{size}B")
        r.take(m)


def _read_reference(r: Reading) -> None:
    if not any(word in r.text for word in ("ref", "beta", "kl")):
        return
    for pattern, value in ((_REFERENCE_OFF, False), (_REFERENCE_ON, True)):
        if m := pattern.search(r.text):
            r.put("reference_model", value)
            r.take(m)


def _read_prompts(r: Reading, objective: str | None) -> None:
    for m in r.matches_if(("prompt",), _STEPS_OF_PROMPTS):
        steps = scaled(m.group("steps") or m.group("steps2"), m.group("ss") or m.group("ss2"))
        prompts = int(m.group("prompts") or m.group("prompts2"))
        total = whole(steps * prompts)
        r.put(
            "dataset_prompts",
            total,
            PARSING("steps_prompts", steps=whole(steps), prompts=prompts, total=total),
        )
        r.take(m)
    counts = r.matches_if(("prompt", "problem"), _PROMPT_COUNT)
    if objective in _PREFERENCE_OR_ONLINE:
        counts += r.matches(_EXAMPLE_COUNT)
    for m in counts:
        count = scaled(m.group("num"), m.group("scale"))
        if count < MIN_PROMPTS:
            continue
        r.put("dataset_prompts", whole(count))
        if m.groupdict().get("length"):
            length = scaled(m.group("length"), None) * (1024 if m.group("lk") else 1)
            r.put("seq_len", int(length), PARSING("example_length", tokens=int(length)))
        r.take(m)
