"""The shadow grid: which jobs are traced, each with a stable id.

Imports no torch: the CI guard and bench/shadow_accuracy.py read the same specs. A job's id spells
its settings (model.method.objective.seq.batch.checkpointing.optimizer.precision.loss), so
`python -m tools.shadow run ID` rebuilds exactly that job.
"""

from __future__ import annotations

import itertools
import json
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

# Shapes from the catalog (planner/data/models.json), smallest first: dense and MoE, tied and
# untied embeddings, vocabularies from 32K to 262K, 0.5B to 72B.
SMALL = ("qwen2.5-0.5b", "qwen3-0.6b", "tinyllama-1.1b", "llama-3.2-1b", "gemma-3-1b")
SMALL += ("qwen2.5-1.5b", "smollm2-1.7b")
MID = ("llama-3.2-3b", "phi-3-mini-4k", "qwen3-4b", "mistral-7b-v0.3", "qwen2.5-7b")
MID += ("llama-3.1-8b", "olmo-2-1124-7b")
LARGE = ("qwen2.5-14b", "qwen3-32b", "llama-3.1-70b", "qwen2.5-72b")
MOE = ("qwen3-30b-a3b", "mixtral-8x7b")
# Catalog models transformers 5.24 cannot build on this path (Gemma 2 and gpt-oss refuse SDPA,
# Falcon's config rejects its head_dim): one job each, which the grid logs as skipped.
UNBUILDABLE_HERE = ("gemma-2-2b", "gpt-oss-20b", "falcon-7b")

ALL_LINEAR = "all-linear"


@dataclass(frozen=True)
class Job:
    model: str
    method: str  # full | lora
    seq_len: int
    micro_batch: int = 1
    checkpointing: bool = True
    optimizer: str = "adamw"
    precision: str = "bf16-mixed"
    # hf: transformers' loss; chunked: torchtune's CEWithChunkedOutputLoss in plain PyTorch.
    # (TRL 1.16's fused LM head tiles 32,768 tokens, so below that it is one tile of full
    # logits: a kernel the planner does not name, so it is not in the grid; see
    # docs/shadow-runs.md.)
    loss: str = "hf"
    objective: str = "sft"
    rank: int = 16
    targets: str = ALL_LINEAR  # all-linear | qv | qkvo

    @property
    def id(self) -> str:
        method = self.method if self.method == "full" else f"lora-r{self.rank}-{self.targets}"
        return ".".join(
            (
                self.model,
                method,
                self.objective,
                f"s{self.seq_len}",
                f"b{self.micro_batch}",
                "gc" if self.checkpointing else "nogc",
                self.optimizer,
                self.precision,
                self.loss,
            )
        )


TARGETS = {"qv": ["q", "v"], "qkvo": ["q", "k", "v", "o"]}


@cache
def catalog_configs() -> dict[str, dict[str, Any]]:
    raw = json.loads(resources.files("planner").joinpath("data/models.json").read_text())
    return {entry["key"]: entry for entry in raw["models"]}


def arch_of(job: Job) -> dict[str, Any]:
    """The config.json the trace builds: the catalog's, with sliding_window stated where the
    catalog leaves it out. The catalog states a window for models that have one, and the planner
    plans the others with full attention, while transformers' configs default to one (Mistral's
    4,096): absent means none. Gemma 3 keeps transformers' default, its real 512-token window
    on 5 of 6 layers (the catalog omits it; docs/shadow-runs.md)."""
    config = dict(catalog_configs()[job.model]["config"])
    if "sliding_window" not in config and not config["model_type"].startswith("gemma3"):
        config["sliding_window"] = None
    return config


