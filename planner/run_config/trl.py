"""TRL's command line (`trl sft|dpo|kto|grpo|rloo --config train.yaml`, TRL 1.16.0): train.yaml
holds ScriptArguments, the trainer's config (SFTConfig, DPOConfig, …, each a transformers
TrainingArguments), ModelConfig and DatasetMixtureConfig fields, and TrlParser rejects any other
key. More than one GPU adds accelerate.yaml (FSDP, DDP or DeepSpeed, as planned), which
`--accelerate_config` hands to `accelerate launch`; ZeRO adds ds_config.json, which accelerate.yaml
points at.

Also the `hf` stack: the planner's default stack is HF Trainer + PEFT, which TRL runs.
"""

from __future__ import annotations

from planner.run_config.emit import Block, Entry, block, json_text, yaml_text
from planner.run_config.job import RunJob
from planner.run_config.result import StackFiles
from planner.run_config.unknowns import (
    DATASET_TODO,
    NOT_PLANNED,
    RECIPE_RATE,
    learning_rate,
    reward_todo,
)
from planner.run_config.unknowns import todos as unknown_todos
from planner.spec import LossKernel, Objective, Rollout, Sharding

TRL_VERSION = "1.16.0"
# The `trl` subcommand that trains each objective (trl/scripts/*.py in TRL 1.16.0).
COMMANDS = {
    Objective.sft: "sft",
    Objective.dpo: "dpo",
    Objective.kto: "kto",
    Objective.grpo: "grpo",
    Objective.rloo: "rloo",
}
OUTPUT_TODO = "outputs/TODO-run-name"
ACCELERATE_FILE = "accelerate.yaml"
DEEPSPEED_FILE = "ds_config.json"


def objective(job: RunJob) -> Objective:
    return job.spec.objective or Objective.sft


def stack_files(job: RunJob) -> StackFiles:
    command = COMMANDS[objective(job)]
    unexpressed: list[str] = []
    files = {"train.yaml": _train_yaml(job, unexpressed)}
    launch = f"trl {command} --config train.yaml"
    if job.multi_gpu:
        files[ACCELERATE_FILE] = _accelerate_yaml(job)
        launch += f" --accelerate_config {ACCELERATE_FILE}"
    if job.zero_stage is not None:
        files[DEEPSPEED_FILE] = json_text(deepspeed_config(job))
    extras = ["peft"] if job.peft else []
    extras += ["quantization"] if job.quantised else []
    extras += ["deepspeed"] if job.zero_stage else []
    extras += ["liger"] if job.spec.loss_kernel is LossKernel.liger else []
    extras += ["vllm"] if job.spec.rollout in (Rollout.vllm_colocate, Rollout.vllm_server) else []
    install = f'pip install "trl[{",".join(extras)}]=={TRL_VERSION}"' if extras else ""
    install = install or f'pip install "trl=={TRL_VERSION}"'
    if job.spec.rollout is Rollout.vllm_server:
        unexpressed.append(
            f"the separate vLLM server on {job.spec.rollout_gpus} more GPU(s): start "
            "`trl vllm-serve --model MODEL` on them before training (train.yaml sets "
            "vllm_mode: server)"
        )
    dataset = f"dataset_name: your dataset on the Hub or a local path ({DATASET_TODO})"
    todos = unknown_todos("train.yaml", dataset, OUTPUT_TODO, job)
    if objective(job) in (Objective.grpo, Objective.rloo):
        functions = "trl.rewards names or module paths"
        todos += reward_todo("train.yaml", "reward_funcs", job, functions)
    return StackFiles(files, install, launch, unexpressed, todos)


