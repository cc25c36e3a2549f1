"""Option rows: one job's fit, speed, hours and cost on `count` × one card.

Memory depends on the GPU count and sharding, not on the card, so a MarketContext estimates it
once per (count, sharding) and every card reuses it.

- verdict: "no" when required_gib > usable_gib, "tight" under 10 % headroom, else "fits";
- hours = training hours + OVERHEAD_FRACTION of them for setup, evaluation and checkpoint saves
  (the seed guide budgets 20–30 %; we take 25 %), shown separately as overhead_hours;
- cost_usd = hours × cheapest price per GPU-hour × GPUs (the trainer's and a vLLM server's);
  cost_usd_median with the median price;
- a "no" row has no hours and no cost (null): it is a run that cannot happen.

Speed: a plan shows ~40 rows and its suggestions look at ~25 more cards per change. Only rows
that end up in the Plan become pydantic Options, each built once from its numbers; a cheapest-run
search compares bare costs; a card is asked for its speed only once it is known to be shown or
priced, and paired with its price once per price table.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from functools import cache, lru_cache
from typing import NamedTuple

from pydantic import BaseModel

from planner.catalog.gpus import (
    GpuSpec,
    all_gpus,
    apple_silicon_sentence,
    closest_gpus,
    is_apple_silicon,
    read_gpu,
)
from planner.catalog.models import ModelArch
from planner.catalog.prices import CardPrice, price_table
from planner.defaults import ResolvedJob
from planner.memory.estimate import (
    RolloutPhase,
    required_gib,
    required_on_card_gib,
    rollout_phase,
)
from planner.messages import NAMES
from planner.plan import Option, Verdict
from planner.spec import Precision, Rollout, Sharding
from planner.throughput import (
    CardSpeed,
    JobWork,
    card_speed,
    job_work,
    matmul_rate,
    tokens_per_s_at,
)

OVERHEAD_FRACTION = 0.25
TIGHT_HEADROOM_FRACTION = 0.10
CENT = 0.01
# The floor and the cost are computed in different orders: allow for the last bits.
FLOOR_ROUNDING_MARGIN = 1 - 1e-9
MULTI_GPU_COUNTS = (2, 4, 8)
FIT_COUNTS = (1, *MULTI_GPU_COUNTS)
# 2–8 nodes of 8 NVLink GPUs, tried only when no single node holds the job (671B, 1T models).
MULTI_NODE_COUNTS = (16, 32, 64)
# JobSpec fields that say where the job runs, not what it is.
PLACEMENT_FIELDS = frozenset({"num_gpus", "sharding", "gpu", "gpu_vram_gb"})
SHARDING_STRATEGIES = (Sharding.fsdp, Sharding.zero3)
GENERIC_PREFIX = "generic-"
# Every trusted Option shares this set of set fields: it holds every field, so pydantic's only
# write to it (adding a field on assignment) never changes it, and model_copy copies it.
_EVERY_OPTION_FIELD = set(Option.model_fields)


class Footprint(NamedTuple):
    """What options and suggestions read of a memory estimate."""

    required_gib: float  # without a colocated vLLM engine's pool beyond its minimum
    sharding: str  # the layout the estimate was made for
    rollout: RolloutPhase | None = None  # a colocated vLLM engine's
    rollout_fraction: float | None = None  # its share of each card

    def on(self, usable_gib: float) -> float:
        """Per-GPU memory on a card of `usable_gib`: with vLLM colocated, its pool is a share of
        the card, so a bigger card gives training no more than its (1 − fraction)."""
        if not self.rollout_fraction or self.rollout is None:
            return self.required_gib
        return round(
            required_on_card_gib(
                self.required_gib, self.rollout, self.rollout_fraction, usable_gib
            ),
            3,
        )


class MarketCard(NamedTuple):
    """A catalog card with its price, paired once per price table rather than once per row."""

    gpu: GpuSpec
    price: CardPrice | None
    usd_per_hour: float | None
    median_usd_per_hour: float | None
    price_source: str | None
    price_date: str | None
    speed: CardSpeed | None  # None for a card known only by its size
    # An Option's fields with the card's filled in and the run's None, in the JSON's field order:
    # each row copies it (a 16-key dict display costs twice as much as a copy).
    row: dict[str, object]

    @classmethod
    def of(cls, gpu: GpuSpec, price: CardPrice | None) -> MarketCard:
        speed = card_speed(gpu) if gpu.bf16_tflops > 0 else None
        if price is None:
            return cls(gpu, None, None, None, None, None, speed, _card_row(gpu, None))
        cheapest = price.cheapest
        usd_per_hour, source, date = cheapest.usd_per_hour, price.price_source, cheapest.date
        return cls(
            gpu,
            price,
            usd_per_hour,
            price.median_usd_per_hour,
            source,
            date,
            speed,
            _card_row(gpu, price),
        )


def _card_row(gpu: GpuSpec, price: CardPrice | None) -> dict[str, object]:
    row: dict[str, object] = dict.fromkeys(Option.model_fields)
    row.update(gpu=gpu.key, gpu_name=gpu.name, usable_gib=gpu.usable_gib)
    if price is not None:
        cheapest = price.cheapest
        row.update(
            usd_per_hour=cheapest.usd_per_hour,
            price_source=price.price_source,
            price_date=cheapest.date,
            pricing="spot" if cheapest.spot else "on_demand",
        )
    return row


class MarketCards(NamedTuple):
    every: tuple[MarketCard, ...]
    # Cards with a price, in catalog order: the only ones shown as option rows (a card no one
    # quotes is listed as not rentable instead).
    rentable: tuple[MarketCard, ...]
    # Cards with a price and a speed, in catalog order: the only ones a cheapest run can use.
    priced: tuple[MarketCard, ...]
    by_key: dict[str, MarketCard]
    # The priced cards as (dollars per hour ÷ matmul rate, catalog position, card), cheapest
    # matmuls first: the order cheapest_run tries them in.
    by_matmul_price: tuple[tuple[float, int, MarketCard], ...]

    def card(self, gpu: GpuSpec, prices: dict[str, CardPrice]) -> MarketCard:
        """The catalog's card, or one paired now (a generic card of a size the user gave)."""
        known = self.by_key.get(gpu.key)
        if known is not None and known.gpu is gpu:
            return known
        return MarketCard.of(gpu, prices.get(gpu.key))


