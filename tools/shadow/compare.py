"""The planner beside a shadow row: its allocated peak and components for the row's exact job.

No torch here: bench/shadow_accuracy.py and the CI guard (tests/test_shadow_guard.py) read the
committed dataset with it. The row's config.json is planned as a custom architecture, so the
planner and the trace count the same matrices.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.paths import SHADOW_PEAKS
from planner.catalog.models import arch_from_hf_config
from planner.estimate.memory import estimate_memory
from planner.estimate.memory.estimate import peak_bytes
from planner.resolve.defaults import resolve
from planner.spec import JobSpec
from planner.units import GIB

# The planner's components grouped as the trace's categories. The trace's temporaries (the
# optimizer's scratch) fold into `transients` with the activations and logits: which of them
# the peak holds depends on where it falls.
GROUPS = ("parameters", "gradients", "optimizer", "transients")


@dataclass(frozen=True)
class Comparison:
    id: str
    shadow_gib: float
    planner_gib: float
    shadow: dict[str, float]  # by GROUPS
    planner: dict[str, float]
    peak_phase: str
    # The planner's activations and logits at its peak beside the trace's (for reading).
    detail: dict[str, tuple[float, float]]
    moe: bool = False

    @property
    def error(self) -> float:
        """Signed relative error of the planner's allocated peak."""
        return (self.planner_gib - self.shadow_gib) / self.shadow_gib


def read_rows(path: Path = SHADOW_PEAKS) -> Iterator[dict[str, Any]]:
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            if line.strip():
                yield json.loads(line)


def compare(row: dict[str, Any]) -> Comparison:
    spec = JobSpec.model_validate(row["spec"])
    arch = arch_from_hf_config(row["arch"], spec.model or row["id"])
    job = resolve(spec, arch)
    memory = estimate_memory(job)
    b = memory.breakdown_gib
    # The optimizer's state as such: the breakdown charges the step's scratch to it when the
    # step is the peak, where the trace counts that scratch as a temporary.
    state_gib = peak_bytes(job, job.num_gpus, job.sharding).share.optimizer / GIB
    planner = {
        "parameters": b.weights + b.adapter + b.reference,
        "gradients": b.gradients,
        "optimizer": min(b.optimizer, state_gib),
    }
    planner["transients"] = memory.peak_allocated_gib - sum(planner.values())
    cats = row["shadow"]["by_category_gib"]
    shadow = {
        "parameters": cats["parameters"],
        "gradients": cats["gradients"],
        "optimizer": cats["optimizer"],
        "transients": cats["activations"] + cats["logits"] + cats["temporaries"],
    }
    return Comparison(
        id=row["id"],
        shadow_gib=row["shadow"]["peak_allocated_gib"],
        planner_gib=memory.peak_allocated_gib,
        shadow=shadow,
        planner=planner,
        peak_phase=row["shadow"]["peak_phase"],
        detail={
            "activations": (b.activations, cats["activations"]),
            "logits": (b.logits, cats["logits"] + cats["temporaries"]),
        },
        moe=arch.is_moe,
    )
