"""Framework profiles and the memory model's calibrated constants.

Each constant is physical (bytes per element, a fraction of the pool) and was calibrated on
the dev measurements in ../shared/data/vram_dev.jsonl with bench/accuracy.py; see
docs/readme/A.md for the figures.
"""

from __future__ import annotations

from dataclasses import dataclass

from planner.spec import Framework

GIB = float(2**30)

# CUDA context + cuBLAS/cuDNN workspaces that nvidia-smi shows but torch does not allocate.
CUDA_CONTEXT_GIB = 0.6
# NCCL communicators and their buffers on every rank of a multi-GPU job.
NCCL_BUFFERS_GIB = 0.4
# The caching allocator's pool above the live tensors (fragmentation of activation-sized blocks),
# as a fraction of the activations + logits, which churn every step; weights and optimizer state
# are allocated once and pack tightly.
ALLOCATOR_SLACK_FRACTION = 0.25
# Korthikanti et al. (2022): a materialised attention stores ~5 bytes per score element
# (16-bit scores, 16-bit softmax output, 1-byte dropout mask) per head and per query·key pair.
EAGER_ATTENTION_BYTES_PER_SCORE = 5.0


@dataclass(frozen=True, slots=True)
class FrameworkProfile:
    """How a training stack spends memory where stacks differ.

    logits_bytes_per_entry: bytes held per token × vocabulary entry at the loss's peak
        (16-bit logits, fp32 upcast, log-softmax and its gradient; less when the loss is fused
        or chunked).
    norm_input_bytes_per_hidden: what one RMSNorm/LayerNorm saves per hidden unit (4 = the fp32
        upcast eager PyTorch norms keep; 2 = a fused kernel keeping the 16-bit input).
    gated_mlp_saved_tensors: 16-bit tensors of intermediate width a SwiGLU/GeGLU block saves
        (gate, up, activation, product = 4 in eager PyTorch; 2 with a fused kernel).
    offloads_checkpoints: checkpointed layer inputs live in host RAM (Unsloth).
    kbit_embeddings_fp32: PEFT's prepare_model_for_kbit_training upcasts the 16-bit
        embeddings/lm_head/norms of a bitsandbytes model to fp32.
    adapter_bytes: storage of LoRA weights (PEFT keeps adapters in fp32; bf16-true stacks don't).
    double_quant: NF4 block constants are themselves quantised (QLoRA's recipe).
    optimizer_in_backward_single_gpu: the full fine-tune recipe steps each parameter as its
        gradient arrives, so gradients never all exist at once (torchtune single-device).
    """

    name: str
    logits_bytes_per_entry: float
    norm_input_bytes_per_hidden: float
    gated_mlp_saved_tensors: int
    offloads_checkpoints: bool
    kbit_embeddings_fp32: bool
    adapter_bytes: int
    double_quant: bool
    optimizer_in_backward_single_gpu: bool


HF = FrameworkProfile(
    name="HF Trainer + PEFT",
    logits_bytes_per_entry=16.0,
    norm_input_bytes_per_hidden=4.0,
    gated_mlp_saved_tensors=4,
    offloads_checkpoints=False,
    kbit_embeddings_fp32=True,
    adapter_bytes=4,
    double_quant=True,
    optimizer_in_backward_single_gpu=False,
)

PROFILES: dict[Framework, FrameworkProfile] = {
    Framework.hf: HF,
    Framework.axolotl: HF,
    Framework.llama_factory: HF,
    Framework.ms_swift: HF,
    Framework.unsloth: FrameworkProfile(
        name="Unsloth",
        logits_bytes_per_entry=4.0,
        norm_input_bytes_per_hidden=2.0,
        gated_mlp_saved_tensors=2,
        offloads_checkpoints=True,
        kbit_embeddings_fp32=False,
        adapter_bytes=4,
        double_quant=True,
        optimizer_in_backward_single_gpu=False,
    ),
    Framework.torchtune: FrameworkProfile(
        name="torchtune",
        logits_bytes_per_entry=4.0,
        norm_input_bytes_per_hidden=4.0,
        gated_mlp_saved_tensors=4,
        offloads_checkpoints=False,
        kbit_embeddings_fp32=False,
        adapter_bytes=2,
        double_quant=False,
        optimizer_in_backward_single_gpu=True,
    ),
    Framework.litgpt: FrameworkProfile(
        name="LitGPT",
        logits_bytes_per_entry=8.0,
        norm_input_bytes_per_hidden=4.0,
        gated_mlp_saved_tensors=4,
        offloads_checkpoints=False,
        kbit_embeddings_fp32=False,
        adapter_bytes=2,
        double_quant=False,
        optimizer_in_backward_single_gpu=False,
    ),
}