# By id of the price table, holding the table so that its id cannot be reused by another. Kept
# because it pays: pairing the catalog with prices for every plan instead costs 43 % more plan
# time (bench/plan_shortcuts.py, 2026-12-01). Bounded, since a price refresh makes new tables.
_cards_by_table: dict[int, tuple[dict[str, CardPrice], MarketCards]] = {}
MAX_PRICE_TABLES_KEPT = 8


def market_cards(prices: dict[str, CardPrice]) -> MarketCards:
    """The catalog paired with `prices`, built once per price table."""
    known = _cards_by_table.get(id(prices))
    if known is not None:
        return known[1]
    every = tuple(MarketCard.of(gpu, prices.get(gpu.key)) for gpu in all_gpus())
    priced = tuple(card for card in every if card.price is not None and card.speed is not None)
    by_matmul_price = sorted(
        (card.usd_per_hour / matmul_rate(card.speed), position, card)
        for position, card in enumerate(priced)
    )
    by_key = {card.gpu.key: card for card in every}
    rentable = tuple(card for card in every if card.price is not None)
    cards = MarketCards(every, rentable, priced, by_key, tuple(by_matmul_price))
    if len(_cards_by_table) >= MAX_PRICE_TABLES_KEPT:
        del _cards_by_table[next(iter(_cards_by_table))]  # the oldest table
    _cards_by_table[id(prices)] = (prices, cards)
    return cards


