"""The planner's sentences (its stated assumptions, suggestions and warnings), each a catalog
entry with its English and Chinese (planner/words.py says why a catalog module). The Plan JSON
keeps the English strings; the bot shows a Chinese answer from the same entries.
"""

from __future__ import annotations

from planner.words import Catalog, Entry

# The defaults resolve states when the user said nothing (planner/defaults.py).
DEFAULTS = Catalog(
    {
        "epochs.one": Entry("1 epoch", "1 轮"),
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
        "activation_offloading": Entry(
            "activation offloading: {what} wait in host RAM (each step copies them over PCIe and "
            "back)",
            "激活卸载：{what}放在主机内存（每步经 PCIe 往返复制）",
        ),
        "tiled_mlp": Entry(
            "tiled MLP: its intermediates exist for one shard of about {tokens:,} tokens at a "
            "time (ALST's TiledMLP)",
            "MLP 分块计算：中间激活每次只保留约 {tokens:,} 个 token 的一块（ALST TiledMLP）",
        ),
        "activation_offloading.checkpointed": Entry(
            "the checkpointed layer inputs", "梯度检查点保存的各层输入"
        ),
        "activation_offloading.all": Entry(
            "every layer's saved activations but the two in flight",
            "除正在计算的两层外，各层保存的激活",
        ),
        "attention.no_flash": Entry(
            "FlashAttention-2 needs an Ampere or newer GPU: on the {card} "
            "attn_implementation='flash_attention_2' fails to load; use SDPA (transformers' "
            "default), whose memory-efficient kernel also keeps no s×s scores",
            "FlashAttention-2 需要 Ampere 或更新的 GPU：在 {card} 上 "
            "attn_implementation='flash_attention_2' 无法加载；请用 SDPA（transformers 默认），"
            "其内存高效内核同样不存 s×s 分数",
        ),
        "attention.eager": Entry(
            "eager attention: transformers has no SDPA path for {model}'s attention sinks and the "
            "HF recipe sets attn_implementation='eager', so the s×s scores are kept (say flash "
            "attention if a sink-aware kernel is installed)",
            "eager 注意力：transformers 对 {model} 的 attention sink 没有 SDPA 实现，HF 配方设置 "
            "attn_implementation='eager'，所以会保存 s×s 分数（若装了支持 sink 的内核请说 flash "
            "attention）",
        ),
        "attention.sdpa": Entry(
            "SDPA memory-efficient attention (no s×s score matrix; FlashAttention-2 needs Ampere, "
            "and the {card} predates it)",
            "SDPA 内存高效注意力（不存 s×s 分数矩阵；FlashAttention-2 需要 Ampere 或更新的 GPU，"
            "{card} 早于 Ampere）",
        ),
        "precision.no_bf16": Entry(
            "the {card} has no bf16 (it predates Ampere): PyTorch refuses or emulates it slowly; "
            "train in fp16 mixed precision (say 'fp16') on this card",
            "{card} 不支持 bf16（早于 Ampere）：PyTorch 会拒绝或很慢地模拟；这张卡请用 fp16 "
            "混合精度训练（说“fp16”）",
        ),
        "precision.fp16": Entry(
            "fp16 mixed precision: the {card} has no bf16 (it predates Ampere), so the trained "
            "parameters keep an fp32 master copy and the loss is scaled (Trainer's fp16=True)",
            "fp16 混合精度：{card} 不支持 bf16（早于 Ampere），训练参数保留 fp32 主副本并做损失缩放"
            "（Trainer 的 fp16=True）",
        ),
        "precision.deepspeed": Entry(
            "DeepSpeed trains 16-bit weights and gradients and keeps fp32 master weights with the "
            "optimizer state in its partitions (AdamW: 2 + 2 + 12 bytes per trained parameter, as "
            "in the ZeRO paper)",
            "DeepSpeed 用 16 位权重和梯度训练，fp32 主权重与优化器状态放在分区里"
            "（AdamW：每个训练参数 2 + 2 + 12 字节，同 ZeRO 论文）",
        ),
        "precision.fsdp_mixed": Entry(
            "bf16 mixed precision: Accelerate's FSDP keeps the trained parameters, their gradients "
            "and AdamW state in fp32 shards (16 B/param across the GPUs) and gathers bf16 copies "
            "layer by layer",
            "bf16 混合精度：Accelerate 的 FSDP 把训练参数、梯度和 AdamW 状态以 fp32 分片保存"
            "（各GPU合计每参数 16 B），逐层聚合 bf16 副本",
        ),
        "precision.pure_bf16": Entry(
            "full fine-tune in pure bf16 (weights, gradients and AdamW state in bf16, model loaded "
            "in bfloat16 as TRL, torchtune and LitGPT do); say 'bf16-mixed' for an fp32 master "
            "copy (16 B/param)",
            "纯 bf16 全参微调（权重、梯度和 AdamW 状态都是 bf16，像 TRL、torchtune、LitGPT 那样以 "
            "bfloat16 加载）；要 fp32 主副本（每参数 16 B）请说 bf16-mixed",
        ),
        "optimizer.torchtune": Entry(
            "torchtune's single-GPU full recipe: paged 8-bit AdamW stepped inside backward",
            "torchtune 单卡全参配方：分页 8 位 AdamW，在反向传播中更新",
        ),
        "optimizer.unsloth": Entry(
            "8-bit AdamW (Unsloth's notebooks)", "8位 AdamW（Unsloth 笔记本的默认）"
        ),
        "sharding.fsdp": Entry(
            "{gpus} GPUs with FSDP (full sharding)", "{gpus} 张GPU用 FSDP（完全切分）"
        ),
        "sharding.fsdp_why": Entry(
            "{gpus} GPUs with FSDP (full sharding): {why}", "{gpus} 张GPU用 FSDP（完全切分）：{why}"
        ),
        "sharding.ddp_misfit": Entry(
            "a whole copy on each GPU (DDP) would need {need:,.1f} GiB, more than the {card}'s "
            "{usable:,.1f}",
            "每张GPU放一整份（DDP）需要 {need:,.1f} GiB，超过 {card} 的 {usable:,.1f} GiB",
        ),
        "sharding.ddp": Entry(
            "{gpus} GPUs with DDP (each GPU holds the whole model)",
            "{gpus} 张GPU用 DDP（每张GPU放整个模型）",
        ),
        "warn.quant_not_qlora": Entry(
            "quant {quant} only applies to QLoRA; ignored for {method}",
            "quant {quant} 只适用于 QLoRA；{method} 已忽略",
        ),
        "warn.lora_for_full": Entry(
            "LoRA rank/targets ignored for a full fine-tune", "全参微调忽略 LoRA 秩/目标层"
        ),
        "warn.rope": Entry(
            "sequence length {seq_len:,} is longer than {model}'s context ({context:,} tokens): it "
            "needs RoPE scaling and quality may drop",
            "序列长度 {seq_len:,} 超过 {model} 的上下文（{context:,} token）：需要 RoPE 缩放，"
            "效果可能下降",
        ),
        "warn.no_sharding": Entry(
            "no sharding on {gpus} GPUs: each GPU holds the whole job",
            "{gpus} 张GPU不切分：每张GPU都放整个任务",
        ),
        "warn.offload_lora": Entry(
            "CPU offload saves little for LoRA/QLoRA without FSDP/ZeRO-3",
            "不用 FSDP/ZeRO-3 时，CPU 卸载对 LoRA/QLoRA 省不了多少显存",
        ),
        "context_parallel.invalid": Entry(
            "context parallel {wanted} must divide the {gpus} GPU(s): planned without it",
            "上下文并行 {wanted} 必须能整除 {gpus} 张卡：按不用它规划",
        ),
        "micro_batch.completion": Entry(
            "micro-batch {count} completion per GPU (a larger batch through gradient accumulation "
            "costs no activation memory)",
            "每张GPU micro-batch {count} 条补全（用梯度累积加大批次不增加激活显存）",
        ),
        "micro_batch.pair": Entry(
            "micro-batch {count} pair (chosen + rejected, 2 sequences) per GPU (a larger batch "
            "through gradient accumulation costs no activation memory)",
            "每张GPU micro-batch {count} 对（chosen + rejected，2 条序列）"
            "（用梯度累积加大批次不增加激活显存）",
        ),
        "model.config": Entry(
            "architecture read from the supplied config ({size_b:.2f}B)",
            "结构按提供的 config 读取（{size_b:.2f}B）",
        ),
        "model.mismatch": Entry(
            "{model} has {size_b:.1f}B parameters, not {said_b:g}B: planned with the catalog's "
            "shape",
            "{model} 有 {size_b:.1f}B 参数，不是 {said_b:g}B：按目录里的结构规划",
        ),
        "unsloth.layout": Entry(
            "Unsloth does not run under {layout} (it trains a whole copy per GPU, DDP): planned "
            "as HF Trainer + PEFT with {layout}; say 'unsloth with ddp' for Unsloth's own layout",
            "Unsloth 不支持 {layout}（它在每张卡上训练完整副本，即 DDP）：按 HF Trainer + PEFT 加 "
            "{layout} 规划；要按 Unsloth 自己的方式请说「unsloth with ddp」",
        ),
        "prequant.full": Entry(
            "{model} is a pre-quantised ({quant}) checkpoint: a full fine-tune needs the 16-bit "
            "weights; planned on the 16-bit base",
            "{model} 是预量化（{quant}）检查点：全参微调需要 16 位权重；按 16 位底座规划",
        ),
        "prequant.lora": Entry(
            "{model} is stored in {quant}: LoRA on it trains over the quantised weights, planned "
            "as QLoRA",
            "{model} 以 {quant} 存储：在其上做 LoRA 就是在量化权重上训练，按 QLoRA 规划",
        ),
        "mean_len.padding_free": Entry(
            "samples average ~{mean:,} tokens: time at that length; the stack drops padding, so "
            "the peak holds one {cap:,}-token sample and the rest at the mean",
            "样本平均约 {mean:,} 个 token：时间按这个长度算；该框架去掉了填充，峰值按一条 {cap:,} "
            "token 的样本加其余样本的平均长度算",
        ),
        "mean_len.cap": Entry(
            "samples average ~{mean:,} tokens: time at that length; the peak at the {cap:,}-token "
            "cap (the longest batch decides it)",
            "样本平均约 {mean:,} 个 token：时间按这个长度算；峰值按 {cap:,} token 的截断上限算"
            "（由最长的批决定）",
        ),
        "image_tokens": Entry(
            "each sample's images add {image:,} tokens to its ~{text:,} text tokens: "
            "{total_m:,.1f}M trained tokens, not {text_m:,.1f}M",
            "每个样本的图像在约 {text:,} 个文本 token 之外再加 {image:,} 个 token："
            "共训练 {total_m:,.1f}M token，而不是 {text_m:,.1f}M",
        ),
        "vllm_release": Entry(
            "vLLM reserves {fraction:.0%} of each card ({stack}'s gpu_memory_utilization default "
            "at this release)",
            "vLLM 占每张卡的 {fraction:.0%}（{stack} 该版本的 gpu_memory_utilization 默认值）",
        ),
        "loss": Entry("loss: {said}, planned as {kernel}", "损失：{said}，按{kernel}计"),
        "int4": Entry("int4 read as a GPTQ-quantised checkpoint", "int4 按 GPTQ 量化的检查点计"),
        "lora.stack_targets": Entry(
            "LoRA on {targets} ({stack}'s default)", "LoRA 作用于 {targets}（{stack} 的默认）"
        ),
        "torchtune_offload": Entry(
            "torchtune's 70B full recipe: FSDP with CPU offload",
            "torchtune 的 70B 全参配方：FSDP 加 CPU 卸载",
        ),
        "context_parallel": Entry(
            "context parallel {wanted} (Ulysses): each GPU holds 1/{wanted} of every sequence's "
            "tokens, activations and logits; attention exchanges them by all-to-all",
            "上下文并行 {wanted}（Ulysses）：每张卡只放每条序列 1/{wanted} 的 token、激活和 "
            "logits；注意力用 all-to-all 交换",
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
        "label.adamw_8bit": Entry("8-bit AdamW", "8位 AdamW"),
        "label.unsloth": Entry(
            "Unsloth (fused chunked loss, checkpoints offloaded to CPU RAM)",
            "Unsloth（融合分块损失，检查点卸载到CPU内存）",
        ),
        "label.activation_offloading": Entry(
            "activation offloading (checkpoints in host RAM)", "激活卸载（检查点放主机内存）"
        ),
        "label.micro_batch_1": Entry(
            "micro-batch 1 (more gradient accumulation)", "micro-batch 1（增加梯度累积）"
        ),
        "label.offload.sharded": Entry(
            "parameters, gradients and optimizer state offloaded to CPU RAM",
            "参数、梯度和优化器状态卸载到CPU内存",
        ),
        "label.offload": Entry("optimizer state offloaded to CPU RAM", "优化器状态卸载到CPU内存"),
        "label.precomputed_reference": Entry(
            "reference log-probs precomputed (no reference copy on the GPU)",
            "预先计算参考 log-probs（GPU 上不放参考模型副本）",
        ),
        "label.beta_0": Entry(
            "beta = 0 (no KL term, no reference)", "beta = 0（没有 KL 项，不要参考模型）"
        ),
        "label.vllm_fraction": Entry(
            "vLLM gpu_memory_utilization {fraction:.2f} instead of {now:g}",
            "vLLM gpu_memory_utilization 改为 {fraction:.2f}（原 {now:g}）",
        ),
        "label.vllm_sleep": Entry(
            "vLLM sleep mode (its pool freed through the update)",
            "vLLM 休眠模式（参数更新时释放其显存池）",
        ),
        "label.vllm_tp": Entry(
            "vLLM tensor parallel {tp} (1/{tp} of its weights per GPU)",
            "vLLM 张量并行 {tp}（每张GPU放 1/{tp} 的权重）",
        ),
        "label.completions": Entry(
            "completions up to {shorter:,} tokens instead of {now:,}",
            "补全最长 {shorter:,} token（原 {now:,}）",
        ),
        "label.generations": Entry(
            "{fewer} generations per prompt instead of {now}", "每个提示 {fewer} 条补全（原 {now}）"
        ),
        "label.rollout_server": Entry(
            "the rollout on a second card (a vLLM server)", "把生成放到另一张卡上（vLLM server）"
        ),
        "label.more_gpus": Entry(
            "{count}× {card} with {sharding}", "{count}× {card} 用 {sharding}"
        ),
        "label.rent": Entry("rent {count}× {gpu} instead", "改租 {count}× {gpu}"),
        "rent": Entry(
            "rent {count}× {gpu} instead: ${cost:,.2f} and {hours} against ${now_cost:,.2f} and "
            "{now_hours} on {now_count}× {now_gpu}",
            "改租 {count}× {gpu}：${cost:,.2f}、{hours}，对比 {now_count}× {now_gpu} 上的 "
            "${now_cost:,.2f}、{now_hours}",
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

# Preference and RL training (planner/post_training.py): the objective's defaults, said.
POST_TRAINING = Catalog(
    {
        "generation_batch": Entry(
            "gradient accumulation {accum}: one generation round of {completions} completions per "
            "optimizer step (TRL's generation batch), each prompt's {generations} scored together",
            "梯度累积 {accum}：每个优化步一轮生成 {completions} 条补全（TRL 的 generation batch），"
            "每个提示的 {generations} 条一起打分",
        ),
        "trained_tokens.online": Entry(
            "{prompts:,.0f} prompts × {rows} completions × {seq_len:,} tokens = "
            "{mtokens:,.1f}M trained tokens",
            "{prompts:,.0f} 个提示 × {rows} 条补全 × {seq_len:,} token = "
            "共训练 {mtokens:,.1f}M token",
        ),
        "trained_tokens.offline": Entry(
            "{prompts:,.0f} prompts × {rows} sequences × {seq_len:,} tokens = "
            "{mtokens:,.1f}M trained tokens",
            "{prompts:,.0f} 个提示 × {rows} 条序列 × {seq_len:,} token = "
            "共训练 {mtokens:,.1f}M token",
        ),
        "online_only": Entry(
            "{fields} only apply to GRPO, RLOO and PPO; ignored for {objective}",
            "{fields} 只适用于 GRPO、RLOO 和 PPO；{objective} 已忽略",
        ),
        "generations": Entry(
            "{count} completion(s) per prompt ({objective})",
            "每个提示 {count} 条补全（{objective}）",
        ),
        "colocated_only": Entry(
            "{fields} only apply to a colocated vLLM engine; ignored",
            "{fields} 只适用于同卡部署的 vLLM 引擎；已忽略",
        ),
        "reference.sft": Entry(
            "a reference model only applies to preference and RL objectives",
            "参考模型只适用于偏好和强化学习目标",
        ),
        "reference.not_needed": Entry(
            "{name}'s loss needs no reference model: none planned",
            "{name} 的损失不需要参考模型：不按参考模型规划",
        ),
        "reference.free": Entry(
            "{name} is reference-free: only the trained model is on the GPU",
            "{name} 不需要参考模型：GPU 上只有训练的模型",
        ),
        "reference.grpo": Entry(
            "GRPO with beta = 0 (TRL ≥ 0.19): no KL term, so no reference model",
            "GRPO 的 beta = 0（TRL ≥ 0.19）：没有 KL 项，所以不需要参考模型",
        ),
        "reference.rloo": Entry(
            "RLOO with beta = 0.05 (TRL's default): a KL term against a reference",
            "RLOO 的 beta = 0.05（TRL 默认）：有针对参考模型的 KL 项",
        ),
        "reference.precomputed": Entry(
            "{name} with reference log-probs precomputed (TRL precompute_ref_log_probs): one "
            "forward pass over the dataset before training, no reference resident",
            "{name} 预先计算参考 log-probs（TRL precompute_ref_log_probs）：训练前对数据集做一遍"
            "前向，参考模型不常驻显存",
        ),
        "reference.adapters_off": Entry(
            "{name}'s reference is the base model with the LoRA adapters switched off "
            "(TRL/PEFT, LLaMA-Factory): no second copy, one more forward",
            "{name} 的参考模型就是关掉 LoRA 适配器的基座（TRL/PEFT、LLaMA-Factory）：不多存一份，"
            "只多一次前向",
        ),
        "reference.copy": Entry(
            "{name} keeps a frozen reference copy of the model for full fine-tuning (TRL, "
            "LLaMA-Factory), sharded like the policy; say 'without the reference model' to "
            "precompute its log-probs",
            "{name} 在全参微调时保留一份冻结的参考模型（TRL、LLaMA-Factory），切分方式与策略模型"
            "相同；说“without the reference model”可预先计算其 log-probs",
        ),
        "length.preference": Entry(
            "prompt + response up to {tokens:,} tokens (TRL's max_length)",
            "提示 + 回答最长 {tokens:,} token（TRL 的 max_length）",
        ),
        "length.completion": Entry(
            "completions up to {tokens:,} tokens (max_completion_length)",
            "补全最长 {tokens:,} token（max_completion_length）",
        ),
        "length.prompt": Entry("prompts up to {tokens:,} tokens", "提示最长 {tokens:,} token"),
        "rollout.hf": Entry(
            "completions generated with HF generate inside the trainer (TRL's use_vllm=False); "
            "say 'vLLM colocate' for faster rollouts",
            "补全由训练器内的 HF generate 生成（TRL 的 use_vllm=False）；"
            "说“vLLM colocate”可加快生成",
        ),
        "rollout.colocate": Entry(
            "vLLM colocated reserves {fraction:.0%} of each card (gpu_memory_utilization, TRL's "
            "colocate default); training gets the rest",
            "vLLM 同卡部署占每张卡的 {fraction:.0%}"
            "（gpu_memory_utilization，TRL colocate 默认值）；其余留给训练",
        ),
        "rollout.server": Entry(
            "a vLLM server on {gpus} more GPU(s) of the same card (gpu_memory_utilization "
            "{fraction:g}), costed like the trainer's",
            "vLLM server 另用 {gpus} 张同型号GPU（gpu_memory_utilization {fraction:g}），"
            "按训练卡的价格计费",
        ),
        "engine.tp_invalid": Entry(
            "vLLM tensor parallel {tp} must divide the {gpus} GPU(s) the engine is colocated on",
            "vLLM 张量并行 {tp} 必须整除引擎所在的 {gpus} 张GPU",
        ),
        "engine.tensor_parallel": Entry(
            "vLLM tensor parallel {tp}: each GPU holds 1/{tp} of the engine's weights and KV cache",
            "vLLM 张量并行 {tp}：每张GPU放引擎权重和 KV 缓存的 1/{tp}",
        ),
        "engine.awake": Entry(
            "vLLM stays awake through the update (TRL's vllm_enable_sleep_mode=False): its pool "
            "is held while training; say 'sleep mode' to free it",
            "vLLM 在参数更新时不休眠（TRL 的 vllm_enable_sleep_mode=False）：训练时它的显存池一直"
            "占着；说“sleep mode”可释放",
        ),
        "engine.sleeps": Entry(
            "vLLM sleeps through the update (sleep mode level 1): its weights wait in host RAM, "
            "its KV cache is freed, its CUDA graphs stay",
            "vLLM 在参数更新时休眠（sleep mode level 1）：权重放到主机内存，KV 缓存释放，"
            "CUDA graph 保留",
        ),
        "reward.frozen": Entry(
            "a frozen reward model ({name}, {size_b:.1f}B) scores rollouts",
            "冻结的奖励模型（{name}，{size_b:.1f}B）为生成结果打分",
        ),
        "reward.ppo": Entry(
            "PPO's reward model taken as the policy's size ({name}), frozen; say its size if it "
            "differs",
            "PPO 的奖励模型按策略模型大小（{name}）计，冻结；大小不同请说明",
        ),
        "reward.rules": Entry(
            "rule-based (verifiable) rewards: no reward model on the GPU",
            "基于规则（可验证）的奖励：GPU 上没有奖励模型",
        ),
    }
)

# Mixture of experts, vision towers and model switches (planner/model_switches.py).
MODEL_SWITCHES = Catalog(
    {
        "experts.as_stated": Entry("as stated", "按所述"),
        "experts.adapted_as_stated": Entry(
            "as stated: PEFT ≥ 0.17 target_parameters", "按所述：PEFT ≥ 0.17 的 target_parameters"
        ),
        "experts.prequantised": Entry("the checkpoint is pre-quantised", "检查点已预量化"),
        "ep.not_moe": Entry(
            "expert_parallel ignored: {model} is not a mixture of experts",
            "expert_parallel 已忽略：{model} 不是混合专家模型",
        ),
        "moe": Entry(
            "mixture of experts: all {experts} experts are resident, so weights, gradients and "
            "optimizer state follow the {total_b:.1f}B total; FLOPs follow the {active_b:.1f}B "
            "active per token (top-{top} and any shared expert) at a lower matmul efficiency than "
            "a dense model's",
            "混合专家：全部 {experts} 个专家常驻显存，所以权重、梯度和优化器状态按 {total_b:.1f}B "
            "总参数计；FLOPs 按每 token 激活的 {active_b:.1f}B 计（top-{top} 及共享专家），"
            "矩阵乘效率低于稠密模型",
        ),
        "fused": Entry(
            "the experts are fused 3-D tensors in transformers: {adapted}{qlora}",
            "transformers 中专家是融合的三维张量：{adapted}{qlora}",
        ),
        "fused.adapted": Entry("LoRA adapts them too ({why})", "LoRA 也作用于专家（{why}）"),
        "fused.not_adapted": Entry(
            "LoRA adapts attention and the dense/shared MLPs (PEFT's target_modules cannot wrap "
            "them)",
            "LoRA 只作用于注意力和稠密/共享 MLP（PEFT 的 target_modules 包不住它们）",
        ),
        "fused.unquantised": Entry(
            "; bitsandbytes leaves them unquantised (it replaces only nn.Linear)",
            "；bitsandbytes 不量化它们（只替换 nn.Linear）",
        ),
        "fused.unquantised_fp32": Entry(
            "; bitsandbytes leaves them unquantised (it replaces only nn.Linear), and PEFT's "
            "k-bit preparation upcasts them to fp32 on one GPU",
            "；bitsandbytes 不量化它们（只替换 nn.Linear），单卡时 PEFT 的 k-bit 准备还会把它们"
            "升到 fp32",
        ),
        "fused.quantised": Entry("; held quantised: {why}", "；专家以量化形式保存：{why}"),
        "linear_experts": Entry(
            "LoRA on every expert too (they are nn.Linear modules here)",
            "每个专家也加 LoRA（这里它们是 nn.Linear 模块）",
        ),
        "ep.invalid": Entry(
            "expert_parallel {wanted} must divide the {gpus} GPUs and not exceed the {experts} "
            "experts: planned without expert parallelism",
            "expert_parallel {wanted} 必须整除 {gpus} 张GPU 且不超过 {experts} 个专家："
            "按不做专家并行规划",
        ),
        "ep": Entry(
            "expert parallelism {wanted}: each GPU of an EP group holds {each} of the {experts} "
            "experts of every MoE layer; tokens reach their experts by all-to-all",
            "专家并行 {wanted}：EP 组里每张GPU放每个 MoE 层 {experts} 个专家中的 {each} 个；"
            "token 通过 all-to-all 到达各自的专家",
        ),
        "ep.none": Entry(
            "no expert parallelism (expert_parallel 1)", "不做专家并行（expert_parallel 1）"
        ),
        "expert_loop": Entry(
            "{stack} runs transformers' MoE blocks, which visit the experts one by one in Python: "
            "a fixed host-time cost per micro-batch (a larger micro-batch, expert parallelism or "
            "grouped-GEMM expert kernels avoid most of it)",
            "{stack} 使用 transformers 的 MoE 层，在 Python 循环中逐个计算专家：每个微批次"
            "都有固定的主机开销（更大的微批次、专家并行或分组 GEMM 专家内核可省去大部分）",
        ),
        "gpt_oss_bf16": Entry(
            "gpt-oss's MXFP4 experts are dequantised to bf16 for training (the HF recipe loads "
            "with Mxfp4Config(dequantize=True))",
            "gpt-oss 的 MXFP4 专家训练时反量化为 bf16"
            "（HF 配方用 Mxfp4Config(dequantize=True) 加载）",
        ),
        "vision.none": Entry(
            "{model} has no vision tower: image settings ignored",
            "{model} 没有视觉塔：图像设置已忽略",
        ),
        "vision.trained": Entry(
            "vision tower ({size_b:.2f}B) trained", "视觉塔（{size_b:.2f}B）参与训练"
        ),
        "vision.frozen": Entry(
            "vision tower ({size_b:.2f}B) frozen (say train_vision_tower to train it)",
            "视觉塔（{size_b:.2f}B）冻结（说 train_vision_tower 可一起训练）",
        ),
        "images.tokens": Entry(
            "{images:g} image(s) per sample × {tokens:,} tokens each added to the sequence "
            "(planned at a 1024×1024 image or one tile where the size varies)",
            "每个样本 {images:g} 张图 × 每张 {tokens:,} token 加入序列（尺寸不定时按 1024×1024 "
            "的图或一个切片规划）",
        ),
        "images.cross_attention": Entry(
            "{images:g} image(s) per sample through cross-attention (no sequence tokens)",
            "每个样本 {images:g} 张图，经交叉注意力接入（不占序列 token）",
        ),
        "images.none": Entry(
            "text-only samples (say 'with N images per sample' to add image tokens)",
            "纯文本样本（说“每个样本 N 张图”可加入图像 token）",
        ),
        "fp8": Entry(
            "FP8 matmuls (Hopper/Blackwell): weights, gradients and optimizer state stay as in "
            "bf16, so memory does not drop; other cards run it at bf16 speed",
            "FP8 矩阵乘（Hopper/Blackwell）：权重、梯度和优化器状态与 bf16 时相同，显存不会减少；"
            "其他显卡按 bf16 速度运行",
        ),
    }
)

# How the reader took what the user wrote (planner/parsing/): each said beside the answer.
PARSING = Catalog(
    {
        "note.tower": Entry(
            "a tower of powers (like 9 to the 9 to the 9) is set aside, never evaluated",
            "连续乘方（比如 9 的 9 的 9 次方）已搁置，不做计算",
        ),
        "note.power_too_large": Entry(
            "{base} to the power {exponent} is too large a number to plan with",
            "{base} 的 {exponent} 次方太大，无法用来规划",
        ),
        "note.two_bit": Entry(
            "2-bit training is not planned; read as 4-bit", "不规划 2 位训练；按 4 位读取"
        ),
        "lion_as_sgd": Entry(
            "{written}: Lion is not planned by name; read as SGD with momentum, which keeps the"
            " same one state per weight",
            "{written}：不按 Lion 单独规划；按带动量的 SGD 计，两者每个权重都只存一份状态",
        ),
        "lion_8bit_as_adam": Entry(
            "{written}: 8-bit Lion is not planned by name; read as 8-bit AdamW, whose two 8-bit"
            " states per weight are an upper bound on Lion's one",
            "{written}：不按 8 位 Lion 单独规划；按 8 位 AdamW 计，它每个权重存两份 8 位状态，"
            "是 Lion 一份状态的上限",
        ),
        "paged_lion_as_paged_adam": Entry(
            "{written}: paged Lion is not planned by name; read as paged AdamW (paged states live"
            " outside the GPU pool either way)",
            "{written}：不按分页 Lion 单独规划；按分页 AdamW 计（分页状态都不占 GPU 显存池）",
        ),
        "note.yuan_budget": Entry(
            "{written} is a budget in yuan, but budgets are planned in US dollars (prices are dated"
            " dollar quotes, with no exchange rate kept): say the budget in US dollars",
            "{written} 是人民币预算，但预算按美元规划（价格是带日期的美元报价，不保存汇率）："
            "请用美元说明预算",
        ),
        "note.hourly_price": Entry(
            "{price} is a price per hour, not a budget", "{price} 是每小时价格，不是预算"
        ),
        "no_method": Entry(
            "no method named: planned as LoRA (say QLoRA or full to change)",
            "未指定方法：按 LoRA 规划（可以说 QLoRA 或全参来修改）",
        ),
        "lora_ruled_out": Entry(
            "LoRA ruled out: planned as full fine-tuning", "已排除 LoRA：按全参微调规划"
        ),
        "qlora_ruled_out": Entry(
            "QLoRA ruled out: planned as LoRA on a 16-bit base",
            "已排除 QLoRA：按16位基座上的 LoRA 规划",
        ),
        "lora_on_quant": Entry(
            "LoRA on a {quant} base read as QLoRA", "{quant} 基座上的 LoRA 按 QLoRA 计"
        ),
        "quant_as_qlora": Entry("{quant} quantisation read as QLoRA", "{quant} 量化按 QLoRA 计"),
        "sft_as_full": Entry(
            "SFT with no adapter mentioned read as full fine-tuning",
            "SFT 且未提适配器，按全参微调计",
        ),
        "bits_as_nf4": Entry(
            "{bits}-bit read as NF4 (bitsandbytes)", "{bits}位按 NF4（bitsandbytes）计"
        ),
        "budget_no_currency": Entry(
            "budget {written} read as US dollars", "预算 {written} 按美元计"
        ),
        "k_tokens": Entry("{written} read as {tokens} tokens", "{written} 按 {tokens} 个 token 计"),
        "range_context": Entry(
            "{low}–{high} tokens per sample: a {high}-token context",
            "每条样本 {low}–{high} token：上下文取 {high}",
        ),
        "limit_context": Entry(
            "a limit of {limit} tokens per sequence read as the context length",
            "每条序列不超过 {limit} token，按上下文长度计",
        ),
        "published_size": Entry(
            "{name} read as {samples:,} samples (its published size)",
            "{name} 按公开规模 {samples:,} 条样本计",
        ),
        "samples_range": Entry(
            "{samples:,} samples × {tokens} tokens (the range's middle)",
            "{samples:,} 条样本 × {tokens} token（取区间中值）",
        ),
        "samples_length": Entry(
            "{samples:,} samples × {tokens} tokens", "{samples:,} 条样本 × 每条 {tokens} token"
        ),
        "samples_fill": Entry(
            "{samples} samples read as filling the {seq_len}-token context each",
            "{samples} 条样本按每条填满 {seq_len} token 上下文计",
        ),
        "samples_typical": Entry(
            "{samples} samples of ~{tokens} tokens assumed (say the average length)",
            "假设 {samples} 条样本每条约 {tokens} token（可告诉我平均长度）",
        ),
        "steps_tokens": Entry(
            "{steps:,} steps × batch {batch} × {seq_len} tokens read as {tokens:,} tokens",
            "{steps:,} 步 × batch {batch} × {seq_len} token，共 {tokens:,} token",
        ),
        "gpu_hours": Entry(
            "{gpu_hours} GPU-hours on {gpus} GPUs read as a {hours}-hour deadline",
            "{gpus} 张GPU上的 {gpu_hours} GPU小时按 {hours} 小时期限计",
        ),
        "day_hours": Entry(
            "{days} days × {per_day} hours read as a {hours}-hour deadline",
            "{days} 天 × {per_day} 小时按 {hours} 小时期限计",
        ),
        "nodes_total": Entry(
            "{nodes} nodes × {per_node} GPUs each: {total} GPUs in total",
            "{nodes} 台机器 × 每台 {per_node} 张GPU：共 {total} 张",
        ),
        "total_per_card": Entry("{total} GB total read as per card", "总共 {total} GB 按每张卡计"),
        "epochs": Entry("{written} read as {value} epochs", "{written} 按 {value} 轮计"),
        "size_model": Entry("{written} read as a {size}B model", "{written} 按 {size}B 模型计"),
        "quant_in_id": Entry(
            "{bits} in the model id read as {value} weights", "模型名里的 {bits} 按 {value} 权重计"
        ),
        "version_not_size": Entry(
            "{model} {size} read as a version, not a size", "{model} {size} 按版本号计，不是大小"
        ),
        "effective_size": Entry(
            "{written} read as an effective size of {size}", "{written} 按有效大小 {size} 计"
        ),
        "typo_gb": Entry(
            "{size}B read as {size} GB (a typo for GB)", "{size}B 按 {size} GB 计（GB 的笔误）"
        ),
        "measured_peak": Entry("{written} read as a measured peak", "{written} 按实测峰值计"),
        "gpu_memory": Entry("{written} read as GPU memory", "{written} 按显存计"),
        "nodes_with": Entry(
            "{nodes} nodes with {count} GPUs read as {count} GPUs in total",
            "{nodes} 台机器共 {count} 张GPU，按总数 {count} 张计",
        ),
        "nodes_times": Entry(
            "{nodes} nodes × {count} GPUs read as {total} GPUs",
            "{nodes} 台机器 × {count} 张GPU，共 {total} 张",
        ),
        "machines_times": Entry(
            "{count} GPUs × {machines} machines read as {total} GPUs",
            "{count} 张GPU × {machines} 台机器，共 {total} 张",
        ),
        "nodes_each": Entry(
            "{nodes} nodes × {per_node} GPUs each read as {total} GPUs",
            "{nodes} 台机器 × 每台 {per_node} 张GPU，共 {total} 张",
        ),
        "gpu_count": Entry("{written} read as {total} GPUs", "{written} 按 {total} 张GPU计"),
        "correction": Entry(
            "{name} {value} read as a correction of {old}", "{name} {value}（更正了 {old}）"
        ),
        "bf16_mixed": Entry(
            "bf16 read as mixed precision (trained weights kept in fp32, as HF Trainer's --bf16); "
            "say 'pure bf16' if they are bf16 too",
            "bf16 按混合精度计（训练权重保留 fp32，同 HF Trainer 的 --bf16）；若权重也是 bf16 "
            "请说 pure bf16",
        ),
        "vllm_colocated": Entry(
            "vLLM read as colocated with the trainer (TRL's default mode)",
            "vLLM 按与训练同卡部署理解（TRL 的默认模式）",
        ),
        "steps_prompts": Entry(
            "{steps:,} steps × {prompts} prompts = {total:,}",
            "{steps:,} 步 × {prompts} 个提示 = {total:,}",
        ),
        "example_length": Entry(
            "each example read as {tokens:,} tokens long", "每个样本按 {tokens:,} token 长计"
        ),
        "sum_tokens": Entry(
            "{first} + {second} read as {total} tokens", "{first} + {second} 按 {total} 个 token 计"
        ),
        "clarify": Entry(
            "Which model (or size) do you want to fine-tune? For example: “{example}” or "
            "“llama 3 8b lora on 2x3090”.",
            "要微调哪个模型（或多大的模型）？例如：“{example}”或“llama 3 8b lora on 2x3090”。",
        ),
        "doubt.gpu_hours": Entry(
            "On how many GPUs will you spend the {gpu_hours} GPU-hours?",
            "这 {gpu_hours} GPU小时要用在几张GPU上？",
        ),
        "doubt.steps": Entry(
            "How many tokens does each of the {steps:,} steps hold (batch size and sequence "
            "length)?",
            "这 {steps:,} 步每步多少 token（batch 大小和序列长度）？",
        ),
        "parameters": Entry("{count} parameters read as {size:g}B", "{count} 参数按 {size:g}B 计"),
    }
)

# Stack releases (planner/stacks.py) and loss kernels (planner/model_switches.py).
STACKS = Catalog(
    {
        "release.as_of": Entry("as of {date}", "截至 {date}"),
        "release.not_version": Entry(
            "{stack} release {version!r} is not a version number: planned at its current release "
            "({current})",
            "{stack} 的版本「{version}」不是版本号：按当前版本（{current}）规划",
        ),
        "release.current": Entry(
            "{stack} at its current release ({current})", "{stack}：按当前版本（{current}）"
        ),
        "release.newer": Entry(
            "{stack} {version} is newer than any release profiled here: planned with the nearest, "
            "{newest}",
            "{stack} {version} 比已收录的任何版本都新：按最接近的 {newest} 规划",
        ),
        "release.stated": Entry(
            "{stack} {version} (as stated): its defaults at that release",
            "{stack} {version}（按所述）：用该版本的默认设置",
        ),
        "loss.hf": Entry(
            "stock HF loss (full [tokens × vocabulary] logits, fp32 log-softmax)",
            "HF 默认损失（完整的 [词元 × 词表] logits，fp32 log-softmax）",
        ),
        "loss.chunked": Entry(
            "chunked cross-entropy (bf16 logits, fp32 upcast one of 8 chunks at once)",
            "分块交叉熵（bf16 logits，每次只把 8 块中的一块升到 fp32）",
        ),
        "loss.liger": Entry(
            "Liger fused linear cross-entropy (no [tokens × vocabulary] logits)",
            "Liger 融合线性交叉熵（不生成 [词元 × 词表] logits）",
        ),
        "loss.cce": Entry(
            "Cut Cross-Entropy (only the correct-token logit and a log-sum-exp per token)",
            "Cut Cross-Entropy（每个词元只保留正确词的 logit 和一个 log-sum-exp）",
        ),
        "loss.stated": Entry("loss: {kernel}", "损失：{kernel}"),
    }
)

# The stack profiles' own notes (planner/data/stack-*.json "said" holds one of these ids): how an
# answer names a stack's default in one clause.
STACK_NOTES = Catalog(
    {
        "verl.rollout": Entry(
            "verl's hybrid engine: vLLM colocated with the actor, asleep through the update "
            "(free_cache_engine)",
            "verl 的混合引擎：vLLM 与 actor 共用显卡，更新时休眠（free_cache_engine）",
        ),
        "openrlhf.rollout": Entry(
            "OpenRLHF's vLLM engines on GPUs of their own (say 'colocate' for "
            "--colocate_all_models)",
            "OpenRLHF 的 vLLM 引擎用单独的 GPU（若用 --colocate_all_models 请说「colocate」）",
        ),
        "axolotl.moe_experts": Entry(
            "axolotl's MoE QLoRA recipes set quantize_moe_experts: true (say 'experts not "
            "quantized' if yours leaves it off)",
            "axolotl 的 MoE QLoRA 配方设置 quantize_moe_experts: true（若你的配置没开，请说"
            "「experts not quantized」）",
        ),
        "unsloth.moe_experts.gpt-oss": Entry(
            "Unsloth loads gpt-oss with linearised 4-bit experts (its gpt-oss-20b notebook trains "
            "on a 16 GB T4)",
            "Unsloth 以线性化的 4 位专家加载 gpt-oss（其 gpt-oss-20b 笔记本在 16 GB 的 T4 上训练）",
        ),
        "axolotl.moe_experts.llama4": Entry(
            "axolotl's Llama 4 examples load a pre-quantised linearised nf4 checkpoint",
            "axolotl 的 Llama 4 示例加载预量化、线性化的 nf4 检查点",
        ),
        "trl.loss_kernel": Entry(
            "TRL's chunked_nll, its SFT default since 2026-06-14 (trl#5846)",
            "TRL 的 chunked_nll（自 2026-06-14 起为其 SFT 默认，trl#5846）",
        ),
        "verl.loss_kernel": Entry(
            "verl's log-prob kernels (no full fp32 [tokens × vocabulary] logits)",
            "verl 的 log-prob 内核（不生成完整的 fp32 [词元 × 词表] logits）",
        ),
        "ms_swift.loss_legacy": Entry(
            "loss: as ms-swift's published benchmarks ran it (before 3.1: transformers < 4.46, "
            "fp32 logits); say the release (e.g. 'ms-swift 3.8') for the lighter loss of 3.1+",
            "损失：按 ms-swift 已发布基准的方式计（3.1 之前：transformers < 4.46，fp32 logits）；"
            "说明版本（如「ms-swift 3.8」）可按 3.1+ 更轻的损失计",
        ),
        "ms_swift.loss_kernel": Entry(
            "transformers' model-level loss, which ms-swift 3.1+ requires (trl ≥ 0.13 → "
            "transformers ≥ 4.46): 16-bit logits, fp32 only inside the loss",
            "ms-swift 3.1 起依赖的 transformers 模型内损失（trl ≥ 0.13 → transformers ≥ 4.46）："
            "logits 保持 16 位，仅在损失内转为 fp32",
        ),
        "ms_swift.linear_experts": Entry(
            "ms-swift before 4.0 pins transformers 4, whose Qwen MoE experts are nn.Linear modules",
            "ms-swift 4.0 之前锁定 transformers 4，其 Qwen MoE 专家是 nn.Linear 模块",
        ),
        "openrlhf.loss_kernel": Entry(
            "OpenRLHF's log-prob path (no full fp32 [tokens × vocabulary] logits)",
            "OpenRLHF 的 log-prob 计算（不生成完整的 fp32 [词元 × 词表] logits）",
        ),
        "axolotl.loss_kernel.llama4": Entry(
            "the Cut Cross-Entropy plugin axolotl's Llama 4 examples set",
            "axolotl 的 Llama 4 示例启用的 Cut Cross-Entropy 插件",
        ),
        "transformers.moe_training_rate": Entry(
            "transformers' MoE layers under DeepSpeed/FSDP without expert parallelism: about a "
            "tenth of the Megatron-class MoE rate",
            "transformers 的 MoE 层在 DeepSpeed/FSDP 下不用专家并行："
            "约为 Megatron 级 MoE 速率的十分之一",
        ),
    }
)

# What an answer says about its prices: the dates of the quotes behind them (Plan.price_date,
# planner/catalog/prices.py) and how fresh the live ones are (bot/prices/market.py).
PRICES = Catalog(
    {
        "dates.none": Entry("undated quotes", "报价未注明日期"),
        "dates.one": Entry("quotes dated {first}{undated}", "报价日期 {first}{undated}"),
        "dates.span": Entry(
            "quotes dated {first} to {last}{undated}", "报价日期 {first} 至 {last}{undated}"
        ),
        "dates.some_undated": Entry(", some undated", "，部分未注明日期"),
        "dates.aged": Entry("{label}; {note}", "{label}；{note}"),
        "age.days": Entry("the oldest is {days} days old", "最旧的报价已有 {days} 天"),
        "age.months": Entry("the oldest is {months} months old", "最旧的报价已有 {months} 个月"),
        "fresh.one": Entry(
            "Prices from {count} provider, {age}.", "价格来自 {count} 家供应商，{age}。"
        ),
        "fresh.many": Entry(
            "Prices from {count} providers, {age}.", "价格来自 {count} 家供应商，{age}。"
        ),
        "fetched.now": Entry("just now", "刚刚更新"),
        "fetched.min": Entry("{minutes:.0f} min ago", "{minutes:.0f} 分钟前更新"),
        "fetched.h": Entry("{hours:.0f} h ago", "{hours:.0f} 小时前更新"),
        "fetched.days": Entry("{days:.0f} days ago", "{days:.0f} 天前更新"),
        # Live prices (bot/prices/market.py): Plan.price_date, and the warning when a feed has
        # stopped answering.
        "live.one": Entry(
            "live quotes from {count} provider ({names}), fetched {span}",
            "实时报价来自 {count} 家供应商（{names}），获取于 {span}",
        ),
        "live.many": Entry(
            "live quotes from {count} providers ({names}), fetched {span}",
            "实时报价来自 {count} 家供应商（{names}），获取于 {span}",
        ),
        "live.span": Entry("{oldest} to {newest}", "{oldest} 至 {newest}"),
        "live.and_bundled": Entry(
            "{live}; other cards: bundled {bundled}", "{live}；其他显卡：内置报价表，{bundled}"
        ),
        "stale": Entry(
            "Some prices were fetched {age} ({when}); the feed that quoted them has not answered "
            "since.",
            "部分价格{age}（{when}），报出这些价格的数据源此后没有再响应。",
        ),
    }
)

# What an inverse question searched over, with its tolerance (planner/market/solve.py).
SOLVE = Catalog(
    {
        "tolerance.seq_len": Entry(
            "context rounded down to a multiple of {step} tokens",
            "上下文向下取整到 {step} 词元的倍数",
        ),
        "tolerance.micro_batch": Entry("whole micro-batches", "整数个 micro-batch"),
        "tolerance.params_b": Entry("models from the catalog", "目录中的模型"),
        "tolerance.num_gpus": Entry(
            "GPU counts {counts} (at most {most}, one node, for cards not rented as multi-node "
            "clusters)",
            "GPU数量 {counts}（不按多节点集群出租的显卡最多 {most} 张，即一台机器）",
        ),
        "tolerance.gpu": Entry(
            "cards in the catalog at their fewest GPUs", "目录中的显卡，各按最少GPU数"
        ),
    }
)

# How long a run takes, everywhere (planner.units.hours_text).
DURATIONS = Catalog(
    {
        "min": Entry("{minutes} min", "{minutes} 分钟"),
        "h": Entry("{hours:.1f} h", "{hours:.1f} 小时"),
        "days": Entry("{days:.1f} days", "{days:.1f} 天"),
        "signed": Entry("{sign}{duration}", "{sign}{duration}"),
    }
)

# The market's summary (planner/market/attach.py): its picks, a budget or deadline, or why nothing
# is priced.
MARKET = Catalog(
    {
        "summary": Entry("{lines}", "{lines}"),
        "cheapest_fastest": Entry("Cheapest and fastest: {run}.", "最便宜也最快：{run}."),
        "cheapest": Entry("Cheapest: {run}.", "最便宜：{run}."),
        "fastest": Entry("Fastest: {run}.", "最快：{run}."),
        "best_value": Entry(
            "Best value (lowest cost × hours): {run}.", "最划算（费用 × 时长最低）：{run}."
        ),
        "within.budget": Entry(
            "Cheapest within a ${budget:,.0f} budget: {run}.", "${budget:,.0f} 预算内最便宜：{run}."
        ),
        "within.deadline": Entry(
            "Cheapest within a {deadline:g} h deadline: {run}.",
            "{deadline:g} 小时内完成的最便宜方案：{run}.",
        ),
        "within.both": Entry(
            "Cheapest within a ${budget:,.0f} budget and a {deadline:g} h deadline: {run}.",
            "${budget:,.0f} 预算内、{deadline:g} 小时内完成的最便宜方案：{run}.",
        ),
        "nothing.budget": Entry(
            "Nothing meets a ${budget:,.0f} budget: the cheapest run costs ${cost:,.2f} and the "
            "fastest takes {hours}.",
            "没有方案在 ${budget:,.0f} 预算内：最便宜的要 ${cost:,.2f}，最快的要 {hours}。",
        ),
        "nothing.deadline": Entry(
            "Nothing meets a {deadline:g} h deadline: the cheapest run costs ${cost:,.2f} and the "
            "fastest takes {hours}.",
            "没有方案能在 {deadline:g} 小时内完成：最便宜的要 ${cost:,.2f}，最快的要 {hours}。",
        ),
        "nothing.both": Entry(
            "Nothing meets a ${budget:,.0f} budget and a {deadline:g} h deadline: the cheapest "
            "run costs ${cost:,.2f} and the fastest takes {hours}.",
            "没有方案同时满足 ${budget:,.0f} 预算和 {deadline:g} 小时期限：最便宜的要 "
            "${cost:,.2f}，最快的要 {hours}。",
        ),
        "run": Entry("{count}× {gpu}, {hours}", "{count}× {gpu}, {hours}"),
        "run.priced": Entry(
            "{run}, ${cost:,.2f} at ${rate:.2f}/GPU-h{spot} {date}",
            "{run}, ${cost:,.2f}，每GPU小时 ${rate:.2f}{spot} {date}",
        ),
        "date.quote": Entry("({date})", "({date})"),
        "date.undated": Entry("(undated)", "（未注明日期）"),
        "no_tokens": Entry(
            "Say how many tokens you train on (and epochs) to get hours and cost.",
            "告诉我训练多少 token（以及几轮），就能算出时长和费用。",
        ),
        "no_price": Entry(
            "No card that holds this job has a known price.", "放得下这个任务的显卡都没有已知价格。"
        ),
        "no_card": Entry(
            "No card holds this job even on 8 GPUs; see the suggestions.",
            "即使用 8 张GPU也没有显卡放得下这个任务；请看建议。",
        ),
    }
)

# Refusals and notes about names the planner does not know, and run configs it cannot write.
NAMES = Catalog(
    {
        "config.unwritten": Entry(
            "gpuplan does not write {name} configs; the nearest stack it writes is {nearest}",
            "gpuplan 不生成 {name} 配置；最接近的是 {nearest}",
        ),
        "config.unknown_stack": Entry(
            "unknown stack {name!r}: choose one of {stacks}", "不认识的框架 '{name}'：可选 {stacks}"
        ),
        "config.no_objective": Entry(
            "{stack} has no {objective} training{tail}", "{stack} 不支持 {objective} 训练{tail}"
        ),
        "config.nearest_objective": Entry(
            "; the nearest stack that does is {nearest}", "；支持它的最接近的框架是 {nearest}"
        ),
        "config.misfit": Entry(
            "it does not fit: {count}× {gpu} holds {usable:,.1f} GiB per GPU and the job needs "
            "{need:,.1f} GiB{fix}",
            "放不下：{count}× {gpu} 每张GPU有 {usable:,.1f} GiB，任务需要 {need:,.1f} GiB{fix}",
        ),
        "config.misfit_fix": Entry(" (what would fit: {fix})", "（这样能放下：{fix}）"),
        "verl_batch": Entry(
            "verl's {key} {value} is divided by the data-parallel size: {share} per GPU on {gpus} "
            "GPU(s)",
            "verl 的 {key} {value} 会除以数据并行规模：{gpus} 张卡上每张 {share}",
        ),
        "unknown_card": Entry(
            "Unknown card '{name}'; the closest known cards are {nearest}.",
            "不认识的显卡「{name}」；最接近的已知显卡：{nearest}。",
        ),
        "unprofiled_stack": Entry(
            "{name} has no stack profile here: planned as the nearest, {near}",
            "{name} 没有对应的框架配置：按最接近的 {near} 规划",
        ),
    }
)

# Models the catalog knows loosely or not at all (planner/catalog/models.py).
MODELS = Catalog(
    {
        "either": Entry("{head} or {last}", "{head} 或 {last}"),
        "unknown": Entry("unknown model {name!r}{hint}", "不认识的模型「{name}」{hint}"),
        "did_you_mean": Entry("; did you mean {names}?", "；是不是指 {names}？"),
        "give_size": Entry(
            "; give its size (e.g. '{name} 7B') or an HF config.json",
            "；请给出它的大小（例如“{name} 7B”）或 HF config.json",
        ),
        "say_which": Entry(
            "say which model (a name like 'llama 3 8b' or a size like '7B')",
            "请说明是哪个模型（名字如“llama 3 8b”或大小如“7B”）",
        ),
        "checkpoint_of": Entry(
            "{name!r} read as a checkpoint of {base} (its name contains it): planned with its "
            "architecture",
            "「{name}」按 {base} 的检查点读（名字里含有它）：按它的结构规划",
        ),
        "size_as": Entry("{size:g}B read as {model}", "{size:g}B 按 {model} 计"),
        "generic_size": Entry(
            "{size:g}B planned as a generic dense Llama-style model",
            "{size:g}B 按通用稠密 Llama 式模型规划",
        ),
        "not_in_catalog": Entry(
            "{name!r} is not in the catalog: planned as {shape}{known}; give its config.json for "
            "its real shape",
            "「{name}」不在目录里：按 {shape}规划{known}；提供它的 config.json 可按真实结构规划",
        ),
        "shape.dense": Entry(
            "a generic dense Llama-style model of {size_b:.1f}B parameters",
            "{size_b:.1f}B 参数的通用稠密 Llama 式模型",
        ),
        "shape.moe": Entry(
            "a generic mixture of experts of {size_b:.1f}B parameters, {active_b:.1f}B active "
            "(Qwen3-MoE-style, {experts} experts, top-8)",
            "{size_b:.1f}B 参数、激活 {active_b:.1f}B 的通用混合专家模型（Qwen3-MoE 式，{experts} "
            "个专家，top-8）",
        ),
        "known_near": Entry(" (known names near it: {names})", "（相近的已知模型：{names}）"),
        "shares": Entry(
            "{newer} shares {base}'s architecture: planned with its shapes",
            "{newer} 与 {base} 结构相同：按它的结构规划",
        ),
    }
)

# Cards read loosely, Macs, and host RAM (planner/catalog/gpus.py, planner/memory/host.py).
CARDS = Catalog(
    {
        "read_as": Entry(
            "'{name}' read as {card} (also: {others})",
            "「{name}」按 {card} 计（也可能是：{others}）",
        ),
        "apple": Entry(
            "{name} is not a CUDA card: {memory}; bitsandbytes QLoRA, FlashAttention and "
            "DeepSpeed do not run there, so fine-tune with MLX (mlx-lm's LoRA) or PyTorch's MPS "
            "backend. It is not rented by the hour, so no card row is priced for it",
            "{name} 不是 CUDA 显卡：{memory}；bitsandbytes QLoRA、FlashAttention 和 DeepSpeed "
            "不能在上面运行，请用 MLX（mlx-lm 的 LoRA）或 PyTorch 的 MPS 后端微调。它不按小时出租，"
            "所以没有它的价格行",
        ),
        "apple.memory": Entry(
            "its {gb:g} GB is unified memory shared with macOS (the GPU may use about 75 % of it "
            "by default)",
            "它的 {gb:g} GB 是与 macOS 共用的统一内存（GPU 默认约可用 75 %）",
        ),
        "apple.memory_unknown": Entry("its memory is unified memory", "它的内存是统一内存"),
        "host_ram": Entry(
            "needs ≈ {gib:,.0f} GiB of host RAM: {rent}{loading}",
            "需要约 {gib:,.0f} GiB 主机内存：{rent}{loading}",
        ),
        "host_ram.rent": Entry("rent a host with ≥ {gb:,} GB RAM", "请租内存 ≥ {gb:,} GB 的主机"),
        "host_ram.spread": Entry("spread it over more nodes", "请分摊到更多节点"),
        "host_ram.loading": Entry(
            " ({gib:,.0f} GiB of it is the model loaded on the CPU by every process: a "
            "device_map, or FSDP's cpu_ram_efficient_loading, loads it onto the GPUs instead)",
            "（其中 {gib:,.0f} GiB 是每个进程在 CPU 上加载的模型：用 device_map 或 FSDP 的 "
            "cpu_ram_efficient_loading 可直接加载到 GPU）",
        ),
    }
)

# A reported peak the planner doubts (planner/anchor.py).
REPORTS = Catalog(
    {
        "below_weights": Entry(
            "You measured {measured:.1f} GiB, less than the {weights:.1f} GiB this job's {model} "
            "weights need resident ({setup}): did you mean {guess}? Say the method or model, or "
            "'it really peaked at {measured:g} GiB' to use it as is.",
            "你测得 {measured:.1f} GiB，比这个任务 {model} 的权重常驻所需的 {weights:.1f} GiB 还少"
            "（{setup}）：是不是{guess}？请说明方法或模型；若确实如此，请说「确实，实测峰值 "
            "{measured:g} GiB」按原值使用。",
        ),
        "guess.smaller": Entry("a smaller model", "更小的模型"),
        "guess.quantised": Entry(
            "the 4-bit base (QLoRA) or a smaller model", "4 位底座（QLoRA）或更小的模型"
        ),
        "oom_no_card": Entry(
            "an OOM was reported without the card: say which card",
            "报告了显存不足（OOM），但没说是哪张卡：请说明卡型",
        ),
        "oom_scaled": Entry(
            "you ran out of memory on {card}: estimates are scaled ×{scale:.2f} so this job no "
            "longer fits it",
            "你在 {card} 上显存不足：估算已按 ×{scale:.2f} 放大，这个任务不再放得下它",
        ),
        "oom_as_estimated": Entry(
            "you ran out of memory on {card}, as estimated", "你在 {card} 上显存不足，与估算一致"
        ),
        "anchored": Entry(
            "re-anchored on your measured {measured:.1f} GiB ({metric} metric) against our "
            "{estimated:.1f} GiB: every estimate here and in what-ifs is scaled ×{scale:.2f}",
            "已按你实测的 {measured:.1f} GiB（口径：{metric}）重新校准，我们的估算为 "
            "{estimated:.1f} GiB：这里和后续假设中的每个估算都按 ×{scale:.2f} 缩放",
        ),
        # How the peak was read (JobSpec.measured_metric), inside "anchored".
        "metric.allocated": Entry("allocated", "torch 已分配显存"),
        "metric.reserved": Entry("reserved", "torch 已预留显存"),
        "metric.nvidia-smi": Entry("nvidia-smi", "nvidia-smi"),
        "metric.unknown": Entry("unknown", "未说明"),
        "metric.oom": Entry("out of memory", "显存不足（OOM）"),
        "anchored_capped": Entry(
            "{anchored} (capped: ×{ratio:.2f} is more likely another job than our error)",
            "{anchored}（已封顶：×{ratio:.2f} 更可能是另一个任务，而不是我们的误差）",
        ),
        "far_off": Entry(
            "You measured {measured:.1f} GiB where this job is estimated at {estimated:.1f} GiB "
            "(×{ratio:.2f}): was it the same job (model, method, context, batch)? Say what "
            "differed, or 'it really peaked at {measured:g} GiB' to re-anchor on it.",
            "你测得 {measured:.1f} GiB，而这个任务估计为 {estimated:.1f} GiB（×{ratio:.2f}）："
            "是同一个任务吗（模型、方法、上下文、批大小）？请说明哪里不同；若确实如此，请说"
            "「确实，实测峰值 {measured:g} GiB」按它重新校准。",
        ),
    }
)

# What the run produces and how to keep it (planner/market/after_training.py).
AFTER_TRAINING = Catalog(
    {
        "adapter": Entry(
            "The LoRA adapter is about {adapter_mb:,.0f} MB; serve it on the base model or merge "
            "it for a standalone model.",
            "LoRA 适配器约 {adapter_mb:,.0f} MB；可挂在底座模型上推理，或合并成独立模型。",
        ),
        "qlora_merge": Entry(
            "A QLoRA adapter is usually merged into the 16-bit base (load the base in bf16, merge, "
            "save), not into the 4-bit weights; quantise the merged model afterwards if needed.",
            "QLoRA 适配器通常合并进 16 位底座（以 bf16 加载底座、合并、保存），而不是 4 位权重；"
            "需要的话再对合并后的模型量化。",
        ),
        "checkpoints": Entry(
            "This run takes about {hours:.0f} h: marketplace hosts can be reclaimed or fail, so "
            "save checkpoints regularly to storage you control (object storage or the Hub), not "
            "only the instance disk.",
            "这次训练约需 {hours:.0f} 小时：市场上的主机可能被回收或故障，请定期把检查点存到你能"
            "掌控的存储（对象存储或 Hub），不要只存在实例磁盘上。",
        ),
    }
)
