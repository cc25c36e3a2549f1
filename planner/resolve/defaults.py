"""Fill every JobSpec field the user left out, the way most people run, and say so.

The defaults follow HF Trainer + PEFT/TRL (also behind axolotl, LLaMA-Factory and ms-swift),
which is what most fine-tuning runs use; each choice becomes a plain-language assumption.
"""

from __future__ import annotations

import re
from dataclasses import replace
from functools import lru_cache

from planner.catalog.gpus import read_gpu, requested_card
from planner.catalog.models import ModelArch, resolve_model
from planner.catalog.stacks import resolve_version, stack, stack_fact, stack_family_fact
from planner.errors import PlanningError
from planner.estimate.memory.estimate import estimate_memory
from planner.estimate.memory.profiles import PROFILES
from planner.job.resolved import Patch, ResolvedJob
from planner.messages import DEFAULTS
from planner.plan import MemoryEstimate
from planner.resolve.model_switches import LOSS_KERNEL_WORDS, decide_experts, resolve_model_switches
from planner.resolve.post_training import resolve_post_training
from planner.spec import (
    ALL_LINEAR,
    ONLINE_OBJECTIVES,
    PREFERENCE_OBJECTIVES,
    Framework,
    JobSpec,
    LoraTarget,
    LossKernel,
    Method,
    Optimizer,
    Precision,
    Pricing,
    Quant,
    Rollout,
    Sharding,
)
from planner.words import Listing

DEFAULT_SEQ_LEN = 2048
DEFAULT_LORA_RANK = 16
DEFAULT_MICRO_BATCH = 1
# torchtune's full recipes for models this large offload sharded state to the CPU.
TORCHTUNE_OFFLOAD_FROM_PARAMS_B = 60.0
# gpt-oss: transformers sets _supports_sdpa = False (attention sinks), architectures-2026.md
# §3.3; Unsloth ships its own attention for it.
EAGER_ATTENTION_FAMILIES = frozenset({"gpt-oss", "gpt_oss"})
OWN_ATTENTION_KERNEL_FRAMEWORKS = frozenset({Framework.unsloth})
# A model said to be "13B" that catalogs as 7B is probably a different model: warn past this.
PARAMS_MISMATCH_FRACTION = 0.25


def _model(spec: JobSpec, arch: ModelArch | None) -> tuple[ModelArch, list[str], list[str]]:
    if arch is not None:
        return arch, [DEFAULTS("model.config", size_b=arch.params_b)], []
    found, assumptions = resolve_model(spec.model, spec.params_b)
    warnings = []
    if spec.model and spec.params_b and found.family != "generic":
        off = abs(found.params_b - spec.params_b) / found.params_b
        if off > PARAMS_MISMATCH_FRACTION:
            values = {"model": found.name, "size_b": found.params_b, "said_b": spec.params_b}
            warnings.append(DEFAULTS("model.mismatch", **values))
    return found, assumptions, warnings


@lru_cache(maxsize=512)
def _card_without_bf16(name: str | None) -> str | None:
    """The named card's name when it has no bf16 (before Ampere: T4, V100), else None."""
    match = read_gpu(name) if name else None
    if match is None or match.gpu.supports_bf16:
        return None
    return match.gpu.name


def _fsdp_version(spec: JobSpec, framework: Framework, version: str | None) -> int:
    """The FSDP implementation a job sharded with FSDP runs: the job's, else the stack's default
    for its release (the `fsdp_version` fact of planner/data/stack-*.json), else 1."""
    if spec.fsdp_version is not None:
        return spec.fsdp_version
    fact = stack_fact(framework, "fsdp_version", version)
    return int(fact.value) if fact is not None else 1


def _activation_offloading(
    spec: JobSpec, framework: Framework, checkpointing: bool, said: list[str]
) -> bool:
    """Saved activations in host RAM: what the user said, else the stack's default (Unsloth's
    "unsloth" gradient checkpointing offloads its checkpoints)."""
    if spec.activation_offloading is None:
        return PROFILES[framework].offloads_checkpoints and checkpointing
    if spec.activation_offloading:
        said.append(
            DEFAULTS(
                "activation_offloading",
                what=DEFAULTS(
                    "activation_offloading.checkpointed"
                    if checkpointing
                    else "activation_offloading.all"
                ),
            )
        )
    return spec.activation_offloading


