"""Run configs (planner.run_config, `gpuplan config`): every file parses, holds only keys its
stack reads (tests/data/run_config_schemas.json, copied from each stack's source at a stated
version), and carries the plan's values; a job that does not fit gets nothing."""

from __future__ import annotations

import ast
import json
import shlex
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml
from hypothesis import example, given
from hypothesis import strategies as st

from adapters.cli import main
from planner.parsing import parse
from planner.plan import Plan
from planner.planner import make_plan
from planner.run_config import ConfigRefused, RunConfig, build_run_config
from planner.run_config.emit import Entry, yaml_text
from planner.run_config.job import skypilot_accelerator
from planner.run_config.torchtune import torchtune_configs
from planner.spec import JobSpec

SCHEMAS = json.loads(
    (Path(__file__).parent / "data" / "run_config_schemas.json").read_text(encoding="utf-8")
)
AXOLOTL_EXAMPLE = "llama 3.1 8b qlora 4k ctx on a 4090, 20M tokens"
TRL_EXAMPLE = "qwen3 8b lora 2k ctx on 2x 4090 with fsdp"
ZERO3_EXAMPLE = "llama 3.1 8b full fine-tune 4k ctx on 8x h100 with zero3"
DOES_NOT_FIT = "llama 3.1 70b full fine-tune on a 4090"
JOBS = [
    AXOLOTL_EXAMPLE,
    TRL_EXAMPLE,
    ZERO3_EXAMPLE,
    "qwen2.5 7b full fine-tune 2k ctx on 4x a100 80gb with zero2 and cpu offload",
    "mistral 7b lora rank 64 on q,v 1k ctx on an a100 80gb micro-batch 4, 8-bit adam",
    "qwen2.5 7b dpo lora 2k ctx on an h100",
    "qwen2.5 7b grpo lora 8 generations on an h100 with vllm colocate",
]


@cache
def plan_of(text: str) -> Plan:
    result = parse(text)
    assert result.spec is not None, result
    return make_plan(result.spec)


@cache
def config_of(text: str, stack: str) -> RunConfig:
    return build_run_config(plan_of(text), stack)


def load(config: RunConfig, name: str) -> Any:
    text = config.files[name]
    return json.loads(text) if name.endswith(".json") else yaml.safe_load(text)


def test_axolotl_example_is_the_plan() -> None:
    config = config_of(AXOLOTL_EXAMPLE, "axolotl")
    document = load(config, "axolotl.yaml")
    assert (
        document["base_model"] == "meta-llama/Llama-3.1-8B" == plan_of(AXOLOTL_EXAMPLE).model.hf_id
    )
    assert document["adapter"] == "qlora"
    assert document["load_in_4bit"] is True
    assert document["sequence_len"] == 4096
    assert document["micro_batch_size"] == 1
    assert document["gradient_checkpointing"] is True
    assert load(config, "sky.yaml")["resources"]["accelerators"] == "RTX4090:1"


def test_trl_example_with_fsdp_on_two_4090s() -> None:
    config = config_of(TRL_EXAMPLE, "trl")
    assert list(config.files) == ["train.yaml", "accelerate.yaml", "sky.yaml", "README.txt"]
    train = load(config, "train.yaml")
    assert train["max_length"] == 2048
    assert train["use_peft"] is True and train["gradient_checkpointing"] is True
    accelerate = load(config, "accelerate.yaml")
    assert accelerate["distributed_type"] == "FSDP" and accelerate["num_processes"] == 2
    sky = load(config, "sky.yaml")
    assert sky["resources"]["accelerators"] == "RTX4090:2"
    assert "--accelerate_config accelerate.yaml" in sky["run"]


def test_zero3_writes_a_deepspeed_config_at_stage_3() -> None:
    config = config_of(ZERO3_EXAMPLE, "trl")
    deepspeed = load(config, "ds_config.json")
    assert deepspeed["zero_optimization"]["stage"] == 3
    accelerate = load(config, "accelerate.yaml")
    assert accelerate["distributed_type"] == "DEEPSPEED"
    assert accelerate["deepspeed_config"]["deepspeed_config_file"] == "ds_config.json"
    # With a DeepSpeed file, accelerate refuses mixed_precision beside it (ds_config says it).
    assert "mixed_precision" not in accelerate
    assert deepspeed["bf16"]["enabled"] is load(config, "train.yaml")["bf16"]
    axolotl = config_of(ZERO3_EXAMPLE, "axolotl")
    assert load(axolotl, "axolotl.yaml")["deepspeed"] == "ds_config.json"
    assert load(axolotl, "ds_config.json")["zero_optimization"]["stage"] == 3


