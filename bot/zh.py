"""The Chinese answer: gpuplan's English reply copy (bot/phrases.py and the planner's stated
assumptions) rewritten phrase by phrase. Numbers, card and model names stay as they are.

The rules (bot/zh_rules.tsv) are tried in order, longest and most specific first; each is a
regular expression over the English phrase and its Chinese with the same groups. A phrase no rule
knows stays in English, so a new sentence is never lost, only untranslated (tests/test_language.py
lists the sections that must come out Chinese).
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

# Section headings and table words the renderers show, keyed by their English.
LABELS = {
    "Recommendation": "推荐",
    "Side by side": "并排对比",
    "Ways to make it fit or cost less": "放得下或更省钱的办法",
    "Suggestions": "建议",
    "What changed": "变化",
    "Warnings": "提醒",
    "You could also tell me": "还可以这样问",
    "Try asking": "可以试试问",
    "Assumptions": "假设",
    "Memory per GPU": "每张GPU显存",
    "Memory": "显存",
    "Cards": "显卡",
    "card": "显卡",
    "verdict": "结论",
    "hours": "小时",
    "cost": "费用",
    "fits": "放得下",
    "tight": "勉强",
    "no": "放不下",
    "does not fit": "放不下",
    "Prices": "价格",
    "range": "范围",
    "Try": "可以试试",
    "Assumed": "假设",
    "Prices as of": "价格日期",
    "Prices from": "价格来自",
    "prices": "价格",
    # The chart's legend (bot/phrases.py CHART_VERDICTS).
    "tight (under 10 % headroom)": "勉强（余量不足 10 %）",
    "does not fit: no hours, no cost": "放不下：无时长、无费用",
    # The chart's memory-against-context panel (bot/chart.py).
    "context (tokens)": "上下文（token）",
    "memory per GPU (GiB)": "每张GPU显存（GiB）",
    # The card table's columns (console, Slack, Discord).
    "fit": "结论",
    "headroom": "余量",
    "free GiB": "余量 GiB",
    "±GiB": "余量",
    "time": "时长",
    "cost $": "费用 $",
    "$/GPU-h": "每GPU小时",
    "$/h": "每小时",
    # Highlighted rows (bot/phrases.py).
    "requested": "所问",
    "fewest of your card": "所问卡最少张数",
    "cheapest": "最便宜",
    "fastest": "最快",
    "best value": "最划算",
    "within budget": "预算内",
    "meets deadline": "赶得上期限",
    "spot": "竞价",
    # Memory components (planner.plan.MemoryBreakdown).
    "weights": "权重",
    "adapter": "适配器",
    "gradients": "梯度",
    "optimizer": "优化器",
    "activations": "激活",
    "logits": "logits",
    "overhead": "开销",
    "reference": "参考模型",
    "value": "价值模型",
    "reward": "奖励模型",
    "rollout": "推理引擎",
}

RULES_FILE = Path(__file__).with_name("zh_rules.tsv")


@cache
def _rules() -> list[tuple[re.Pattern[str], str]]:
    rules = []
    for line in RULES_FILE.read_text(encoding="utf-8").splitlines():
        if line and not line.startswith("#"):
            pattern, chinese = line.split("\t")
            rules.append((re.compile(pattern), chinese))
    return rules


# Text some rule may still translate: English words, or a duration's short unit ("4.3 h",
# "18 min": planner.units.hours_text), which a table cell holds alone.
_UNTRANSLATED = re.compile(r"[A-Za-z]{3,}|\d (?:h|min)\b")


def translate(english: str) -> str:
    """The Chinese for one reply string; what no rule knows stays as written."""
    text = english
    for pattern, chinese in _rules():
        if _UNTRANSLATED.search(text) is None:
            break
        text = pattern.sub(chinese, text)
    return text


def translate_labels(joined: str) -> str:
    """ "cheapest, spot" → "最便宜、竞价": a highlighted row's labels, each by LABELS."""
    return "、".join(LABELS.get(part, part) for part in joined.split(", "))