@dataclass
class MarketContext:
    """One job's memory per (count, sharding), computed once and shared by every card."""

    job: ResolvedJob
    known: dict[tuple[int, Sharding], Footprint] = field(default_factory=dict)
    # The user's measured tokens/s divided by our estimate for their setup: scales every card.
    measured_ratio: float | None = None
    prices: dict[str, CardPrice] = field(default_factory=price_table)
    # The job's cost per token; derived from the job unless given (a placement change keeps it).
    work: JobWork | None = None
    cards: MarketCards = field(init=False)
    total_tokens: float | None = field(init=False)
    # A separate vLLM server's GPUs, rented with every row's trainer GPUs.
    rollout_gpus: int = field(init=False)
    multi_gpu_sharding: Sharding = field(init=False)
    # Footprints at 1, 2, 4, 8 GPUs (sharded), filled as far as some card needs.
    _fit_footprints: list[Footprint] = field(init=False, default_factory=list)
    # The job as a card without bf16 runs it (fp16 mixed precision), made once when needed.
    _without_bf16: MarketContext | None = field(init=False, default=None)

    def __post_init__(self) -> None:
        if self.work is None:
            self.work = job_work(self.job)
        self.cards = market_cards(self.prices)
        self.total_tokens = training_tokens(self.job)
        self.rollout_gpus = self.job.rollout_gpus or 0
        self.multi_gpu_sharding = multi_gpu_sharding(self.job)

    @property
    def arch(self) -> ModelArch:
        return self.job.arch

    def patched(self, patch: dict[str, object]) -> MarketContext:
        """The same market for the job changed by `patch` (a suggestion): the patch applies to
        what the user said and the job is resolved again, so its figures are a re-plan's. The
        prices and measured speed are kept, and the memory estimates and cost per token too when
        the change moves only the placement and decides nothing else differently."""
        job = self.job.changed(patch)
        ratio = self.measured_ratio
        if not PLACEMENT_FIELDS.issuperset(patch) or _decided(job) != _decided(self.job):
            return MarketContext(job, measured_ratio=ratio, prices=self.prices)
        # Memory is keyed by (count, sharding) and the work per token reads no placement field;
        # so is the fp16 run of a card without bf16, which only the job's decisions shape.
        placed = MarketContext(job, self.known, ratio, self.prices, self.work)
        placed._without_bf16 = self._without_bf16
        return placed

    def on_card(self, gpu: GpuSpec) -> MarketContext:
        """The context `gpu`'s rows are planned in: a card without bf16 (T4, V100) runs a bf16
        job in fp16 mixed precision with an fp32 master copy, as the job re-planned on that card
        decides (planner.defaults), so its memory, time and cost are that run's, not a bf16
        run it cannot do. Every other card shares this context."""
        if gpu.supports_bf16 or self.job.precision not in (Precision.bf16, Precision.bf16_mixed):
            return self
        if self._without_bf16 is None:
            self._without_bf16 = self.patched({"gpu": gpu.key})
        return self._without_bf16

    def memory(self, count: int, sharding: Sharding) -> Footprint:
        key = (count, sharding if count > 1 else Sharding.none)
        known = self.known.get(key)
        if known is None:
            required = required_gib(self.job, key[0], key[1])
            known = Footprint(required, key[1].value)
            if self.job.rollout is Rollout.vllm_colocate:
                known = known._replace(
                    rollout=rollout_phase(self.job, key[0], key[1]),
                    rollout_fraction=self.job.rollout_memory_fraction,
                )
            self.known[key] = known
        return known

    @property
    def needs_nodes(self) -> bool:
        """No card of the catalog holds the job on one node of 8 GPUs: only then are 2–8 nodes
        offered (671B and 1T models)."""
        largest = max(card.gpu.usable_gib for card in self.cards.every)
        return self.memory(FIT_COUNTS[-1], self.multi_gpu_sharding).on(largest) > largest

    def fewest_gpus(self, usable_gib: float, multi_node: bool = False) -> int | None:
        """The fewest GPUs (1, else sharded 2, 4 or 8; with `multi_node` when no node of any
        card holds the job, then 2, 4 or 8 nodes of 8) of `usable_gib` each that hold it."""
        footprints = self._fit_footprints
        counts = FIT_COUNTS
        if multi_node and self.needs_nodes:
            counts = (*FIT_COUNTS, *MULTI_NODE_COUNTS)
        for index, count in enumerate(counts):
            if index == len(footprints):
                footprints.append(self.memory(count, self.multi_gpu_sharding))
            if footprints[index].on(usable_gib) <= usable_gib:
                return count
        return None


def _decided(job: ResolvedJob) -> tuple[object, ...]:
    """What a job decides besides where it runs: equal tuples estimate the same per layout."""
    return tuple(getattr(job, name) for name in _NON_PLACEMENT_FIELDS)


_NON_PLACEMENT_FIELDS = tuple(
    name
    for name in ResolvedJob.__dataclass_fields__
    if name not in PLACEMENT_FIELDS | {"raw", "assumptions", "warnings"}
)


def in_nodes(gpu: GpuSpec) -> bool:
    """Cards rented as multi-node clusters: datacenter cards in NVLink nodes of 8."""
    return gpu.link == "nvlink" and gpu.card_class == "datacenter"


def verdict_for(required_gib: float, usable_gib: float) -> Verdict:
    headroom_gib = usable_gib - required_gib
    if headroom_gib < 0:
        return "no"
    return "tight" if headroom_gib < TIGHT_HEADROOM_FRACTION * usable_gib else "fits"


