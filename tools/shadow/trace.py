"""Run two real optimizer steps of one job on fake tensors and read its allocation trace.

The model is the real transformers modeling code, built from the row's config.json on the meta
device and materialised with `to_empty` inside FakeTensorMode (random init on a fake device would
need the real one); PEFT's LoRA takes the same route. Each step is what HF Trainer + TRL run for
one micro-batch with gradient_accumulation_steps=1: forward (under bf16 autocast unless fp32:
HF Trainer's bf16=True autocasts whatever dtype the weights were loaded in), the loss, backward,
optimizer.step(), zero_grad(set_to_none=True).

Heavy imports happen inside `run_trace`: this module is imported only by the shadow CLI.
"""

from __future__ import annotations

import contextlib
from typing import Any

# JobSpec lora_targets → the nn.Linear names of Llama-style decoders (PEFT target_modules).
TARGET_MODULES = {
    "q": "q_proj",
    "k": "k_proj",
    "v": "v_proj",
    "o": "o_proj",
    "gate": "gate_proj",
    "up": "up_proj",
    "down": "down_proj",
}
# PEFT's LoRA dropout in the HF stack's recipes (the planner's HF profile assumes it on).
LORA_DROPOUT = 0.05
# torchtune's CEWithChunkedOutputLoss: the bf16 logits split in 8 chunks, each upcast in turn.
CHUNKED_CE_CHUNKS = 8
DPO_BETA = 0.1
LOSS_IMPLS = {
    "hf": "transformers ForCausalLMLoss (model(labels=...))",
    "chunked": "torchtune-style CEWithChunkedOutputLoss in PyTorch (8 chunks)",
    "liger": "TRL add_fused_lm_head (chunked log-probs, fused_lm_head=True)",
}
SDPA_KERNELS = {
    "_scaled_dot_product_flash_attention_for_cpu": "sdpa-flash-cpu",
    "_scaled_dot_product_efficient_attention": "sdpa-efficient",
    "_scaled_dot_product_flash_attention": "sdpa-flash",
}


class SkipConfig(Exception):
    """The config cannot be built or run here (unknown architecture, impossible shape)."""


def versions() -> dict[str, str]:
    import peft
    import torch
    import transformers
    import trl

    return {
        "torch": torch.__version__,
        "transformers": transformers.__version__,
        "peft": peft.__version__,
        "trl": trl.__version__,
    }


def build_config(arch: dict[str, Any], attention: str):
    from transformers import AutoConfig

    fields = dict(arch)
    model_type = fields.pop("model_type", None)
    if not model_type:
        raise SkipConfig("arch has no model_type")
    try:
        config = AutoConfig.for_model(model_type, **fields)
    except (ValueError, KeyError, TypeError) as exc:
        raise SkipConfig(f"transformers cannot build {model_type!r}: {exc}") from exc
    config._attn_implementation = attention
    config.use_cache = False
    return config


def _meta_model(config, dtype):
    import torch
    from transformers import AutoModelForCausalLM

    with torch.device("meta"):
        try:
            return AutoModelForCausalLM.from_config(config, dtype=dtype)
        except (ValueError, KeyError, TypeError, RuntimeError, AttributeError) as exc:
            raise SkipConfig(f"cannot build the model: {exc}") from exc


def count_params(arch: dict[str, Any], spec: dict[str, Any]) -> int:
    """Parameters transformers builds from `arch` (on the meta device: no memory)."""
    import torch

    model = _meta_model(build_config(arch, spec.get("attention") or "sdpa"), torch.bfloat16)
    return sum(p.numel() for p in model.parameters())


def _final_norm(model):
    """The decoder's last norm: everything after it is the LM head and the loss."""
    backbone = model.get_base_model() if hasattr(model, "get_base_model") else model
    inner = backbone.get_decoder() if hasattr(backbone, "get_decoder") else backbone.model
    for name in ("norm", "final_layernorm", "ln_f"):
        if hasattr(inner, name):
            return getattr(inner, name)
    raise SkipConfig(f"no final norm found on {type(inner).__name__}")