def _train_yaml(job: RunJob, unexpressed: list[str]) -> str:
    spec, why = job.spec, job.why
    goal = objective(job)
    online = goal in (Objective.grpo, Objective.rloo)
    entries: list[Entry | None] = [
        Entry("model_name_or_path", job.model_id, why("model")),
        Entry("dtype", job.dtype, why("precision")),
        Entry("attn_implementation", job.attn_implementation, why("attention")),
        Entry("dataset_name", DATASET_TODO, NOT_PLANNED),
        Entry("output_dir", OUTPUT_TODO, NOT_PLANNED),
        Entry("learning_rate", learning_rate(job), RECIPE_RATE),
        Entry("num_train_epochs", spec.epochs or 1.0, why("epochs")),
        Entry("per_device_train_batch_size", spec.micro_batch, why("micro_batch")),
        Entry("gradient_accumulation_steps", spec.grad_accum, why("grad_accum")),
        Entry("gradient_checkpointing", bool(spec.gradient_checkpointing), why("checkpointing")),
        Entry("bf16", job.bf16, why("precision")),
        Entry("fp16", job.fp16, why("precision")),
        Entry("optim", job.optim, why("optimizer")),
    ]
    if not online:
        entries.append(Entry("max_length", spec.seq_len, why("seq_len")))
    if goal is Objective.sft:
        entries.append(Entry("packing", bool(spec.packing), why("packing")))
    if spec.activation_offloading and goal in (Objective.sft, Objective.dpo, Objective.kto):
        entries.append(Entry("activation_offloading", True, why("activation_offloading")))
    elif spec.activation_offloading:
        unexpressed.append(f"activation offloading: TRL's {goal.value} trainer has no switch")
    entries += _loss_kernel(job, goal, unexpressed)
    entries += _peft(job)
    entries += _objective(job, goal)
    if job.multi_gpu and job.sharding is Sharding.ddp:
        entries.append(Entry("ddp_find_unused_parameters", False, why("sharding")))
    header = [
        f"TRL {TRL_VERSION}: trl {COMMANDS[goal]} --config train.yaml"
        + (f" --accelerate_config {ACCELERATE_FILE}" if job.multi_gpu else ""),
        f"Realises gpuplan's plan: {job.plan.model.name}, {spec.method.value}, "
        f"{spec.seq_len:,} tokens, {job.card.count}× {job.card.name}.",
    ]
    return yaml_text(entries, header)


def _loss_kernel(job: RunJob, goal: Objective, unexpressed: list[str]) -> list[Entry | None]:
    kernel = job.spec.loss_kernel
    if kernel is LossKernel.liger:
        return [Entry("use_liger_kernel", True, job.why("loss_kernel"))]
    if kernel is LossKernel.chunked and goal is Objective.sft:
        return [Entry("loss_type", "chunked_nll", job.why("loss_kernel"))]
    if kernel in (LossKernel.chunked, LossKernel.cce):
        unexpressed.append(f"the {kernel.value} loss kernel: TRL's {goal.value} trainer has none")
    return []


def _peft(job: RunJob) -> list[Entry | None]:
    if not job.peft:
        return []
    spec, why = job.spec, job.why
    entries: list[Entry | None] = [
        Entry("use_peft", True, why("method")),
        Entry("lora_r", spec.lora_rank, why("lora_rank")),
        Entry("lora_alpha", int(spec.lora_alpha or 0), why("lora_alpha")),
        Entry("lora_target_modules", job.target_modules, why("lora_targets")),
    ]
    if job.quantised:
        entries += quantisation_entries(job)
    return entries


def quantisation_entries(job: RunJob) -> list[Entry | None]:
    """ModelConfig's bitsandbytes fields for the plan's QLoRA base."""
    quant = job.spec.quant
    if quant is not None and quant.value == "int8":
        return [Entry("load_in_8bit", True, job.why("quant"))]
    entries: list[Entry | None] = [
        Entry("load_in_4bit", True, job.why("quant")),
        Entry("bnb_4bit_quant_type", "nf4", job.why("quant")),
        Entry("use_bnb_nested_quant", True, job.why("quant")),
    ]
    if job.sharding in (Sharding.fsdp, Sharding.zero3):
        # FSDP and ZeRO-3 shard the packed 4-bit weights only when they are stored in the
        # dtype the rest of the model is (PEFT's FSDP-QLoRA and DeepSpeed-QLoRA guides).
        entries.append(Entry("bnb_4bit_quant_storage", job.dtype, job.why("sharding")))
    return entries


def _objective(job: RunJob, goal: Objective) -> list[Entry | None]:
    spec, why = job.spec, job.why
    if goal in (Objective.dpo, Objective.kto):
        # Without a resident reference, TRL computes the reference log-probs once up front.
        return [Entry("precompute_ref_log_probs", not spec.reference_model, why("reference"))]
    if goal not in (Objective.grpo, Objective.rloo):
        return []
    rollout = spec.rollout or Rollout.hf
    entries: list[Entry | None] = [
        Entry("reward_funcs", ["TODO-reward-function"], NOT_PLANNED)
        if job.reward_model_id is None
        else Entry("reward_model_name_or_path", job.reward_model_id, why("reward")),
        Entry("num_generations", spec.num_generations, why("generations")),
        Entry("max_completion_length", spec.completion_len, why("completion_len")),
        # beta 0 loads no reference model (TRL's GRPO default); any other keeps one.
        Entry("beta", 0.04 if spec.reference_model else 0.0, why("reference")),
        Entry("use_vllm", rollout is not Rollout.hf, why("rollout")),
    ]
    if rollout is Rollout.hf:
        return entries
    entries.append(Entry("vllm_mode", "colocate" if rollout is Rollout.vllm_colocate else "server"))
    if rollout is Rollout.vllm_colocate:
        entries += [
            Entry(
                "vllm_gpu_memory_utilization",
                spec.rollout_memory_fraction,
                why("rollout_fraction"),
            ),
            Entry(
                "vllm_tensor_parallel_size",
                spec.rollout_tensor_parallel or 1,
                why("rollout_tp") if spec.rollout_tensor_parallel else "",
            ),
            Entry("vllm_enable_sleep_mode", bool(spec.rollout_sleep), why("rollout_sleep"))
            if spec.rollout_sleep
            else None,
        ]
    return entries


