"""The run configs parsed by the stacks' own loaders, not by our copies of their field names:
TRL's TrlParser exactly as `trl sft|dpo|kto|grpo|rloo` builds it (unknown keys are an error),
accelerate's config loader, SkyPilot's `sky.Task.from_yaml`, axolotl's own pydantic model of
axolotl.yaml (AxolotlInputConfig, with its validators), LLaMA-Factory's get_train_args on
llamafactory.yaml (not for ZeRO: its check needs DeepSpeed installed, which builds against
CUDA) and torchtune's own parser merging torchtune.sh's overrides into its config. Each file's
values are then compared with the plan's (micro-batch, length, checkpointing, LoRA rank,
quantisation, GPUs, ZeRO stage). Prints one line per job and file and a summary; exits 1 on any
mismatch.

Needs torch (TRL imports it), so it runs in a separate venv, not the dev one and not in CI:
    python3 -m venv /tmp/cfgcheck-venv
    /tmp/cfgcheck-venv/bin/pip install torch==2.13.0 -e '.[configs-check]'
    # axolotl's and LLaMA-Factory's config parsers only (their full dependency sets pin their
    # own torch and transformers):
    /tmp/cfgcheck-venv/bin/pip install --no-deps axolotl==0.19.0 peft==0.21.2 pillow \
        llamafactory==0.9.5 omegaconf antlr4-python3-runtime \
        torchtune==0.6.1 torchao==0.10.0 sentencepiece tiktoken
    /tmp/cfgcheck-venv/bin/python bench/configs_check.py
"""

from __future__ import annotations

import importlib
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from planner.parsing import parse
from planner.planner import make_plan
from planner.run_config import ConfigRefused, build_run_config
from planner.run_config.trl import COMMANDS

JOBS = [
    "llama 3.1 8b qlora 4k ctx on a 4090, 20M tokens",
    "qwen3 8b lora 2k ctx on 2x 4090 with fsdp",
    "llama 3.1 8b full fine-tune 4k ctx on 8x h100 with zero3",
    "qwen2.5 7b full fine-tune 2k ctx on 4x a100 80gb with zero2 and cpu offload",
    "mistral 7b lora rank 64 on q,v 1k ctx on an a100 80gb micro-batch 4, 8-bit adam",
    "qwen2.5 7b dpo lora 2k ctx on an h100",
    "qwen2.5 7b kto lora 2k ctx on an h100",
    "qwen2.5 7b grpo lora 8 generations on an h100 with vllm colocate",
    "qwen3 8b lora 2k ctx on a 4090, spot is fine",
    "qwen2.5 7b lora 2k ctx on 2x a100 80gb with fsdp",
    "qwen3 8b qlora 2k ctx on 2x 4090 with fsdp",
    "llama 3.1 8b dpo lora 2k ctx on an h100",
]


def on_the_plans_card() -> None:
    """This machine has no GPU; the plan's card has bf16 (every card a bf16 plan names does).
    TrainingArguments probes the hardware while it validates: answer that probe as the card
    would, and nothing else."""
    import transformers.training_args

    transformers.training_args.is_torch_bf16_gpu_available = lambda: True


def check_trl(folder: Path, plan, command: str) -> list[str]:
    """Parse train.yaml as `trl COMMAND --config train.yaml` does; the plan's values back."""
    module = importlib.import_module(f"trl.scripts.{command}")
    parser = module.make_parser()
    _, training, model, _ = parser.parse_args_and_config(
        ["--config", str(folder / "train.yaml")]
    )  # fail_with_unknown_args=True: a key TRL does not know raises
    spec = plan.spec
    wrong = []
    expect = {
        "per_device_train_batch_size": (training.per_device_train_batch_size, spec.micro_batch),
        "gradient_accumulation_steps": (training.gradient_accumulation_steps, spec.grad_accum),
        "gradient_checkpointing": (training.gradient_checkpointing, spec.gradient_checkpointing),
        "use_peft": (model.use_peft, spec.method.value != "full"),
        "load_in_4bit": (model.load_in_4bit, spec.method.value == "qlora"),
        "model_name_or_path": (model.model_name_or_path, plan.model.hf_id),
    }
    if command != "grpo":
        expect["max_length"] = (training.max_length, spec.seq_len)
    if spec.method.value != "full":
        expect["lora_r"] = (model.lora_r, spec.lora_rank)
    for name, (got, want) in expect.items():
        if got != want:
            wrong.append(f"{name}: {got!r} != plan {want!r}")
    return wrong


