"""Money, time and speed: a budget ("budget $10", "under 50 dollars", "$20", "budget 500" in
dollars), a deadline ("by tomorrow", "in 6 hours", "within 2 days", "5.5days内", "3天x24 GPU
小时"), and a measured speed ("14k tokens/sec").

Prices per hour ("12$/h") are not a budget; a budget in yuan ("预算 5000 元") is set aside with a
note asking for dollars; time a run took ("took 5 days") is not a deadline.
"""

from __future__ import annotations

from planner.messages import PARSING
from planner.parsing.numbers import COUNT_SUFFIX, NUM, scaled, whole
from planner.parsing.reading import Reading
from planner.patterns import lazy_pattern
from planner.units import convert

# A word every price or budget contains.
_MONEY_WORDS = ("$", "usd", "dollar", "bucks", "美元", "美金", "刀")
_PER_HOUR = r"\s?(?:/\s?(?:h|hr|hour|gpu)|per\s(?:hour|hr|gpu)|an\shour|/小时|每小时)"
_RATE = lazy_pattern(
    r"(?:\$\s?(?P<num>" + NUM + r")|(?P<num2>" + NUM + r")\s?(?:\$|usd|dollars?))" + _PER_HOUR
)
_BUDGET = lazy_pattern(
    r"(?:(?:\$|(?<![a-z])usd)\s?(?P<num>"
    + NUM
    + r")\s?(?P<scale>k)?|(?P<num2>"
    + NUM
    + r")\s?(?P<scale2>k)?\s?"
    r"(?:\$|usd|dollars?|bucks|美元|美金|刀)(?![a-z]))"
)
# A budget in yuan ("预算 5000 元", "5000块预算", "2000 元以内", "RMB 3000", "¥2000", "budget 5000
# rmb"): prices are dated US-dollar quotes and no dated exchange rate is kept, so it is not
# converted but set aside with a note asking for the dollar figure. "块" alone is also the Chinese
# count of cards ("4块4090"): it is yuan only after 预算/budget or before 预算/以内/左右.
_YUAN_WORDS = ("元", "块", "rmb", "cny", "¥", "￥", "yuan", "人民币")
_YUAN = lazy_pattern(
    r"(?:(?<![a-z])(?P<key>budget|预算)\s?(?:of|is|:|=|under|around|about|max|是|有|大概|约|为|~)?\s?)?"
    r"(?:(?:[¥￥]|(?<![a-z])(?:rmb|cny))\s?" + NUM + r"\s?k?|" + NUM + r"\s?k?\s?"
    r"(?:元|(?<![a-z])(?:rmb|cny|yuan)(?![a-z])|人民币|块钱|(?(key)块(?![\da-z卡])|"
    r"块(?=\s?(?:预算|以内|之内|左右)))))(?:\s?(?:预算|以内|之内|左右))?"
)
# "budget 500", "budget: 2k", "1.5k budget": a budget with no currency is in dollars (stated).
# "token budget 8k" and "budget 200 GPU-hours" are not money.
_NOT_MONEY = (
    r"(?![\d.]|\s?(?:tokens?|toks?|gpus?|gpu-hours?|hours?|hrs?|h|days?|d|steps?|samples?|gb|gib|g|"
    r"cards?|ctx|context|vram)(?![a-z]))"
)
_BUDGET_KEYED = lazy_pattern(
    r"(?<![a-z])(?<!token\s)(?<!tokens\s)(?<!time\s)(?<!compute\s)(?:budget|max\sspend|spend)\s?"
    r"(?:of|is|:|=|under|around|about|max|cap|~)?\s?(?:of\s|about\s|around\s|~)?"
    r"(?P<num>"
    + NUM
    + r")\s?(?P<scale>k)?"
    + _NOT_MONEY
    + r"|(?<![a-z0-9_.$])(?P<num2>"
    + NUM
    + r")\s?(?P<scale2>k)?\s?(?:budget|spend)(?![a-z])"
)
_UNIT_TIME = r"(?P<unit>hours?|hrs?|h|days?|d|weeks?|wk|minutes?|mins?|小时|天|周)"
_DEADLINE = lazy_pattern(
    r"(?:by|in|within|under|less\sthan|before|max(?:imum)?|deadline\s?(?:of|is|:)?|at\smost|only\s"
    r"have|have|for|要在|需要在|不能超过|不超过|最多|限时|跑|训练)\s?(?:about\s|~)?(?P<num>"
    + NUM
    + r"|a|an)\s?"
    + _UNIT_TIME
    + r"(?![a-z])|(?P<num2>"
    + NUM
    + r")\s?(?P<unit2>hours?|hrs?|h|小时|天|days?|d)\s?(?:内|以内|之内|deadline|time\slimit|limit|"
    r"max(?![a-z])|or\sless)"
)
# A number (or "a", "an") then the first letter of a unit: part of every _DEADLINE match.
# "ran for 48 hours", "it took 6 days", "跑了3天": time already spent, not a deadline ("跑3天", "for
# 3 days" with nothing spent before them are the time the run may take).
_SPENT = lazy_pattern(
    r"(?:took|ran|run|running|trained|training|been|spent|last\stime|lasted|跑了|用了|花了|训练了)"
    r"\W{0,3}(?:\w+\s){0,3}$"
)
# "200 GPU-hours", "200个GPU小时": compute, not a wall-clock deadline until the GPUs are known.
_GPU_HOURS = lazy_pattern(
    r"(?<![a-z0-9_.])(?P<num>" + NUM + r")\s?(?P<k>k)?\s?(?:个\s?)?(?:[a-z0-9]{2,6}\s)?gpu[-\s]?"
    r"(?:hours?|hrs?|h|小时)(?![a-z])"
)
# "3天x24 GPU 小时", "3 days x 24 gpu hours": days × hours a day is the wall-clock time the run
# may take, as the days × hours in front of "5x24x8 A100 GPU hours" are (phrasing.md).
_DAY_HOURS = lazy_pattern(
    r"(?<![\d.])(?P<days>\d{1,3}(?:\.\d{1,2})?)\s?(?:天|days?|d)\s?[x*]\s?(?P<per_day>\d{1,2})"
    r"(?![\d.])\s?(?:个\s?)?(?:gpu[-\s]?)?(?:hours?|hrs?|h|小时)(?![a-z])"
)
# A day count and its "x": part of every _DAY_HOURS match.
_DAY_HOURS_HINT = lazy_pattern(r"\d\s?(?:天|days?|d)\s?[x*]")
_DEADLINE_HINT = lazy_pattern(r"[\dan]\s?[hdwm小天周]")
_NAMED_SPELLINGS = {
    r"by\s(?:tomorrow|tmr|tmrw)|明天": (24, "by tomorrow read as within 24 hours"),
    r"by\s(?:tonight|this\sevening|end\sof\s(?:the\s)?day|eod)|今晚": (
        12,
        "by tonight read as 12 h",
    ),
    r"overnight": (12, "overnight read as 12 hours"),
    r"by\s(?:the\s)?(?:end\sof\s(?:the\s)?week|weekend)|本周": (
        120,
        "by end of week read as 5 days",
    ),
}
_NAMED = [(lazy_pattern(pattern), reading) for pattern, reading in _NAMED_SPELLINGS.items()]
_SPEED = lazy_pattern(
    r"(?<![a-z0-9_.])(?P<num>"
    + NUM
    + r")\s?(?P<scale>"
    + COUNT_SUFFIX
    + r")?\s?(?:tokens?|toks?)\s?"
    r"(?:/\s?s(?:ec|econd)?|per\s(?:sec|second|s))(?![a-z])"
)


