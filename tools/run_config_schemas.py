"""One-off: copy the field names each stack's config is checked against into
tests/data/run_config_schemas.json, with the version and file each came from.

Run from the repository root with the stacks' wheels unpacked in one folder (no install, no
torch): `pip download --no-deps trl==1.16.0 transformers==5.25.0 accelerate==1.16.0
axolotl==0.19.0 llamafactory==0.9.5 ms-swift==4.6.0 skypilot==0.14.1 -d W`, unzip each wheel in
SRC, then `python tools/run_config_schemas.py SRC`. Field names are read from the dataclass and
pydantic class bodies with `ast` (a class's fields and its bases', as Python resolves them);
SkyPilot's task and resources JSON schemas are copied whole, from sky/utils/schemas.py, by calling
its functions when SkyPilot is importable (else they are kept from the previous file).
"""

from __future__ import annotations

import ast
import datetime as dt
import json
import re
import sys
from pathlib import Path

from planner.run_config.axolotl import AXOLOTL_VERSION
from planner.run_config.llama_factory import LLAMA_FACTORY_VERSION
from planner.run_config.ms_swift import MS_SWIFT_VERSION
from planner.run_config.torchtune import CONFIGS_JSON
from planner.run_config.trl import TRL_VERSION
from planner.run_config.unsloth import UNSLOTH_VERSION

REPO = Path(__file__).resolve().parents[1]
OUT = REPO / "tests" / "data" / "run_config_schemas.json"
# The stacks' releases are the ones the configs are written for (planner/run_config): one source.
VERSIONS = {
    "trl": TRL_VERSION,
    "transformers": "5.25.0",
    "accelerate": "1.16.0",
    "axolotl": AXOLOTL_VERSION,
    "llamafactory": LLAMA_FACTORY_VERSION,
    "ms-swift": MS_SWIFT_VERSION,
    "skypilot": "0.14.1",
    "unsloth": UNSLOTH_VERSION,
}


class Classes:
    """Every class in the given files: its bases' names and the names it annotates."""

    def __init__(self, files: list[Path]) -> None:
        self.bases: dict[str, list[str]] = {}
        self.fields: dict[str, list[str]] = {}
        for path in files:
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.ClassDef):
                    self.bases[node.name] = [_name(base) for base in node.bases]
                    self.fields[node.name] = [
                        item.target.id
                        for item in node.body
                        if isinstance(item, ast.AnnAssign)
                        and isinstance(item.target, ast.Name)
                        and not item.target.id.startswith("_")
                        and item.target.id != "model_config"
                    ]

    def all_fields(self, name: str) -> list[str]:
        found: list[str] = []
        for base in self.bases.get(name, []):
            found += self.all_fields(base)
        found += self.fields.get(name, [])
        return sorted(set(found))


def _name(node: ast.expr) -> str:
    if isinstance(node, ast.Attribute):
        return node.attr
    return node.id if isinstance(node, ast.Name) else ""


def trl(src: Path) -> dict[str, object]:
    files = [
        *sorted((src / "trl" / "trainer").glob("*_config.py")),
        src / "trl" / "trainer" / "base_config.py",
        src / "trl" / "scripts" / "utils.py",
        src / "trl" / "scripts" / "grpo.py",
        src / "trl" / "scripts" / "rloo.py",
        src / "transformers" / "training_args.py",
    ]
    classes = Classes(files)
    script = {"grpo": "GRPOScriptArguments", "rloo": "RLOOScriptArguments"}
    trainer = {"sft": "SFT", "dpo": "DPO", "kto": "KTO", "grpo": "GRPO", "rloo": "RLOO"}
    commands = {
        command: sorted(
            set(classes.all_fields(script.get(command, "ScriptArguments")))
            | set(classes.all_fields(f"{prefix}Config"))
            | set(classes.all_fields("ModelConfig"))
            | set(classes.all_fields("DatasetMixtureConfig"))
        )
        for command, prefix in trainer.items()
    }
    return {
        "version": f"trl {VERSIONS['trl']}, transformers {VERSIONS['transformers']}",
        "source": "trl/scripts/{sft,dpo,kto,grpo,rloo}.py make_parser dataclass_types: "
        "ScriptArguments (or GRPO/RLOOScriptArguments), the trainer's config (a transformers "
        "TrainingArguments), ModelConfig, DatasetMixtureConfig",
        "commands": commands,
    }


def accelerate(src: Path) -> dict[str, object]:
    classes = Classes([src / "accelerate" / "commands" / "config" / "config_args.py"])
    launch = (src / "accelerate" / "commands" / "launch.py").read_text(encoding="utf-8")
    options = sorted(set(re.findall(r'"--([a-z0-9_]+)"', launch)))
    fsdp = [name for name in options if name.startswith("fsdp_")]
    deepspeed = [
        name
        for name in options
        if name.startswith(("deepspeed_", "zero", "offload_"))
        or name in ("gradient_accumulation_steps", "gradient_clipping")
    ]
    return {
        "version": f"accelerate {VERSIONS['accelerate']}",
        "source": "accelerate/commands/config/config_args.py ClusterConfig (top-level keys); "
        "accelerate/commands/launch.py --fsdp_* and DeepSpeed options (fsdp_config and "
        "deepspeed_config keys)",
        "keys": classes.all_fields("ClusterConfig"),
        "fsdp_config": fsdp,
        "deepspeed_config": deepspeed,
    }


