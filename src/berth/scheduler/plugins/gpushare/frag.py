"""The FGD paper's GPU fragmentation measure, over the target workload's distribution of "typical pods".

For one node and one typical pod: if the pod could land on the node (model accepted, enough devices with enough
free milli, enough CPU), only the free milli of the devices too small for it is fragment; otherwise all of the
node's free GPU milli is. CPU-only typical pods count all free GPU milli. The node's fragmentation is the sum over
typical pods weighted by their frequency (the upstream simulator's ``NodeGpuShareFragAmountScore``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from berth.scheduler.plugins.gpushare.state import BoolArray, GpuCluster, GpuPod, IntArray

FloatArray = npt.NDArray[np.float64]

DEFAULT_POPULARITY_THRESHOLD = 95
DEFAULT_INCREASE_STEP = 1


@dataclass(frozen=True, slots=True)
class TypicalPods:
    """The most frequent pod shapes of a workload and their normalised frequencies (summing to 1)."""

    cpu: IntArray
    milli: IntArray
    count: IntArray
    models: tuple[tuple[str, ...], ...]
    freq: FloatArray

    @property
    def size(self) -> int:
        """Number of typical pod shapes."""
        return len(self.models)

    @classmethod
    def of(
        cls,
        pods: Iterable[GpuPod],
        threshold: int = DEFAULT_POPULARITY_THRESHOLD,
        step: int = DEFAULT_INCREASE_STEP,
    ) -> TypicalPods:
        """The shapes of ``pods`` by decreasing count (ties: the larger shape first), cut once they cover
        ``threshold`` percent of the pods, frequencies renormalised over the kept shapes."""
        counts: Counter[tuple[int, int, int, str]] = Counter()
        for p in pods:
            milli = p.gpu_milli if p.wants_gpu else 0
            count = p.gpu_count if p.wants_gpu else 0
            counts[(p.cpu_milli, milli, count, "|".join(p.gpu_models))] += 1
        total = sum(counts.values())
        if total == 0:
            raise ValueError("typical pods: the workload has no pods")
        ranked = sorted(counts.items(), key=lambda kv: (kv[1], kv[0]), reverse=True)
        expected = threshold * total / 100.0
        kept: list[tuple[tuple[int, int, int, str], int]] = []
        cum = 0
        n = 0
        while cum < expected and len(kept) < len(ranked):
            n += step
            while len(kept) < n and len(kept) < len(ranked):
                kept.append(ranked[len(kept)])
                cum += kept[-1][1]
        freq = np.array([c for _, c in kept], dtype=np.float64) / cum
        return cls(
            cpu=np.array([k[0] for k, _ in kept], dtype=np.int64),
            milli=np.array([k[1] for k, _ in kept], dtype=np.int64),
            count=np.array([k[2] for k, _ in kept], dtype=np.int64),
            models=tuple(tuple(m for m in k[3].split("|") if m) for k, _ in kept),
            freq=freq,
        )

    def access(self, cluster: GpuCluster) -> BoolArray:
        """``[typical pods x nodes]``: may the typical pod use the node's GPUs (its model named or none asked)."""
        rows = []
        for t in range(self.size):
            probe = GpuPod("typical", 0, 0, int(self.milli[t]), int(self.count[t]), self.models[t])
            rows.append(cluster.model_ok(probe))
        return np.array(rows, dtype=np.bool_).reshape(self.size, cluster.size)


def levels_of(typical: TypicalPods) -> tuple[IntArray, IntArray]:
    """The distinct GPU milli of the typical pods (sorted) and each typical pod's index among them."""
    levels, level_of = np.unique(typical.milli, return_inverse=True)
    return levels.astype(np.int64), level_of.astype(np.int64)


def device_stats(levels: IntArray, gpu: IntArray) -> tuple[IntArray, IntArray]:
    """For each state and level: how many devices have at least that much free, and their free milli summed."""
    ge = gpu[:, :, None] >= levels[None, None, :]
    return ge.sum(axis=1), (gpu[:, :, None] * ge).sum(axis=1)


def frag_from_stats(
    typical: TypicalPods,
    level_of: IntArray,
    access: BoolArray,
    cpu: IntArray,
    count: IntArray,
    big: IntArray,
    total: IntArray,
) -> FloatArray:
    """Fragmentation from per-level device counts and sums (see :func:`device_stats`)."""
    satisfied = (
        (count[:, level_of] >= typical.count[None, :])
        & (cpu[:, None] >= typical.cpu[None, :])
        & access.T
        & (typical.milli > 0)[None, :]
    )
    small = total[:, None] - big[:, level_of]
    frag = np.where(satisfied, small, total[:, None]).astype(np.float64)
    out: FloatArray = frag @ typical.freq
    return out


def frag_amount(typical: TypicalPods, access: BoolArray, cpu: IntArray, gpu: IntArray) -> FloatArray:
    """Fragmentation (GPU milli) of each state: ``cpu[S]`` free CPU, ``gpu[S x devices]`` free milli per
    device, ``access[T x S]`` the typical pods' model access for each state's node."""
    levels, level_of = levels_of(typical)
    count, big = device_stats(levels, gpu)
    return frag_from_stats(typical, level_of, access, cpu, count, big, gpu.sum(axis=1))


def node_frag(
    typical: TypicalPods, access: BoolArray, cluster: GpuCluster, rows: IntArray | None = None
) -> FloatArray:
    """Fragmentation of the cluster's nodes (all of them, or ``rows``) in their current state."""
    if rows is None:
        return frag_amount(typical, access, cluster.cpu_free, cluster.gpu_free)
    return frag_amount(typical, access[:, rows], cluster.cpu_free[rows], cluster.gpu_free[rows])


__all__ = [
    "FloatArray",
    "TypicalPods",
    "device_stats",
    "frag_amount",
    "frag_from_stats",
    "levels_of",
    "node_frag",
]
