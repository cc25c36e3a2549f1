"""axolotl.yaml for `axolotl train axolotl.yaml` (axolotl 0.19.0: the fields of
utils/schemas/config.py AxolotlInputConfig and its mixins). axolotl launches one process per GPU
through accelerate itself; FSDP lives in axolotl.yaml, ZeRO in ds_config.json, which it names."""

from __future__ import annotations

from planner.run_config.emit import Block, Entry, block, json_text, yaml_text
from planner.run_config.job import RunJob
from planner.run_config.result import StackFiles
from planner.run_config.trl import DEEPSPEED_FILE, deepspeed_config, deepspeed_entry
from planner.run_config.unknowns import (
    DATASET_TODO,
    NOT_PLANNED,
    RECIPE_RATE,
    learning_rate,
    reward_todo,
)
from planner.run_config.unknowns import todos as unknown_todos
from planner.spec import LossKernel, Objective, Rollout, Sharding

AXOLOTL_VERSION = "0.19.0"
OUTPUT_TODO = "./outputs/TODO-run-name"
# Dataset formats axolotl reads (its docs' dataset formats): the SFT default is chat messages.
DATASET_TYPES = {
    Objective.sft: "chat_template",
    Objective.dpo: "chat_template.default",
    Objective.kto: "chat_template.default",
    Objective.orpo: "chat_template.argilla",
    Objective.simpo: "chat_template.default",
    Objective.grpo: "TODO-your-reward-module.transform",
}
PLUGINS = {
    LossKernel.liger: (
        "axolotl.integrations.liger.LigerPlugin",
        "liger_fused_linear_cross_entropy",
    ),
    LossKernel.cce: (
        "axolotl.integrations.cut_cross_entropy.CutCrossEntropyPlugin",
        "cut_cross_entropy",
    ),
}


def stack_files(job: RunJob) -> StackFiles:
    unexpressed: list[str] = []
    files = {"axolotl.yaml": _axolotl_yaml(job, unexpressed)}
    if job.zero_stage is not None:
        files[DEEPSPEED_FILE] = json_text(deepspeed_config(job))
    extras = ["deepspeed"] if job.zero_stage else []
    extras += ["vllm"] if job.spec.rollout in (Rollout.vllm_colocate, Rollout.vllm_server) else []
    wanted = f"[{','.join(extras)}]" if extras else ""
    install = f'pip install "axolotl{wanted}=={AXOLOTL_VERSION}"'
    dataset = f"datasets: path ({DATASET_TODO}) and type (the format of your rows)"
    todos = unknown_todos("axolotl.yaml", dataset, OUTPUT_TODO, job)
    if job.spec.objective is Objective.grpo:
        todos += reward_todo("axolotl.yaml", "trl.reward_funcs", job, "module.function")
    return StackFiles(files, install, "axolotl train axolotl.yaml", unexpressed, todos)


def _axolotl_yaml(job: RunJob, unexpressed: list[str]) -> str:
    spec, why = job.spec, job.why
    goal = spec.objective or Objective.sft
    entries: list[Entry | None] = [
        Entry("base_model", job.model_id, why("model")),
        *_adapter(job),
        Entry("sequence_len", spec.seq_len, why("seq_len")),
        Entry("sample_packing", bool(spec.packing), why("packing")),
        Entry("micro_batch_size", spec.micro_batch, why("micro_batch")),
        Entry("gradient_accumulation_steps", spec.grad_accum, why("grad_accum")),
        Entry("num_epochs", spec.epochs or 1.0, why("epochs")),
        Entry("gradient_checkpointing", bool(spec.gradient_checkpointing), why("checkpointing")),
        Entry("activation_offloading", True, why("activation_offloading"))
        if spec.activation_offloading
        else None,
        Entry("bf16", job.bf16, why("precision")),
        Entry("fp16", job.fp16, why("precision")),
        Entry("optimizer", job.optim, why("optimizer")),
        Entry("learning_rate", learning_rate(job), RECIPE_RATE),
        # axolotl 0.19 deprecates sdp_attention/flash_attention for attn_implementation.
        Entry("attn_implementation", job.attn_implementation, why("attention")),
        Entry(
            "datasets",
            [block(Entry("path", DATASET_TODO), Entry("type", DATASET_TYPES.get(goal, "TODO")))],
            NOT_PLANNED,
        ),
        Entry("output_dir", OUTPUT_TODO, NOT_PLANNED),
    ]
    entries += _loss_kernel(job)
    entries += _sharding(job)
    entries += _objective(job, goal, unexpressed)
    header = [
        f"axolotl {AXOLOTL_VERSION}: axolotl train axolotl.yaml",
        f"Realises gpuplan's plan: {job.plan.model.name}, {spec.method.value}, "
        f"{spec.seq_len:,} tokens, {job.card.count}× {job.card.name}.",
    ]
    return yaml_text(entries, header)


