"""The planner's sentences (its stated assumptions, suggestions and warnings), each a catalog
entry with its English and Chinese (planner/words.py says why a catalog module). The Plan JSON
keeps the English strings; the bot shows a Chinese answer from the same entries.

Sentence families move here one at a time; the rest are still translated by bot/zh.py's rules.
"""

from __future__ import annotations

from planner.words import Catalog, Entry

# The defaults resolve states when the user said nothing (planner/defaults.py).
DEFAULTS = Catalog(
    {
        "framework.hf": Entry(
            "HF Trainer + PEFT (as axolotl, LLaMA-Factory and ms-swift run it)",
            "HF Trainer + PEFT（axolotl、LLaMA-Factory、ms-swift 的跑法）",
        ),
        "weights.lora": Entry(
            "bf16 base weights; LoRA weights and their optimizer state as PEFT keeps them",
            "基座权重 bf16；LoRA 权重及其优化器状态按 PEFT 的方式保存",
        ),
        "optimizer.adamw": Entry("AdamW optimizer", "AdamW 优化器"),
        "attention.flash": Entry(
            "FlashAttention/SDPA attention (no s×s score matrix)",
            "FlashAttention/SDPA 注意力（不存 s×s 分数矩阵）",
        ),
        "quant.nf4": Entry(
            "QLoRA with 4-bit NF4 (bitsandbytes, double quantisation)",
            "QLoRA：4位 NF4（bitsandbytes，双重量化）",
        ),
        "lora.rank": Entry("LoRA rank {rank}", "LoRA 秩 {rank}"),
        "lora.all_linear": Entry(
            "LoRA on all linear layers (q, k, v, o, gate, up, down)",
            "LoRA 作用于所有线性层（q、k、v、o、gate、up、down）",
        ),
        "seq_len": Entry("sequence length {tokens:,} tokens", "序列长度 {tokens:,} token"),
        "micro_batch": Entry(
            "micro-batch {count} per GPU (a larger batch through gradient accumulation costs no "
            "activation memory)",
            "每张GPU micro-batch {count}（用梯度累积加大批次不增加激活显存）",
        ),
        "checkpointing.on": Entry(
            "gradient checkpointing on (PEFT turns it on for QLoRA; most recipes do for all)",
            "开启梯度检查点（PEFT 对 QLoRA 默认开启，多数配方都会开）",
        ),
        "checkpointing.litgpt": Entry(
            "no gradient checkpointing (LitGPT's single-GPU default)",
            "不开梯度检查点（LitGPT 单卡默认）",
        ),
        "packing.off": Entry(
            "no sequence packing (batches vary in length, so the allocator keeps slack)",
            "不做序列打包（批次长度不一，显存分配器会留余量）",
        ),
    }
)
