"""Reply parts for renderer tests: one card row builder, so each test states only what it varies."""

from __future__ import annotations

from typing import Any

from bot.reply import CardRow


def card_row(gpu_name: str = "RTX 4090", **overrides: Any) -> CardRow:
    """A single card that fits with a few GiB to spare, cheapest, priced; override any field."""
    values: dict[str, Any] = dict(
        gpu_name=gpu_name,
        count=1,
        verdict="fits",
        headroom_gib=4.1,
        hours=12.3,
        cost_usd=9.8,
        cost_usd_median=10.0,
        usd_per_hour=0.79,
        highlight="cheapest",
    )
    return CardRow(**(values | overrides))