def loss_fn_for(spec: dict[str, Any], model):
    """loss(model, input_ids) for the job's objective and loss kernel."""
    import torch
    import torch.nn.functional as F

    kernel = spec.get("loss_kernel") or "hf"
    objective = spec.get("objective") or "sft"

    def sft(model, ids):
        if kernel == "hf":
            return model(input_ids=ids, labels=ids).loss
        if kernel == "liger":  # TRL's fused LM head: chunked log-probs, no full logits
            return model(input_ids=ids, labels=ids, fused_lm_head=True).loss
        # chunked: torchtune's CEWithChunkedOutputLoss (pure PyTorch), bf16 logits kept
        backbone = model.get_base_model() if hasattr(model, "get_base_model") else model
        hidden = backbone.model(input_ids=ids).last_hidden_state
        logits = backbone.lm_head(hidden[:, :-1]).chunk(CHUNKED_CE_CHUNKS, dim=1)
        labels = ids[:, 1:].chunk(CHUNKED_CE_CHUNKS, dim=1)
        total = sum(
            F.cross_entropy(c.float().reshape(-1, c.size(-1)), t.reshape(-1), reduction="sum")
            for c, t in zip(logits, labels, strict=True)
        )
        return total / ids[:, 1:].numel()

    if objective == "sft":
        return sft
    if objective != "dpo":
        raise SkipConfig(f"objective {objective!r} is not traced")

    def logps(m, ids):
        # get_batch_logps as TRL and LLaMA-Factory write it: fp32 logits, log-softmax, gather.
        logits = m(input_ids=ids).logits.to(torch.float32)
        per_token = torch.gather(logits[:, :-1].log_softmax(-1), 2, ids[:, 1:, None])
        return per_token.squeeze(2).sum(-1), logits

    def dpo(model, ids, reference=None):
        # Chosen and rejected rows concatenated ([2B, T]). TRL's order: the reference's
        # log-probs first, without grad, from a frozen copy (full) or the base with the adapters
        # off (LoRA); then the policy, whose logits the logged metrics read.
        with torch.no_grad():
            if reference is not None:
                ref, _ = logps(reference, ids)
            else:
                with model.disable_adapter():
                    ref, _ = logps(model, ids)
        policy, logits = logps(model, ids)
        half = ids.size(0) // 2
        ratio = (policy[:half] - ref[:half]) - (policy[half:] - ref[half:])
        loss = -F.logsigmoid(DPO_BETA * ratio).mean()
        del logits  # read by the metrics; gone with the step's outputs before backward
        return loss

    return dpo


def optimizer_for(spec: dict[str, Any], params):
    import torch

    name = spec.get("optimizer") or "adamw"
    impl = spec.get("_optimizer_impl", "foreach")
    if name == "adamw":
        kwargs = {"fused": True} if impl == "fused" else {"foreach": True}
        optimizer = torch.optim.AdamW(params, lr=1e-5, **kwargs)
    elif name == "sgd":
        optimizer = torch.optim.SGD(params, lr=1e-5, momentum=0.9, foreach=True)
        impl = "foreach, momentum 0.9"
    else:
        raise SkipConfig(f"optimizer {name!r} has no CPU path under fake tensors")
    optimizer._shadow_impl = f"torch.optim.{type(optimizer).__name__} ({impl})"
    return optimizer


def with_lora(model, spec: dict[str, Any]):
    """PEFT's LoRA on the job's targets (created on the device the caller sets): "all-linear"
    as PEFT reads it (every nn.Linear but the LM head, fused q/k/v or gate/up projections
    included), named targets only where the model has those modules."""
    from peft import LoraConfig, get_peft_model

    targets = spec.get("lora_targets") or "all-linear"
    names: str | list[str] = "all-linear"
    if targets != "all-linear":
        names = [TARGET_MODULES[t] for t in targets]
        present = {name.rsplit(".", 1)[-1] for name, _ in model.named_modules()}
        if missing := sorted(set(names) - present):
            raise SkipConfig(f"no {', '.join(missing)} modules (fused projections)")
    lora = LoraConfig(
        r=spec["lora_rank"],
        lora_alpha=spec.get("lora_alpha") or 2 * spec["lora_rank"],
        lora_dropout=LORA_DROPOUT,
        target_modules=names,
        task_type="CAUSAL_LM",
    )
    try:
        return get_peft_model(model, lora)
    except ValueError as exc:
        raise SkipConfig(f"PEFT cannot wrap it: {exc}") from exc


@contextlib.contextmanager
def cuda_dropout():
    """Dropout as CUDA runs it. On CPU, F.dropout multiplies by a mask in the input's dtype (an
    fp32 adapter input keeps a 4-byte mask); on CUDA the fused native_dropout keeps a bool one,
    and that is the kernel the planner's jobs run."""
    import torch
    import torch.nn.functional as F

    plain = F.dropout

    def dropout(input, p=0.5, training=True, inplace=False):
        if not training or p == 0.0:
            return input
        if inplace:
            return plain(input, p, training, inplace)
        return torch.native_dropout(input, p, True)[0]

    F.dropout = dropout
    try:
        yield
    finally:
        F.dropout = plain


@contextlib.contextmanager
def one_sequence_per_row():
    """Each row is one sequence of seq_len tokens. transformers reads the position ids to find
    packed sequences, which it cannot on fake tensors (no values): it would assume packing and
    hand SDPA an s×s mask (copied to the compute dtype in every layer) instead of is_causal=True,
    which a real run without padding gets."""
    from transformers import masking_utils

    plain = masking_utils.find_packed_sequence_indices
    masking_utils.find_packed_sequence_indices = lambda position_ids: None
    try:
        yield
    finally:
        masking_utils.find_packed_sequence_indices = plain