def _attention(
    spec: JobSpec, model_arch: ModelArch, framework: Framework, said: list[str], warned: list[str]
) -> bool:
    """Whether attention runs without materialising the s×s scores. FlashAttention-2 needs
    Ampere (sm80) or newer; before it, transformers' default SDPA picks PyTorch's
    memory-efficient kernel for fp16 (sm50 and up), which keeps no scores either, so the memory
    is the same and only the name and speed differ."""
    old_card = _card_without_bf16(spec.gpu)
    if spec.flash_attention and old_card is not None:
        warned.append(DEFAULTS("attention.no_flash", card=old_card))
    if spec.flash_attention is not None:
        return spec.flash_attention
    if model_arch.family in EAGER_ATTENTION_FAMILIES and (
        framework not in OWN_ATTENTION_KERNEL_FRAMEWORKS
    ):
        said.append(DEFAULTS("attention.eager", model=model_arch.name))
        return False
    if old_card is not None:
        said.append(DEFAULTS("attention.sdpa", card=old_card))
    else:
        said.append(DEFAULTS("attention.flash"))
    return True


def _precision(
    spec: JobSpec, framework: Framework, sharding: Sharding, said: list[str], warned: list[str]
) -> Precision:
    no_bf16 = _card_without_bf16(spec.gpu)
    if no_bf16 is not None and spec.precision in (Precision.bf16, Precision.bf16_mixed):
        warned.append(DEFAULTS("precision.no_bf16", card=no_bf16))
    elif no_bf16 is not None and spec.precision is None:
        said.append(DEFAULTS("precision.fp16", card=no_bf16))
        return Precision.fp16_mixed
    if sharding in (Sharding.zero2, Sharding.zero3) and spec.precision is not Precision.fp32:
        said.append(DEFAULTS("precision.deepspeed"))
    if spec.precision is not None:
        return spec.precision
    upcasts = PROFILES[framework].fsdp_upcasts_trainable_fp32
    if spec.method is Method.full and sharding is Sharding.fsdp and upcasts:
        said.append(DEFAULTS("precision.fsdp_mixed"))
        return Precision.bf16
    if spec.method is Method.full:
        said.append(DEFAULTS("precision.pure_bf16"))
    else:
        said.append(DEFAULTS("weights.lora"))
    return Precision.bf16


def _optimizer(spec: JobSpec, framework: Framework, num_gpus: int, said: list[str]) -> Optimizer:
    if spec.optimizer is not None:
        return spec.optimizer
    if framework is Framework.torchtune and spec.method is Method.full and num_gpus == 1:
        said.append(DEFAULTS("optimizer.torchtune"))
        return Optimizer.paged_adamw_8bit
    if framework is Framework.unsloth:
        said.append(DEFAULTS("optimizer.unsloth"))
        return Optimizer.adamw_8bit
    said.append(DEFAULTS("optimizer.adamw"))
    return Optimizer.adamw


# LoRA rank and targets of each stack's own defaults where they differ from PEFT-style rank 16 on
# every linear (rank barely moves memory; which layer inputs backward keeps does): LitGPT's
# finetune/lora.py (lora_r 8; lora_query and lora_value only), torchtune's *_lora configs
# (lora_rank 8; q_proj, v_proj, output_proj and the MLP), LLaMA-Factory (lora_rank 8,
# lora_target all), ms-swift 3 (lora_rank 8, all-linear), axolotl's examples (lora_r 32,
# lora_target_linear).
_LORA_DEFAULTS: dict[Framework, tuple[int, list[LoraTarget] | str]] = {
    Framework.litgpt: (8, [LoraTarget.q, LoraTarget.v]),
    Framework.torchtune: (
        8,
        [LoraTarget.q, LoraTarget.v, LoraTarget.o, LoraTarget.gate, LoraTarget.up, LoraTarget.down],
    ),
    Framework.llama_factory: (8, ALL_LINEAR),
    Framework.ms_swift: (8, ALL_LINEAR),
    Framework.axolotl: (32, ALL_LINEAR),
}