def rejects_unknown_keys(folder: Path) -> bool:
    """The check means something only if TrlParser refuses a key it does not know."""
    from trl.scripts.sft import make_parser

    path = folder / "unknown.yaml"
    path.write_text((folder / "train.yaml").read_text() + "not_a_trl_field: 1\n")
    try:
        make_parser().parse_args_and_config(["--config", str(path)])
    except ValueError as error:
        return "not_a_trl_field" in str(error)
    return False


def check_accelerate(folder: Path, plan) -> list[str]:
    from accelerate.commands.config.config_args import load_config_from_file

    config = load_config_from_file(str(folder / "accelerate.yaml"))
    spec, wrong = plan.spec, []
    if config.num_processes != spec.num_gpus:
        wrong.append(f"num_processes {config.num_processes} != plan {spec.num_gpus}")
    want = {"fsdp": "FSDP", "zero2": "DEEPSPEED", "zero3": "DEEPSPEED", "ddp": "MULTI_GPU"}
    if config.distributed_type != want[spec.sharding.value]:  # a str enum
        wrong.append(f"distributed_type {config.distributed_type} != {want[spec.sharding.value]}")
    if spec.sharding.value in ("zero2", "zero3"):
        deepspeed = json.loads((folder / "ds_config.json").read_text())
        stage = deepspeed["zero_optimization"]["stage"]
        if stage != int(spec.sharding.value[-1]):
            wrong.append(f"ZeRO stage {stage} != plan {spec.sharding.value}")
    return wrong


def check_sky(folder: Path, plan, accelerators: str) -> list[str]:
    import sky

    task = sky.Task.from_yaml(str(folder / "sky.yaml"))
    (resources,) = list(task.resources)
    name, count = accelerators.split(":")
    wrong = []
    if resources.accelerators != {name: int(count)}:
        wrong.append(f"accelerators {resources.accelerators} != {accelerators}")
    if resources.use_spot != (plan.spec.pricing.value == "spot"):
        wrong.append(f"use_spot {resources.use_spot} != plan {plan.spec.pricing.value}")
    return wrong


def check_axolotl(folder: Path, plan) -> list[str]:
    """axolotl.yaml through axolotl's own AxolotlInputConfig; the plan's values back."""
    import yaml
    from axolotl.utils.schemas.config import AxolotlInputConfig

    config = AxolotlInputConfig(**yaml.safe_load((folder / "axolotl.yaml").read_text()))
    spec = plan.spec
    expect = {
        "base_model": (config.base_model, plan.model.hf_id),
        "sequence_len": (config.sequence_len, spec.seq_len),
        "micro_batch_size": (config.micro_batch_size, spec.micro_batch),
        "gradient_checkpointing": (config.gradient_checkpointing, spec.gradient_checkpointing),
        "lora_r": (config.lora_r, spec.lora_rank),
        "load_in_4bit": (bool(config.load_in_4bit), spec.method.value == "qlora"),
    }
    return [
        f"{name}: {got!r} != plan {want!r}" for name, (got, want) in expect.items() if got != want
    ]


def check_llama_factory(folder: Path, plan) -> list[str]:
    """llamafactory.yaml through LLaMA-Factory's own get_train_args; the plan's values back."""
    import os

    import yaml

    # LLaMA-Factory 0.9.5 pins transformers <= 5.6.0 (its install gets that one); TRL's here is
    # newer, which only its version check minds.
    os.environ["DISABLE_VERSION_CHECK"] = "1"
    from llamafactory.hparams.parser import get_train_args

    arguments = yaml.safe_load((folder / "llamafactory.yaml").read_text())
    model, data, training, finetuning, _ = get_train_args(arguments)
    spec = plan.spec
    expect = {
        "model_name_or_path": (model.model_name_or_path, plan.model.hf_id),
        "cutoff_len": (data.cutoff_len, spec.seq_len),
        "per_device_train_batch_size": (training.per_device_train_batch_size, spec.micro_batch),
        "gradient_checkpointing": (
            not model.disable_gradient_checkpointing,
            spec.gradient_checkpointing,
        ),
        "lora_rank": (
            finetuning.lora_rank if finetuning.finetuning_type == "lora" else None,
            spec.lora_rank,
        ),
        "quantization_bit": (model.quantization_bit, 4 if spec.method.value == "qlora" else None),
    }
    return [
        f"{name}: {got!r} != plan {want!r}" for name, (got, want) in expect.items() if got != want
    ]