def run_trace(spec: dict[str, Any], arch: dict[str, Any], steps: int = 2) -> dict[str, Any]:
    """The shadow block of a dataset row: peak live bytes, its breakdown and phase."""
    import torch
    from torch._subclasses.fake_tensor import FakeTensorMode

    from tools.shadow.live_bytes import LiveBytes

    method = spec["method"]
    precision = spec.get("precision") or "bf16-mixed"
    if method not in ("full", "lora"):
        raise SkipConfig(f"method {method!r} needs CUDA-only kernels (bitsandbytes)")
    attention = spec.get("attention") or "sdpa"
    config = build_config(arch, attention)
    fp32_weights = precision == "fp32" or (method == "full" and precision == "bf16-mixed")
    dtype = torch.float32 if fp32_weights else torch.bfloat16
    autocast = precision != "fp32"

    model = _meta_model(config, dtype)
    if spec.get("loss_kernel") == "liger":
        from trl.trainer.utils import add_fused_lm_head

        add_fused_lm_head(model)
    if method == "lora":
        with torch.device("meta"):
            model = with_lora(model, spec)
    reference = None
    if spec.get("objective") == "dpo" and method == "full":
        # The reference is loaded in the compute dtype (TRL create_reference_model / a second
        # from_pretrained with the same torch_dtype).
        reference = _meta_model(config, dtype if precision == "fp32" else torch.bfloat16)
    if spec.get("gradient_checkpointing"):
        # HF's default (transformers 5): non-reentrant checkpointing of each decoder layer.
        model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
    model.train()

    tracker = LiveBytes()
    # to_empty reads the meta parameters (real meta tensors, not fakes) for their shapes.
    fake = FakeTensorMode(allow_non_fake_inputs=True)
    batch = spec["micro_batch"] * (2 if spec.get("objective") == "dpo" else 1)
    seq = spec["seq_len"]
    loss_fn = loss_fn_for(spec, model)
    norm = _final_norm(model)

    def into_loss(_module, _inputs, output):
        tracker.category = "logits"
        if output.requires_grad:
            output.register_hook(lambda grad: setattr(tracker, "category", "activations"))

    with fake:
        for module in (model, reference):
            if module is not None:
                module.to_empty(device="cpu")
                # to_empty makes one tensor per module slot: tie the embeddings back.
                module.tie_weights()
    if reference is not None:
        reference.eval().requires_grad_(False)
    trainable = [p for p in model.parameters() if p.requires_grad]
    for tensor in [*model.parameters(), *model.buffers()]:
        tracker.track(tensor, "parameters")
    if reference is not None:
        for tensor in [*reference.parameters(), *reference.buffers()]:
            tracker.track(tensor, "parameters")
    for p in trainable:
        p.register_post_accumulate_grad_hook(lambda p: tracker.track(p.grad, "gradients"))
    norm.register_forward_hook(into_loss)
    model.get_input_embeddings().register_forward_pre_hook(
        lambda _module, _inputs: setattr(tracker, "category", "activations")
    )
    optimizer = optimizer_for(spec, trainable)
    cast = torch.autocast("cpu", dtype=torch.bfloat16) if autocast else contextlib.nullcontext()
    with fake, tracker, cuda_dropout(), one_sequence_per_row():
        ids = torch.randint(0, config.get_text_config().vocab_size, (batch, seq))
        for step in range(1, steps + 1):
            tracker.phase, tracker.category = f"step {step}: forward", "activations"
            with cast:
                loss = (
                    loss_fn(model, ids, reference) if reference is not None else loss_fn(model, ids)
                )
            tracker.phase, tracker.category = f"step {step}: backward", "logits"
            loss.backward()
            del loss
            tracker.phase, tracker.category = f"step {step}: optimizer", "temporaries"
            optimizer.step()
            for state in optimizer.state.values():
                for value in state.values():
                    if isinstance(value, torch.Tensor) and value.dim() > 0:
                        tracker.track(value, "optimizer")
            optimizer.zero_grad(set_to_none=True)
    kernels = sorted({SDPA_KERNELS[op] for op in tracker.ops if op in SDPA_KERNELS})
    if not kernels:
        kernels = ["sdpa-math" if "_scaled_dot_product_attention_math" in tracker.ops else "eager"]
    return {
        "peak_allocated_gib": round(tracker.peak / 2**30, 4),
        "by_category_gib": tracker.peak_by_category_gib(),
        "peak_phase": tracker.peak_phase,
        "peak_op": tracker.peak_op,
        "attention_kernel": "+".join(kernels),
        "optimizer_impl": getattr(optimizer, "_shadow_impl", ""),
        "loss_impl": LOSS_IMPLS[spec.get("loss_kernel") or "hf"]
        if spec.get("objective") != "dpo"
        else "DPO as TRL orders it: reference first; fp32 logits, log-softmax gather, sigmoid",
    }
