"""A small slice of the shadow grid run for real on a CUDA GPU (issue 29, item 5).

The same jobs as the fake-tensor traces, on the card: random weights from the config (no
download), two steps, then `torch.cuda.max_memory_allocated` / `max_memory_reserved` and
nvidia-smi's used memory. QLoRA rows (bitsandbytes NF4, which fake tensors cannot run) and
FlashAttention-2 (when flash-attn is installed) calibrate what the shadow cannot see. Rows go to
bench/data/gpu_peaks.jsonl with the card, driver and versions.

usage: python -m tools.shadow.gpu_slice [ID ...] [--limit N]   (no ids: the default slice)
Not run yet: no GPU was available when it was written.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import subprocess
import sys
import tempfile
from typing import Any

from bench.paths import GPU_PEAKS
from tools.shadow.__main__ import append, done_ids
from tools.shadow.grid import Job, arch_of, by_id, spec_of
from tools.shadow.trace import build_config, loss_fn_for, optimizer_for, versions, with_lora

# Small, fast jobs that also fit a 24 GB card: LoRA and full, checkpointing on and off.
DEFAULT_SLICE = (
    "qwen2.5-0.5b.lora-r16-all-linear.sft.s2048.b1.gc.adamw.bf16-mixed.hf",
    "qwen2.5-0.5b.lora-r16-all-linear.sft.s2048.b1.nogc.adamw.bf16-mixed.hf",
    "llama-3.2-1b.lora-r16-all-linear.sft.s8192.b1.gc.adamw.bf16-mixed.hf",
    "llama-3.2-1b.full.sft.s512.b1.gc.adamw.bf16-mixed.hf",
    "qwen2.5-1.5b.lora-r16-all-linear.sft.s2048.b4.gc.adamw.bf16-mixed.hf",
)


def _nvidia_smi(query: str) -> str:
    cmd = ["nvidia-smi", f"--query-gpu={query}", "--format=csv,noheader,nounits", "-i", "0"]
    return subprocess.run(cmd, capture_output=True, text=True, check=True).stdout.strip()


def _model(spec: dict[str, Any], arch: dict[str, Any], qlora: bool):
    import torch
    from transformers import AutoModelForCausalLM, BitsAndBytesConfig
    from transformers.utils import is_flash_attn_2_available

    attention = "flash_attention_2" if is_flash_attn_2_available() else "sdpa"
    config = build_config(arch, attention)
    full_mixed = spec["method"] == "full" and spec["precision"] == "bf16-mixed"
    dtype = torch.float32 if spec["precision"] == "fp32" or full_mixed else torch.bfloat16
    if not qlora:
        with torch.device("cuda"):
            return AutoModelForCausalLM.from_config(config, dtype=dtype), attention
    # bitsandbytes quantises while loading: save random bf16 weights, reload them in NF4.
    with tempfile.TemporaryDirectory() as folder:
        AutoModelForCausalLM.from_config(config, dtype=torch.bfloat16).save_pretrained(folder)
        quant = BitsAndBytesConfig(
            load_in_4bit=True,
            bnb_4bit_quant_type="nf4",
            bnb_4bit_use_double_quant=True,
            bnb_4bit_compute_dtype=torch.bfloat16,
        )
        model = AutoModelForCausalLM.from_pretrained(
            folder, quantization_config=quant, dtype=torch.bfloat16, device_map={"": 0}
        )
    return model, attention


def run_gpu(job: Job, qlora: bool = False, steps: int = 2) -> dict[str, Any]:
    import torch

    arch = arch_of(job)
    spec = spec_of(job)
    if spec["objective"] != "sft":
        raise SystemExit(f"{job.id}: the GPU slice runs SFT jobs only")
    model, attention = _model(spec, arch, qlora)
    if qlora:
        from peft import prepare_model_for_kbit_training

        model = prepare_model_for_kbit_training(model, use_gradient_checkpointing=False)
        spec = {**spec, "method": "qlora", "quant": "nf4"}
    if spec["method"] != "full":
        model = with_lora(model, spec)
    if spec["gradient_checkpointing"]:
        model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
    model.train()
    trainable = [p for p in model.parameters() if p.requires_grad]
    optimizer = optimizer_for(spec, trainable)
    loss_fn = loss_fn_for(spec, model)
    vocab = model.config.get_text_config().vocab_size
    rows = spec["micro_batch"] * (2 if spec["objective"] == "dpo" else 1)
    ids = torch.randint(0, vocab, (rows, spec["seq_len"]), device="cuda")
    cast = (
        torch.autocast("cuda", dtype=torch.bfloat16)
        if spec["precision"] != "fp32"
        else contextlib.nullcontext()
    )
    torch.cuda.reset_peak_memory_stats()
    for _ in range(steps):
        with cast:
            loss = loss_fn(model, ids)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
    torch.cuda.synchronize()
    return {
        "id": job.id + (".qlora-nf4" if qlora else ""),
        "spec": spec,
        "arch": arch,
        "gpu": {
            "max_memory_allocated_gib": round(torch.cuda.max_memory_allocated() / 2**30, 4),
            "max_memory_reserved_gib": round(torch.cuda.max_memory_reserved() / 2**30, 4),
            "nvidia_smi_used_gib": round(float(_nvidia_smi("memory.used")) / 1024, 3),
            "attention": attention,
        },
        "card": _nvidia_smi("name"),
        "driver": _nvidia_smi("driver_version"),
        "versions": {**versions(), "cuda": torch.version.cuda},
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.shadow.gpu_slice")
    parser.add_argument("ids", nargs="*", default=list(DEFAULT_SLICE))
    parser.add_argument("--qlora", action="store_true", help="also run each LoRA job as QLoRA")
    args = parser.parse_args(argv)
    jobs, done = by_id(), done_ids(GPU_PEAKS)
    for job_id in args.ids:
        job = jobs[job_id]
        for qlora in (False, True) if args.qlora and job.method == "lora" else (False,):
            if job.id + (".qlora-nf4" if qlora else "") in done:
                continue
            row = run_gpu(job, qlora)
            append(GPU_PEAKS, row)
            print(json.dumps(row["gpu"]), row["id"], file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
