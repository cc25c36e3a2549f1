"""The range a user should plan with: a calibrated 90 % interval for the measured peak, however
the peak is read (torch's max_memory_allocated, max_memory_reserved, or nvidia-smi).

    low  = peak allocated × exp(−(BELOW_ALLOCATED_LOG + widening_low))
    high = required (≈ nvidia-smi) × exp(ABOVE_REQUIRED_LOG + widening_high) + paged optimizer state

The two constants are the ones for which the range holds the measured peak of 90 % of the rows of
shared/data/vram_dev.jsonl (bench/accuracy.py prints the coverage; 2026-12-01: 90 % of 82 rows),
rows whose stack and flags are stated. Where the job leaves an input unstated the range widens,
a stated prior rather than a fit (the dev rows state nearly everything): each unstated input that
moves the peak by tens of percent (the stack, gradient checkpointing, the micro-batch) widens both
sides by UNSTATED_INPUT_LOG; unpacked data, whose `seq_len` is only a cap on lengths that vary,
widens the low side by UNPACKED_CAP_LOG (most batches are shorter than the cap). A model planned
from a generic shape (its size stated, its config unknown) widens both sides by GENERIC_SHAPE_LOG:
the shape guesses the vocabulary and widths, and the catalog's vocabularies run from 32k to 262k
around the generic 128,256 (×2 either way), which moves small models' embeddings and logits most.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from planner.spec import JobSpec

BELOW_ALLOCATED_LOG = 0.12
ABOVE_REQUIRED_LOG = 0.26
UNSTATED_INPUT_LOG = 0.05
UNPACKED_CAP_LOG = 0.05
GENERIC_SHAPE_LOG = math.log(2.0)
# Inputs that move a peak by tens of percent when guessed wrong.
WEIGHTY_INPUTS = ("framework", "gradient_checkpointing", "micro_batch")


def unstated_inputs(raw: JobSpec) -> int:
    """How many of WEIGHTY_INPUTS the user left to the defaults."""
    return sum(getattr(raw, name) is None for name in WEIGHTY_INPUTS)


def range_bytes(
    raw: JobSpec, allocated: float, required: float, paged_share: float, generic: bool = False
) -> tuple[float, float]:
    """(low, high) bytes of the measured peak's 90 % interval for the job as the user said it
    (`generic`: the model is planned from a generic shape of its stated size)."""
    widening = UNSTATED_INPUT_LOG * unstated_inputs(raw) + (GENERIC_SHAPE_LOG if generic else 0.0)
    low_log = BELOW_ALLOCATED_LOG + widening + (0.0 if raw.packing else UNPACKED_CAP_LOG)
    high_log = ABOVE_REQUIRED_LOG + widening
    return allocated * math.exp(-low_log), required * math.exp(high_log) + paged_share