def test_a_job_that_does_not_fit_gets_no_config() -> None:
    with pytest.raises(ConfigRefused, match="does not fit"):
        build_run_config(plan_of(DOES_NOT_FIT), "trl")


def test_the_command_writes_nothing_and_exits_1_when_it_does_not_fit(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "d"
    assert main(["config", DOES_NOT_FIT, "--stack", "trl", "--out", str(out)]) == 1
    assert not out.exists()
    assert "does not fit" in capsys.readouterr().err


def test_the_command_writes_the_files(tmp_path: Path) -> None:
    out = tmp_path / "d"
    assert main(["config", AXOLOTL_EXAMPLE, "--stack", "axolotl", "--out", str(out)]) == 0
    assert sorted(path.name for path in out.iterdir()) == ["README.txt", "axolotl.yaml", "sky.yaml"]
    assert yaml.safe_load((out / "axolotl.yaml").read_text())["sequence_len"] == 4096


@pytest.mark.parametrize("text", JOBS)
def test_trl_files_hold_only_keys_trl_reads_and_the_plans_values(text: str) -> None:
    plan = plan_of(text)
    config = config_of(text, "trl")
    spec = plan.spec
    command = (spec.objective or "sft").value if spec.objective else "sft"
    train = load(config, "train.yaml")
    assert set(train) <= set(SCHEMAS["trl"]["commands"][command])
    assert f"trl {command} --config train.yaml" in config.files["sky.yaml"]
    assert train["model_name_or_path"] == plan.model.hf_id
    assert isinstance(train["learning_rate"], float)
    assert train["per_device_train_batch_size"] == spec.micro_batch
    assert train["gradient_accumulation_steps"] == spec.grad_accum
    assert train["gradient_checkpointing"] is spec.gradient_checkpointing
    if command != "grpo":
        assert train["max_length"] == spec.seq_len
    assert train.get("use_peft", False) is (spec.method.value != "full")
    if spec.method.value != "full":
        assert train["lora_r"] == spec.lora_rank
    assert train.get("load_in_4bit", False) is (spec.method.value == "qlora")
    if spec.num_gpus and spec.num_gpus > 1:
        accelerate = load(config, "accelerate.yaml")
        assert set(accelerate) <= set(SCHEMAS["accelerate"]["keys"])
        assert set(accelerate.get("fsdp_config", {})) <= set(SCHEMAS["accelerate"]["fsdp_config"])
        assert set(accelerate.get("deepspeed_config", {})) <= set(
            SCHEMAS["accelerate"]["deepspeed_config"]
        )
        assert accelerate["num_processes"] == spec.num_gpus
    if "ds_config.json" in config.files:
        deepspeed = load(config, "ds_config.json")
        assert dotted_keys(deepspeed) <= set(SCHEMAS["deepspeed"]["keys"])
        assert deepspeed["zero_optimization"]["stage"] == {"zero2": 2, "zero3": 3}[spec.sharding]
        assert deepspeed["train_micro_batch_size_per_gpu"] == spec.micro_batch


@pytest.mark.parametrize("text", JOBS)
def test_axolotl_files_hold_only_axolotl_fields_and_the_plans_values(text: str) -> None:
    plan = plan_of(text)
    spec = plan.spec
    document = load(config_of(text, "axolotl"), "axolotl.yaml")
    schema = SCHEMAS["axolotl"]
    assert set(document) <= set(schema["keys"])
    for nested in ("fsdp_config", "trl", "vllm"):
        assert set(document.get(nested, {})) <= set(schema[nested])
    for dataset in document["datasets"]:
        assert set(dataset) <= set(schema["datasets"])
    assert document["base_model"] == plan.model.hf_id
    assert document["sequence_len"] == spec.seq_len
    assert document["micro_batch_size"] == spec.micro_batch
    assert document["gradient_checkpointing"] is spec.gradient_checkpointing
    assert document.get("lora_r") == spec.lora_rank
    assert document.get("adapter") == (None if spec.method.value == "full" else spec.method.value)


@pytest.mark.parametrize("text", JOBS)
@pytest.mark.parametrize("stack", ["trl", "axolotl"])
def test_sky_yaml_is_a_skypilot_task_for_the_plans_card(text: str, stack: str) -> None:
    plan = plan_of(text)
    config = config_of(text, stack)
    sky = load(config, "sky.yaml")
    schema = SCHEMAS["skypilot"]
    jsonschema.validate(sky, schema["task_schema"])
    jsonschema.validate(sky["resources"], schema["resources_schema"])
    requested = plan.requested
    assert requested is not None
    assert sky["resources"]["accelerators"] == (
        f"{skypilot_accelerator(requested.gpu)}:{requested.count}"
    )
    assert config.accelerators == sky["resources"]["accelerators"]
    assert sky["resources"]["use_spot"] is False


def test_a_gated_model_names_its_token_and_never_a_value() -> None:
    gated = config_of(AXOLOTL_EXAMPLE, "trl")
    assert load(gated, "sky.yaml")["secrets"] == {"HF_TOKEN": None}
    assert "--secret HF_TOKEN" in gated.files["README.txt"]
    assert not any("hf_" in text.replace("hf_...", "") for text in gated.files.values())
    open_model = config_of(TRL_EXAMPLE, "trl")  # Qwen's repos are not gated
    assert "secrets" not in load(open_model, "sky.yaml")


def test_spot_jobs_ask_skypilot_for_spot() -> None:
    plan = plan_of("qwen3 8b lora 2k ctx on a 4090, spot is fine")
    assert plan.spec.pricing is not None and plan.spec.pricing.value == "spot"
    assert load(build_run_config(plan, "trl"), "sky.yaml")["resources"]["use_spot"] is True


def test_todos_are_listed_in_the_readme() -> None:
    config = config_of(TRL_EXAMPLE, "trl")
    assert load(config, "train.yaml")["dataset_name"].startswith("TODO")
    readme = config.files["README.txt"]
    for todo in config.todos:
        assert todo in readme
    assert readme.index("sky launch") > readme.index("TODO")


def test_every_value_says_why() -> None:
    text = config_of(TRL_EXAMPLE, "trl").files["train.yaml"]
    for key in ("per_device_train_batch_size", "max_length", "gradient_checkpointing", "lora_r"):
        line = next(line for line in text.splitlines() if line.startswith(f"{key}:"))
        assert "# plan:" in line


def test_stacks_by_framework_value_and_the_nearest_for_others() -> None:
    assert build_run_config(plan_of(TRL_EXAMPLE), "hf").stack == "trl"
    with pytest.raises(ConfigRefused, match="nearest stack it writes is torchtune"):
        build_run_config(plan_of(TRL_EXAMPLE), "litgpt")
    with pytest.raises(ConfigRefused, match="unknown stack"):
        build_run_config(plan_of(TRL_EXAMPLE), "nonsense")
    with pytest.raises(ConfigRefused, match="nearest stack that does is axolotl") as refused:
        build_run_config(plan_of("qwen2.5 7b orpo lora on an h100"), "trl")
    assert refused.value.nearest == "axolotl"


def dotted_keys(document: dict[str, Any], prefix: str = "") -> set[str]:
    keys: set[str] = set()
    for key, value in document.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            keys |= dotted_keys(value, f"{name}.")
        else:
            keys.add(name)
    return keys


def build_or_refused(text: str, stack: str) -> RunConfig | ConfigRefused:
    try:
        return config_of(text, stack)
    except ConfigRefused as refused:
        return refused


@pytest.mark.parametrize("text", JOBS)
def test_llama_factory_files_hold_its_fields_and_the_plans_values(text: str) -> None:
    plan, built = plan_of(text), build_or_refused(text, "llama-factory")
    spec = plan.spec
    if isinstance(built, ConfigRefused):  # GRPO: LLaMA-Factory has none
        assert spec.objective is not None and spec.objective.value == "grpo"
        assert built.nearest == "trl"
        return
    document = load(built, "llamafactory.yaml")
    assert set(document) <= set(SCHEMAS["llama-factory"]["keys"])
    assert document["model_name_or_path"] == plan.model.hf_id
    assert document["cutoff_len"] == spec.seq_len
    assert document["per_device_train_batch_size"] == spec.micro_batch
    assert document["disable_gradient_checkpointing"] is not spec.gradient_checkpointing
    assert document.get("lora_rank") == spec.lora_rank
    assert document.get("quantization_bit") == (4 if spec.method.value == "qlora" else None)
    if spec.sharding is not None and spec.sharding.value in ("zero2", "zero3"):
        assert load(built, "ds_config.json")["zero_optimization"]["stage"] == int(
            spec.sharding.value[-1]
        )


def swift_options(script: str) -> dict[str, list[str]]:
    """The `--name value…` options of swift.sh's args array, as bash reads them."""
    inside = script.split("args=(", 1)[1].split("\n)", 1)[0]
    options: dict[str, list[str]] = {}
    name = ""
    for word in shlex.split(inside, comments=True):
        if word.startswith("--"):
            name = word[2:]
            options[name] = []
        else:
            options[name].append(word)
    return options


@pytest.mark.parametrize("text", JOBS)
def test_swift_script_holds_its_options_and_the_plans_values(text: str) -> None:
    plan, config = plan_of(text), config_of(text, "ms-swift")
    spec = plan.spec
    options = swift_options(config.files["swift.sh"])
    online = spec.objective is not None and spec.objective.value != "sft"
    schema = SCHEMAS["ms-swift"]["rlhf" if online else "sft"]
    assert set(options) <= set(schema)
    assert options["model"] == [plan.model.hf_id]
    assert options["max_length"] == [str(spec.seq_len)]
    assert options["per_device_train_batch_size"] == [str(spec.micro_batch)]
    assert options["gradient_checkpointing"] == [str(spec.gradient_checkpointing).lower()]
    assert options.get("lora_rank") == ([str(spec.lora_rank)] if spec.lora_rank else None)
    assert options.get("quant_bits") == (["4"] if spec.method.value == "qlora" else None)
    if spec.num_gpus and spec.num_gpus > 1:
        assert f"NPROC_PER_NODE={spec.num_gpus} swift" in config.files["swift.sh"]


@pytest.mark.parametrize("text", JOBS)
def test_unsloth_script_calls_only_known_arguments_with_the_plans_values(text: str) -> None:
    plan, built = plan_of(text), build_or_refused(text, "unsloth")
    spec = plan.spec
    if isinstance(built, ConfigRefused):  # sharded jobs: Unsloth has no FSDP or ZeRO
        assert spec.sharding is not None and spec.sharding.value in ("fsdp", "zero2", "zero3")
        assert built.nearest == "trl"
        return
    calls = {
        call.func.attr if isinstance(call.func, ast.Attribute) else call.func.id: {
            keyword.arg: keyword.value for keyword in call.keywords if keyword.arg
        }
        for call in ast.walk(ast.parse(built.files["train_unsloth.py"]))
        if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute | ast.Name)
    }
    schema = SCHEMAS["unsloth"]
    assert set(calls["from_pretrained"]) <= set(schema["from_pretrained"])
    config_name = next(name for name in calls if name.endswith("Config"))
    command = config_name.removesuffix("Config").lower()
    assert set(calls[config_name]) <= set(SCHEMAS["trl"]["commands"][command])

    def value(call: str, name: str) -> Any:
        return ast.literal_eval(calls[call][name])

    assert value("from_pretrained", "model_name") == plan.model.hf_id
    assert value("from_pretrained", "max_seq_length") == spec.seq_len
    assert value("from_pretrained", "load_in_4bit") is (spec.method.value == "qlora")
    assert value(config_name, "per_device_train_batch_size") == spec.micro_batch
    if spec.method.value != "full":
        assert set(calls["get_peft_model"]) <= set(schema["get_peft_model"])
        assert value("get_peft_model", "r") == spec.lora_rank