def check_torchtune(folder: Path, plan) -> list[str]:
    """torchtune.sh's config and overrides merged by torchtune's own parser, as `tune run` does;
    every override must name a key the config has, and the plan's values come back."""
    import shlex

    import torchtune
    from omegaconf import OmegaConf
    from torchtune.config._parse import TuneRecipeArgumentParser
    from torchtune.config._utils import _merge_yaml_and_cli_args

    script = (folder / "torchtune.sh").read_text()
    name = script.split("--config ", 1)[1].split()[0]
    # The wheel installs its configs beside the package (recipes/configs), where `tune run` reads.
    path = Path(torchtune.__file__).parents[1] / "recipes" / "configs" / f"{name}.yaml"
    inside = script.split("overrides=(", 1)[1].split("\n)", 1)[0]
    overrides = shlex.split(inside, comments=True)
    original = OmegaConf.load(path)
    wrong = [
        f"{key} not in {name}"
        for key in (override.split("=", 1)[0] for override in overrides)
        if OmegaConf.select(original, key, default="<absent>") == "<absent>"
    ]
    yaml_args, cli_args = TuneRecipeArgumentParser().parse_known_args(
        ["--config", str(path), *overrides]
    )
    merged = _merge_yaml_and_cli_args(yaml_args, cli_args)
    spec = plan.spec
    expect = {
        "batch_size": (merged.batch_size, spec.micro_batch),
        "tokenizer.max_seq_len": (merged.tokenizer.max_seq_len, spec.seq_len),
        "enable_activation_checkpointing": (
            merged.enable_activation_checkpointing,
            spec.gradient_checkpointing,
        ),
    }
    if spec.method.value != "full":
        expect["model.lora_rank"] = (merged.model.lora_rank, spec.lora_rank)
    wrong += [
        f"{key}: {got!r} != plan {want!r}" for key, (got, want) in expect.items() if got != want
    ]
    return wrong


def attempt(check, *args) -> list[str] | Exception:
    """A check's mismatches, or what its loader raised (a file it refuses)."""
    try:
        return check(*args)
    except Exception as error:
        return error


def main() -> int:
    on_the_plans_card()
    failures = 0
    checked = 0
    started_s = time.perf_counter()
    for text in JOBS:
        plan = make_plan(parse(text).spec)
        config = build_run_config(plan, "trl")
        objective = plan.spec.objective.value
        factory = objective in ("sft", "dpo", "kto") and plan.spec.sharding.value not in (
            "zero2",
            "zero3",
        )
        try:
            torchtune = build_run_config(plan, "torchtune").files
        except ConfigRefused:  # no torchtune config for this model, method or layout
            torchtune = {}
        with tempfile.TemporaryDirectory() as folder_name:
            folder = Path(folder_name)
            for name, body in [
                *config.files.items(),
                *build_run_config(plan, "axolotl").files.items(),
                *(build_run_config(plan, "llama-factory").files.items() if factory else ()),
                *torchtune.items(),
            ]:
                (folder / name).write_text(body)
            command = COMMANDS[plan.spec.objective]
            results = {"train.yaml (TrlParser)": attempt(check_trl, folder, plan, command)}
            if text == JOBS[0]:
                refused = rejects_unknown_keys(folder)
                results["an unknown key (TrlParser)"] = [] if refused else ["accepted"]
            if "accelerate.yaml" in config.files:
                results["accelerate.yaml (accelerate)"] = attempt(check_accelerate, folder, plan)
            results["sky.yaml (sky.Task.from_yaml)"] = attempt(
                check_sky, folder, plan, config.accelerators
            )
            results["axolotl.yaml (AxolotlInputConfig)"] = attempt(check_axolotl, folder, plan)
            if factory:
                results["llamafactory.yaml (get_train_args)"] = attempt(
                    check_llama_factory, folder, plan
                )
            if torchtune:
                results["torchtune.sh (tune's parser)"] = attempt(check_torchtune, folder, plan)
        for name, wrong in results.items():
            if isinstance(wrong, Exception):
                wrong = [f"{type(wrong).__name__}: {str(wrong).splitlines()[0][:120]}"]
            checked += 1
            failures += bool(wrong)
            verdict = "ok" if not wrong else "MISMATCH " + "; ".join(wrong)
            print(f"{text[:60]:<60}  {command:<5} {name:<34} {verdict}")
    elapsed_s = time.perf_counter() - started_s
    print(f"\n{checked - failures} passed, {failures} failed ({elapsed_s:.1f} s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