def _adapter(job: RunJob) -> list[Entry | None]:
    if not job.peft:
        return []
    spec, why = job.spec, job.why
    targets = job.target_modules
    quant = spec.quant.value if spec.quant else None
    return [
        Entry("adapter", spec.method.value, why("method")),
        Entry("load_in_4bit", True, why("quant")) if job.quantised and quant != "int8" else None,
        Entry("load_in_8bit", True, why("quant")) if quant == "int8" else None,
        Entry("lora_r", spec.lora_rank, why("lora_rank")),
        Entry("lora_alpha", int(spec.lora_alpha or 0), why("lora_alpha")),
        Entry("lora_dropout", 0.0),
        Entry("lora_target_linear", True, why("lora_targets"))
        if isinstance(targets, str)
        else Entry("lora_target_modules", targets, why("lora_targets")),
    ]


def _loss_kernel(job: RunJob) -> list[Entry | None]:
    kernel = job.spec.loss_kernel
    if kernel not in PLUGINS:
        return []
    plugin, switch = PLUGINS[kernel]
    return [
        Entry("plugins", [plugin], job.why("loss_kernel")),
        Entry(switch, True, job.why("loss_kernel")),
    ]


def _sharding(job: RunJob) -> list[Entry | None]:
    if job.zero_stage is not None:
        return deepspeed_entry(job)
    if job.sharding is not Sharding.fsdp:
        return []
    return [
        Entry("fsdp_version", 2, "FSDP2 (axolotl's recommended FSDP)"),
        Entry("fsdp_config", _fsdp(job)),
    ]


def _fsdp(job: RunJob) -> Block:
    why = job.why
    return block(
        Entry("auto_wrap_policy", "TRANSFORMER_BASED_WRAP"),
        Entry("reshard_after_forward", True, why("sharding") + " (full sharding)"),
        Entry("offload_params", bool(job.spec.cpu_offload), why("offload")),
        # axolotl's validator: with 4-bit weights, rank-0-only loading deadlocks FSDP2's scatter.
        Entry("cpu_ram_efficient_loading", not job.quantised),
        Entry("state_dict_type", "FULL_STATE_DICT"),
    )


def _objective(job: RunJob, goal: Objective, unexpressed: list[str]) -> list[Entry | None]:
    spec, why = job.spec, job.why
    if goal is Objective.sft:
        return []
    entries: list[Entry | None] = [Entry("rl", goal.value, why("objective"))]
    if goal is Objective.kto:  # axolotl's validator: KTO keeps its own columns
        entries.append(Entry("remove_unused_columns", False, "axolotl requires it for KTO"))
    if goal is not Objective.grpo:
        if goal in (Objective.dpo, Objective.kto) and not spec.reference_model:
            unexpressed.append("no resident reference model: axolotl always loads one for DPO/KTO")
        return entries
    rollout = spec.rollout or Rollout.hf
    trl = [
        Entry("beta", 0.04 if spec.reference_model else 0.0, why("reference")),
        Entry("num_generations", spec.num_generations, why("generations")),
        Entry("max_completion_length", spec.completion_len, why("completion_len")),
        Entry("use_vllm", rollout is not Rollout.hf, why("rollout")),
        # TRL's GRPOTrainer takes a reward model's Hub id among its reward functions.
        Entry("reward_funcs", [job.reward_model_id], why("reward"))
        if job.reward_model_id
        else Entry("reward_funcs", ["TODO-reward-module.reward_function"], NOT_PLANNED),
    ]
    if rollout is not Rollout.hf:
        trl.append(Entry("vllm_mode", "colocate" if rollout is Rollout.vllm_colocate else "server"))
    if spec.rollout_sleep:
        trl.append(Entry("vllm_enable_sleep_mode", True, why("rollout_sleep")))
    entries.append(Entry("trl", block(*trl)))
    if rollout is Rollout.vllm_colocate:
        vllm = block(
            Entry("gpu_memory_utilization", spec.rollout_memory_fraction, why("rollout_fraction")),
            Entry("tensor_parallel_size", spec.rollout_tensor_parallel or 1),
        )
        entries.append(Entry("vllm", vllm))
    return entries