# Stacks whose multi-GPU recipes are FSDP for every method (torchtune's *_distributed recipes,
# LitGPT's FSDPStrategy): they have no DDP path.
FSDP_ONLY_FRAMEWORKS = (Framework.torchtune, Framework.litgpt)


def _sharding(spec: JobSpec, framework: Framework, num_gpus: int, said: list[str]) -> Sharding:
    if spec.sharding is not None:
        return spec.sharding
    if num_gpus == 1:
        return Sharding.none
    if spec.method is Method.full or framework in FSDP_ONLY_FRAMEWORKS:
        said.append(DEFAULTS("sharding.fsdp", gpus=num_gpus))
        return Sharding.fsdp
    said.append(_ddp_sentence(num_gpus))
    return Sharding.ddp


def _ddp_sentence(num_gpus: int) -> str:
    return DEFAULTS("sharding.ddp", gpus=num_gpus)


def _ddp_misfit(job: ResolvedJob) -> tuple[str | None, MemoryEstimate | None]:
    """Why DDP cannot be the layout of a multi-GPU job whose user named none: a LoRA/QLoRA job
    defaults to DDP (accelerate launch's default), but a whole copy per GPU that does not fit the
    requested card is not what anyone would run: FSDP is, and the market's multi-GPU rows already
    plan it (planner.market.options.multi_gpu_sharding), so the answer's rows agree with each
    other. Also returns the estimate on the requested card that decided it (None: none made)."""
    if job.raw.sharding is not None or job.sharding is not Sharding.ddp:
        return None, None
    card = requested_card(job.gpu, job.gpu_vram_gb).gpu
    if card is None:
        return None, None
    on_card = estimate_memory(job, card_gib=card.usable_gib)
    needed_gib = on_card.required_gib
    if needed_gib <= card.usable_gib:
        return None, on_card
    why = DEFAULTS("sharding.ddp_misfit", need=needed_gib, card=card.name, usable=card.usable_gib)
    return why, None


def _warnings(
    spec: JobSpec, seq_len: int, arch: ModelArch, num_gpus: int, sharding: Sharding
) -> list[str]:
    """What the user asked for that the plan cannot honour as said (`seq_len` resolved)."""
    warnings = []
    if spec.quant is not None and spec.method is not Method.qlora:
        warnings.append(
            DEFAULTS("warn.quant_not_qlora", quant=spec.quant.value, method=spec.method.value)
        )
    if spec.method is Method.full and (spec.lora_rank or spec.lora_targets):
        warnings.append(DEFAULTS("warn.lora_for_full"))
    if seq_len and arch.max_context and seq_len > arch.max_context:
        context = arch.max_context
        warnings.append(DEFAULTS("warn.rope", seq_len=seq_len, model=arch.name, context=context))
    return warnings + _layout_warnings(spec.cpu_offload, spec.method, num_gpus, sharding)


def _layout_warnings(
    cpu_offload: bool | None, method: Method, num_gpus: int, sharding: Sharding
) -> list[str]:
    """The warnings the layout decides (the last of a job's warnings)."""
    warnings = []
    if num_gpus > 1 and sharding is Sharding.none:
        warnings.append(DEFAULTS("warn.no_sharding", gpus=num_gpus))
    if cpu_offload and sharding in (Sharding.none, Sharding.ddp) and method is not Method.full:
        warnings.append(DEFAULTS("warn.offload_lora"))
    return warnings


def resolve(spec: JobSpec, arch: ModelArch | None = None) -> ResolvedJob:
    """The spec with every default filled, the architecture, assumptions and warnings.

    Raises PlanningError (naming the field) for a job that cannot be planned.
    """
    return resolve_on_card(spec, arch)[0]


