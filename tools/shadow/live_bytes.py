"""A storage-level live-bytes tracker for fake-tensor training steps.

A TorchDispatchMode sees every op's outputs; each storage it has not seen yet adds its bytes under
the category of the moment (what the step is doing), and a weakref finalizer on the storage takes
them off when the last tensor viewing it dies. PyTorch's MemTracker does the same per module but
registers grad hooks on every parameter, which fails on frozen ones (a LoRA base), hence this.

Categories are set by the harness as the step moves (forward → activations, the LM head and loss →
logits, optimizer.step → temporaries) and storages are re-tagged once their role is known
(a parameter's .grad → gradients, optimizer.state → optimizer). At every new peak the per-category
totals and the phase are copied, so the peak's breakdown is the one of that instant.
"""

from __future__ import annotations

import weakref
from collections import defaultdict
from dataclasses import dataclass, field

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten

CATEGORIES = ("parameters", "gradients", "optimizer", "activations", "logits", "temporaries")


@dataclass
class _Live:
    nbytes: int
    category: str


@dataclass
class LiveBytes(TorchDispatchMode):
    """Live storage bytes by category, with the peak and where in the step it happened."""

    category: str = "temporaries"
    phase: str = "setup"
    live: dict[int, _Live] = field(default_factory=dict)
    totals: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    current: int = 0
    peak: int = 0
    peak_phase: str = ""
    peak_op: str = ""
    op: str = ""  # the op whose outputs are being counted
    peak_totals: dict[str, int] = field(default_factory=dict)
    ops: set[str] = field(default_factory=set)

    def __post_init__(self) -> None:
        super().__init__()

    # -- storages ---------------------------------------------------------------------------
    def track(self, tensor: torch.Tensor, category: str, retag: bool = True) -> None:
        """Count `tensor`'s storage under `category`; one already counted is re-tagged when its
        role becomes known (`retag`), never by an op's output that merely views it."""
        storage = tensor.untyped_storage()
        key = storage._cdata
        entry = self.live.get(key)
        if entry is not None:
            if retag and entry.category != category:
                self.totals[entry.category] -= entry.nbytes
                self.totals[category] += entry.nbytes
                entry.category = category
            return
        nbytes = storage.nbytes()
        self.live[key] = _Live(nbytes, category)
        self.totals[category] += nbytes
        self.current += nbytes
        weakref.finalize(storage, self._free, key)
        # ">=": of equal peaks the later one is kept, whose tensors have their roles tagged
        # (step 2 holds the optimizer state step 1 created).
        if self.current >= self.peak:
            self.peak = self.current
            self.peak_phase = self.phase
            self.peak_totals = dict(self.totals)
            self.peak_op = self.op

    def _free(self, key: int) -> None:
        entry = self.live.pop(key, None)
        if entry is not None:
            self.totals[entry.category] -= entry.nbytes
            self.current -= entry.nbytes

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # type: ignore[override]
        out = func(*args, **(kwargs or {}))
        self.ops.add(str(func.overloadpacket.__name__))
        self.op = str(func)
        flat, _ = tree_flatten(out)
        for value in flat:
            if isinstance(value, torch.Tensor):
                self.track(value, self.category, retag=False)
        self.op = ""
        return out

    # -- reading ----------------------------------------------------------------------------
    def peak_by_category_gib(self) -> dict[str, float]:
        return {name: round(self.peak_totals.get(name, 0) / 2**30, 4) for name in CATEGORIES}
