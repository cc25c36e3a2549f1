"""Framework profiles and the memory model's calibrated constants.

Each constant is physical (bytes per element, a fraction of the pool) and was calibrated on
the dev measurements in ../shared/data/vram_dev.jsonl with bench/accuracy.py; see
README.md ("Accuracy") for the figures.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from planner.spec import Framework, Optimizer
from planner.units import GIB as GIB  # re-exported: the memory modules divide by it

# CUDA context + cuBLAS/cuDNN workspaces that nvidia-smi shows but torch does not allocate.
CUDA_CONTEXT_GIB = 0.6
# NCCL communicators and their buffers on every rank of a multi-GPU job.
NCCL_BUFFERS_GIB = 0.4
# The caching allocator's pool above the live tensors, as a fraction of the activations + logits,
# which are freed and re-allocated every step (weights and optimizer state are allocated once and
# pack tightly). Packed rows padded to the cap have one shape, so cached blocks are reused;
# variable-length batches (and packed rows that close below the cap) leave blocks cached at
# earlier sizes that later, larger ones cannot reuse (components.allocator_slack_fraction).
ALLOCATOR_SLACK_PACKED = 0.05
ALLOCATOR_SLACK_VARIABLE_LENGTH = 0.2
# With checkpointing, backward holds the saved tensors of the one layer it recomputes (their
# gradients reuse blocks freed as it goes).
RECOMPUTED_LAYERS = 1.0
# DeepSpeed ZeRO-2 allocates a contiguous 16-bit gradient bucket of reduce_bucket_size elements
# every backward (stage_1_and_2.py, contiguous_gradients): 5e8 is DeepSpeed's default and
# LLaMA-Factory's ds_z2_config.json value.
ZERO2_REDUCE_BUCKET_ELEMENTS = 5e8
# ZeRO-3 buckets as HF's "auto" config fills them (transformers integrations/deepspeed.py; the
# ZeRO-3 configs of LLaMA-Factory and axolotl use "auto"): reduce_bucket_size = h²,
# stage3_prefetch_bucket_size = 0.9·h² (16-bit elements).
ZERO3_REDUCE_BUCKET_PER_HIDDEN_SQUARED = 1.0
ZERO3_PREFETCH_BUCKET_PER_HIDDEN_SQUARED = 0.9
# ZeRO-3 steps its optimizer one sub-group at a time (sub_group_size, default 1e9 elements),
# converting that sub-group's gradients to fp32 first.
ZERO3_SUB_GROUP_ELEMENTS = 1e9
# FSDP keeps at most two units gathered (the current one and the prefetched next: forward and
# backward prefetch, limit_all_gathers=True).
FSDP_UNITS_IN_FLIGHT = 2
# In backward, one unit's unsharded gradient: a unit's reduce-scatter (tens of ms) ends long
# before the next unit's backward (with its recompute) has produced its full gradient.
FSDP_UNSHARDED_GRADIENT_UNITS = 1
# Korthikanti et al. (2022): a materialised attention stores ~5 bytes per score element
# (16-bit scores, 16-bit softmax output, 1-byte dropout mask) per head and per query·key pair.
EAGER_ATTENTION_BYTES_PER_SCORE = 5.0


# eq=False: a profile is one of the named constants below (PROFILES), which the memory
# components tell apart by identity (`job.profile is TORCHTUNE_PROFILE`); hashing a cached
# estimate's key by identity also skips walking every field of the profile on each lookup.
@dataclass(frozen=True, slots=True, eq=False)
class FrameworkProfile:
    """How a training stack spends memory where stacks differ.

    logits_bytes_per_entry: bytes held per token × vocabulary entry at the loss's peak
        (16-bit logits, fp32 upcast, log-softmax and its gradient; less when the loss is fused
        or chunked).
    norm_input_bytes_per_hidden: what one RMSNorm/LayerNorm saves per hidden unit (4 = the fp32
        upcast eager PyTorch norms keep; 2 = a fused kernel keeping the 16-bit input).
    gated_mlp_saved_tensors: 16-bit tensors of intermediate width a SwiGLU/GeGLU block saves
        besides the down projection's input (gate, up, activation = 3 in eager PyTorch; 2 with
        a fused kernel that recomputes the activation).
    loss_chunk_tokens: a fused/chunked loss materialises the logits of this many tokens at a
        time (None: all of them).
    loss_sized_by_free_memory: on a known card the fused loss sizes its chunks from the memory it
        finds free at the first forward (planner.estimate.memory.components.card_sized_loss_bytes;
        Unsloth's fused cross-entropy); loss_chunk_tokens is its size where no card is named.
    offloads_checkpoints: with checkpointing, the layer inputs live in host RAM unless the job
        says otherwise (Unsloth's use_gradient_checkpointing="unsloth"): the default of
        JobSpec.activation_offloading.
    lora_dropout: LoRA dropout is on (PEFT/LitGPT recipes use 0.05–0.1): each adapted input is
        copied (16-bit) with a 1-byte mask for backward.
    kbit_embeddings_fp32: PEFT's prepare_model_for_kbit_training upcasts the 16-bit
        embeddings/lm_head/norms of a bitsandbytes model to fp32.
    adapter_bytes: storage of LoRA weights (PEFT keeps adapters in fp32; bf16-true stacks don't).
    nf4_extra_bytes_per_weight: what NF4 training through this stack holds beyond the packed
        weights (calibrated). LitGPT's NF4 runs (Lightning's bitsandbytes plugin) sit ≈ 0.25 B
        per weight above them on every published row, 1B to 13B; HF/PEFT's NF4 rows do not
        (and the QLoRA paper fits 65B on one 48 GB card), so the HF profile has none.
    double_quant: NF4 block constants are themselves quantised (QLoRA's recipe).
    fsdp_gathers_full_model: under FSDP every rank at some point holds the whole 16-bit model
        (LitGPT consolidates a full checkpoint; its measured multi-GPU peaks include it).
    optimizer_in_backward_single_gpu: the full fine-tune recipe steps each parameter as its
        gradient arrives, so gradients never all exist at once (torchtune single-device).
    optimizer_in_backward_with: the optimizer the recipe fuses into backward. torchtune's
        single-device full configs (0.3–0.5, recipes/configs/llama3_1/8B_full_single_device.yaml
        and the 1B/3B/8B twins) pair `optimizer_in_bwd: True` with bitsandbytes' PagedAdamW8bit;
        a job naming another optimizer has changed the config, and the README's memory table
        ("fuse optimizer step into backward" as a row of its own, after AdamW rows) shows that
        step is then a separate choice, so it is not assumed.
    recompute_holds_mlp_gradients: backward of the recomputed layer holds the gradients of its
        MLP intermediates (d gate, d up) beside its saved tensors
        (planner.estimate.memory.components.recomputed_mlp_gradient_bytes). Unsloth's published
        context table (QLoRA, Llama 3.1 8B: 78,475 tokens on 24 GB, 342,733 on 80 GB) grows
        ≈ 212 KB per token: one recomputed layer's saved tensors count 139 KB, and the 57 KB of
        its gated MLP's two gradients (2 × 14,336 × 2 B) close most of the gap; the calibrated
        HF-family rows hold no such extra (their allocator reuses blocks freed as backward goes).
    trl_preference_log_probs: the preference trainers (DPO, ORPO, CPO/SimPO, KTO) pass the
        policy no labels, so the model returns its logits in the compute dtype with no fp32
        copy, and per-token log-probs come from them through TRL's selective_log_softmax
        (`components.preference_logits_bytes_per_entry`). Stacks on TRL's trainers have it
        (ms-swift and axolotl subclass them); False = the stack's own path, which its SFT loss
        figure stands for (LLaMA-Factory's CustomDPOTrainer casts the logits to fp32 first).
    loads_onto_gpu: the stack loads the checkpoint straight onto the GPU (a device_map, or
        lazily mmapped tensors copied one at a time), so host RAM never holds the whole model
        (planner.estimate.memory.host.loading_bytes). TRL and HF Trainer call from_pretrained
        without one and move the model afterwards; torchtune reads the full state dict on the CPU.
    recipe_global_batch: sequences per optimizer step in the recipe when the job does not say
        how much it accumulates (None: one micro-batch per step, HF Trainer's
        gradient_accumulation_steps=1 and torchtune's full single-device configs). LitGPT's
        finetune/full.py and lora.py default to global_batch_size 16 over micro_batch_size 1
        (litgpt 0.4, TrainArgs): 16 / (GPUs × micro-batch) micro-batches per step, so its
        gradients stay alive through every backward but the first.
    fused_adamw: the recipe's AdamW is torch's fused kernel (`fused: True`), which updates in
        place with no multi-tensor scratch (torchtune's configs, every AdamW entry).
    fsdp_upcasts_trainable_fp32: under FSDP with bf16/fp16 mixed precision the trained
        parameters are held in fp32 and gathered in 16 bits (Accelerate ≥ 0.30 upcasts
        low-precision trainable flat parameters, "following DeepSpeed's strategy"; HF Trainer
        and the stacks built on it). Pure-bf16 stacks (torchtune, LitGPT) shard bf16.
    fsdp_shards_embeddings_separately: the embeddings and output projection are FSDP units of
        their own, gathered only while used (torchtune's `custom_sharded_layers:
        ['tok_embeddings', 'output']`), instead of staying gathered in the root unit.
    mixed_keeps_frozen_fp32: in bf16/fp16-mixed, a LoRA job's frozen base is held in fp32 like
        a full fine-tune's weights (Fabric's "bf16-mixed" keeps every parameter in fp32: LitGPT's
        measured LoRA rows). HF-based stacks load the base in the compute dtype when bf16 is set
        (LLaMA-Factory/axolotl/ms-swift `torch_dtype`, TRL's model_init_kwargs) and PEFT upcasts
        only the adapters, so their frozen base stays 16-bit.
    fsdp2_keeps_param_dtype: under FSDP2 the trained parameters are sharded in the dtype they
        were loaded in (bf16), with no fp32 upcast: axolotl's own fsdp2_prepare_model (axolotl
        0.19 monkeypatch/accelerate/fsdp2.py, which replaces Accelerate's) upcasts nothing and
        passes MixedPrecisionPolicy() (no casts) unless fsdp_config.mixed_precision_policy is
        set. Accelerate's fsdp2_prepare_model (1.16, utils/fsdp_utils.py) upcasts trainable
        parameters to fp32 when mixed precision is on, as its FSDP1 path does
        (`fsdp_upcasts_trainable_fp32`).
    fsdp2_qlora_loads_whole_model: a QLoRA job under FSDP2 loads the whole quantised model onto
        every rank's GPU before fully_shard shards it: axolotl 0.19 loaders/model.py sets
        device_map {"": LOCAL_RANK} for QLoRA with FSDP, and fsdp2_prepare_model keeps bitsandbytes
        models off the meta device ("bypassing the move to meta will still cause the VRAM
        spike") while `original_sd = model.state_dict()`, taken before fully_shard, holds every
        unsharded tensor until it returns (`placement.loading_floor_bytes`).
    packed_rows_one_length: packing pads every packed row to the cap, so each step allocates the
        same shapes and the caching allocator reuses its blocks (ALLOCATOR_SLACK_PACKED); False
        where packed rows close below the cap and are not padded to it, so their length varies
        step to step like unpacked batches (`components.allocator_slack_fraction`).
    """

    name: str
    logits_bytes_per_entry: float
    norm_input_bytes_per_hidden: float
    gated_mlp_saved_tensors: int
    offloads_checkpoints: bool
    loss_chunk_tokens: int | None
    lora_dropout: bool
    kbit_embeddings_fp32: bool
    adapter_bytes: int
    nf4_extra_bytes_per_weight: float
    double_quant: bool
    fsdp_gathers_full_model: bool
    optimizer_in_backward_single_gpu: bool
    optimizer_in_backward_with: Optimizer | None = None
    recipe_global_batch: int | None = None
    fused_adamw: bool = False
    fsdp_upcasts_trainable_fp32: bool = True
    fsdp_shards_embeddings_separately: bool = False
    mixed_keeps_frozen_fp32: bool = False
    loads_onto_gpu: bool = False
    recompute_holds_mlp_gradients: bool = False
    trl_preference_log_probs: bool = False
    loss_sized_by_free_memory: bool = False
    packed_rows_one_length: bool = True
    fsdp2_keeps_param_dtype: bool = False
    fsdp2_qlora_loads_whole_model: bool = False


HF = FrameworkProfile(
    name="HF Trainer + PEFT",
    # transformers' loss: 16-bit logits kept in the output, fp32 log-softmax, its fp32 gradient
    # and the 16-bit gradient of the logits: 2 + 4 + 4 + 2.
    logits_bytes_per_entry=12.0,
    norm_input_bytes_per_hidden=4.0,
    gated_mlp_saved_tensors=3,
    offloads_checkpoints=False,
    loss_chunk_tokens=None,
    lora_dropout=True,
    kbit_embeddings_fp32=True,
    adapter_bytes=4,
    nf4_extra_bytes_per_weight=0.0,
    double_quant=True,
    fsdp_gathers_full_model=False,
    optimizer_in_backward_single_gpu=False,
    trl_preference_log_probs=True,
    # Packing on the HF path closes a row below the cap and does not pad it there: TRL's
    # default "bfd" packing (trl 1.16 data_utils.pack_dataset: bins of at most seq_length) and
    # transformers' DataCollatorWithFlattening; ArcticTraining's SFT data (the ALST recipes)
    # closes a row when the next sample would pass max_length (always_max_length=False) and
    # pads to a multiple of 256 (pad_to="div_length"; arctic_training 0.8
    # data/sft_factory.py).
    packed_rows_one_length=False,
)

# torchtune is also the `chunked` loss kernel's source (planner.estimate.memory.components), so
# it is named.
TORCHTUNE = replace(
    HF,
    name="torchtune",
    # Chunked cross-entropy (CEWithChunkedOutputLoss): bf16 logits kept, one of 8 chunks upcast
    # to fp32 at a time. By count (architectures-2026.md §5.2) 2 + 4/8 + 2 = 4.5 B per token ×
    # vocabulary entry with the whole bf16 gradient alive; its README memory table measures the
    # switch from stock cross-entropy at 2 × 4,096 tokens × 128,256 (1.05e9 entries) as 51.0 →
    # 42.9 GiB, 8.3 B per entry under stock's 12, ≈ 3.7. Calibrated at 4.0 on its README rows:
    # each chunk's gradient is made and consumed by the output projection in turn.
    logits_bytes_per_entry=4.0,
    lora_dropout=False,
    kbit_embeddings_fp32=False,
    adapter_bytes=2,
    double_quant=False,
    optimizer_in_backward_single_gpu=True,
    optimizer_in_backward_with=Optimizer.paged_adamw_8bit,
    fused_adamw=True,
    # FSDP2 in pure bf16; its distributed configs list custom_sharded_layers
    # ['tok_embeddings', 'output'] (recipes/configs/llama3_1/*.yaml, torchtune ≥ 0.3).
    fsdp_upcasts_trainable_fp32=False,
    fsdp_shards_embeddings_separately=True,
    trl_preference_log_probs=False,  # its own DPO recipe
    # PackedDataset pads every pack to max_seq_len (torchtune datasets/_packed.py).
    packed_rows_one_length=True,
)

# Every other stack is HF with the fields where it differs, so each entry reads as a diff.
PROFILES: dict[Framework, FrameworkProfile] = {
    Framework.hf: HF,
    Framework.axolotl: replace(
        HF,
        name="axolotl",
        # Its loader runs PEFT's prepare_model_for_kbit_training and then casts every "norm"
        # module and the embeddings/lm_head back to the bf16/fp16 torch_dtype for LoRA/QLoRA
        # outside QLoRA-with-FSDP ("LlamaRMSNorm layers are in fp32 after kbit_training ... convert
        # them back to fp16/bf16 for flash-attn compatibility": axolotl 0.19
        # loaders/model.py _configure_embedding_dtypes), so nothing stays fp32.
        kbit_embeddings_fp32=False,
        # sample_packing sets pad_to_sequence_len: true when unset, "to prevent memory leaks"
        # (axolotl 0.19 utils/schemas/validation.py hint_sample_packing_padding).
        packed_rows_one_length=True,
        fsdp2_keeps_param_dtype=True,
        fsdp2_qlora_loads_whole_model=True,
    ),
    Framework.llama_factory: replace(
        HF,
        name="LLaMA-Factory",
        # Its LoRA defaults to lora_dropout 0.0, and its QLoRA path does not call PEFT's
        # prepare_model_for_kbit_training (embeddings stay 16-bit; norms are upcast only with
        # upcast_layernorm, off by default): hparams/finetuning_args.py, model/adapter.py.
        lora_dropout=False,
        kbit_embeddings_fp32=False,
        # Outside ZeRO-3/FSDP it loads with device_map={"": current device} (hparams/parser.py).
        loads_onto_gpu=True,
        # train/dpo/trainer.py concatenated_forward: `.logits.to(torch.float32)`, then a full
        # log_softmax (get_batch_logps): its SFT loss figure stands.
        trl_preference_log_probs=False,
        # Packed rows are padded to cutoff_len (llamafactory 0.9.5
        # data/processor/supervised.py, "avoid flash_attn drops attn mask").
        packed_rows_one_length=True,
    ),
    Framework.ms_swift: replace(
        HF,
        name="ms-swift",
        # Its published 2024 benchmarks ran the transformers < 4.46 loss path: the logits upcast to
        # fp32 in the forward and returned, a shifted fp32 copy, fp32 log-softmax and gradients
        # (≈ 22 B by count); calibrated on those reserved-memory tables, whose multi-GB blocks
        # the allocator rounds up. Releases from 3.1 require transformers ≥ 4.46, whose
        # model-level loss is HF's figure: the versioned `loss_kernel` fact in
        # planner/data/stack-ms-swift.json.
        logits_bytes_per_entry=28.0,
        loads_onto_gpu=True,  # device_map="auto"
        # Packing bins samples up to packing_length (default max_length) and turns on
        # padding_free (ms-swift 4.6 swift/dataset/packing.py): rows close below the cap.
        packed_rows_one_length=False,
    ),
    Framework.unsloth: replace(
        HF,
        name="Unsloth",
        # fused cross-entropy: fp32 logits of one chunk of tokens at a time.
        logits_bytes_per_entry=4.0,
        loss_chunk_tokens=1024,
        loss_sized_by_free_memory=True,
        norm_input_bytes_per_hidden=2.0,
        gated_mlp_saved_tensors=2,
        offloads_checkpoints=True,
        lora_dropout=False,
        kbit_embeddings_fp32=False,
        loads_onto_gpu=True,  # FastLanguageModel.from_pretrained's device_map="sequential"
        recompute_holds_mlp_gradients=True,
        trl_preference_log_probs=False,  # patches TRL's trainers with its chunked loss
    ),
    Framework.torchtune: TORCHTUNE,
    # TRL is the HF Trainer + PEFT path; its own defaults (chunked_nll loss for full fine-tuning,
    # GRPO's vLLM fraction) are versioned facts in planner/data/stack-trl.json.
    Framework.trl: replace(
        HF,
        name="TRL",
        # SFTTrainer wraps a k-bit model with get_peft_model and casts its adapters to bf16, but
        # never calls PEFT's prepare_model_for_kbit_training (trl 1.16 trainer/sft_trainer.py;
        # only the experimental ORPO/CPO trainers do), so embeddings and norms stay 16-bit.
        kbit_embeddings_fp32=False,
    ),
    # verl and OpenRLHF load HF models under FSDP / DeepSpeed; their log-prob kernels (no full
    # fp32 [tokens × vocabulary]) are the loss kernel their data files name.
    # Neither runs TRL's preference trainers (trl_preference_log_probs).
    Framework.verl: replace(HF, name="verl", trl_preference_log_probs=False),
    Framework.openrlhf: replace(HF, name="OpenRLHF", trl_preference_log_probs=False),
    Framework.litgpt: replace(
        HF,
        name="LitGPT",
        # chunked cross-entropy in bf16: logits, log-softmax and their two gradients, 2 B each.
        logits_bytes_per_entry=8.0,
        kbit_embeddings_fp32=False,
        adapter_bytes=2,
        nf4_extra_bytes_per_weight=0.25,
        double_quant=False,
        fsdp_gathers_full_model=True,
        recipe_global_batch=16,
        # Fabric's FSDP with precision "bf16-true" shards bf16 parameters.
        fsdp_upcasts_trainable_fp32=False,
        mixed_keeps_frozen_fp32=True,
        loads_onto_gpu=True,  # fabric.load_raw: lazily mmapped tensors copied one at a time
        trl_preference_log_probs=False,  # no DPO recipe
        packed_rows_one_length=True,  # no packing in its recipes: as before
    ),
}
