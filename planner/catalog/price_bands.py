"""The plausible price band of a card, per GPU-hour, from its own specs and market class.

A quote outside its card's band is not a price anyone rents at (a $0.0001 listing, a $0.01 B200,
cents read as dollars) and is dropped before any statistics, however many quotes agree on it.

- floor = max(FLOOR_USD_PER_HOUR, FLOOR_USD_PER_TFLOPS[class] × dense BF16 TFLOPS): the cheapest
  real quotes follow what a card computes per hour (an H100 rents for more than an A4000 because
  it does ~13× the matmuls), the more so in the datacenter class, whose cards also carry HBM and
  NVLink. The floor sits at or below 40 % of each card's cheapest quote in the 2026-11 price survey
  (shared/data/gpu_prices_2026-11.csv, 264 quotes from 31 providers): marketplace asks and spot
  bids run 30–60 % under the survey's cheapest, and must pass. It is far above $0.01 for every
  card (an A4000's floor is $0.035, an H100's $0.25, a B200's $0.56).
- ceiling = CEILING_USD_PER_GB[class] × marketed GB: the priciest real quotes are hyperscaler list
  prices, which follow the node's memory (HBM capacity); the ceiling is at least twice each card's
  priciest survey quote (Azure's H100 at $12.29 against a $25.60 ceiling).

tests/test_price_bands.py checks both margins against the survey and the bundled table.
"""

from __future__ import annotations

from typing import NamedTuple

from planner.catalog.gpus import CardClass, GpuSpec

# No card in the survey rents below $0.08/h (a V100 16 GB on Vast.ai); a third of that.
FLOOR_USD_PER_HOUR = 0.03
# The survey's lowest quote per dense TFLOPS is $0.00066 (datacenter: V100), $0.00115
# (workstation: RTX A4000) and $0.00174 (consumer: RTX 4090) per GPU-hour; under 40 % of each.
FLOOR_USD_PER_TFLOPS: dict[CardClass, float] = {
    "datacenter": 0.00025,
    "workstation": 0.00045,
    "consumer": 0.0006,
}
# The survey's highest quote per marketed GB is $0.154 (datacenter: H100 on Azure), $0.073
# (workstation: L40S) and $0.024 (consumer: RTX 5080) per GPU-hour; about twice each and more.
CEILING_USD_PER_GB: dict[CardClass, float] = {
    "datacenter": 0.32,
    "workstation": 0.15,
    "consumer": 0.08,
}


class PriceBand(NamedTuple):
    floor_usd_per_hour: float
    ceiling_usd_per_hour: float

    def holds(self, usd_per_gpu_hour: float) -> bool:
        return self.floor_usd_per_hour <= usd_per_gpu_hour <= self.ceiling_usd_per_hour


def price_band(gpu: GpuSpec) -> PriceBand:
    floor = max(FLOOR_USD_PER_HOUR, FLOOR_USD_PER_TFLOPS[gpu.card_class] * gpu.bf16_tflops)
    ceiling = CEILING_USD_PER_GB[gpu.card_class] * gpu.marketed_gb
    return PriceBand(round(floor, 4), round(max(ceiling, floor), 4))
