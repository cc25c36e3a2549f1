"""Option rows: one job's fit, speed, hours and cost on `count` × one card.

Memory depends on the GPU count and sharding, not on the card, so a MarketContext estimates it
once per (count, sharding) and every card reuses it.

- verdict: "no" when required_gib > usable_gib, "tight" under 10 % headroom, else "fits";
- hours = training hours + OVERHEAD_FRACTION of them for setup, evaluation and checkpoint saves
  (the seed guide budgets 20–30 %; we take 25 %), shown separately as overhead_hours;
- cost_usd = hours × cheapest price per GPU-hour × GPUs; cost_usd_median with the median price.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from functools import cache

from planner.catalog.gpus import GpuSpec, all_gpus, closest_gpus, read_gpu
from planner.catalog.models import ModelArch
from planner.catalog.prices import CardPrice, price_table
from planner.memory import estimate_memory
from planner.plan import MemoryEstimate, Option, Verdict
from planner.spec import JobSpec, Sharding
from planner.throughput import JobWork, job_work, tokens_per_s_on

OVERHEAD_FRACTION = 0.25
TIGHT_HEADROOM_FRACTION = 0.10
MULTI_GPU_COUNTS = (2, 4, 8)
SHARDING_STRATEGIES = (Sharding.fsdp, Sharding.zero3)
GENERIC_PREFIX = "generic-"


@dataclass
class MarketContext:
    """One job's memory per (count, sharding), computed once and shared by every card."""

    spec: JobSpec
    arch: ModelArch
    known: dict[tuple[int, Sharding], MemoryEstimate] = field(default_factory=dict)
    # The user's measured tokens/s divided by our estimate for their setup: scales every card.
    measured_ratio: float | None = None
    work: JobWork = field(init=False)
    prices: dict[str, CardPrice] = field(init=False)

    def __post_init__(self) -> None:
        self.work = job_work(self.spec, self.arch)
        self.prices = price_table()

    def memory(self, count: int, sharding: Sharding) -> MemoryEstimate:
        key = (count, sharding if count > 1 else Sharding.none)
        if key not in self.known:
            self.known[key] = estimate_memory(self.spec, self.arch, key[0], key[1])
        return self.known[key]


def verdict_for(required_gib: float, usable_gib: float) -> Verdict:
    headroom_gib = usable_gib - required_gib
    if headroom_gib < 0:
        return "no"
    return "tight" if headroom_gib < TIGHT_HEADROOM_FRACTION * usable_gib else "fits"


def multi_gpu_sharding(spec: JobSpec) -> Sharding:
    """The user's sharding if it splits the weights, else FSDP (ZeRO-3's PyTorch twin)."""
    return spec.sharding if spec.sharding in SHARDING_STRATEGIES else Sharding.fsdp


def training_tokens(spec: JobSpec) -> float | None:
    if spec.dataset_tokens is None:
        return None
    return spec.dataset_tokens * (spec.epochs or 1)


@dataclass(frozen=True, slots=True)
class Row:
    """An Option's numbers before it becomes a pydantic model (only shown rows need one)."""

    gpu: GpuSpec
    count: int
    memory: MemoryEstimate
    verdict: Verdict
    tokens_per_s: float | None
    train_hours: float | None
    price: CardPrice | None

    @property
    def hours(self) -> float | None:
        return None if self.train_hours is None else self.train_hours * (1 + OVERHEAD_FRACTION)

    def cost_usd(self, usd_per_gpu_hour: float) -> float | None:
        hours = self.hours
        return None if hours is None else round(hours * usd_per_gpu_hour * self.count, 2)


def make_row(
    context: MarketContext, gpu: GpuSpec, count: int, sharding: Sharding | None = None
) -> Row:
    spec = context.spec
    sharding = sharding or (multi_gpu_sharding(spec) if count > 1 else Sharding.none)
    memory = context.memory(count, sharding)
    tokens_per_s = train_hours = None
    if gpu.bf16_tflops > 0:
        tokens_per_s = tokens_per_s_on(context.work, gpu, count, sharding)
        tokens_per_s *= context.measured_ratio or 1.0
        total_tokens = training_tokens(spec)
        if total_tokens is not None:
            train_hours = total_tokens / tokens_per_s / 3600
    verdict = verdict_for(memory.required_gib, gpu.usable_gib)
    price = context.prices.get(gpu.key)
    return Row(gpu, count, memory, verdict, tokens_per_s, train_hours, price)


