"""torchtune.sh: `tune download` of the model, then `tune run RECIPE --config CONFIG` with the
plan's values as overrides (torchtune 0.6.1). The config is torchtune's own for the model, method
and GPU count (planner/data/torchtune_configs.json, copied from its recipe registry); an override is
written only for a key that config has, and bash reads the overrides from an array, one per line
with its reason. torchtune shards with FSDP only."""

from __future__ import annotations

import json
import re
import shlex
from functools import cache

from planner.data_files import DATA_DIR
from planner.job.resolved import lora_target_names
from planner.run_config.job import HF_TOKEN, ConfigRefused, RunJob
from planner.run_config.result import StackFiles
from planner.run_config.unknowns import NOT_PLANNED
from planner.spec import (
    LoraTarget,
    Method,
    Objective,
    Optimizer,
    Precision,
    Sharding,
)

TORCHTUNE_VERSION = "0.6.1"
CONFIGS_JSON = DATA_DIR / "torchtune_configs.json"
MODEL_DIR = "/tmp/model"  # where `tune download` puts the checkpoint and tokenizer
OUTPUT_TODO = "/tmp/torchtune/TODO-run-name"
# torchtune's model folders: "llama-3.1-8b" → llama3_1/8B, "qwen2.5-7b" → qwen2_5/7B,
# "gemma-2-9b" → gemma2/9B, "mistral-7b-v0.3" → mistral/7B.
_CATALOG_KEY = re.compile(
    r"^(?P<family>llama|qwen|gemma|mistral|phi)-?(?P<version>\d(?:\.\d)?)?-"
    r"(?P<size>\d+(?:\.\d+)?b|mini)(?:-v0\.\d|-4k)?$"
)
OPTIMIZERS = {
    Optimizer.adamw: "torch.optim.AdamW",
    Optimizer.sgd: "torch.optim.SGD",
    Optimizer.adamw_8bit: "bitsandbytes.optim.AdamW8bit",
    Optimizer.paged_adamw: "bitsandbytes.optim.PagedAdamW",
    Optimizer.paged_adamw_8bit: "bitsandbytes.optim.PagedAdamW8bit",
}
ATTENTION_MODULES = {
    LoraTarget.q: "q_proj",
    LoraTarget.k: "k_proj",
    LoraTarget.v: "v_proj",
    LoraTarget.o: "output_proj",
}
MLP_TARGETS = frozenset({LoraTarget.gate, LoraTarget.up, LoraTarget.down})

Override = tuple[str, object, str]


@cache
def torchtune_configs() -> dict[str, dict[str, object]]:
    return json.loads(CONFIGS_JSON.read_text(encoding="utf-8"))["configs"]


def model_folder(catalog_key: str) -> str | None:
    match = _CATALOG_KEY.match(catalog_key)
    if match is None:
        return None
    version = (match["version"] or "").replace(".", "_")
    size = match["size"].upper() if match["size"] != "mini" else "mini"
    return f"{match['family']}{version}/{size}"


def config_name(job: RunJob) -> str:
    """torchtune's config for the job; ConfigRefused (nearest: trl) when it ships none."""
    if job.multi_gpu and job.sharding is not Sharding.fsdp:
        raise ConfigRefused(
            f"torchtune shards across GPUs with FSDP only, not {job.sharding.value}; the nearest "
            "stack that runs it is trl",
            nearest="trl",
        )
    folder = model_folder(job.plan.model.key)
    kind = {Method.full: "full", Method.lora: "lora", Method.qlora: "qlora"}[job.spec.method]
    if job.spec.objective is Objective.dpo:
        kind = f"{kind}_dpo"
    suffixes = ("",) if job.multi_gpu else ("_single_device", "_low_memory")
    candidates = [f"{folder}_{kind}{suffix}" for suffix in suffixes] if folder else []
    found = next((name for name in candidates if name in torchtune_configs()), None)
    if found is None:
        gpus = f"{job.card.count} GPUs" if job.multi_gpu else "one GPU"
        raise ConfigRefused(
            f"torchtune {TORCHTUNE_VERSION} ships no {kind} config for {job.plan.model.name} on "
            f"{gpus}; the nearest stack that runs it is trl",
            nearest="trl",
        )
    return found


