"""swift.sh: `swift sft` or `swift rlhf --rlhf_type …` with the plan's values (ms-swift 4.6.0: the
options of swift/arguments SftArguments and RLHFArguments). The options sit in a bash array, one
per line, so each keeps its comment; NPROC_PER_NODE starts one process per GPU. ZeRO reads
ds_config.json; FSDP reads fsdp.json (ms-swift's `--fsdp` takes a preset name or such a file)."""

from __future__ import annotations

import shlex
from collections.abc import Sequence

from planner.run_config.emit import Scalar, json_text
from planner.run_config.job import RunJob
from planner.run_config.result import StackFiles
from planner.run_config.trl import DEEPSPEED_FILE, deepspeed_config
from planner.run_config.unknowns import (
    DATASET_TODO,
    NOT_PLANNED,
    RECIPE_RATE,
    learning_rate,
    reward_todo,
)
from planner.run_config.unknowns import todos as unknown_todos
from planner.spec import LossKernel, Objective, Quant, Rollout, Sharding

MS_SWIFT_VERSION = "4.6.0"
FSDP_FILE = "fsdp.json"
OUTPUT_TODO = "output/TODO-run-name"
QUANT_BITS = {Quant.nf4: 4, Quant.int8: 8}

Option = tuple[str, Scalar | Sequence[Scalar], str]


def stack_files(job: RunJob) -> StackFiles:
    unexpressed: list[str] = []
    goal = job.spec.objective or Objective.sft
    command = "swift sft" if goal is Objective.sft else "swift rlhf"
    files = {"swift.sh": _script(job, goal, command, unexpressed)}
    if job.zero_stage is not None:
        files[DEEPSPEED_FILE] = json_text(deepspeed_config(job))
    elif job.sharding is Sharding.fsdp:
        files[FSDP_FILE] = json_text(fsdp_config(job))
    install = f'pip install "ms-swift=={MS_SWIFT_VERSION}"'
    if job.quantised:
        install += " bitsandbytes"
    if job.zero_stage is not None:
        install += " deepspeed"
    if job.spec.rollout in (Rollout.vllm_colocate, Rollout.vllm_server):
        install += " vllm"
    dataset = f"--dataset: your dataset (a Hub id or a local file; {DATASET_TODO})"
    todos = unknown_todos("swift.sh", dataset, OUTPUT_TODO, job)
    if goal is Objective.grpo:
        todos += reward_todo("swift.sh", "--reward_funcs", job, "ms-swift plugin names")
    elif goal is Objective.ppo:
        todos += reward_todo("swift.sh", "--reward_model", job, "a reward model")
    return StackFiles(files, install, "bash swift.sh", unexpressed, todos)


def fsdp_config(job: RunJob) -> dict[str, object]:
    """The file `--fsdp` reads (the shape of ms-swift's own config/fsdp2.json preset)."""
    layout = "full_shard auto_wrap" + (" offload" if job.spec.cpu_offload else "")
    return {
        "fsdp": layout,
        "fsdp_config": {"fsdp_version": 2, "reshard_after_forward": True},
    }


