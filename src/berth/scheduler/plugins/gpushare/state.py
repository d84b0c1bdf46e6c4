"""Per-device GPU accounting over all nodes, kept columnar: a ``nodes x devices`` array of free GPU milli.

A node with ``alibabacloud.com/gpu-count: N`` has N devices of 1000 milli each (padding columns hold 0 free).
A pod asks for ``gpu-count`` devices with ``gpu-milli`` free each (``gpu-milli`` < 1000 only when the count is
1: a GPU-sharing pod), optionally limited to the GPU models of ``gpu-card-model`` (``A|B``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

MILLI = 1000
MAX_DEVICES = 8

IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]


@dataclass(frozen=True, slots=True)
class GpuPod:
    """The resource shape of one pod as the GPU-sharing plugins see it."""

    name: str
    cpu_milli: int
    memory: int
    gpu_milli: int = 0
    gpu_count: int = 0
    gpu_models: tuple[str, ...] = ()

    @property
    def wants_gpu(self) -> bool:
        """True when the pod asks for at least one (share of a) GPU."""
        return self.gpu_count > 0 and self.gpu_milli > 0

    @property
    def is_share(self) -> bool:
        """True for a GPU-sharing pod: one device, less than a whole one."""
        return self.gpu_count == 1 and 0 < self.gpu_milli < MILLI

    @property
    def total_gpu_milli(self) -> int:
        """The pod's whole GPU demand in milli (``gpu-milli x gpu-count``)."""
        return self.gpu_milli * self.gpu_count if self.wants_gpu else 0

    @property
    def affinity(self) -> str:
        """GpuClustering's tag: ``share``, ``<n>-gpu`` or empty for a CPU-only pod."""
        if not self.wants_gpu:
            return ""
        return "share" if self.is_share else f"{self.gpu_count}-gpu"


