"""The FGD paper's placement policies as vectorized Score functions plus each one's GPU device choice.

Scores follow the upstream simulator (``hkust-adsl/kubernetes-scheduler-simulator``, pkg/simulator/plugin):
integer scores in [0, 100], higher is better, computed for the feasible nodes only; the node is then picked as
the simulator's ``selectHost`` does (highest score; among ties the smallest node name, the simulator's names
carrying a random prefix, see :meth:`GpuCluster.prefix_names`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from berth.scheduler.plugins.gpushare.frag import (
    FloatArray,
    TypicalPods,
    device_stats,
    frag_from_stats,
    levels_of,
    node_frag,
)
from berth.scheduler.plugins.gpushare.state import (
    MAX_DEVICES,
    MILLI,
    BoolArray,
    GpuCluster,
    GpuPod,
    IntArray,
    best_fit_device,
    exclusive_devices,
)

MAX_NODE_SCORE = 100
MAX_SPEC_CPU = 128000
MAX_SPEC_GPU = 8000


class Policy(Protocol):
    """A GPU placement policy: scores for the feasible nodes and the devices to use on the chosen one."""

    name: str

    def score(self, cluster: GpuCluster, pod: GpuPod, rows: IntArray) -> IntArray:
        """Integer scores for the nodes ``rows`` (all feasible for ``pod``)."""
        ...

    def devices(self, cluster: GpuCluster, pod: GpuPod, node: int) -> tuple[int, ...]:
        """The device indices the pod gets on ``node``."""
        ...


def best_fit_devices(cluster: GpuCluster, pod: GpuPod, node: int) -> tuple[int, ...]:
    """The simulator's default device choice: the tightest device for a share, the first fully free ones else."""
    if not pod.wants_gpu:
        return ()
    if pod.is_share:
        return (best_fit_device(cluster.gpu_free[node], pod.gpu_milli),)
    return exclusive_devices(cluster.gpu_free[node], pod.gpu_count)


@dataclass(slots=True)
class FragTracker:
    """Each node's current fragmentation under the typical pods, with the per-level device counts and sums it
    comes from, refreshed row by row after each placement."""

    typical: TypicalPods
    cluster: GpuCluster
    access: BoolArray = field(init=False)
    values: FloatArray = field(init=False)
    levels: IntArray = field(init=False)
    level_of: IntArray = field(init=False)
    count: IntArray = field(init=False)
    big: IntArray = field(init=False)

    def __post_init__(self) -> None:
        self.access = self.typical.access(self.cluster)
        self.levels, self.level_of = levels_of(self.typical)
        self.count, self.big = device_stats(self.levels, self.cluster.gpu_free)
        self.values = node_frag(self.typical, self.access, self.cluster)

    def refresh(self, node: int) -> None:
        """Recompute ``node``'s fragmentation after its state changed."""
        rows = np.array([node], dtype=np.int64)
        count, big = device_stats(self.levels, self.cluster.gpu_free[rows])
        self.count[node], self.big[node] = count[0], big[0]
        self.values[node] = node_frag(self.typical, self.access, self.cluster, rows)[0]

    @property
    def total(self) -> float:
        """The cluster's fragmentation in GPU milli."""
        return float(self.values.sum())


@dataclass(slots=True)
class RandomPolicy:
    """RandomScore: one feasible node drawn uniformly gets the top score; a random fitting device for a share."""

    rng: np.random.Generator
    name: str = "Random"

    def score(self, cluster: GpuCluster, pod: GpuPod, rows: IntArray) -> IntArray:
        """100 on one uniformly drawn row, 0 elsewhere."""
        out = np.zeros(len(rows), dtype=np.int64)
        out[int(self.rng.integers(len(rows)))] = MAX_NODE_SCORE
        return out

    def devices(self, cluster: GpuCluster, pod: GpuPod, node: int) -> tuple[int, ...]:
        """A uniformly drawn device with room for a share; the first fully free devices otherwise."""
        if pod.is_share:
            cand = np.flatnonzero(cluster.gpu_free[node] >= pod.gpu_milli)
            return (int(cand[int(self.rng.integers(len(cand)))]),)
        return best_fit_devices(cluster, pod, node)


@dataclass(slots=True)
class DotProductPolicy:
    """DotProductScore (Tetris) with merged GPU dimension and max-spec normalisation: the smaller the dot product
    of the node's free vector and the pod's request, the higher the score."""

    name: str = "DotProduct"

    def score(self, cluster: GpuCluster, pod: GpuPod, rows: IntArray) -> IntArray:
        """``int(100 x (1 - (cpuFree*cpu/128000^2 + gpuFree*gpu/8000^2) / 2))``."""
        cpu_left = cluster.cpu_free[rows].astype(np.float64)
        gpu_left = cluster.gpu_free[rows].sum(axis=1).astype(np.float64)
        dot = (cpu_left / MAX_SPEC_CPU) * (pod.cpu_milli / MAX_SPEC_CPU) + (gpu_left / MAX_SPEC_GPU) * (
            pod.total_gpu_milli / MAX_SPEC_GPU
        )
        out: IntArray = np.trunc(MAX_NODE_SCORE * (1 - dot / 2)).astype(np.int64)
        return out

    def devices(self, cluster: GpuCluster, pod: GpuPod, node: int) -> tuple[int, ...]:
        """Best-fit device choice."""
        return best_fit_devices(cluster, pod, node)