def resolve_on_card(
    spec: JobSpec, arch: ModelArch | None = None
) -> tuple[ResolvedJob, MemoryEstimate | None]:
    """`resolve`, with the job's memory estimate on the requested card where deciding a default
    DDP layout made it and kept the layout (None otherwise): the plan's own estimate, which
    `planner.planner.memory_plan` then need not make again."""
    if not isinstance(spec, JobSpec):
        raise PlanningError("expected a JobSpec", field="spec")
    job = _resolve(spec, arch)
    misfit, on_card = _ddp_misfit(job)
    return (job, on_card) if misfit is None else (_on_fsdp(job, misfit), None)


def _on_fsdp(job: ResolvedJob, ddp_misfit: str) -> ResolvedJob:
    """The default-DDP job laid out with FSDP instead, without resolving it again: only the
    layout, its sentence and its warnings change (of everything else `_resolve` decides, only
    precision reads the layout, and only for ZeRO or a full fine-tune, never a DDP default)."""
    fsdp_said = DEFAULTS("sharding.fsdp_why", gpus=job.num_gpus, why=ddp_misfit)
    ddp_said = _ddp_sentence(job.num_gpus)
    said = tuple(fsdp_said if sentence == ddp_said else sentence for sentence in job.assumptions)
    layout = (job.raw.cpu_offload, job.method, job.num_gpus)
    kept = len(job.warnings) - len(_layout_warnings(*layout, Sharding.ddp))
    warnings = (*job.warnings[:kept], *_layout_warnings(*layout, Sharding.fsdp))
    return replace(job, sharding=Sharding.fsdp, assumptions=said, warnings=warnings)


def changed(job: ResolvedJob, patch: Patch) -> ResolvedJob:
    """The job with `patch` applied to what the user said, every default decided again. A
    measured peak's scale carries over (what-ifs scale from the measurement) unless the patch
    sets it."""
    carried = {"memory_scale": job.memory_scale} if job.memory_scale != 1.0 else {}
    fields = {**dict(job.raw), **carried, **patch}
    return resolve(job.raw.model_validate(fields), job.given_arch)


# Layouts Unsloth cannot run: its patched kernels train a whole model per process (its multi-GPU
# mode is DDP through accelerate); DeepSpeed ZeRO-3 and FSDP are not supported.
SHARDING_WORDS = {
    Sharding.zero2: "DeepSpeed ZeRO-2",
    Sharding.zero3: "DeepSpeed ZeRO-3",
    Sharding.fsdp: "FSDP",
}
UNSLOTH_UNSUPPORTED_SHARDING = frozenset(SHARDING_WORDS)


def _framework(spec: JobSpec, said: list[str], warned: list[str]) -> Framework:
    if spec.framework is None:
        said.append(DEFAULTS("framework.hf"))
        return Framework.hf
    if spec.framework == Framework.unsloth and spec.sharding in UNSLOTH_UNSUPPORTED_SHARDING:
        layout = SHARDING_WORDS[spec.sharding]
        warned.append(DEFAULTS("unsloth.layout", layout=layout))
        return Framework.hf
    return Framework(spec.framework)  # a model_copy patch may hold the value, not the member


# Checkpoint names that say how the weights are stored (Unsloth's -bnb-4bit uploads, AutoAWQ
# and GPTQ exports, FP8 releases): a LoRA on one is a LoRA on a quantised base.
_PREQUANTISED = (
    (re.compile(r"bnb[-_]?4bit|nf4", re.IGNORECASE), Quant.nf4),
    (re.compile(r"(?<![a-z])(?:awq|gptq|int4)(?![a-z])", re.IGNORECASE), Quant.int4),
    (re.compile(r"bnb[-_]?8bit|(?<![a-z])int8(?![a-z])", re.IGNORECASE), Quant.int8),
    (re.compile(r"(?<![a-z])fp8(?![a-z])", re.IGNORECASE), Quant.fp8),
    (re.compile(r"mxfp4", re.IGNORECASE), Quant.mxfp4),
)