def stack_files(job: RunJob) -> StackFiles:
    name = config_name(job)
    config = torchtune_configs()[name]
    unexpressed: list[str] = []
    overrides = _overrides(job, config, unexpressed)
    recipe = str(config["recipe"])
    run = f"tune run {recipe} --config {name}"
    if job.multi_gpu:
        run = f"tune run --nproc_per_node {job.card.count} {recipe} --config {name}"
    token = f' --hf-token "${HF_TOKEN}"' if job.gated else ""
    lines = [
        "#!/usr/bin/env bash",
        f"# torchtune {TORCHTUNE_VERSION}: bash torchtune.sh",
        f"# Realises gpuplan's plan: {job.plan.model.name}, {job.spec.method.value}, "
        f"{job.spec.seq_len:,} tokens, {job.card.count}× {job.card.name}:",
        f"# torchtune's config {name} with the plan's values as overrides.",
        "set -euo pipefail",
        f"tune download {shlex.quote(job.model_id)} --output-dir {MODEL_DIR}{token}",
        "overrides=(",
        *(
            f"  {shlex.quote(f'{key}={_value(value)}')}" + (f"  # {why}" if why else "")
            for key, value, why in overrides
        ),
        ")",
        f'{run} "${{overrides[@]}}"',
    ]
    install = f'pip install "torchtune=={TORCHTUNE_VERSION}" torchao'
    if any(str(value).startswith("bitsandbytes") for _, value, _ in overrides):
        install += " bitsandbytes"
    todos = [
        "torchtune.sh dataset: the config's example dataset trains unless you override "
        "dataset._component_ (and its source) with yours",
        f"torchtune.sh output_dir ({OUTPUT_TODO})",
        "torchtune.sh learning rate: the config's optimizer.lr is the recipe's, not the plan's",
    ]
    files = {"torchtune.sh": "\n".join(lines) + "\n"}
    return StackFiles(files, install, "bash torchtune.sh", unexpressed, todos)


def _overrides(job: RunJob, config: dict[str, object], unexpressed: list[str]) -> list[Override]:
    spec, why = job.spec, job.why
    wanted: list[Override] = [
        ("checkpointer.checkpoint_dir", MODEL_DIR, "where tune download put the model"),
        *(
            (key, f"{MODEL_DIR}/{relative}", "the downloaded tokenizer")
            for key, relative in dict(config["tokenizer_files"]).items()  # type: ignore[call-overload]
        ),
        ("output_dir", OUTPUT_TODO, NOT_PLANNED),
        ("batch_size", spec.micro_batch, why("micro_batch")),
        ("gradient_accumulation_steps", spec.grad_accum, why("grad_accum")),
        ("epochs", int(spec.epochs or 1), why("epochs")),
        ("tokenizer.max_seq_len", spec.seq_len, why("seq_len")),
        ("dataset.packed", bool(spec.packing), why("packing")),
        ("enable_activation_checkpointing", bool(spec.gradient_checkpointing),
         why("checkpointing")),
        ("enable_activation_offloading", bool(spec.activation_offloading),
         why("activation_offloading")),
    ]  # fmt: skip
    if spec.precision is Precision.fp32:
        wanted.append(("dtype", "fp32", why("precision")))
    elif spec.precision is Precision.fp16_mixed:
        unexpressed.append("fp16: torchtune trains in bf16 or fp32")
    else:
        wanted.append(("dtype", "bf16", why("precision")))
    optimizer = OPTIMIZERS.get(spec.optimizer or Optimizer.adamw)
    if optimizer is None:
        unexpressed.append(f"the {spec.optimizer} optimizer: torchtune's configs have none")
    else:
        wanted.append(("optimizer._component_", optimizer, why("optimizer")))
    if job.multi_gpu:
        wanted.append(("fsdp_cpu_offload", bool(spec.cpu_offload), why("offload")))
    if job.peft:
        wanted += _lora(job, unexpressed)
    if (spec.epochs or 1) != int(spec.epochs or 1):
        unexpressed.append(f"{spec.epochs:g} epochs: torchtune counts whole epochs")
    keys = set(config["keys"])  # type: ignore[call-overload]
    tokenizer = {
        key
        for key, _, _ in wanted
        if key.startswith("tokenizer.") and key != "tokenizer.max_seq_len"
    }
    for key, _, _ in wanted:
        if key not in keys and key not in tokenizer:
            unexpressed.append(f"{key}: this torchtune config has no such key")
    return [entry for entry in wanted if entry[0] in keys or entry[0] in tokenizer]


def _lora(job: RunJob, unexpressed: list[str]) -> list[Override]:
    spec, why = job.spec, job.why
    targets = {LoraTarget(name) for name in lora_target_names(job.spec.lora_targets)}
    attention = [ATTENTION_MODULES[target] for target in ATTENTION_MODULES if target in targets]
    mlp = targets & MLP_TARGETS
    if mlp and mlp != MLP_TARGETS:
        unexpressed.append("LoRA on part of the MLP: torchtune adapts all three MLP layers or none")
    return [
        ("model.lora_rank", spec.lora_rank, why("lora_rank")),
        ("model.lora_alpha", spec.lora_alpha, why("lora_alpha")),
        ("model.lora_attn_modules", attention, why("lora_targets")),
        ("model.apply_lora_to_mlp", bool(mlp), why("lora_targets")),
    ]


def _value(value: object) -> str:
    """An override's value as torchtune's command line parses it (OmegaConf)."""
    if isinstance(value, bool):
        return "True" if value else "False"
    if isinstance(value, list):
        return "[" + ",".join(str(item) for item in value) + "]"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)