@dataclass(slots=True)
class GpuClusteringPolicy:
    """GpuClusteringScore: prefer nodes already running only pods of the same GPU kind (share, 1-gpu, 2-gpu …),
    then mixed nodes holding that kind, then idle nodes, then others; fuller nodes first within a band."""

    name: str = "GpuClustering"

    def score(self, cluster: GpuCluster, pod: GpuPod, rows: IntArray) -> IntArray:
        """Band (75/50/25/0) plus ``25 x (8000 - free GPU milli) // 8000``; 0 for a CPU-only pod."""
        if not pod.wants_gpu:
            return np.zeros(len(rows), dtype=np.int64)
        left = cluster.gpu_free[rows].sum(axis=1)
        fill = (MAX_NODE_SCORE // 4) * (MAX_SPEC_GPU - left) // MAX_SPEC_GPU
        tag = pod.affinity
        band = np.empty(len(rows), dtype=np.int64)
        for j, r in enumerate(rows.tolist()):
            tags = cluster.affinity[r]
            if tags.get(tag, 0) > 0:
                band[j] = 75 if len(tags) == 1 else 50
            else:
                band[j] = 25 if not tags else 0
        out: IntArray = fill + band
        return out

    def devices(self, cluster: GpuCluster, pod: GpuPod, node: int) -> tuple[int, ...]:
        """Best-fit device choice."""
        return best_fit_devices(cluster, pod, node)


@dataclass(slots=True)
class GpuPackingPolicy:
    """GpuPackingScore: shared GPUs first, then free GPUs on used nodes, then idle nodes."""

    name: str = "GpuPacking"

    def score(self, cluster: GpuCluster, pod: GpuPod, rows: IntArray) -> IntArray:
        """Case 1 (only partly used devices): ``max(100 - sum freePct/10, 50)``; case 2 (takes fully free devices
        on a used node): ``max(50 - n, 33)``; case 3 (idle node): ``max(33 - freeGpus, freeGpus)``."""
        if not pod.wants_gpu:
            return np.zeros(len(rows), dtype=np.int64)
        free = cluster.gpu_free[rows]
        fully = (free == MILLI).sum(axis=1)
        idle = fully == cluster.gpu_count[rows]
        out = np.empty(len(rows), dtype=np.int64)
        out[idle] = np.maximum(MAX_NODE_SCORE // 3 - fully[idle], fully[idle])
        used = ~idle
        if pod.is_share:
            cand = np.where(free >= pod.gpu_milli, free, np.iinfo(np.int64).max)
            chosen = cand.min(axis=1)
            case2 = chosen == MILLI
            pct = chosen * 100 // MILLI
            case1_score = np.maximum(MAX_NODE_SCORE - pct // 10, MAX_NODE_SCORE // 2)
            case2_score = np.full(
                len(rows), max(MAX_NODE_SCORE // 2 - 1, MAX_NODE_SCORE // 3), dtype=np.int64
            )
            out[used] = np.where(case2, case2_score, case1_score)[used]
        else:
            out[used] = max(MAX_NODE_SCORE // 2 - pod.gpu_count, MAX_NODE_SCORE // 3)
        return out

    def devices(self, cluster: GpuCluster, pod: GpuPod, node: int) -> tuple[int, ...]:
        """Best-fit device choice."""
        return best_fit_devices(cluster, pod, node)


@dataclass(slots=True)
class BestFitPolicy:
    """BestFitScore: the node left with the least free CPU and GPU (weights 0.5 each, per max spec), min-max
    normalised to [0, 100] over the feasible nodes."""

    name: str = "BestFit"

    def score(self, cluster: GpuCluster, pod: GpuPod, rows: IntArray) -> IntArray:
        """:meth:`raw_score` min-max normalised over ``rows``."""
        return normalize(self.raw_score(cluster, pod, rows))

    def raw_score(self, cluster: GpuCluster, pod: GpuPod, rows: IntArray) -> IntArray:
        """``int((1 - ((cpuFree - cpu)/128000*0.5 + (gpuFree - gpu)/8000*0.5)) x 100)``."""
        cpu_rest = (cluster.cpu_free[rows] - pod.cpu_milli).astype(np.float64)
        gpu_rest = (cluster.gpu_free[rows].sum(axis=1) - pod.total_gpu_milli).astype(np.float64)
        raw = (0.0 + cpu_rest / MAX_SPEC_CPU * 0.5) + gpu_rest / MAX_SPEC_GPU * 0.5
        score: IntArray = np.trunc((1.0 - raw) * MAX_NODE_SCORE).astype(np.int64)
        return score

    def devices(self, cluster: GpuCluster, pod: GpuPod, node: int) -> tuple[int, ...]:
        """Best-fit device choice."""
        return best_fit_devices(cluster, pod, node)


def normalize(score: IntArray) -> IntArray:
    """The simulator's NormalizeScore: ``(s - lowest) x 100 // (highest - lowest)``; all 0 when equal."""
    if len(score) == 0:
        return score
    lo, hi = int(score.min()), int(score.max())
    if hi == lo:
        return np.zeros_like(score)
    return (score - lo) * MAX_NODE_SCORE // (hi - lo)


def _sigmoid_score(delta: FloatArray) -> IntArray:
    return np.trunc(1.0 / (1.0 + np.exp(-delta / 1000.0)) * MAX_NODE_SCORE).astype(np.int64)


@dataclass(slots=True)
class FGDPolicy:
    """FGDScore: the placement (node and, for a share, device) that least increases the node's fragmentation,
    scored ``int(sigmoid((frag_before - frag_after)/1000) x 100)``."""

    frag: FragTracker
    name: str = "FGD"

    def _candidates(
        self, cluster: GpuCluster, pod: GpuPod, rows: IntArray
    ) -> tuple[IntArray, IntArray, IntArray]:
        """(row position, device or -1, score) for each hypothetical placement, grouped by row in order.

        Only the devices the pod takes change, so each hypothetical state's per-level device counts and sums
        are the node's (kept by the tracker) corrected for those devices."""
        fr = self.frag
        levels = fr.levels
        cpu = cluster.cpu_free[rows] - pod.cpu_milli
        count = fr.count[rows]
        big = fr.big[rows]
        total = cluster.gpu_free[rows].sum(axis=1)
        if pod.is_share:
            free = cluster.gpu_free[rows]
            cand = free >= pod.gpu_milli
            same = free[:, :, None] == free[:, None, :]
            cand &= ~(same & _EARLIER[None]).any(axis=2)
            pos, dev = np.nonzero(cand)
            before = free[pos, dev][:, None]
            after = before - pod.gpu_milli
            was = before >= levels[None, :]
            now = after >= levels[None, :]
            count = count[pos] - was + now
            big = big[pos] - before * was + after * now
            total = total[pos] - pod.gpu_milli
            cpu = cpu[pos]
        else:
            pos = np.arange(len(rows))
            dev = np.full(len(rows), -1, dtype=np.int64)
            if pod.wants_gpu:
                # the first gpu-count fully free devices: free at every level (all levels <= 1000)
                count = count - pod.gpu_count
                big = big - pod.gpu_count * MILLI
                total = total - pod.gpu_count * MILLI
        after_frag = frag_from_stats(fr.typical, fr.level_of, fr.access[:, rows[pos]], cpu, count, big, total)
        return pos, dev, _sigmoid_score(fr.values[rows[pos]] - after_frag)

    def score(self, cluster: GpuCluster, pod: GpuPod, rows: IntArray) -> IntArray:
        """The best placement's score on each node."""
        pos, _, score = self._candidates(cluster, pod, rows)
        if not pod.is_share:
            return score
        starts = np.flatnonzero(np.r_[True, pos[1:] != pos[:-1]])
        return np.maximum.reduceat(score, starts)

    def devices(self, cluster: GpuCluster, pod: GpuPod, node: int) -> tuple[int, ...]:
        """For a share, the device with the best score (lowest index on ties); else the first free devices."""
        if not pod.is_share:
            return best_fit_devices(cluster, pod, node)
        _, dev, score = self._candidates(cluster, pod, np.array([node], dtype=np.int64))
        return (int(dev[int(np.argmax(score))]),)


_EARLIER = np.tril(np.ones((MAX_DEVICES, MAX_DEVICES), dtype=np.bool_), -1)

POLICIES = ("Random", "DotProduct", "GpuClustering", "GpuPacking", "BestFit", "FGD")


def make_policy(name: str, rng: np.random.Generator, frag: FragTracker) -> Policy:
    """The policy called ``name`` (one of :data:`POLICIES`)."""
    if name == "Random":
        return RandomPolicy(rng)
    if name == "DotProduct":
        return DotProductPolicy()
    if name == "GpuClustering":
        return GpuClusteringPolicy()
    if name == "GpuPacking":
        return GpuPackingPolicy()
    if name == "BestFit":
        return BestFitPolicy()
    if name == "FGD":
        return FGDPolicy(frag)
    raise ValueError(f'unknown policy "{name}" (known: {", ".join(POLICIES)})')


def select_host(scores: IntArray, rows: IntArray, name_rank: IntArray) -> int:
    """The simulator's selectHost: the highest-scoring row; among ties, the node whose name sorts first
    ("for reproducibility", upstream's vendored kube-scheduler replaces the random pick by this), ``name_rank``
    being the order of the names the simulator gave the nodes (see :meth:`GpuCluster.prefix_names`)."""
    best = rows[scores == scores.max()]
    if len(best) == 1:
        return int(best[0])
    return int(best[int(np.argmin(name_rank[best]))])


__all__ = [
    "POLICIES",
    "BestFitPolicy",
    "DotProductPolicy",
    "FGDPolicy",
    "FragTracker",
    "GpuClusteringPolicy",
    "GpuPackingPolicy",
    "Policy",
    "RandomPolicy",
    "best_fit_devices",
    "make_policy",
    "normalize",
    "select_host",
]
