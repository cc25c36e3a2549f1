"""The Chinese answer: gpuplan's English reply copy (bot/phrases.py and the planner's stated
assumptions) rewritten phrase by phrase. Numbers, card and model names stay as they are.

Rules are tried in order, longest and most specific first; each is a regular expression over the
English phrase and its Chinese with the same groups. A phrase no rule knows stays in English, so a
new sentence is never lost, only untranslated (tests/test_language.py lists the sections that must
come out Chinese).
"""

from __future__ import annotations

import re

# Section headings and table words the renderers show, keyed by their English.
LABELS = {
    "Recommendation": "推荐",
    "Side by side": "并排对比",
    "Ways to make it fit or cost less": "放得下或更省钱的办法",
    "Suggestions": "建议",
    "What changed": "变化",
    "Warnings": "提醒",
    "You could also tell me": "还可以这样问",
    "Try asking": "可以试试问",
    "Assumptions": "假设",
    "Memory per GPU": "每张GPU显存",
    "Memory": "显存",
    "Cards": "显卡",
    "card": "显卡",
    "verdict": "结论",
    "hours": "小时",
    "cost": "费用",
    "fits": "放得下",
    "tight": "勉强",
    "no": "放不下",
    "does not fit": "放不下",
    "Prices": "价格",
    "range": "范围",
    "Try": "可以试试",
    "Assumed": "假设",
    "Prices as of": "价格日期",
    "Prices from": "价格来自",
    "prices": "价格",
}