def _script(job: RunJob, goal: Objective, command: str, unexpressed: list[str]) -> str:
    spec, why = job.spec, job.why
    options: list[Option | None] = [
        ("model", job.model_id, why("model")),
        ("rlhf_type", goal.value, why("objective")) if command == "swift rlhf" else None,
        ("tuner_type", "lora" if job.peft else "full", why("method")),
        *_lora(job, unexpressed),
        ("torch_dtype", job.dtype, why("precision")),
        ("max_length", spec.seq_len, why("seq_len")),
        ("packing", bool(spec.packing), why("packing")),
        ("per_device_train_batch_size", spec.micro_batch, why("micro_batch")),
        ("gradient_accumulation_steps", spec.grad_accum, why("grad_accum")),
        ("gradient_checkpointing", bool(spec.gradient_checkpointing), why("checkpointing")),
        ("attn_impl", "sdpa" if spec.flash_attention else "eager", why("attention")),
        ("optim", job.optim, why("optimizer")),
        ("num_train_epochs", spec.epochs or 1.0, why("epochs")),
        ("learning_rate", learning_rate(job), RECIPE_RATE),
        ("dataset", DATASET_TODO, NOT_PLANNED),
        ("output_dir", OUTPUT_TODO, NOT_PLANNED),
        ("use_liger_kernel", True, why("loss_kernel"))
        if spec.loss_kernel is LossKernel.liger
        else None,
        ("deepspeed", DEEPSPEED_FILE, why("sharding")) if job.zero_stage else None,
        ("fsdp", FSDP_FILE, why("sharding"))
        if job.sharding is Sharding.fsdp and not job.zero_stage
        else None,
        *_objective(job, goal),
    ]
    if spec.loss_kernel in (LossKernel.chunked, LossKernel.cce):
        unexpressed.append(f"the {spec.loss_kernel.value} loss kernel: ms-swift has none")
    if spec.activation_offloading:
        unexpressed.append("activation offloading: ms-swift has no switch for it")
    lines = [
        "#!/usr/bin/env bash",
        f"# ms-swift {MS_SWIFT_VERSION}: bash swift.sh",
        f"# Realises gpuplan's plan: {job.plan.model.name}, {spec.method.value}, "
        f"{spec.seq_len:,} tokens, {job.card.count}× {job.card.name}.",
        "set -euo pipefail",
        "args=(",
    ]
    for option in options:
        if option is None:
            continue
        name, value, reason = option
        words = " ".join(shlex.quote(_word(item)) for item in _items(value))
        comment = f"  # {reason}" if reason else ""
        lines.append(f"  --{name} {words}{comment}")
    lines.append(")")
    launch = f'{command} "${{args[@]}}"'
    if job.multi_gpu:
        launch = f"NPROC_PER_NODE={job.card.count} {launch}  # {why('gpus')}"
    lines.append(launch)
    return "\n".join(lines) + "\n"


def _lora(job: RunJob, unexpressed: list[str]) -> list[Option | None]:
    if not job.peft:
        return []
    spec, why = job.spec, job.why
    options: list[Option | None] = [
        ("lora_rank", spec.lora_rank, why("lora_rank")),
        ("lora_alpha", int(spec.lora_alpha or 0), why("lora_alpha")),
        ("target_modules", job.target_modules, why("lora_targets")),
    ]
    if not job.quantised:
        return options
    bits = QUANT_BITS.get(spec.quant or Quant.nf4)
    if bits is None:
        unexpressed.append("int4 (GPTQ): name a GPTQ checkpoint as --model")
        return options
    options += [
        ("quant_method", "bnb", why("quant")),
        ("quant_bits", bits, why("quant")),
        ("bnb_4bit_quant_type", "nf4", why("quant")) if bits == 4 else None,
        ("bnb_4bit_use_double_quant", True, why("quant")) if bits == 4 else None,
    ]
    return options


def _objective(job: RunJob, goal: Objective) -> list[Option | None]:
    spec, why = job.spec, job.why
    reward = job.reward_model_id
    if goal is Objective.ppo:
        return [("reward_model", reward or "TODO-reward-model", why("reward"))]
    if goal is not Objective.grpo:
        return []
    rollout = spec.rollout or Rollout.hf
    options: list[Option | None] = [
        ("num_generations", spec.num_generations, why("generations")),
        ("max_completion_length", spec.completion_len, why("completion_len")),
        ("beta", 0.04 if spec.reference_model else 0.0, why("reference")),
        ("reward_funcs", "TODO-reward-function", NOT_PLANNED)
        if reward is None
        else ("reward_model", reward, why("reward")),
        ("use_vllm", rollout is not Rollout.hf, why("rollout")),
    ]
    if rollout is Rollout.vllm_colocate:
        options += [
            ("vllm_mode", "colocate", why("rollout")),
            ("vllm_gpu_memory_utilization", spec.rollout_memory_fraction, why("rollout_fraction")),
            ("vllm_tensor_parallel_size", spec.rollout_tensor_parallel or 1, ""),
            ("sleep_level", 1, why("rollout_sleep")) if spec.rollout_sleep else None,
        ]
    elif rollout is Rollout.vllm_server:
        options.append(("vllm_mode", "server", why("rollout")))
    return options


def _items(value: Scalar | Sequence[Scalar]) -> Sequence[Scalar]:
    return value if isinstance(value, list | tuple) else [value]  # type: ignore[return-value]


def _word(value: Scalar) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)