def deepspeed(src: Path) -> dict[str, object]:
    """The DeepSpeed config keys HF Trainer and accelerate read or fill ("auto"), dotted."""
    files = [
        src / "transformers" / "integrations" / "deepspeed.py",
        src / "accelerate" / "utils" / "dataclasses.py",
        src / "accelerate" / "utils" / "deepspeed.py",
    ]
    text = "\n".join(path.read_text(encoding="utf-8") for path in files)
    dotted = set(
        re.findall(
            r'"((?:zero_optimization|bf16|fp16|optimizer|scheduler)(?:\.[a-z0-9_]+)+)"', text
        )
    )
    top = set(re.findall(r'"(train_[a-z_]+|gradient_accumulation_steps|gradient_clipping)"', text))
    return {
        "version": f"transformers {VERSIONS['transformers']}, accelerate {VERSIONS['accelerate']}",
        "source": "transformers/integrations/deepspeed.py (the keys HfTrainerDeepSpeedConfig "
        "fills from TrainingArguments) and accelerate/utils/{dataclasses,deepspeed}.py "
        "(DeepSpeedPlugin); DeepSpeed itself ships as an sdist that needs torch to build",
        "keys": sorted(top | dotted),
    }


def axolotl(src: Path) -> dict[str, object]:
    schemas = src / "axolotl" / "utils" / "schemas"
    plugins = [
        src / "axolotl" / "integrations" / name / "args.py"
        for name in ("liger", "cut_cross_entropy")
    ]
    classes = Classes([*sorted(schemas.glob("*.py")), *plugins])
    return {
        "version": f"axolotl {VERSIONS['axolotl']}",
        "source": "axolotl/utils/schemas/config.py AxolotlInputConfig and its mixins; "
        "integrations/{liger,cut_cross_entropy}/args.py (plugin fields); FSDPConfig, TRLConfig, "
        "VllmConfig, SFTDataset for the nested keys",
        "keys": sorted(
            set(classes.all_fields("AxolotlInputConfig"))
            | set(classes.all_fields("LigerArgs"))
            | set(classes.all_fields("CutCrossEntropyArgs"))
        ),
        "fsdp_config": classes.all_fields("FSDPConfig"),
        "trl": classes.all_fields("TRLConfig"),
        "vllm": classes.all_fields("VllmConfig"),
        "datasets": classes.all_fields("SFTDataset"),
    }


def llama_factory(src: Path) -> dict[str, object]:
    hparams = src / "llamafactory" / "hparams"
    classes = Classes([*sorted(hparams.glob("*.py")), src / "transformers" / "training_args.py"])
    names = ["ModelArguments", "DataArguments", "TrainingArguments", "FinetuningArguments",
             "GeneratingArguments"]  # fmt: skip
    keys: set[str] = set()
    for name in names:
        keys |= set(classes.all_fields(name))
    keys |= set(classes.all_fields("Seq2SeqTrainingArguments"))
    return {
        "version": f"llamafactory {VERSIONS['llamafactory']}, "
        f"transformers {VERSIONS['transformers']}",
        "source": "llamafactory/hparams/*.py: ModelArguments, DataArguments, TrainingArguments "
        "(transformers Seq2SeqTrainingArguments), FinetuningArguments, GeneratingArguments",
        "keys": sorted(keys),
    }


def ms_swift(src: Path) -> dict[str, object]:
    swift = src / "swift"
    files = [
        *sorted((swift / "arguments").rglob("*.py")),
        swift / "trainers" / "arguments.py",
        swift / "rlhf_trainers" / "args_mixin.py",
    ]
    classes = Classes(files)
    # swift's Seq2SeqTrainingArguments extends transformers' under an alias: add those fields.
    hf = Classes([src / "transformers" / "training_args.py"]).all_fields("TrainingArguments")
    hf_seq2seq = Classes([src / "transformers" / "training_args_seq2seq.py"])
    inherited = set(hf) | set(hf_seq2seq.fields.get("Seq2SeqTrainingArguments", []))
    return {
        "version": f"ms-swift {VERSIONS['ms-swift']}, transformers {VERSIONS['transformers']}",
        "source": "swift/arguments/sft_args.py SftArguments, rlhf_args.py RLHFArguments and "
        "their bases (swift/arguments, swift/trainers/arguments.py, "
        "swift/rlhf_trainers/args_mixin.py, transformers Seq2SeqTrainingArguments): the "
        "`swift sft` / `swift rlhf` command-line options",
        "sft": sorted(set(classes.all_fields("SftArguments")) | inherited),
        "rlhf": sorted(set(classes.all_fields("RLHFArguments")) | inherited),
    }