@dataclass(slots=True)
class GpuCluster:
    """Free CPU, memory and per-device GPU milli of every node, updated in place on allocate/release."""

    names: list[str]
    cpu_capacity: IntArray
    memory_capacity: IntArray
    gpu_count: IntArray
    models: list[str]
    model_code: IntArray
    cpu_free: IntArray = field(init=False)
    memory_free: IntArray = field(init=False)
    gpu_free: IntArray = field(init=False)
    affinity: list[dict[str, int]] = field(init=False)
    name_rank: IntArray = field(init=False)

    def __post_init__(self) -> None:
        n = len(self.names)
        if int(self.gpu_count.max(initial=0)) > MAX_DEVICES:
            i = int(np.argmax(self.gpu_count))
            raise ValueError(
                f'Node "{self.names[i]}": gpu-count {int(self.gpu_count[i])} exceeds {MAX_DEVICES}'
            )
        self.cpu_free = self.cpu_capacity.astype(np.int64).copy()
        self.memory_free = self.memory_capacity.astype(np.int64).copy()
        self.gpu_free = np.where(np.arange(MAX_DEVICES)[None, :] < self.gpu_count[:, None], MILLI, 0).astype(
            np.int64
        )
        self.affinity = [{} for _ in range(n)]
        self.name_rank = np.empty(n, dtype=np.int64)
        self.name_rank[np.array(sorted(range(n), key=self.names.__getitem__), dtype=np.int64)] = np.arange(n)

    def prefix_names(self, perm: IntArray) -> None:
        """Rank the nodes for the tie-break as the upstream simulator names them: before creating the nodes,
        ``syncClusterResourceList`` (pkg/simulator/simulator.go) sorts them by name and renames the i-th one
        ``"%04d-" % perm[i] + name``, ``perm`` being ``rand.Perm(len(nodes))``; selectHost's "smallest name wins"
        then follows ``perm``, a random node order fixed for the whole run rather than the trace's name order."""
        if sorted(perm.tolist()) != list(range(self.size)):
            raise ValueError(f"not a permutation of {self.size} nodes: {perm.tolist()}")
        self.name_rank = perm.astype(np.int64)[self.name_rank]

    @classmethod
    def build(cls, nodes: list[tuple[str, int, int, int, str]]) -> GpuCluster:
        """A cluster from ``(name, cpu milli, memory, gpu count, gpu model)`` rows."""
        models = sorted({m for *_, m in nodes if m})
        code = {m: i for i, m in enumerate(models)}
        return cls(
            names=[n[0] for n in nodes],
            cpu_capacity=np.array([n[1] for n in nodes], dtype=np.int64),
            memory_capacity=np.array([n[2] for n in nodes], dtype=np.int64),
            gpu_count=np.array([n[3] for n in nodes], dtype=np.int64),
            models=models,
            model_code=np.array([code.get(n[4], -1) for n in nodes], dtype=np.int64),
        )

    @property
    def size(self) -> int:
        """Number of nodes."""
        return len(self.names)

    @property
    def gpu_capacity_milli(self) -> int:
        """Total GPU milli of the cluster."""
        return int(self.gpu_count.sum()) * MILLI

    @property
    def gpu_allocated_milli(self) -> int:
        """GPU milli handed out to pods."""
        return self.gpu_capacity_milli - int(self.gpu_free.sum())

    def model_ok(self, pod: GpuPod) -> BoolArray:
        """Nodes whose GPU model the pod accepts (every node when the pod names none)."""
        if not pod.gpu_models:
            return np.ones(self.size, dtype=np.bool_)
        codes = [self.models.index(m) for m in pod.gpu_models if m in self.models]
        return np.isin(self.model_code, np.array(codes, dtype=np.int64))

    def fits(self, pod: GpuPod) -> BoolArray:
        """Nodes with room for the pod: CPU, memory and, for a GPU pod, enough devices with enough free milli."""
        ok = (self.cpu_free >= pod.cpu_milli) & (self.memory_free >= pod.memory)
        if pod.wants_gpu:
            ok &= self.model_ok(pod)
            ok &= (self.gpu_free >= pod.gpu_milli).sum(axis=1) >= pod.gpu_count
        return ok

    def allocate(self, node: int, pod: GpuPod, devices: tuple[int, ...]) -> None:
        """Take the pod's resources on ``node``, its GPU share from ``devices``."""
        if pod.wants_gpu:
            if len(devices) != pod.gpu_count:
                raise ValueError(
                    f'Pod "{pod.name}": {len(devices)} GPU indices for gpu-count {pod.gpu_count}'
                )
            for d in devices:
                if self.gpu_free[node, d] < pod.gpu_milli:
                    raise ValueError(
                        f'Pod "{pod.name}": GPU {d} of node "{self.names[node]}" has '
                        f"{int(self.gpu_free[node, d])} milli free, {pod.gpu_milli} asked"
                    )
            self.gpu_free[node, list(devices)] -= pod.gpu_milli
            tags = self.affinity[node]
            tags[pod.affinity] = tags.get(pod.affinity, 0) + 1
        self.cpu_free[node] -= pod.cpu_milli
        self.memory_free[node] -= pod.memory

    def release(self, node: int, pod: GpuPod, devices: tuple[int, ...]) -> None:
        """Give back what :meth:`allocate` took."""
        if pod.wants_gpu:
            self.gpu_free[node, list(devices)] += pod.gpu_milli
            tags = self.affinity[node]
            tags[pod.affinity] -= 1
            if tags[pod.affinity] == 0:
                del tags[pod.affinity]
        self.cpu_free[node] += pod.cpu_milli
        self.memory_free[node] += pod.memory


def exclusive_devices(free: IntArray, count: int) -> tuple[int, ...]:
    """The first ``count`` fully free devices in index order (the simulator's exclusive allocation)."""
    idx = np.flatnonzero(free == MILLI)[:count]
    return tuple(int(i) for i in idx)


def best_fit_device(free: IntArray, milli: int) -> int:
    """The device with the least free milli that still holds ``milli`` (lowest index on ties)."""
    cand = np.where(free >= milli, free, np.iinfo(np.int64).max)
    return int(np.argmin(cand))


def parse_gpu_index(value: str, where: str) -> tuple[int, ...]:
    """``alibabacloud.com/gpu-index`` ("0,3") as device indices; a bad value names ``where``."""
    try:
        out = tuple(int(x) for x in value.split(","))
    except ValueError:
        raise ValueError(f'{where}: invalid GPU index list "{value}"') from None
    if any(i < 0 or i >= MAX_DEVICES for i in out):
        raise ValueError(f'{where}: invalid GPU index list "{value}"')
    return out
