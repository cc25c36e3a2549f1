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

# What a suggested change does (planner/suggestions.py): "QLoRA instead of LoRA: 31 → 19 GiB, fits
# the RTX 4090, +20 % time".
SUGGESTIONS = Catalog(
    {
        "line": Entry(
            "{label}: {before:.0f} → {after:.0f} GiB, {fit}, {time}{then}",
            "{label}：{before:.0f} → {after:.0f} GiB，{fit}, {time}{then}",
        ),
        "then": Entry(
            "; cheapest run then {count}× {gpu}, ${cost:,.2f}",
            "；届时最便宜的方案：{count}× {gpu}, ${cost:,.2f}",
        ),
        "where.one": Entry("the {card}", "{card}"),
        "where.many": Entry("{count}× {card}", "{count}× {card}"),
        "card.generic": Entry("{gb:g} GB card", "{gb:g} GB 显卡"),
        "fit.fits": Entry("fits {where}", "放得下 {where}"),
        "fit.tight": Entry("tight on {where}", "勉强放得下 {where}"),
        "fit.no": Entry(
            "still too big for {where} ({gib:.0f} GiB)", "仍然放不下 {where}（{gib:.0f} GiB）"
        ),
        "fit.none": Entry("still more than any single card holds", "仍然超过任何单张显卡的容量"),
        "fit.smallest.a": Entry(
            "fits a {size} GB card ({name})", "放得下 {size} GB 显卡（{name}）"
        ),
        "fit.smallest.an": Entry(
            "fits an {size} GB card ({name})", "放得下 {size} GB 显卡（{name}）"
        ),
        "time.same": Entry("about the same time", "时间差不多"),
        "time.pct": Entry("{pct:+.0f} % time", "时间 {pct:+.0f} %"),
        "label.lora_for_full": Entry("LoRA instead of full fine-tuning", "用 LoRA 代替全参微调"),
        "label.qlora_for_lora": Entry("QLoRA instead of LoRA", "用 QLoRA 代替 LoRA"),
        "label.qlora_for_full": Entry("QLoRA instead of full fine-tuning", "用 QLoRA 代替全参微调"),
        "label.context": Entry(
            "context {shorter:,} instead of {now:,}", "上下文 {shorter:,}（原 {now:,}）"
        ),
        "label.checkpointing": Entry("gradient checkpointing", "梯度检查点"),
        "label.checkpointing_off": Entry("gradient checkpointing off", "关闭梯度检查点"),
        # Whether flipping gradient checkpointing pays, said after its line (a space, then
        # parentheses, as the answers have always shown it).
        "with_verdict": Entry("{change} ({verdict})", "{change} （{verdict}）"),
        "checkpointing.worth": Entry(
            "checkpointing is worth it here: it lets you rent a cheaper card",
            "此处梯度检查点划算：能租更便宜的卡",
        ),
        "checkpointing.costs_time": Entry(
            "checkpointing is not worth it here: it only costs time",
            "此处梯度检查点不划算：只多花时间",
        ),
        "checkpointing.bigger_card": Entry(
            "checkpointing is not worth it here: it lets {count}× {gpu} hold the job, but a "
            "bigger card without it costs less per run",
            "此处梯度检查点不划算：它让 {count}× {gpu} 放得下，但不开检查点的大卡整趟更便宜",
        ),
    }
)