def multi_gpu_sharding(job: ResolvedJob) -> Sharding:
    """The user's sharding if it splits the weights, else FSDP (ZeRO-3's PyTorch twin)."""
    return job.sharding if job.sharding in SHARDING_STRATEGIES else Sharding.fsdp


def training_tokens(job: ResolvedJob) -> float | None:
    if job.dataset_tokens is None:
        return None
    return job.dataset_tokens * job.epochs


def speed_on(context: MarketContext, gpu: GpuSpec, count: int, sharding: Sharding) -> float | None:
    """Trained tokens/s of the whole job, scaled by the user's measurement; None for a card
    known only by its size."""
    if gpu.bf16_tflops <= 0:
        return None
    return scaled_speed(context, card_speed(gpu), count, sharding)


def scaled_speed(context: MarketContext, speed: CardSpeed, count: int, sharding: Sharding) -> float:
    """speed_on for a card whose CardSpeed the caller holds (the market's cards)."""
    tokens_per_s = tokens_per_s_at(context.work, speed, count, sharding)
    if context.measured_ratio:
        tokens_per_s *= context.measured_ratio
    return tokens_per_s


def trusted_option(values: dict[str, object]) -> Option:
    """An Option from values this module computed: every field present and already of its type.

    What pydantic's model_construct does, minus its per-field default and alias handling, which
    costs more than validating; this runs for every shown row of every plan and suggestion.
    Kept because it pays: validating each row instead costs 42 % more plan time, and
    model_construct more still (bench/plan_shortcuts.py, 2026-12-01).
    """
    option = _new_object(Option)
    _set_attribute(option, "__dict__", values)
    _set_fields_set(option, _EVERY_OPTION_FIELD)
    _set_extra(option, None)
    _set_private(option, None)
    return option


# BaseModel's slots, set through their descriptors: a third cheaper than object.__setattr__.
_new_object = object.__new__
_set_attribute = object.__setattr__
_set_fields_set = BaseModel.__dict__["__pydantic_fields_set__"].__set__
_set_extra = BaseModel.__dict__["__pydantic_extra__"].__set__
_set_private = BaseModel.__dict__["__pydantic_private__"].__set__


def make_option(
    context: MarketContext, gpu: GpuSpec, count: int, sharding: Sharding | None = None
) -> Option:
    """The full row for `count` × `gpu`: fit, speed, hours and cost with its source and date.

    `sharding` defaults to none on one GPU and the multi-GPU sharding on more.
    """
    if sharding is None:
        sharding = context.multi_gpu_sharding if count > 1 else Sharding.none
    card = context.cards.card(gpu, context.prices)
    context = context.on_card(gpu)
    return option_on(context, card, count, sharding, context.memory(count, sharding))


def option_on(
    context: MarketContext,
    card: MarketCard,
    count: int,
    sharding: Sharding,
    memory: Footprint,
) -> Option:
    gpu = card.gpu
    usable_gib = gpu.usable_gib
    required_gib = memory.on(usable_gib)
    speed = card.speed
    tokens_per_s = scaled_speed(context, speed, count, sharding) if speed is not None else None
    values = card.row.copy()
    values["count"] = count
    values["sharding"] = memory.sharding
    values["verdict"] = verdict_for(required_gib, usable_gib)
    values["required_gib"] = required_gib
    values["headroom_gib"] = round(usable_gib - required_gib, 2)
    if tokens_per_s:
        values["tokens_per_s"] = round(tokens_per_s, 1)
    rented = count + context.rollout_gpus
    if context.rollout_gpus:
        values["rollout_gpus"] = context.rollout_gpus
    # A run that cannot happen has no hours and no cost: nothing downstream can quote them.
    if tokens_per_s is not None and context.total_tokens is not None and values["verdict"] != "no":
        train_hours = context.total_tokens / tokens_per_s / 3600
        hours = train_hours * (1 + OVERHEAD_FRACTION)
        values["hours"] = round(hours, 3)
        values["overhead_hours"] = round(train_hours * OVERHEAD_FRACTION, 3)
        if card.price is not None:
            values["cost_usd"] = round(hours * card.usd_per_hour * rented, 2)
            values["cost_usd_median"] = round(hours * card.median_usd_per_hour * rented, 2)
    return trusted_option(values)