def torchtune_overrides(script: str) -> dict[str, str]:
    inside = script.split("overrides=(", 1)[1].split("\n)", 1)[0]
    return dict(word.split("=", 1) for word in shlex.split(inside, comments=True))


@pytest.mark.parametrize("text", JOBS)
def test_torchtune_overrides_only_its_configs_keys_with_the_plans_values(text: str) -> None:
    plan, built = plan_of(text), build_or_refused(text, "torchtune")
    spec = plan.spec
    if isinstance(built, ConfigRefused):  # no such config in torchtune, or not FSDP
        assert built.nearest == "trl"
        return
    script = built.files["torchtune.sh"]
    name = script.split("--config ", 1)[1].split()[0]
    config = torchtune_configs()[name]
    overrides = torchtune_overrides(script)
    assert set(overrides) <= set(config["keys"]) | set(config["tokenizer_files"])
    assert overrides["batch_size"] == str(spec.micro_batch)
    assert overrides["tokenizer.max_seq_len"] == str(spec.seq_len)
    assert overrides["enable_activation_checkpointing"] == str(spec.gradient_checkpointing)
    if spec.lora_rank:
        assert overrides["model.lora_rank"] == str(spec.lora_rank)
    assert f"tune download {plan.model.hf_id} " in script
    assert ("--nproc_per_node" in script) is bool(spec.num_gpus and spec.num_gpus > 1)