_RULES: list[tuple[str, str]] = [
    # --- titles and short messages
    (r"^I can't plan that$", "无法规划"),
    (r"^I can't read that$", "看不懂这句话"),
    (r"^I can't use that$", "无法使用"),
    (r"^No job to change yet$", "还没有可修改的任务"),
    (r"^Which model\?$", "哪个模型？"),
    (r"^One question first$", "先问一个问题"),
    (r"^What should change\?$", "要改什么？"),
    (r"^What should it be\?$", "改成多少？"),
    (r"^Nothing to undo$", "没有可撤销的修改"),
    (r"^Nothing cheaper$", "没有更便宜的"),
    (r"^Language: Chinese$", "语言：中文"),
    (r"^Language: English$", "语言：英文"),
    (r"^Language: the asker's$", "语言：跟随提问"),
    (
        r"^Questions that do not show their language are answered here in (\w+) from now on\.$",
        "今后这里看不出语言的问题都用中文回答。",
    ),
    (
        r"^Answers here follow each question's language again \(English unless it is Chinese\)\.$",
        "这里的回答重新跟随提问的语言（中文提问用中文，其余用英文）。",
    ),
    # --- the verdict
    (r"Needs ([\d.]+ GiB) per GPU \(([\d.]+)–([\d.]+)\)", r"每张GPU需要 \1（\2–\3）"),
    (
        r"; no card in the catalog holds it, even eight of them\.",
        "；目录里没有显卡放得下，八张也不行。",
    ),
    (r"(\d) ctx: ", r"\1 上下文："),
    (r"; cheapest (?=\d+× )", "；最便宜 "),
    (r"; does not fit on ", "；放不下："),
    (r"; fits on ", "；放得下："),
    (r"; is tight on ", "；勉强放得下："),
    (r", but it fits with (.+?) \(([\d.]+ GiB) per GPU\)", r"，但用「\1」可以放下（每张GPU \2）"),
    (r"; or (.+?) hold it", r"；或者 \1 可以放下"),
    (r"; (\d+× .+?) hold it", r"；\1 可以放下"),
    (r"; each GPU holds it", "；每张GPU都能放下"),
    (r"\. Cheapest to rent: ", "。最便宜的租法："),
    (r"\. Cheapest: ", "。最便宜："),
    (r" hold it; fewer do not", " 可以放下；更少则不行"),
    (r" hold it", " 可以放下"),
    (r"; (\d+) without CPU offload", r"；不卸载到CPU则需 \1 张"),
    # --- the recommendation
    (r"Cheapest and fastest: ", "最便宜也最快："),
    (r"Cheapest within an? ([\d.,]+ h|[\d.,]+ days?) deadline: ", r"\1 内完成的最便宜方案："),
    (r"Cheapest within (?:a|the) \$([\d.,]+) budget: ", r"$\1 预算内最便宜："),
    (r"Cheapest: ", "最便宜："),
    (r"Fastest: ", "最快："),
    (r"Best value \(lowest cost × hours\): ", "最划算（费用 × 时长最低）："),
    (r" at \$([\d.,]+)/GPU-h", r"，每GPU小时 $\1"),
    (r"\(undated, seed guide's 24 h snapshot\)", "（未注明日期，种子指南的24小时快照）"),
    (r"\(undated\)", "（未注明日期）"),
    (
        r"After training: adapter ≈ ([\d.,]+ MB); serving needs ≈ ([\d.]+ GiB) in 16-bit, "
        r"([\d.]+ GiB) in 4-bit",
        r"训练后：适配器约 \1；推理需要约 \2（16位）、\3（4位）",
    ),
    (
        r"After training: serving needs ≈ ([\d.]+ GiB) in 16-bit, ([\d.]+ GiB) in 4-bit",
        r"训练后：推理需要约 \1（16位）、\2（4位）",
    ),
    (r"(\d) days\b", r"\1 天"),
    (r"(\d) day\b", r"\1 天"),
    (r"(\d) min\b", r"\1 分钟"),
    (r"(\d) h\b", r"\1 小时"),
    # --- suggestions
    (
        r"^rent (.+?) instead: (\$[\d.,]+) and (.+?) against (\$[\d.,]+) and (.+?) on (.+)$",
        r"改租 \1：\2、\3，对比 \6 上的 \4、\5",
    ),
    (r": ([\d.]+) → ([\d.]+) GiB, ", r"：\1 → \2 GiB，"),
    (r"fits the ", "放得下 "),
    (r"(?<![a-z])fits (?=\d+× )", "放得下 "),
    (r"still too big for (.+?) \(([\d.]+ GiB)\)", r"仍然放不下 \1（\2）"),
    (r"tight on ", "勉强放得下 "),
    (r"still does not fit", "仍然放不下"),
    (r"about the same time", "时间差不多"),
    (r"([+-]\d+ %) time", r"时间 \1"),
    (r"; cheapest run then ", "；届时最便宜的方案："),
    (r"^context ([\d,]+) instead of ([\d,]+)", r"上下文 \1（原 \2）"),
    (r"QLoRA instead of full fine-tuning", "用 QLoRA 代替全参微调"),
    (r"LoRA instead of full fine-tuning", "用 LoRA 代替全参微调"),
    (r"QLoRA instead of LoRA", "用 QLoRA 代替 LoRA"),
    (
        r"Unsloth \(fused chunked loss, checkpoints offloaded to CPU RAM\)",
        "Unsloth（融合分块损失，检查点卸载到CPU内存）",
    ),
    (r" and the optimizer state offloaded to CPU RAM", " 且优化器状态卸载到CPU内存"),
    (r"optimizer state offloaded to CPU RAM", "优化器状态卸载到CPU内存"),
    (r"gradient checkpointing off", "关闭梯度检查点"),
    (
        r"gradient checkpointing on \(PEFT turns it on for QLoRA; most recipes do for all\)",
        "开启梯度检查点（PEFT 对 QLoRA 默认开启，多数配方都会开）",
    ),
    (r"^gradient checkpointing$", "梯度检查点"),
    (r"(\d)-bit AdamW", r"\1位 AdamW"),
    (r"micro-batch (\d+) \(more gradient accumulation\)", r"micro-batch \1（增加梯度累积）"),
    (r" with FSDP \(the model sharded across the GPUs\)", " 用 FSDP（模型切分到各张GPU）"),
    (r" with FSDP/ZeRO-3 \(everything sharded\)", " 用 FSDP/ZeRO-3（全部切分）"),
    (r" with ZeRO-3 \(everything sharded\)", " 用 ZeRO-3（全部切分）"),
    (r" with DDP \(each GPU holds a full copy\)", " 用 DDP（每张GPU一份完整副本）"),
    (r" with FSDP", " 用 FSDP"),
    (r" with ZeRO-(\d)", r" 用 ZeRO-\1"),
    # --- assumptions
    (r"^(\d+k) read as (\d+) tokens$", r"\1 按 \2 个 token 计"),
    (
        r"^([\d,]+) samples × ([\d,.]+) tokens \(the range's middle\)$",
        r"\1 条样本 × \2 token（取区间中值）",
    ),
    (r"^([\d,]+) samples × ([\d,.]+) tokens$", r"\1 条样本 × 每条 \2 token"),
    (
        r"^([\d,]+) samples of ~(\d+) tokens assumed \(say the average length\)$",
        r"假设 \1 条样本每条约 \2 token（可告诉我平均长度）",
    ),
    (
        r"^([\d,]+) samples read as filling the (\d+)-token context each$",
        r"\1 条样本按每条填满 \2 token 上下文计",
    ),
    (
        r"^HF Trainer \+ PEFT \(as axolotl, LLaMA-Factory and ms-swift run it\)$",
        "HF Trainer + PEFT（axolotl、LLaMA-Factory、ms-swift 的跑法）",
    ),
    (
        r"^bf16 base weights; LoRA weights and their optimizer state as PEFT keeps them$",
        "基座权重 bf16；LoRA 权重及其优化器状态按 PEFT 的方式保存",
    ),
    (r"^AdamW optimizer$", "AdamW 优化器"),
    (r"^LoRA rank (\d+)$", r"LoRA 秩 \1"),
    (
        r"^LoRA on all linear layers \(q, k, v, o, gate, up, down\)$",
        "LoRA 作用于所有线性层（q、k、v、o、gate、up、down）",
    ),
    (
        r"^micro-batch (\d+) per GPU \(gradient accumulation does not add memory\)$",
        r"每张GPU micro-batch \1（梯度累积不增加显存）",
    ),
    (
        r"^FlashAttention/SDPA attention \(no s×s score matrix\)$",
        "FlashAttention/SDPA 注意力（不存 s×s 分数矩阵）",
    ),
    (
        r"^no sequence packing \(batches vary in length, so the allocator keeps slack\)$",
        "不做序列打包（批次长度不一，显存分配器会留余量）",
    ),
    (
        r"^no method named: planned as LoRA \(say QLoRA or full to change\)$",
        "未指定方法：按 LoRA 规划（可以说 QLoRA 或全参来修改）",
    ),
    (
        r"^QLoRA with 4-bit NF4 \(bitsandbytes, double quantisation\)$",
        "QLoRA：4位 NF4（bitsandbytes，双重量化）",
    ),
    (r"^(\d+)-bit read as NF4 \(bitsandbytes\)$", r"\1位按 NF4（bitsandbytes）计"),
    (r"^LoRA on a (\w+) base read as QLoRA$", r"\1 基座上的 LoRA 按 QLoRA 计"),
    (r"^(.+?) read as a correction of (.+)$", r"\1（更正了 \2）"),
    (r"^(.+?) read as an? ([\d.]+)B model$", r"\1 按 \2B 模型计"),
    (r"^(\d+) parameters read as ([\d.]+)B$", r"\1 参数按 \2B 计"),
    (r"^(.+?) read as (\d+) epochs$", r"\1 按 \2 轮计"),
    (r"^(\d+) epochs?$", r"\1 轮"),
    (r"^'(.+?)' read as (.+?) \(also: (.+)\)$", r"「\1」按 \2 计（也可能是：\3）"),
    (
        r"^(.+?) GPU-hours on (\d+) GPUs read as a ([\d.]+)-hour deadline$",
        r"\2 张GPU上的 \1 GPU小时按 \3 小时期限计",
    ),
    (
        r"^([\d,]+) steps × batch (\d+) × (\d+) tokens read as ([\d,]+) tokens$",
        r"\1 步 × batch \2 × \3 token，共 \4 token",
    ),
    (
        r"^a limit of (.+?) tokens per sequence read as the context length$",
        r"每条序列不超过 \1 token，按上下文长度计",
    ),
    (
        r"^(\d+)–(\d+) tokens per sample: a (\d+)-token context$",
        r"每条样本 \1–\2 token：上下文取 \3",
    ),
    (r"^LoRA ruled out: planned as full fine-tuning$", "已排除 LoRA：按全参微调规划"),
    (
        r"^QLoRA ruled out: planned as LoRA on a 16-bit base$",
        "已排除 QLoRA：按16位基座上的 LoRA 规划",
    ),
    (r"^sequence length ([\d,]+) tokens$", r"序列长度 \1 token"),
    (
        r"^(\d+) GPUs with DDP \(each GPU holds the whole model\)$",
        r"\1 张GPU用 DDP（每张GPU放整个模型）",
    ),
    (r"^(\d+) GPUs with FSDP \(full sharding\)$", r"\1 张GPU用 FSDP（完全切分）"),
    (r"^(.+?) nodes × (\d+) GPUs each read as (\d+) GPUs$", r"\1 台机器 × 每台 \2 张GPU，共 \3 张"),
    (r"^(.+?) read as (.+?) \(its published size\)$", r"\1 按公开规模 \2 计"),
    (r"^Comparing (.+)\.$", r"对比 \1。"),
    (
        r"^no gradient checkpointing \(LitGPT's single-GPU default\)$",
        "不开梯度检查点（LitGPT 单卡默认）",
    ),
    # --- warnings and bodies
    (r"^I did not understand: ", "没看懂："),
    (
        r"^Unknown card '(.+?)'; the closest known cards are (.+)\.$",
        r"不认识的显卡「\1」；最接近的已知显卡：\2。",
    ),
    (
        r"^sequence length ([\d,]+) is longer than (.+?)'s context \(([\d,]+) tokens\): it needs "
        r"RoPE scaling and quality may drop$",
        r"序列长度 \1 超过 \2 的上下文（\3 token）：需要 RoPE 缩放，效果可能下降",
    ),
    (
        r"^Which model \(or size\) do you want to fine-tune\? For example: (.+)\.$",
        r"要微调哪个模型（或多大的模型）？例如：\1。",
    ),
    (r"^On how many GPUs will you spend the (.+?) GPU-hours\?$", r"这 \1 GPU小时要用在几张GPU上？"),
    (
        r"^How many tokens does each of the (.+?) steps hold \(batch size and sequence length\)\?$",
        r"这 \1 步每步多少 token（batch 大小和序列长度）？",
    ),
    (
        r"^There is no job here to change yet, or the thread's job expired\. Ask a full question "
        r"first, e\.g\. (.+)\.$",
        r"这里还没有可修改的任务，或者已过期。请先完整地问一次，例如：\1。",
    ),
    (r" · full fine-tune", " · 全参微调"),
    (r"(\d) ctx(?= ·|$)", r"\1 上下文"),
    (r" tokens × ([\d.]+)$", r" token × \1 轮"),
    (r"(\d[\d.,]*[kMBT]?) tokens(?= ·|$)", r"\1 token"),
    (r"\bdoes not fit\b", "放不下"),
    (r"\bper GPU\b", "每张GPU"),
]
_COMPILED = [(re.compile(pattern), chinese) for pattern, chinese in _RULES]
_HAS_LATIN_WORDS = re.compile(r"[A-Za-z]{3,}")


def translate(english: str) -> str:
    """The Chinese for one reply string; what no rule knows stays as written."""
    text = english
    for pattern, chinese in _COMPILED:
        if _HAS_LATIN_WORDS.search(text) is None:
            break
        text = pattern.sub(chinese, text)
    return text
