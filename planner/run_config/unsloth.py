"""train_unsloth.py: Unsloth's FastLanguageModel with TRL's trainer (Unsloth 2026.10.9, TRL 1.16.0),
the plan's values as keyword arguments, each with its reason. Unsloth runs DDP across GPUs
(`accelerate launch`); it has no FSDP or ZeRO, for which TRL is the nearest stack."""

from __future__ import annotations

from planner.run_config.job import HF_TOKEN, ConfigRefused, RunJob
from planner.run_config.result import StackFiles
from planner.run_config.trl import TRL_VERSION
from planner.run_config.unknowns import (
    DATASET_TODO,
    NOT_PLANNED,
    RECIPE_RATE,
    learning_rate,
    reward_todo,
)
from planner.run_config.unknowns import todos as unknown_todos
from planner.spec import Objective, Quant, Sharding

UNSLOTH_VERSION = "2026.10.9"
SCRIPT = "train_unsloth.py"
OUTPUT_TODO = "outputs/TODO-run-name"
TRAINERS = {
    Objective.sft: ("SFTConfig", "SFTTrainer"),
    Objective.dpo: ("DPOConfig", "DPOTrainer"),
    Objective.grpo: ("GRPOConfig", "GRPOTrainer"),
}

Argument = tuple[str, object, str]


def stack_files(job: RunJob) -> StackFiles:
    if job.sharding in (Sharding.fsdp, Sharding.zero2, Sharding.zero3):
        raise ConfigRefused(
            f"Unsloth has no {job.sharding.value.upper()} (it trains a whole copy per GPU); "
            "the nearest stack that shards is trl",
            nearest="trl",
        )
    unexpressed: list[str] = []
    if job.spec.quant is Quant.int4:
        unexpressed.append("int4 (GPTQ): Unsloth loads bitsandbytes 4-bit; name its -bnb-4bit repo")
    launch = f"python {SCRIPT}"
    if job.multi_gpu:
        launch = f"accelerate launch --num_processes {job.card.count} {SCRIPT}"
    todos = unknown_todos(SCRIPT, f"load_dataset: your dataset ({DATASET_TODO})", OUTPUT_TODO, job)
    if job.spec.objective is Objective.grpo:
        todos += reward_todo(SCRIPT, "reward_todo", job, "a Python function")
    install = f'pip install "unsloth=={UNSLOTH_VERSION}" "trl=={TRL_VERSION}"'
    return StackFiles({SCRIPT: _script(job)}, install, launch, unexpressed, todos)


def _script(job: RunJob) -> str:
    spec, why = job.spec, job.why
    goal = spec.objective or Objective.sft
    config_class, trainer_class = TRAINERS[goal]
    load: list[Argument] = [
        ("model_name", job.model_id, why("model")),
        ("max_seq_length", spec.seq_len, why("seq_len")),
        ("load_in_4bit", job.quantised and spec.quant is not Quant.int8, why("method")),
        ("load_in_8bit", spec.quant is Quant.int8, why("method")),
        ("full_finetuning", not job.peft, why("method")),
    ]
    checkpointing: object = bool(spec.gradient_checkpointing)
    if spec.gradient_checkpointing and spec.activation_offloading:
        checkpointing = "unsloth"  # Unsloth's checkpointing offloads the checkpoints to host RAM
    config: list[Argument] = [
        ("output_dir", OUTPUT_TODO, NOT_PLANNED),
        ("per_device_train_batch_size", spec.micro_batch, why("micro_batch")),
        ("gradient_accumulation_steps", spec.grad_accum, why("grad_accum")),
        ("num_train_epochs", spec.epochs or 1.0, why("epochs")),
        ("learning_rate", learning_rate(job), RECIPE_RATE),
        ("bf16", job.bf16, why("precision")),
        ("fp16", job.fp16, why("precision")),
        ("optim", job.optim, why("optimizer")),
    ]
    if goal is Objective.sft:
        config += [
            ("max_length", spec.seq_len, why("seq_len")),
            ("packing", bool(spec.packing), why("packing")),
        ]
    elif goal is Objective.dpo:
        config.append(("max_length", spec.seq_len, why("seq_len")))
    else:
        config += [
            ("num_generations", spec.num_generations, why("generations")),
            ("max_completion_length", spec.completion_len, why("completion_len")),
            ("beta", 0.04 if spec.reference_model else 0.0, why("reference")),
        ]
    lines = [
        f"# Unsloth {UNSLOTH_VERSION} with TRL {TRL_VERSION}: python {SCRIPT}",
        f"# Realises gpuplan's plan: {job.plan.model.name}, {spec.method.value}, "
        f"{spec.seq_len:,} tokens, {job.card.count}× {job.card.name}.",
        "from unsloth import FastLanguageModel  # first: Unsloth patches transformers and TRL",
        "",
        "import os",
        "",
        "from datasets import load_dataset",
        f"from trl import {config_class}, {trainer_class}",
        "",
        "model, tokenizer = FastLanguageModel.from_pretrained(",
        *_arguments(load),
        f'    token=os.environ.get("{HF_TOKEN}"),  # gated models: the token from the environment',
        ")",
    ]
    if job.peft:
        peft: list[Argument] = [
            ("r", spec.lora_rank, why("lora_rank")),
            ("lora_alpha", int(spec.lora_alpha or 0), why("lora_alpha")),
            # Unsloth's get_peft_model takes the module names (its default is these seven).
            ("target_modules", job.module_names, why("lora_targets")),
            ("use_gradient_checkpointing", checkpointing, why("checkpointing")),
        ]
        lines += [
            "model = FastLanguageModel.get_peft_model(",
            "    model,",
            *_arguments(peft),
            ")",
        ]
    elif spec.gradient_checkpointing:
        lines.append("model.gradient_checkpointing_enable()  # " + why("checkpointing"))
    lines += [
        f'dataset = load_dataset("{DATASET_TODO}", split="train")  # TODO: not in the plan',
        "",
    ]
    trainer_arguments = ["    model=model,", "    processing_class=tokenizer,"]
    if goal is Objective.grpo and job.reward_model_id:
        # TRL's GRPOTrainer takes a reward model's Hub id among its reward functions.
        trainer_arguments.append(f"    reward_funcs=[{job.reward_model_id!r}],  # {why('reward')}")
    elif goal is Objective.grpo:
        lines += [
            "",
            "def reward_todo(completions, **kwargs):  # TODO: your reward function",
            '    raise NotImplementedError("score each completion")',
            "",
        ]
        trainer_arguments.append("    reward_funcs=[reward_todo],")
    lines += [
        f"trainer = {trainer_class}(",
        *trainer_arguments,
        "    train_dataset=dataset,",
        f"    args={config_class}(",
        *("    " + line for line in _arguments(config)),
        "    ),",
        ")",
        "trainer.train()",
        f'model.save_pretrained("{OUTPUT_TODO}")',
    ]
    return "\n".join(lines) + "\n"


def _arguments(arguments: list[Argument]) -> list[str]:
    return [
        f"    {name}={value!r},  # {reason}" if reason else f"    {name}={value!r},"
        for name, value, reason in arguments
    ]
