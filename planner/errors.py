"""Errors the planner raises for input it cannot plan; each names the field and says why."""

from __future__ import annotations

from typing import TYPE_CHECKING

from planner.words import Catalog, Entry

if TYPE_CHECKING:
    from pydantic import ValidationError

# How each JobSpec field reads in a sentence (an error, a change in a thread), in English and
# Chinese (planner/words.py); a name not listed reads as itself with spaces.
FIELD_LABELS = Catalog(
    {
        "model": Entry("model", "模型"),
        "params_b": Entry("model size (B)", "模型大小（B）"),
        "method": Entry("method", "方法"),
        "quant": Entry("quantization", "量化"),
        "precision": Entry("precision", "精度"),
        "optimizer": Entry("optimizer", "优化器"),
        "lora_rank": Entry("LoRA rank", "LoRA 秩"),
        "lora_alpha": Entry("LoRA alpha", "LoRA alpha"),
        "lora_targets": Entry("LoRA targets", "LoRA 目标层"),
        "seq_len": Entry("context length", "上下文长度"),
        "micro_batch": Entry("micro-batch", "micro-batch"),
        "grad_accum": Entry("gradient accumulation", "梯度累积"),
        "gradient_checkpointing": Entry("gradient checkpointing", "梯度检查点"),
        "flash_attention": Entry("flash attention", "flash attention"),
        "packing": Entry("sequence packing", "序列打包"),
        "num_gpus": Entry("GPU count", "GPU数量"),
        "sharding": Entry("sharding", "多卡切分"),
        "cpu_offload": Entry("CPU offload", "CPU 卸载"),
        "activation_offloading": Entry("activation offloading", "激活卸载"),
        "tiled_mlp": Entry("tiled MLP", "MLP 分块计算"),
        "fsdp_version": Entry("FSDP version", "FSDP 版本"),
        "framework": Entry("stack", "训练框架"),
        "framework_version": Entry("framework version", "框架版本"),
        "gpu": Entry("card", "显卡"),
        "gpu_vram_gb": Entry("card memory (GB)", "显卡显存（GB）"),
        "dataset_tokens": Entry("dataset tokens", "数据集 token"),
        "mean_sample_len": Entry("mean sample len", "平均样本长度"),
        "epochs": Entry("epochs", "轮数"),
        "tokens_per_s": Entry("measured tokens/s", "实测 token/s"),
        "budget_usd": Entry("budget ($)", "预算（$）"),
        "deadline_hours": Entry("deadline (h)", "期限（小时）"),
        "objective": Entry("objective", "训练目标"),
        "reference_model": Entry("reference model", "参考模型"),
        "num_generations": Entry("generations per prompt", "每个提示的补全数"),
        "prompt_len": Entry("prompt length", "提示长度"),
        "completion_len": Entry("completion length", "补全长度"),
        "rollout": Entry("rollout engine", "生成引擎"),
        "rollout_memory_fraction": Entry("vLLM memory fraction", "生成引擎显存占比"),
        "rollout_gpus": Entry("vLLM GPUs", "生成引擎GPU数"),
        "rollout_tensor_parallel": Entry("vLLM tensor parallel", "生成引擎张量并行"),
        "rollout_sleep": Entry("vLLM sleep mode", "生成引擎休眠"),
        "reward_model": Entry("reward model", "奖励模型"),
        "generation_batch": Entry("generation batch", "每轮生成数"),
        "dataset_prompts": Entry("prompts", "提示数"),
        "expert_parallel": Entry("expert parallel", "专家并行"),
        "context_parallel": Entry("context parallel", "上下文并行"),
        "experts_quantized": Entry("experts quantized", "专家量化"),
        "experts_adapted": Entry("experts adapted", "专家加 LoRA"),
        "loss_kernel": Entry("loss kernel", "损失内核"),
        "train_vision_tower": Entry("vision tower trained", "训练视觉塔"),
        "images_per_sample": Entry("images per sample", "每个样本的图像数"),
        "pricing": Entry("pricing", "计价"),
        "measured_peak_gib": Entry("measured peak (GiB)", "实测峰值（GiB）"),
        "measured_metric": Entry("measured as", "实测指标"),
        "memory_scale": Entry("memory scale", "显存校准系数"),
    }
)
MAX_VALUE_SHOWN_CHARS = 40


class PlanningError(ValueError):
    """A job that cannot be planned as given; `field` names the JobSpec field at fault."""

    def __init__(self, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.field = field


def field_label(name: str) -> str:
    if name in FIELD_LABELS.entries:
        return FIELD_LABELS(name)
    return name.replace("_", " ")


def invalid_field(error: ValidationError, *, name_the_key: bool = False) -> tuple[str, str]:
    """The field a validation error is about and one sentence saying what is wrong with it, the
    only place a pydantic error becomes words: "Context length can't be 0: it should be greater
    than or equal to 1."; `name_the_key` adds the JSON key for people who wrote JSON."""
    first = error.errors()[0]
    name = str(first["loc"][0]) if first["loc"] else "spec"
    label = field_label(name) if first["loc"] else "the job"
    if name_the_key and first["loc"]:
        label += f" ({'.'.join(str(part) for part in first['loc'])})"
    if first["type"] == "missing":
        sentence = f"{label} is missing"
    else:
        value = str(first.get("input"))[:MAX_VALUE_SHOWN_CHARS]
        limit = first["msg"].removeprefix("Input should be ").removeprefix("Value should be ")
        if limit == first["msg"]:
            sentence = f"{label} can't be {value}: {limit}"
        else:
            sentence = f"{label} can't be {value}: it should be {limit}"
    return name, sentence[:1].upper() + sentence[1:] + "."


def validation_sentence(error: ValidationError) -> str:
    return invalid_field(error)[1]
