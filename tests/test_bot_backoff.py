"""Retry waits: full jitter under a doubling cap, never past the time budget or the attempts."""

from __future__ import annotations

import itertools

from bot.backoff import Backoff


def test_caps_double_up_to_the_longest_wait() -> None:
    backoff = Backoff(first_delay_s=0.01, max_delay_s=0.05, budget_s=100)
    waits = list(itertools.islice(backoff.delays(uniform=lambda: 1.0), 5))
    assert waits == [0.01, 0.02, 0.04, 0.05, 0.05]


def test_each_wait_is_spread_uniformly_below_its_cap() -> None:
    backoff = Backoff(first_delay_s=0.01, max_delay_s=1.0, budget_s=100)
    draws = iter([0.0, 0.5, 0.25])
    assert list(itertools.islice(backoff.delays(uniform=lambda: next(draws)), 3)) == [
        0.0,
        0.01,
        0.01,
    ]


def test_the_budget_counts_from_the_first_try_and_ends_the_waits() -> None:
    now = [10.0]
    backoff = Backoff(first_delay_s=1.0, max_delay_s=1.0, budget_s=2.5)
    delays = backoff.delays(clock=lambda: now[0], uniform=lambda: 1.0)
    now[0] = 11.0  # the first try took a second
    assert next(delays) == 1.0
    now[0] = 12.0
    assert next(delays) == 0.5  # only what is left of the budget
    now[0] = 12.5
    assert next(delays, None) is None


def test_attempts_count_the_first_try() -> None:
    backoff = Backoff(first_delay_s=0.0, max_delay_s=0.0, budget_s=float("inf"), max_attempts=5)
    assert list(backoff.delays()) == [0.0] * 4