def read_speed(r: Reading) -> None:
    for m in r.matches_at_numbers(_SPEED, needs=("tok",)):
        r.number(m, "num", "The speed")
        r.put("tokens_per_s", whole(scaled(m.group("num"), m.group("scale"))))
        r.take(m)


def read_gpu_hours(r: Reading) -> None:
    """Before the GPU reader, so "200 GPU-hours" is never 200 GPUs."""
    for m in r.matches_when(_DAY_HOURS_HINT, _DAY_HOURS):
        if _SPENT.search(r.text, max(0, m.start() - 30), m.start()):
            continue
        days = r.number(m, "days", "The days")
        per_day = int(m.group("per_day"))
        hours = whole(round(days * per_day, 2))
        said = PARSING("day_hours", days=whole(days), per_day=per_day, hours=hours)
        r.put("deadline_hours", hours, said)
        r.take(m)
    for m in r.matches_at_numbers(_GPU_HOURS, needs=("gpu",)):
        hours = r.number(m, "num", "The GPU-hours") * (1000 if m.group("k") else 1)
        if not _SPENT.search(r.text, max(0, m.start() - 30), m.start()):
            r.gpu_hours = hours
        r.take(m)
        return


def read_budget(r: Reading) -> None:
    for m in r.matches_if(_YUAN_WORDS, _YUAN):
        r.notes.append(PARSING("note.yuan_budget", written=m.group(0).strip()))
        r.take(m)
    for m in r.matches_if(_MONEY_WORDS, _RATE):
        r.notes.append(PARSING("note.hourly_price", price=m.group(0).strip()))
        r.take(m)
    for m in r.matches_if(_MONEY_WORDS, _BUDGET):
        group = "num" if m.group("num") else "num2"
        value = r.number(m, group, "The budget")
        if m.group("scale") or m.group("scale2"):
            value *= 1000
        r.put("budget_usd", whole(value))
        r.take(m)
    for m in r.matches_if(("budget", "spend"), _BUDGET_KEYED):
        group = "num" if m.group("num") else "num2"
        value = r.number(m, group, "The budget")
        if m.group("scale") or m.group("scale2"):
            value *= 1000
        written = m.group(group) + (m.group("scale") or m.group("scale2") or "")
        r.put("budget_usd", whole(value), PARSING("budget_no_currency", written=written))
        r.take(m)
    for pattern, (hours, note) in _NAMED:
        m = pattern.search(r.text)
        if m:
            r.put("deadline_hours", hours, note)
            r.take(m)
    for m in r.matches_when(_DEADLINE_HINT, _DEADLINE):
        group = "num" if m.group("num") else "num2"
        written = m.group(group)
        value = 1.0 if written in ("a", "an") else r.number(m, group, "The deadline")
        unit = m.group("unit") or m.group("unit2")
        if m.group(0).startswith("for") and _SPENT.search(
            r.text, max(0, m.start() - 30), m.start()
        ):
            continue
        r.put("deadline_hours", whole(round(convert(value, unit, "hour"), 2)))
        r.take(m)
    if r.gpu_hours is not None and "deadline_hours" not in r.fields:
        gpus = r.fields.get("num_gpus")
        if gpus:
            hours = whole(round(r.gpu_hours / gpus, 2))
            said = PARSING("gpu_hours", gpu_hours=whole(r.gpu_hours), gpus=gpus, hours=hours)
            r.put("deadline_hours", hours, said)
        else:
            r.doubt = r.doubt or PARSING("doubt.gpu_hours", gpu_hours=whole(r.gpu_hours))
