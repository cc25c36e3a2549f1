"""llamafactory.yaml for `llamafactory-cli train llamafactory.yaml` (LLaMA-Factory 0.9.5: the
fields of llamafactory/hparams ModelArguments, DataArguments, FinetuningArguments and
TrainingArguments, a transformers Seq2SeqTrainingArguments). With more than one GPU the command
starts torchrun itself (FORCE_TORCHRUN=1 makes it certain); FSDP is TrainingArguments' `fsdp`,
ZeRO a DeepSpeed file named by `deepspeed`."""

from __future__ import annotations

from planner.run_config.emit import Entry, block, json_text, yaml_text
from planner.run_config.job import RunJob
from planner.run_config.result import StackFiles
from planner.run_config.trl import DEEPSPEED_FILE, deepspeed_config, deepspeed_entry
from planner.run_config.unknowns import NOT_PLANNED, RECIPE_RATE, learning_rate, reward_todo
from planner.run_config.unknowns import todos as unknown_todos
from planner.spec import LossKernel, Objective, Quant, Sharding

LLAMA_FACTORY_VERSION = "0.9.5"
DATASET_TODO = "TODO_dataset_in_dataset_info"
TEMPLATE_TODO = "TODO-template"
OUTPUT_TODO = "saves/TODO-run-name"
# stage and pref_loss for each objective (hparams/finetuning_args.py).
STAGES = {
    Objective.sft: ("sft", None),
    Objective.dpo: ("dpo", "sigmoid"),
    Objective.kto: ("kto", None),
    Objective.orpo: ("dpo", "orpo"),
    Objective.simpo: ("dpo", "simpo"),
    Objective.ppo: ("ppo", None),
}
# Bits of the quantised base: bitsandbytes 4-bit (NF4) or 8-bit.
QUANT_BITS = {Quant.nf4: 4, Quant.int8: 8}


def stack_files(job: RunJob) -> StackFiles:
    unexpressed: list[str] = []
    files = {"llamafactory.yaml": _yaml(job, unexpressed)}
    if job.zero_stage is not None:
        files[DEEPSPEED_FILE] = json_text(deepspeed_config(job))
    extras = ["torch", "metrics"]
    extras += ["bitsandbytes"] if job.quantised else []
    extras += ["deepspeed"] if job.zero_stage else []
    extras += ["liger-kernel"] if job.spec.loss_kernel is LossKernel.liger else []
    install = f'pip install "llamafactory[{",".join(extras)}]=={LLAMA_FACTORY_VERSION}"'
    launch = "llamafactory-cli train llamafactory.yaml"
    if job.multi_gpu:
        launch = f"FORCE_TORCHRUN=1 {launch}"
    dataset = f"dataset: a dataset named in your dataset_info.json ({DATASET_TODO})"
    todos = unknown_todos("llamafactory.yaml", dataset, OUTPUT_TODO, job)
    todos.append(f"llamafactory.yaml template: the model's chat template name ({TEMPLATE_TODO})")
    if job.spec.objective is Objective.ppo:
        todos += reward_todo("llamafactory.yaml", "reward_model", job, "a reward model")
    return StackFiles(files, install, launch, unexpressed, todos)