def unsloth(src: Path) -> dict[str, object]:
    """The keyword arguments of FastLanguageModel.from_pretrained and get_peft_model."""
    models = src / "unsloth" / "models"
    found: dict[str, list[str]] = {}
    for path, function in (
        (models / "loader.py", "from_pretrained"),
        (models / "llama.py", "get_peft_model"),
    ):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.FunctionDef)
                and node.name == function
                and function not in found
            ):
                found[function] = sorted(
                    arg.arg for arg in [*node.args.args, *node.args.kwonlyargs]
                )
    return {
        "version": f"unsloth {VERSIONS['unsloth']}",
        "source": "unsloth/models/loader.py FastLanguageModel.from_pretrained and "
        "unsloth/models/llama.py FastLlamaModel.get_peft_model (the first definition of each)",
        **found,
    }


# The torchtune recipes a fine-tune runs (torchtune/_recipe_registry.py) and the config keys a run
# config overrides: planner/data/torchtune_configs.json keeps, per config, which of them it has.
TORCHTUNE_RECIPES = (
    "full_finetune_single_device",
    "full_finetune_distributed",
    "lora_finetune_single_device",
    "lora_finetune_distributed",
    "lora_dpo_single_device",
    "lora_dpo_distributed",
    "full_dpo_distributed",
)
TORCHTUNE_KEYS = (
    "output_dir",
    "batch_size",
    "gradient_accumulation_steps",
    "epochs",
    "dtype",
    "tokenizer.max_seq_len",
    "dataset.packed",
    "enable_activation_checkpointing",
    "enable_activation_offloading",
    "fsdp_cpu_offload",
    "optimizer._component_",
    "model.lora_rank",
    "model.lora_alpha",
    "model.lora_attn_modules",
    "model.apply_lora_to_mlp",
    "checkpointer.checkpoint_dir",
)


def torchtune(src: Path) -> dict[str, object]:
    import yaml

    registry = (src / "torchtune" / "_recipe_registry.py").read_text(encoding="utf-8")
    recipes = re.findall(
        r'Recipe\(\s*name="([^"]+)".*?configs=\[(.*?)\],\s*supports_distributed', registry, re.S
    )
    configs: dict[str, object] = {}
    for recipe, listed in recipes:
        if recipe not in TORCHTUNE_RECIPES:
            continue
        for name in re.findall(r'name="([^"]+)"', listed):
            document = yaml.safe_load((src / "recipes" / "configs" / f"{name}.yaml").read_text())
            flat = _flatten(document)
            checkpoint_dir = str(flat.get("checkpointer.checkpoint_dir", "")).rstrip("/")
            configs[name] = {
                "recipe": recipe,
                "keys": [key for key in TORCHTUNE_KEYS if key in flat],
                # Tokenizer files under the checkpoint folder, relative to it.
                "tokenizer_files": {
                    key: value.removeprefix(checkpoint_dir).lstrip("/")
                    for key, value in flat.items()
                    if key.startswith("tokenizer.")
                    and isinstance(value, str)
                    and checkpoint_dir
                    and value.startswith(checkpoint_dir)
                },
            }
    return {
        "about": "torchtune's fine-tuning configs: the recipe each runs, which of the keys a "
        "gpuplan run config overrides it has, and its tokenizer files relative to the "
        "checkpoint folder. Built by tools/run_config_schemas.py.",
        "version": "torchtune 0.6.1",
        "source": "torchtune/_recipe_registry.py and recipes/configs/*.yaml in the torchtune "
        "0.6.1 wheel",
        "configs": configs,
    }


def _flatten(document: object, prefix: str = "") -> dict[str, object]:
    if not isinstance(document, dict):
        return {prefix.rstrip("."): document}
    flat: dict[str, object] = {}
    for key, value in document.items():
        flat |= _flatten(value, f"{prefix}{key}.")
    return flat


def skypilot(previous: dict[str, object]) -> dict[str, object]:
    try:
        from sky.utils import schemas
    except ImportError:
        return previous.get("skypilot", {})  # type: ignore[return-value]
    return {
        "version": f"skypilot {VERSIONS['skypilot']}",
        "source": "sky/utils/schemas.py get_task_schema() and get_resources_schema()",
        "task_schema": schemas.get_task_schema(),
        "resources_schema": schemas.get_resources_schema(),
    }


def main() -> None:
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    src = Path(sys.argv[1])
    previous = json.loads(OUT.read_text(encoding="utf-8")) if OUT.exists() else {}
    document = {
        "about": "Field names of each stack's config, copied from its source at the version "
        "named, for tests/test_run_config_schemas.py. Built by tools/run_config_schemas.py.",
        "built": dt.date.today().isoformat(),
        "trl": trl(src),
        "accelerate": accelerate(src),
        "deepspeed": deepspeed(src),
        "axolotl": axolotl(src),
        "llama-factory": llama_factory(src),
        "ms-swift": ms_swift(src),
        "unsloth": unsloth(src),
        "skypilot": skypilot(previous),
    }
    OUT.write_text(json.dumps(document, indent=1, sort_keys=False) + "\n", encoding="utf-8")
    print(f"wrote {OUT}")
    CONFIGS_JSON.write_text(json.dumps(torchtune(src), indent=1) + "\n", encoding="utf-8")
    print(f"wrote {CONFIGS_JSON}")


if __name__ == "__main__":
    main()