def spec_of(job: Job) -> dict[str, Any]:
    """The full JobSpec JSON the trace runs (every setting stated, nothing left to defaults)."""
    entry = catalog_configs()[job.model]
    spec: dict[str, Any] = {
        "model": entry.get("hf_id") or job.model,
        "method": job.method,
        "objective": job.objective,
        "framework": "hf",
        "precision": job.precision,
        "optimizer": job.optimizer,
        "seq_len": job.seq_len,
        "micro_batch": job.micro_batch,
        "grad_accum": 1,
        "gradient_checkpointing": job.checkpointing,
        # SDPA's CPU flash kernel runs on the fake path: no s×s scores, as FlashAttention.
        "flash_attention": True,
        "attention": "sdpa",
        "loss_kernel": job.loss,
        "num_gpus": 1,
        "sharding": "none",
        # Every row is one sequence of seq_len tokens (no variable-length slack); a DPO row's
        # chosen and rejected are two such rows, not a pair packed into one (planner: packing
        # holds a whole pair inside seq_len).
        "packing": job.objective != "dpo",
        "activation_offloading": False,
        "cpu_offload": False,
    }
    if job.objective == "dpo":
        spec["reference_model"] = job.method == "full"
    if job.method == "lora":
        spec["lora_rank"] = job.rank
        spec["lora_alpha"] = 2 * job.rank
        spec["lora_dropout"] = 0.05
        spec["lora_targets"] = TARGETS.get(job.targets, ALL_LINEAR)
    return spec


def _jobs_for(model: str, tier: str) -> list[Job]:
    jobs: list[Job] = []
    # PEFT 0.21 wraps fused 3-D expert tensors only without dropout (ParamWrapper): MoE LoRA
    # adapts attention, as the planner counts it.
    targets = "qkvo" if tier == "moe" else ALL_LINEAR
    seqs = {"small": (512, 2048, 8192, 16384), "mid": (512, 2048, 8192, 16384)}.get(
        tier, (512, 2048, 8192)
    )
    # LoRA SFT: sequence × micro-batch × checkpointing, AdamW, bf16 weights.
    for seq, batch, gc in itertools.product(seqs, (1, 4), (True, False)):
        if not gc and seq * batch > 8192:
            continue  # the recompute-free runs stay at realistic sizes
        jobs.append(Job(model, "lora", seq, batch, gc, targets=targets))
    jobs.append(Job(model, "lora", 2048, 8, targets=targets))
    jobs.append(Job(model, "lora", 2048, 2, rank=64, targets="qv"))
    jobs.append(Job(model, "lora", 4096, 1, rank=8, targets="qkvo"))
    jobs.append(Job(model, "lora", 2048, 1, precision="bf16", targets=targets))
    jobs.append(Job(model, "lora", 4096, 2, loss="chunked", targets=targets))
    jobs.append(Job(model, "lora", 1024, 1, objective="dpo", targets=targets))
    # Full fine-tuning: fp32-master mixed and pure bf16, AdamW and SGD.
    for seq, precision in itertools.product((512, 4096), ("bf16-mixed", "bf16")):
        jobs.append(Job(model, "full", seq, 1, True, "adamw", precision))
    jobs.append(Job(model, "full", 2048, 2, False))
    jobs.append(Job(model, "full", 2048, 1, optimizer="sgd"))
    jobs.append(Job(model, "full", 4096, 1, loss="chunked", precision="bf16"))
    jobs.append(Job(model, "full", 1024, 1, objective="dpo", precision="bf16"))
    if tier in ("small",):
        jobs.append(Job(model, "full", 1024, 2, True, "adamw", "fp32"))
        jobs.append(Job(model, "full", 16384, 1, precision="bf16"))
    return jobs


def grid() -> list[Job]:
    """Every job of the grid, cheapest first (fake-tensor time follows the op count: layers ×
    steps, more with checkpointing's recompute; MoE layers loop over their experts)."""
    jobs: list[Job] = []
    for tier, models in (("small", SMALL), ("mid", MID), ("large", LARGE), ("moe", MOE)):
        for model in models:
            jobs += _jobs_for(model, tier)
    jobs += [Job(model, "lora", 2048) for model in UNBUILDABLE_HERE]
    return sorted(jobs, key=_cost)


def _cost(job: Job) -> float:
    config = catalog_configs()[job.model]["config"]
    layers = config.get("num_hidden_layers", 32)
    experts = config.get("num_experts") or config.get("num_local_experts") or 1
    moe = 1 + experts / 8 if experts > 1 else 1
    dpo = 1.5 if job.objective == "dpo" else 1
    return layers * moe * dpo * (1.3 if job.checkpointing else 1.0)


def by_id() -> dict[str, Job]:
    return {job.id: job for job in grid()}


def part(jobs: list[Job], k: int, n: int) -> list[Job]:
    """The k-th of n interleaved parts (1-based), so each part has cheap and dear jobs alike."""
    return jobs[k - 1 :: n]