@lru_cache(maxsize=512)
def prequantised_quant(model: str | None) -> Quant | None:
    """The storage format a checkpoint's id names ("unsloth/Qwen3-14B-bnb-4bit" → nf4)."""
    for pattern, quant in _PREQUANTISED:
        if model and pattern.search(model):
            return quant
    return None


def _prequantised_method(
    spec: JobSpec, said: list[str], warned: list[str]
) -> tuple[Method, Quant | None]:
    """A LoRA on a pre-quantised checkpoint trains over its quantised weights: QLoRA."""
    quant = prequantised_quant(spec.model)
    if quant is None:
        return spec.method, None
    if spec.method is Method.full:
        warned.append(DEFAULTS("prequant.full", model=spec.model, quant=quant.value))
        return spec.method, None
    if spec.method is Method.lora:
        said.append(DEFAULTS("prequant.lora", model=spec.model, quant=quant.value))
    return Method.qlora, quant


def _context_parallel(spec: JobSpec, num_gpus: int, said: list[str], warned: list[str]) -> int:
    """Context/sequence parallelism as asked, when its degree divides the GPUs."""
    wanted = spec.context_parallel or 1
    if wanted > 1 and num_gpus % wanted:
        warned.append(DEFAULTS("context_parallel.invalid", wanted=wanted, gpus=num_gpus))
        return 1
    if wanted > 1:
        said.append(DEFAULTS("context_parallel", wanted=wanted))
    return wanted


def _mean_sample_len(
    spec: JobSpec, text_cap: int, padding_free: bool, said: list[str]
) -> int | None:
    """The text tokens a sample averages, at most the truncation cap; said with which length
    sets what: time follows the mean, the peak the longest batch (padded to the cap, or on a
    padding-free stack one sample at the cap and the rest at the mean)."""
    if spec.mean_sample_len is None:
        return None
    mean = min(spec.mean_sample_len, text_cap)
    if mean < text_cap and padding_free and (spec.micro_batch or 1) > 1:
        said.append(DEFAULTS("mean_len.padding_free", mean=mean, cap=text_cap))
    elif mean < text_cap:
        said.append(DEFAULTS("mean_len.cap", mean=mean, cap=text_cap))
    return mean


def _with_image_tokens(
    dataset_tokens: float | None, text_len: int, image_tokens: int, said: list[str]
) -> float | None:
    """Trained tokens with each sample's image tokens: a VLM trains on them as on text
    (architectures-2026.md §7: S_LM = text + images), so a dataset counted in text tokens
    grows by the images' share of each sample."""
    if not dataset_tokens or not image_tokens or text_len <= 0:
        return dataset_tokens
    total = dataset_tokens * (text_len + image_tokens) / text_len
    values = {"image": image_tokens, "text": text_len}
    said.append(
        DEFAULTS("image_tokens", total_m=total / 1e6, text_m=dataset_tokens / 1e6, **values)
    )
    return total


def _stack_rollout(
    spec: JobSpec, framework: Framework, version: str | None, said: list[str]
) -> JobSpec:
    """An online job's rollout as its stack runs it when the job does not say (verl's hybrid
    engine, OpenRLHF's vLLM engines), and the stack's vLLM memory fraction at this release
    (TRL's 0.3): the spec post-training resolves, the user's own fields untouched."""
    if spec.objective not in ONLINE_OBJECTIVES or spec.framework is None:
        return spec
    known = stack(framework)
    patch: dict[str, object] = {}
    engine = stack_fact(framework, "rollout", version)
    if spec.rollout is None and spec.rollout_gpus is None and engine and engine.engine:
        patch["rollout"] = Rollout(engine.engine)
        if spec.rollout_sleep is None and engine.sleep:
            patch["rollout_sleep"] = True
        said.append(engine.said or engine.value)
    fraction = stack_fact(framework, "vllm_memory_fraction", version)
    colocated = patch.get("rollout", spec.rollout) is Rollout.vllm_colocate
    if colocated and spec.rollout_memory_fraction is None and fraction and fraction.value:
        patch["rollout_memory_fraction"] = float(fraction.value)
        said.append(DEFAULTS("vllm_release", fraction=float(fraction.value), stack=known.name))
    return spec.model_copy(update=patch) if patch else spec