def market_options(context: MarketContext) -> list[Option]:
    """Every priced card at one GPU, plus the fewest sharded GPUs for cards one of which is too
    small (a card without a price is not rentable: attach_market lists it apart)."""
    options = []
    sharding = context.multi_gpu_sharding
    for card in context.cards.rentable:
        planned = context.on_card(card.gpu)
        single = planned.memory(1, Sharding.none)
        options.append(option_on(planned, card, 1, Sharding.none, single))
        usable_gib = card.gpu.usable_gib
        if usable_gib >= single.on(usable_gib):
            continue  # one card holds it: fewest_gpus would say 1
        count = planned.fewest_gpus(usable_gib, in_nodes(card.gpu))
        if count is not None:
            memory = planned.memory(count, sharding)
            options.append(option_on(planned, card, count, sharding, memory))
    return options


def cheapest_run(context: MarketContext) -> Option | None:
    """The cheapest priced run that fits, looking only at priced cards at their fewest GPUs.

    No run costs less than its matmuls alone at perfect scaling, which is the card's matmul
    price times a figure of the job; trying cards cheapest matmuls first, the search stops at the
    first card whose floor is a cent above the best cost found. Equal costs (in cents, as shown)
    go to the card first in the catalog, as a scan in catalog order would pick.
    """
    total_tokens = context.total_tokens
    if total_tokens is None:
        return None
    work = context.work
    floor_per_matmul_price = (
        total_tokens
        * work.flops_per_token
        / (work.method_utilisation * work.fp8_speedup)
        / 3600
        * (1 + OVERHEAD_FRACTION)
        / (context.measured_ratio or 1.0)
    )
    best: tuple[MarketCard, int, Sharding] | None = None
    best_cost = float("inf")
    best_position = 0
    for matmul_price, position, card in context.cards.by_matmul_price:
        if matmul_price * floor_per_matmul_price * FLOOR_ROUNDING_MARGIN >= best_cost + CENT:
            break
        planned = context.on_card(card.gpu)
        count = planned.fewest_gpus(card.gpu.usable_gib, in_nodes(card.gpu))
        if count is None:
            continue
        sharding = context.multi_gpu_sharding if count > 1 else Sharding.none
        tokens_per_s = scaled_speed(planned, card.speed, count, sharding)
        # The same arithmetic as make_option's cost, so the cheapest here is the cheapest there.
        hours = total_tokens / tokens_per_s / 3600 * (1 + OVERHEAD_FRACTION)
        cost = hours * card.usd_per_hour * (count + context.rollout_gpus)
        # Compared in cents, as shown; a cost a cent or more above the best cannot round to it.
        if cost < best_cost + CENT:
            cents = round(cost, 2)
            if cents < best_cost or (cents == best_cost and position < best_position):
                best, best_cost, best_position = (card, count, sharding), cents, position
    if best is None:
        return None
    card, count, sharding = best
    planned = context.on_card(card.gpu)
    return option_on(planned, card, count, sharding, planned.memory(count, sharding))


@cache
def _gib_per_marketed_gb() -> float:
    """How much of a marketed GB nvidia-smi shows, typical over the catalog."""
    return statistics.median(gpu.usable_gib / gpu.marketed_gb for gpu in all_gpus())


def generic_card(vram_gb: float) -> GpuSpec:
    """A card known only by its size ("70b qlora 48gb?"): fit only, no speed or price."""
    return GpuSpec(
        key=f"{GENERIC_PREFIX}{vram_gb:g}gb",
        name=f"{vram_gb:g} GB card",
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


class RequestedCard(NamedTuple):
    gpu: GpuSpec | None
    assumptions: tuple[str, ...]
    warnings: tuple[str, ...]


def read_requested_card(job: ResolvedJob) -> RequestedCard:
    """The card the user named (or a generic one of the size they gave), with what we assumed."""
    return requested_card(job.gpu, job.gpu_vram_gb)


# The catalog is fixed for the process and chat users name the same few dozen cards, so a card
# name is read (fuzzy matching over every alias) once.
@lru_cache(maxsize=512)
def requested_card(name: str | None, vram_gb: float | None) -> RequestedCard:
    assumptions: list[str] = []
    warnings: list[str] = []
    if name and is_apple_silicon(name):
        return RequestedCard(None, (), (apple_silicon_sentence(name, vram_gb),))
    if name:
        match = read_gpu(name)
        if match is not None:
            if match.note:
                assumptions.append(match.note)
            return RequestedCard(match.gpu, tuple(assumptions), ())
        nearest = ", ".join(gpu.name for gpu in closest_gpus(name))
        warnings.append(NAMES("unknown_card", name=name, nearest=nearest))
    gpu = generic_card(vram_gb) if vram_gb else None
    return RequestedCard(gpu, tuple(assumptions), tuple(warnings))