def _yaml(job: RunJob, unexpressed: list[str]) -> str:
    spec, why = job.spec, job.why
    goal = spec.objective or Objective.sft
    stage, loss = STAGES[goal]
    entries: list[Entry | None] = [
        Entry("model_name_or_path", job.model_id, why("model")),
        Entry("stage", stage, why("objective")),
        Entry("do_train", True),
        Entry("finetuning_type", "lora" if job.peft else "full", why("method")),
        *_lora(job, unexpressed),
        Entry("pref_loss", loss, why("objective")) if loss else None,
        Entry("reward_model", job.reward_model_id or "TODO-reward-model", why("reward"))
        if goal is Objective.ppo
        else None,
        Entry("dataset", DATASET_TODO, NOT_PLANNED),
        Entry("template", TEMPLATE_TODO, NOT_PLANNED),
        Entry("cutoff_len", spec.seq_len, why("seq_len")),
        Entry("packing", bool(spec.packing), why("packing")),
        Entry("output_dir", OUTPUT_TODO, NOT_PLANNED),
        Entry("per_device_train_batch_size", spec.micro_batch, why("micro_batch")),
        Entry("gradient_accumulation_steps", spec.grad_accum, why("grad_accum")),
        Entry("learning_rate", learning_rate(job), RECIPE_RATE),
        Entry("num_train_epochs", spec.epochs or 1.0, why("epochs")),
        Entry("bf16", job.bf16, why("precision")),
        Entry("fp16", job.fp16, why("precision")),
        Entry("optim", job.optim, why("optimizer")),
        Entry("flash_attn", "sdpa" if spec.flash_attention else "disabled", why("attention")),
        Entry(
            "disable_gradient_checkpointing",
            not spec.gradient_checkpointing,
            why("checkpointing"),
        ),
        Entry("enable_liger_kernel", True, why("loss_kernel"))
        if spec.loss_kernel is LossKernel.liger
        else None,
        *_sharding(job),
    ]
    if spec.loss_kernel in (LossKernel.chunked, LossKernel.cce):
        unexpressed.append(f"the {spec.loss_kernel.value} loss kernel: LLaMA-Factory has none")
    if spec.activation_offloading:
        unexpressed.append("activation offloading: LLaMA-Factory has no switch for it")
    if goal in (Objective.dpo, Objective.kto) and not spec.reference_model:
        unexpressed.append("no resident reference model: LLaMA-Factory builds one for DPO/KTO")
    header = [
        f"LLaMA-Factory {LLAMA_FACTORY_VERSION}: llamafactory-cli train llamafactory.yaml",
        f"Realises gpuplan's plan: {job.plan.model.name}, {spec.method.value}, "
        f"{spec.seq_len:,} tokens, {job.card.count}× {job.card.name}.",
    ]
    return yaml_text(entries, header)


def _lora(job: RunJob, unexpressed: list[str]) -> list[Entry | None]:
    if not job.peft:
        return []
    spec, why = job.spec, job.why
    targets = job.target_modules
    entries: list[Entry | None] = [
        Entry("lora_rank", spec.lora_rank, why("lora_rank")),
        Entry("lora_alpha", int(spec.lora_alpha or 0), why("lora_alpha")),
        Entry("lora_target", "all" if isinstance(targets, str) else ",".join(targets),
              why("lora_targets")),
    ]  # fmt: skip
    if not job.quantised:
        return entries
    bits = QUANT_BITS.get(spec.quant or Quant.nf4)
    if bits is None:  # int4: a GPTQ checkpoint, which LLaMA-Factory reads from the model itself
        unexpressed.append("int4 (GPTQ): name a GPTQ checkpoint as model_name_or_path")
        return entries
    entries += [
        Entry("quantization_bit", bits, why("quant")),
        Entry("quantization_method", "bnb", why("quant")),
        Entry("quantization_type", "nf4", why("quant")) if bits == 4 else None,
        Entry("double_quantization", True, why("quant")) if bits == 4 else None,
    ]
    return entries


def _sharding(job: RunJob) -> list[Entry | None]:
    why = job.why
    if job.zero_stage is not None:
        return deepspeed_entry(job)
    if job.sharding is not Sharding.fsdp:
        return []
    layout = "full_shard auto_wrap" + (" offload" if job.spec.cpu_offload else "")
    return [
        Entry(
            "fsdp",
            layout,
            why("sharding") + (", " + why("offload") if job.spec.cpu_offload else ""),
        ),
        Entry("fsdp_config", block(Entry("version", 2), Entry("reshard_after_forward", True))),
    ]