def option_from(row: Row) -> Option:
    """The full row for `count` × `gpu`: fit, speed, hours and cost with its source and date."""
    price, hours = row.price, row.hours
    # Trusted values computed here: skip validation, this runs for every card of every variant.
    return Option.model_construct(
        gpu=row.gpu.key,
        gpu_name=row.gpu.name,
        count=row.count,
        sharding=row.memory.sharding,
        verdict=row.verdict,
        required_gib=row.memory.required_gib,
        usable_gib=row.gpu.usable_gib,
        headroom_gib=round(row.gpu.usable_gib - row.memory.required_gib, 2),
        tokens_per_s=round(row.tokens_per_s, 1) if row.tokens_per_s else None,
        hours=round(hours, 3) if hours is not None else None,
        overhead_hours=(
            round(row.train_hours * OVERHEAD_FRACTION, 3) if row.train_hours is not None else None
        ),
        usd_per_hour=price.cheapest.usd_per_hour if price else None,
        cost_usd=row.cost_usd(price.cheapest.usd_per_hour) if price else None,
        cost_usd_median=row.cost_usd(price.median_usd_per_hour) if price else None,
        price_source=price.price_source if price else None,
        price_date=price.cheapest.date if price else None,
    )


def make_option(
    context: MarketContext, gpu: GpuSpec, count: int, sharding: Sharding | None = None
) -> Option:
    return option_from(make_row(context, gpu, count, sharding))


def market_rows(context: MarketContext) -> list[Row]:
    """Every card at one GPU, plus the fewest sharded GPUs for cards one of which is too small."""
    rows = []
    for gpu in all_gpus():
        single = make_row(context, gpu, 1)
        rows.append(single)
        if single.verdict != "no":
            continue
        for count in MULTI_GPU_COUNTS:
            sharded = make_row(context, gpu, count)
            if sharded.verdict != "no":
                rows.append(sharded)
                break
    return rows


def market_options(context: MarketContext) -> list[Option]:
    return [option_from(row) for row in market_rows(context)]


def cheapest_run(context: MarketContext) -> Option | None:
    """The cheapest priced run that fits, looking only at priced cards at their fewest GPUs."""
    best: Row | None = None
    best_cost = float("inf")
    sharding = multi_gpu_sharding(context.spec)
    for gpu in all_gpus():
        price = context.prices.get(gpu.key)
        if price is None or gpu.bf16_tflops <= 0:
            continue
        count = next(
            (
                n
                for n in (1, *MULTI_GPU_COUNTS)
                if verdict_for(context.memory(n, sharding).required_gib, gpu.usable_gib) != "no"
            ),
            None,
        )
        if count is None:
            continue
        row = make_row(context, gpu, count)
        cost = row.cost_usd(price.cheapest.usd_per_hour)
        if cost is not None and cost < best_cost:
            best, best_cost = row, cost
    return option_from(best) if best is not None else None


@cache
def _gib_per_marketed_gb() -> float:
    """How much of a marketed GB nvidia-smi shows, typical over the catalog."""
    return statistics.median(gpu.usable_gib / gpu.marketed_gb for gpu in all_gpus())


def generic_card(vram_gb: float) -> GpuSpec:
    """A card known only by its size ("70b qlora 48gb?"): fit only, no speed or price."""
    return GpuSpec(
        key=f"{GENERIC_PREFIX}{vram_gb:g}gb",
        name=f"a {vram_gb:g} GB card",
        vendor="",
        usable_gib=round(vram_gb * _gib_per_marketed_gb(), 2),
        bf16_tflops=0.0,
        bandwidth_gbs=0.0,
        interconnect="",
        supports_bf16=True,
        form="",
        source="size given by the user",
        marketed_gb=vram_gb,
    )


@dataclass(frozen=True)
class RequestedCard:
    gpu: GpuSpec | None
    assumptions: list[str]
    warnings: list[str]


def read_requested_card(spec: JobSpec) -> RequestedCard:
    """The card the user named (or a generic one of the size they gave), with what we assumed."""
    assumptions: list[str] = []
    warnings: list[str] = []
    if spec.gpu:
        match = read_gpu(spec.gpu)
        if match is not None:
            if match.note:
                assumptions.append(match.note)
            return RequestedCard(match.gpu, assumptions, warnings)
        nearest = ", ".join(gpu.name for gpu in closest_gpus(spec.gpu))
        warnings.append(f"Unknown card '{spec.gpu}'; the closest known cards are {nearest}.")
    if spec.gpu_vram_gb:
        return RequestedCard(generic_card(spec.gpu_vram_gb), assumptions, warnings)
    return RequestedCard(None, assumptions, warnings)


def priced_options(options: list[Option]) -> list[Option]:
    return [o for o in options if o.verdict != "no" and o.cost_usd is not None]


def cheapest_of(options: list[Option]) -> Option | None:
    priced = priced_options(options)
    return min(priced, key=lambda o: (o.cost_usd, o.hours)) if priced else None