def _accelerate_yaml(job: RunJob) -> str:
    """accelerate's config file (the keys `accelerate config` writes, accelerate 1.16.0)."""
    why = job.why
    common = [
        Entry("compute_environment", "LOCAL_MACHINE"),
        Entry("num_machines", 1),
        Entry("machine_rank", 0),
        Entry("num_processes", job.card.count, why("gpus")),
        Entry("main_training_function", "main"),
        Entry("rdzv_backend", "static"),
        Entry("same_network", True),
        Entry("use_cpu", False),
        Entry("debug", False),
    ]
    header = [f"accelerate launch --config_file {ACCELERATE_FILE} (TRL passes it)"]
    if job.zero_stage is not None:
        # With a DeepSpeed config file, accelerate refuses mixed_precision (and the other ZeRO
        # fields) here: ds_config.json holds them.
        deepspeed = block(
            Entry("deepspeed_config_file", DEEPSPEED_FILE, why("sharding")),
            Entry("zero3_init_flag", job.zero_stage == 3, why("sharding")),
        )
        return yaml_text(
            [
                Entry("distributed_type", "DEEPSPEED", why("sharding")),
                Entry("deepspeed_config", deepspeed),
                *common,
            ],
            header,
        )
    precision = "bf16" if job.bf16 else "fp16" if job.fp16 else "no"
    entries = [
        Entry("distributed_type", _distributed_type(job), why("sharding")),
        Entry("mixed_precision", precision, why("precision")),
        *common,
    ]
    if job.sharding is Sharding.fsdp:
        entries.insert(1, Entry("fsdp_config", _fsdp(job)))
    return yaml_text(entries, header)


def _distributed_type(job: RunJob) -> str:
    return "FSDP" if job.sharding is Sharding.fsdp else "MULTI_GPU"


def _fsdp(job: RunJob) -> Block:
    why = job.why
    return block(
        Entry("fsdp_version", 2, "FSDP2 (per-parameter sharding; TRL's fsdp2.yaml)"),
        Entry("fsdp_auto_wrap_policy", "TRANSFORMER_BASED_WRAP"),
        Entry("fsdp_reshard_after_forward", True, why("sharding") + " (full sharding)"),
        Entry("fsdp_offload_params", bool(job.spec.cpu_offload), why("offload")),
        Entry("fsdp_cpu_ram_efficient_loading", True),
        Entry("fsdp_state_dict_type", "FULL_STATE_DICT"),
        # Checkpointing is train.yaml's gradient_checkpointing; FSDP's own would do it twice.
        Entry("fsdp_activation_checkpointing", False),
    )


def deepspeed_entry(job: RunJob) -> list[Entry | None]:
    """A stack config's `deepspeed: ds_config.json` (axolotl, LLaMA-Factory), under ZeRO."""
    return [Entry("deepspeed", DEEPSPEED_FILE, job.why("sharding"))] if job.zero_stage else []


def deepspeed_config(job: RunJob) -> dict[str, object]:
    """DeepSpeed's JSON config with the plan's values where HF Trainer would otherwise fill
    "auto" (the keys transformers' HfTrainerDeepSpeedConfig fills; gradient_clipping is
    TrainingArguments' max_grad_norm default, which the Trainer checks it against)."""
    spec = job.spec
    zero: dict[str, object] = {"stage": job.zero_stage}
    if spec.cpu_offload:
        zero["offload_optimizer"] = {"device": "cpu"}
        if job.zero_stage == 3:
            zero["offload_param"] = {"device": "cpu"}
    if job.zero_stage == 3:
        # Saves a 16-bit model at the end rather than the partitioned shards only.
        zero["stage3_gather_16bit_weights_on_model_save"] = True
    return {
        "train_micro_batch_size_per_gpu": spec.micro_batch,
        "gradient_accumulation_steps": spec.grad_accum,
        "train_batch_size": job.global_batch,
        "gradient_clipping": 1.0,
        "bf16": {"enabled": job.bf16},
        "fp16": {"enabled": job.fp16},
        "zero_optimization": zero,
    }
