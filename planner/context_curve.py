"""Memory per GPU against context length: the job re-planned at doubling contexts, so a reader
sees where it stops fitting a card (the chart draws it beside the card's memory)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from planner.estimate.memory.estimate import required_gib
from planner.plan import ContextPoint
from planner.resolve.defaults import changed

if TYPE_CHECKING:
    from planner.job.resolved import ResolvedJob

SHORTEST_CONTEXT = 512
# 512 … 128k is nine doublings: enough to show the curve's bend without a long computation.
LONGEST_CONTEXT = 131_072


def context_lengths(asked: int, window: int | None) -> list[int]:
    """Doublings from 512 up to the model's window (or 128k), with the asked length among them;
    never past the window, as the what-if buttons never are."""
    longest = min(window or LONGEST_CONTEXT, LONGEST_CONTEXT)
    lengths = set()
    length = SHORTEST_CONTEXT
    while length <= longest:
        lengths.add(length)
        length *= 2
    lengths.add(asked)
    return sorted(lengths)


def memory_by_context(job: ResolvedJob) -> list[ContextPoint]:
    """required_gib of `job` at each of context_lengths, on the job's own GPUs and layout. A
    re-anchored job keeps its measured scale (ResolvedJob.changed carries it)."""
    points = []
    for seq_len in context_lengths(job.seq_len, job.arch.max_context):
        at = job if seq_len == job.seq_len else changed(job, {"seq_len": seq_len})
        points.append(
            ContextPoint(seq_len=seq_len, required_gib=required_gib(at, at.num_gpus, at.sharding))
        )
    return points
