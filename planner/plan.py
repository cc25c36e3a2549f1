"""Plan: what the planner answers for one JobSpec. Its JSON field names are a public interface."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from planner.spec import JobSpec
from planner.words import Text

Verdict = Literal["fits", "tight", "no"]


class MemoryBreakdown(BaseModel):
    """Per-GPU bytes by component, in GiB; they sum to `peak_allocated_gib` plus `overhead`."""

    weights: float
    adapter: float
    gradients: float
    optimizer: float
    activations: float
    logits: float
    overhead: float
    # Preference and RL fine-tuning: zero for SFT.
    reference: float = Field(0.0, description="frozen reference model (full fine-tuning)")
    value: float = Field(0.0, description="PPO's trained value model and its activations")
    reward: float = Field(0.0, description="frozen reward model")
    rollout: float = Field(
        0.0, description="generation: vLLM's reserved pool, or HF generate's KV cache"
    )


class MemoryEstimate(BaseModel):
    """Per-GPU memory for the job at `num_gpus` GPUs with `sharding`."""

    num_gpus: int
    sharding: str
    peak_allocated_gib: float = Field(description="≈ torch.cuda.max_memory_allocated")
    peak_reserved_gib: float = Field(
        description="≈ torch.cuda.max_memory_reserved (allocator pool)"
    )
    required_gib: float = Field(description="≈ nvidia-smi: what the card must hold")
    range_gib: tuple[float, float] = Field(
        description="[low, high]: the measured peak's 90 % interval, however it is read "
        "(planner.estimate.memory.estimate.range_bytes)"
    )
    breakdown_gib: MemoryBreakdown
    host_ram_gib: float | None = Field(
        None, description="host (CPU) RAM the busiest node needs (planner.estimate.memory.host)"
    )
    host_ram_loading_gib: float | None = Field(
        None,
        description="of host_ram_gib, the model copies loading holds on the CPU (0 when saving "
        "or the steady state needs more)",
    )


class ModelInfo(BaseModel):
    """The architecture the plan used, so a reader sees what '13B' was taken to mean."""

    key: str
    name: str
    hf_id: str | None = None
    params_b: float
    active_params_b: float | None = None
    num_layers: int
    hidden_size: int
    vocab_size: int
    max_context: int | None = None
    source: str
    # Added with the 2026 catalog: text | moe | vlm, and what a VLM's vision tower holds.
    kind: str = "text"
    vision_params_b: float | None = None
    experts: int | None = Field(None, description="MoE: routed experts per MoE layer")
    experts_per_token: int | None = Field(None, description="MoE: top-k")
    moe_layers: int | None = Field(None, description="MoE: layers whose MLP is a MoE block")


class Option(BaseModel):
    """One card × count the job could run on."""

    gpu: str = Field(description="catalog key")
    gpu_name: str
    count: int
    sharding: str
    verdict: Verdict
    required_gib: float = Field(description="per GPU, at this count and sharding")
    usable_gib: float = Field(description="per GPU, as nvidia-smi reports")
    headroom_gib: float
    tokens_per_s: float | None
    hours: float | None = Field(description="total wall-clock hours, overhead included")
    overhead_hours: float | None
    usd_per_hour: float | None = Field(description="cheapest price per GPU-hour")
    cost_usd: float | None = Field(description="hours × cheapest price × (count + rollout_gpus)")
    cost_usd_median: float | None
    price_source: str | None
    price_date: Text | None
    rollout_gpus: int | None = Field(
        None, description="GPUs of a separate vLLM server, the same card, in the cost"
    )
    pricing: Literal["on_demand", "spot"] | None = Field(
        None, description="spot when the price is an interruptible one (only if the job allows)"
    )


class NotRentable(BaseModel):
    """A catalog card no price in use covers: never an option row nor a pick."""

    gpu: str = Field(description="catalog key")
    gpu_name: str
    reason: str = Field(description="why no one quotes it, from planner/data/not_rentable.csv")


class ManagedOption(BaseModel):
    """The cheapest managed fine-tuning service that can run the job (planner/market/managed.py)."""

    service: str
    model: str = Field(description="the service's model or size tier the price is for")
    method: str
    objective: str
    price: float = Field(description="USD per `unit`")
    unit: str = Field(description="what the price is per, e.g. USD per 1M training tokens")
    trained_tokens: float = Field(description="dataset tokens × epochs")
    cost_usd: float = Field(description="price × trained tokens, at least any minimum charge")
    min_charge_usd: float | None = None
    date: str = Field(description="when the price was read")
    source: str = Field(description="the price's source URL")
    caveats: list[str] = Field(
        [], description="what differs from renting: no card choice, per-token billing, limits"
    )


class Recommendation(BaseModel):
    cheapest: Option | None = None
    fastest: Option | None = None
    best_value: Option | None = None
    within_budget: Option | None = None
    meets_deadline: Option | None = None
    summary: Text = ""


class Suggestion(BaseModel):
    """A concrete change to the job and its effect, e.g. gradient checkpointing 31 → 19 GiB."""

    change: Text = Field(description="plain-language change and its effect")
    label: Text = Field("", description="the change alone, e.g. '8-bit AdamW'")
    fits_as_asked: bool = Field(
        False,
        description="a change of software or settings only that makes the job fit the named "
        "card at the named count",
    )
    patch: dict[str, object] = Field(description="JobSpec fields to set for this change")
    required_gib_before: float
    required_gib_after: float
    hours_change_pct: float | None = None
    cheapest_option: Option | None = None


class AfterTraining(BaseModel):
    """What the run produces and what serving it takes (planner.market.after_training): the
    adapter in decimal MB, the rest in GiB."""

    adapter_mb: float | None
    merged_model_gib: float
    serve_bf16_gib: float
    serve_4bit_gib: float = Field(
        description="every linear weight in 4 bits, MoE experts included (GGUF Q4 / AWQ / NF4)"
    )
    serve_fp8_gib: float | None = Field(None, description="every linear weight in FP8")
    serve_mxfp4_gib: float | None = Field(
        None, description="a native MXFP4 checkpoint (gpt-oss): experts in MXFP4, the rest 16-bit"
    )
    notes: list[Text] = []


Asked = Literal["seq_len", "micro_batch", "params_b", "num_gpus", "gpu"]
Binding = Literal["memory", "context_window", "budget", "deadline"]


class SolvedCard(BaseModel):
    """An inverse question answered on one card (planner.market.solve)."""

    gpu: str = Field(description="catalog key")
    gpu_name: str
    count: int
    value: int | float | None = Field(description="the limit; null when nothing holds")
    comfortable: int | float | None = Field(
        None, description="the largest value with 10 % headroom"
    )
    binding: Binding = "memory"
    model: str | None = Field(None, description="for params_b: the catalog model at the limit")
    model_name: str | None = None
    comfortable_model: str | None = None
    sharding: str | None = Field(None, description="for num_gpus: the layout that holds it")
    cpu_offload: bool = False


class Lever(BaseModel):
    """A change of software that moves an inverse answer: the limit with that change."""

    change: str
    patch: dict[str, object]
    value: int | float | None


class Solve(BaseModel):
    """The answer to an inverse question ("max context?", "how many 4090s?"): the Plan it comes
    with is the forward plan at this answer."""

    asked: Asked
    value: int | float | str | None = Field(
        description="seq_len tokens, micro_batch, params_b (billions), num_gpus, or gpu (key)"
    )
    gpu: str | None = Field(description="catalog key of the card answered on")
    count: int | None
    binding: Binding | None = Field(description="what stops it going further")
    comfortable: int | float | None = None
    model: str | None = None
    model_name: str | None = None
    comfortable_model: str | None = None
    sharding: str | None = None
    cpu_offload: bool = False
    tolerance: Text = ""
    cards: list[SolvedCard] = Field([], description="one per reference card when none was named")
    closest_miss: Option | None = Field(None, description="gpu: the run that misses by least")
    levers: list[Lever] = Field([], description="the limit with Unsloth, QLoRA, checkpointing")
    assumptions: list[Text] = []


class ContextPoint(BaseModel):
    """Memory per GPU if the job ran at another context length, all else as planned."""

    seq_len: int
    required_gib: float = Field(description="≈ nvidia-smi per GPU, at the job's GPU count")


class Plan(BaseModel):
    spec: JobSpec = Field(description="the job as planned, every default filled in")
    model: ModelInfo
    # Text: a catalog sentence keeps its message id (planner/words.py); the JSON is a string.
    assumptions: list[Text] = []
    warnings: list[Text] = []
    memory: MemoryEstimate
    options: list[Option] = []
    requested: Option | None = None
    recommendation: Recommendation = Recommendation()
    suggestions: list[Suggestion] = []
    after_training: AfterTraining | None = None
    price_date: Text | None = None
    not_rentable: list[NotRentable] = Field(
        [], description="cards with no price in use, each with why: not options, never picks"
    )
    managed: ManagedOption | None = Field(
        None, description="the cheapest managed fine-tuning service that can run the job"
    )
    solve: Solve | None = Field(None, description="set when the question asked for a limit")
    memory_by_context: list[ContextPoint] = Field(
        [],
        description="required memory per GPU at doubling context lengths up to the model's "
        "window, the asked one included (planner.context_curve; empty unless asked for)",
    )