def _stack_loss_kernel(
    spec: JobSpec, framework: Framework, version: str | None, arch: ModelArch, said: list[str]
) -> LossKernel | None:
    """The loss kernel the stack uses at this release when the job names none (TRL's
    chunked_nll for full fine-tuning of text models; verl's and OpenRLHF's log-prob kernels;
    transformers' model-level loss in ms-swift ≥ 3.1), and says the stack's own figure where
    the fact has words for it (ms-swift before 3.1, or unstated). Not for an offline preference
    loss in a stack on TRL's preference trainers: they pass no labels, so the model's loss never
    runs (their log-probs are `trl_preference_log_probs`)."""
    fact = stack_family_fact(framework, "loss_kernel", version, arch.family)
    if spec.loss_kernel is not None or fact is None:
        return None
    if spec.objective in PREFERENCE_OBJECTIVES and PROFILES[framework].trl_preference_log_probs:
        return None
    if fact.kernel is None:
        if fact.said:  # the stack's own figure, when which one depends on the release
            said.append(fact.said)
        return None
    if fact.methods and spec.method.value not in fact.methods:
        return None
    if fact.text_only and arch.vision_params:
        return None
    kernel = LossKernel(fact.kernel)
    said.append(DEFAULTS("loss", said=fact.said or fact.value, kernel=LOSS_KERNEL_WORDS[kernel]))
    return kernel