def test_torchtune_runs_its_own_config_for_the_model_and_method() -> None:
    config = config_of(AXOLOTL_EXAMPLE, "torchtune")
    assert "--config llama3_1/8B_qlora_single_device" in config.files["torchtune.sh"]
    with pytest.raises(ConfigRefused, match="ships no lora config for Qwen3-8B"):
        build_run_config(plan_of("qwen3 8b lora on a 4090"), "torchtune")


def test_a_card_skypilot_has_no_name_for_is_said_not_guessed_silently() -> None:
    config = build_run_config(plan_of("llama 3.1 8b qlora 4k ctx on a b300"), "trl")
    assert any("sky show-gpus" in item for item in config.unexpressed)
    assert "sky show-gpus" in config.files["README.txt"]


_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**12), max_value=10**12),
    st.floats(allow_nan=False, allow_infinity=False, width=64),
    st.text(max_size=40),
)


@given(
    st.dictionaries(
        st.from_regex(r"[a-z_][a-z0-9_]{0,20}", fullmatch=True),
        st.one_of(_SCALARS, st.lists(_SCALARS, max_size=4)),
        max_size=8,
    ),
    st.text(max_size=30),
)
@example(values={"on": None, "yes": True, "null": "x"}, why="")
def test_written_yaml_reads_back_as_the_same_values(values: dict[str, Any], why: str) -> None:
    """Strings that look like other types ("no", "1e3", "null"), quotes, colons, '#' and any
    unicode stay what they were; a comment never changes a value."""
    comment = " ".join(why.split())  # a comment is one line
    text = yaml_text([Entry(key, value, comment) for key, value in values.items()])
    assert (yaml.safe_load(text) or {}) == values


def test_a_named_reward_model_is_written_by_its_hub_id_and_rule_based_rewards_as_a_todo() -> None:
    spec = JobSpec(
        model="qwen2.5 7b", method="lora", objective="grpo", reward_model="llama 3.1 8b", gpu="h100"
    )
    config = build_run_config(make_plan(spec), "trl")
    train = load(config, "train.yaml")
    assert set(train) <= set(SCHEMAS["trl"]["commands"]["grpo"])
    assert train["reward_model_name_or_path"] == "meta-llama/Llama-3.1-8B"
    assert "reward_funcs" not in train
    rule_based = load(config_of(JOBS[-1], "trl"), "train.yaml")
    assert rule_based["reward_funcs"] == ["TODO-reward-function"]
    ppo = make_plan(JobSpec(model="qwen2.5 7b", method="lora", objective="ppo", gpu="h100"))
    factory = load(build_run_config(ppo, "llama-factory"), "llamafactory.yaml")
    assert factory["stage"] == "ppo" and factory["reward_model"].startswith("TODO")
