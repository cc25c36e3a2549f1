"""What the two speed shortcuts in planner/market/options.py buy, as a share of make_plan's time.

- `trusted_option` (builds each Option row through pydantic's slots instead of validating it);
- the per-price-table MarketCards cache (`market_cards`, keyed by the table's id).

Each is replaced by its plain form (validated `Option(**values)`; the cards rebuilt for every
plan) and the median make_plan time over 36 varied jobs is compared, best of five rounds each.
Prints one line per shortcut. Run: .venv/bin/python bench/plan_shortcuts.py
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable

import planner.market.options as options
from planner import make_plan
from planner.plan import Option
from planner.spec import JobSpec

JOBS = [
    JobSpec(params_b=size, method=method, seq_len=seq_len, dataset_tokens=2e7, gpu=gpu)
    for size in (7, 13, 70)
    for method in ("lora", "qlora", "full")
    for seq_len in (2048, 8192)
    for gpu in (None, "4090")
]
ROUNDS = 5


def _median_plan_ms() -> float:
    times = []
    for job in JOBS:
        start = time.perf_counter()
        make_plan(job)
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


def _best_of_rounds() -> float:
    _median_plan_ms()  # warm the caches every variant shares (catalogs, card names)
    return min(_median_plan_ms() for _ in range(ROUNDS))


def _validated_rows() -> Callable[[], None]:
    shortcut = options.trusted_option
    options.trusted_option = lambda values: Option(**values)
    return lambda: setattr(options, "trusted_option", shortcut)


def _uncached_cards() -> Callable[[], None]:
    cached = options.market_cards

    def rebuilt(prices):
        options._cards_by_table.clear()
        return cached(prices)

    options.market_cards = rebuilt
    return lambda: setattr(options, "market_cards", cached)


def main() -> None:
    for name, plain in (
        ("trusted_option vs validated Option rows", _validated_rows),
        ("market_cards cache vs cards rebuilt per plan", _uncached_cards),
    ):
        with_shortcut = _best_of_rounds()
        restore = plain()
        try:
            without = _best_of_rounds()
        finally:
            restore()
        gain = (without - with_shortcut) / without * 100
        print(
            f"{name}: {with_shortcut:.3f} ms with, {without:.3f} ms without "
            f"({gain:.0f} % of plan time saved)"
        )


if __name__ == "__main__":
    main()