def _resolve(spec: JobSpec, arch: ModelArch | None) -> ResolvedJob:
    model_arch, said, warned = _model(spec, arch)
    framework = _framework(spec, said, warned)
    version = (
        resolve_version(framework, spec.framework_version, said, warned)
        if spec.framework is not None and framework == spec.framework
        else stack(framework).current_version
    )
    num_gpus = spec.num_gpus or 1
    sharding = _sharding(spec, framework, num_gpus, said)
    precision = _precision(spec, framework, sharding, said, warned)
    optimizer = _optimizer(spec, framework, num_gpus, said)
    peft = spec.method is not Method.full
    method, prequant = _prequantised_method(spec, said, warned)
    # The job as planned (a LoRA on a pre-quantised checkpoint is QLoRA); `spec` stays as said.
    planned = spec.model_copy(update={"method": method}) if method is not spec.method else spec

    quant = spec.quant if method is Method.qlora else None
    if method is Method.qlora and prequant is not None and spec.quant is None:
        quant = prequant
    if method is Method.qlora and quant is None:
        quant = Quant.nf4
        said.append(DEFAULTS("quant.nf4"))
    if method is Method.qlora and quant is Quant.int4:
        said.append(DEFAULTS("int4"))

    rank = spec.lora_rank if peft else None
    targets = spec.lora_targets if peft else None
    default_rank, default_targets = _LORA_DEFAULTS.get(framework, (DEFAULT_LORA_RANK, ALL_LINEAR))
    if peft and rank is None:
        rank = default_rank
        said.append(DEFAULTS("lora.rank", rank=rank))
    if peft and targets is None:
        targets = default_targets
        said.append(
            DEFAULTS("lora.all_linear")
            if targets == ALL_LINEAR
            else DEFAULTS(
                "lora.stack_targets",
                targets=Listing(t.value for t in targets),
                stack=framework.value,
            )
        )

    post = resolve_post_training(
        _stack_rollout(spec, framework, version, said), model_arch, peft, said, warned
    )
    seq_len = post.seq_len or spec.seq_len
    if seq_len is None:
        seq_len = min(DEFAULT_SEQ_LEN, model_arch.max_context or DEFAULT_SEQ_LEN)
        said.append(DEFAULTS("seq_len", tokens=seq_len))
    experts = decide_experts(planned, model_arch, framework, version, prequant is not None)
    switches = resolve_model_switches(
        planned,
        model_arch,
        num_gpus,
        said,
        warned,
        framework,
        experts,
        version,
    )
    stack_kernel = _stack_loss_kernel(spec, framework, version, model_arch, said)
    if stack_kernel is not None:
        switches = replace(switches, loss_kernel=stack_kernel)
    seq_len += switches.image_tokens
    micro_batch = spec.micro_batch
    if micro_batch is None:
        micro_batch = DEFAULT_MICRO_BATCH
        said.append(DEFAULTS(f"micro_batch{post.micro_batch_unit}", count=micro_batch))
    grad_accum = spec.grad_accum or post.grad_accum_for(micro_batch, num_gpus, said)
    checkpointing = spec.gradient_checkpointing
    if checkpointing is None:
        checkpointing = framework is not Framework.litgpt
        said.append(DEFAULTS("checkpointing.on" if checkpointing else "checkpointing.litgpt"))
    cpu_offload = spec.cpu_offload
    if cpu_offload is None:
        cpu_offload = (
            framework is Framework.torchtune
            and spec.method is Method.full
            and num_gpus > 1
            and model_arch.params_b >= TORCHTUNE_OFFLOAD_FROM_PARAMS_B
        )
        if cpu_offload:
            said.append(DEFAULTS("torchtune_offload"))
    flash = _attention(spec, model_arch, framework, said, warned)
    activation_offloading = _activation_offloading(spec, framework, checkpointing, said)
    if spec.tiled_mlp:
        said.append(DEFAULTS("tiled_mlp", tokens=model_arch.hidden_size))
    if spec.packing is None:
        said.append(DEFAULTS("packing.off"))
    epochs = spec.epochs
    packing_fact = stack_fact(framework, "packing", version)
    padding_free = packing_fact is not None and packing_fact.padding_free
    mean_len = _mean_sample_len(spec, seq_len - switches.image_tokens, padding_free, said)
    dataset_tokens = _with_image_tokens(
        post.dataset_tokens(spec, seq_len, said),
        mean_len or seq_len - switches.image_tokens,
        switches.image_tokens,
        said,
    )
    if epochs is None:
        epochs = 1.0
        if dataset_tokens:
            said.append(DEFAULTS("epochs.one"))

    context_parallel = _context_parallel(spec, num_gpus, said, warned)
    warnings = warned + _warnings(planned, seq_len, model_arch, num_gpus, sharding)
    return ResolvedJob(
        raw=spec,
        arch=model_arch,
        given_arch=arch,
        model=model_arch.hf_id or model_arch.name,
        params_b=round(model_arch.params_b, 3),
        method=method,
        quant=quant,
        precision=precision,
        optimizer=optimizer,
        lora_rank=rank,
        lora_alpha=(spec.lora_alpha or 2.0 * rank) if rank else None,
        lora_targets=tuple(targets) if isinstance(targets, list) else targets,
        seq_len=seq_len,
        micro_batch=micro_batch,
        grad_accum=grad_accum,
        gradient_checkpointing=checkpointing,
        flash_attention=flash,
        packing=bool(spec.packing),
        num_gpus=num_gpus,
        sharding=sharding,
        cpu_offload=cpu_offload,
        activation_offloading=activation_offloading,
        tiled_mlp=bool(spec.tiled_mlp),
        fsdp_version=_fsdp_version(spec, framework, version),
        framework=framework,
        framework_version=version,
        gpu=spec.gpu,
        gpu_vram_gb=spec.gpu_vram_gb,
        dataset_tokens=dataset_tokens,
        mean_sample_len=mean_len,
        epochs=epochs,
        context_parallel=context_parallel,
        tokens_per_s=spec.tokens_per_s,
        measured_peak_gib=spec.measured_peak_gib,
        measured_metric=spec.measured_metric,
        memory_scale=spec.memory_scale or 1.0,
        budget_usd=spec.budget_usd,
        deadline_hours=spec.deadline_hours,
        pricing=spec.pricing or Pricing.on_demand,
        **post.fields(),
        **switches.fields(),
        assumptions=tuple(said),
        warnings=tuple(warnings),
    )
