"""Re-anchoring a job on a peak the user measured ("it actually peaked at 21.3 GiB", "OOM on my
4090"): the measurement becomes the job's memory_scale, and every estimate of the job and of its
what-ifs is scaled by it.

    memory_scale = measured peak ÷ our estimate of the same kind (allocated or reserved; an
                   unstated kind is compared with reserved, as bench/accuracy.py scores rows of
                   unknown metric); for nvidia-smi, (measured − CUDA context) ÷ reserved, since
                   the context does not grow with the job
    an OOM on a card: the job needed more than the card, so memory_scale =
                   max(1, OOM_MARGIN × usable ÷ required): at least enough that it no longer fits

The scale is kept within [MIN_SCALE, MAX_SCALE]: a figure further off than that is more likely a
different job (or a typo) than our error, and the answer says it was capped.
"""

from __future__ import annotations

from dataclasses import replace

from planner.estimate.memory import estimate_memory
from planner.job.resolved import ResolvedJob
from planner.market.options import read_requested_card
from planner.messages import REPORTS
from planner.plan import MemoryEstimate
from planner.resolve.defaults import changed
from planner.spec import MeasuredMetric, Method
from planner.words import Said

OOM_MARGIN = 1.02
MIN_SCALE = 0.25
MAX_SCALE = 4.0
# A report this far from the estimate (either way) is asked about before it is applied: our
# estimates sit within ±25 % of most published peaks (bench/accuracy.py), so ×2 is more likely a
# different job (another method, model or context) than our error.
DOUBT_RATIO = 2.0
# Words with which a user insists on a figure already asked about ("it really peaked at 6 GiB").
_CONFIRMING = ("really", "really did", "yes", "confirm", "确实", "真的", "没错")


def report_doubt(job: ResolvedJob) -> str | None:
    """A question to ask instead of applying a measured peak that cannot be this job's: below
    the weights that must be resident, or outside ×0.5–×2 of the estimate. None: apply it."""
    if job.measured_peak_gib is None or job.measured_metric == "oom":
        return None
    memory = estimate_memory(job)
    measured = float(job.measured_peak_gib)
    weights = memory.breakdown_gib.weights
    if measured < weights:
        guess = REPORTS("guess.smaller" if job.method is Method.qlora else "guess.quantised")
        setup = f"{job.method.value}{', ' + job.quant.value if job.quant else ''}"
        values = {"measured": measured, "weights": weights, "model": job.model, "setup": setup}
        return REPORTS("below_weights", guess=guess, **values)
    estimated = estimate_of_kind(memory, job.measured_metric or "unknown")
    ratio = measured / estimated
    if ratio < 1 / DOUBT_RATIO or ratio > DOUBT_RATIO:
        return REPORTS("far_off", measured=measured, estimated=estimated, ratio=ratio)
    return None


def confirms_report(text: str) -> bool:
    """The user insists on a figure already asked about."""
    lowered = text.lower()
    return any(word in lowered for word in _CONFIRMING)


def estimate_of_kind(memory: MemoryEstimate, metric: MeasuredMetric) -> float:
    """Our figure that a peak read as `metric` is compared with: torch's allocated or reserved,
    nvidia-smi's required (an OOM too: it is against the card); an unstated kind is compared with
    reserved, as bench/accuracy.py scores rows of unknown metric."""
    if metric == "allocated":
        return memory.peak_allocated_gib
    if metric in ("nvidia-smi", "oom"):
        return memory.required_gib
    return memory.peak_reserved_gib


def anchored(job: ResolvedJob) -> ResolvedJob:
    """The job with its memory_scale decided from the user's measurement (module docstring);
    planned_job (planner/planner.py) calls it for a job that `needs_anchoring`."""
    memory = estimate_memory(job)
    if job.measured_metric == "oom":
        card = read_requested_card(job).gpu
        if card is None:
            return _noted(job, 1.0, REPORTS("oom_no_card"))
        scale = max(1.0, OOM_MARGIN * card.usable_gib / memory.required_gib)
        if scale > 1.0:
            return _noted(job, scale, REPORTS("oom_scaled", card=card.name, scale=scale))
        return _noted(job, scale, REPORTS("oom_as_estimated", card=card.name))
    measured = float(job.measured_peak_gib or 0.0)
    estimated = estimate_of_kind(memory, job.measured_metric or "unknown")
    if job.measured_metric == "nvidia-smi":
        # The CUDA context and NCCL buffers are fixed: the tensors explain the rest.
        context_gib = memory.required_gib - memory.peak_reserved_gib
        ratio = (measured - context_gib) / memory.peak_reserved_gib
    else:
        ratio = measured / estimated
    scale = min(MAX_SCALE, max(MIN_SCALE, ratio))
    metric = REPORTS(f"metric.{job.measured_metric or 'unknown'}")
    said = REPORTS("anchored", measured=measured, metric=metric, estimated=estimated, scale=scale)
    if scale != ratio:
        said = REPORTS("anchored_capped", anchored=said, ratio=ratio)
    return _noted(job, scale, said)


def _noted(job: ResolvedJob, scale: float, said: Said) -> ResolvedJob:
    """The job at `scale`, its defaults decided again at it: a layout chosen for the unscaled
    estimate (DDP on two 24 GB cards) may not hold the measured one, and the thread keeps the
    job with its scale, which plans as this one (issue 33: a report flipped the layout)."""
    if scale != job.memory_scale:
        job = changed(job, {"memory_scale": scale})
    return replace(job, assumptions=(*job.assumptions, said))
