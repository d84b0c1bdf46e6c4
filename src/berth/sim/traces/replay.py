"""Replaying a GPU workload onto a cluster one arrival at a time, no departures, under one GPU placement
policy; recording the GPU allocation ratio, the arrived GPU demand and the fragmentation after each arrival."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from berth.scheduler.plugins.gpushare.frag import TypicalPods
from berth.scheduler.plugins.gpushare.policies import FragTracker, make_policy, select_host
from berth.scheduler.plugins.gpushare.state import GpuCluster, GpuPod
from berth.sim.traces.openb import TraceNode


@dataclass(slots=True)
class Placement:
    """Where one pod went: its node and GPU indices, or None when it did not fit."""

    pod: str
    node: str | None
    devices: tuple[int, ...] = ()


@dataclass(slots=True)
class ReplayResult:
    """The outcome of a replay: placements, final figures and the per-arrival series."""

    policy: str
    seed: int
    placements: list[Placement]
    gpu_capacity_milli: int
    series_allocation: list[float] = field(default_factory=list)
    series_arrived: list[float] = field(default_factory=list)
    series_fragmentation: list[float] = field(default_factory=list)
    wall_seconds: float = 0.0
    cpu_seconds: float = 0.0

    @property
    def pods_scheduled(self) -> int:
        """Pods that found a node."""
        return sum(1 for p in self.placements if p.node is not None)

    @property
    def pods_failed(self) -> int:
        """Pods that found none."""
        return len(self.placements) - self.pods_scheduled

    def report(self, series: bool = True) -> dict[str, Any]:
        """The JSON report (``--report``)."""
        out: dict[str, Any] = {
            "policy": self.policy,
            "seed": self.seed,
            "gpuCapacityMilli": self.gpu_capacity_milli,
            "gpuAllocationRatio": self.series_allocation[-1] if self.series_allocation else 0.0,
            "arrivedGpuRatio": self.series_arrived[-1] if self.series_arrived else 0.0,
            "fragmentationRatio": self.series_fragmentation[-1] if self.series_fragmentation else 0.0,
            "podsArrived": len(self.placements),
            "podsScheduled": self.pods_scheduled,
            "podsFailed": self.pods_failed,
            "wallSeconds": round(self.wall_seconds, 3),
            "cpuSeconds": round(self.cpu_seconds, 3),
        }
        if series:
            out["series"] = {
                "gpuAllocationRatio": self.series_allocation,
                "arrivedGpuRatio": self.series_arrived,
                "fragmentationRatio": self.series_fragmentation,
            }
        return out


def cluster_of(nodes: Sequence[TraceNode]) -> GpuCluster:
    """The columnar GPU cluster of the trace's nodes (memory in bytes)."""
    return GpuCluster.build(
        [(n.name, n.cpu_milli, n.memory_mib * 1024 * 1024, n.gpu, n.model) for n in nodes]
    )


def replay(
    nodes: Sequence[TraceNode],
    workload: Sequence[GpuPod],
    typical_of: Sequence[GpuPod],
    policy: str,
    seed: int,
    on_arrival: Callable[[int], None] | None = None,
) -> ReplayResult:
    """Place ``workload`` in order under ``policy``; fragmentation is measured against the typical pods of
    ``typical_of`` (the trace's own pod list, before inflation)."""
    wall0, cpu0 = time.perf_counter(), time.process_time()
    cluster = cluster_of(nodes)
    frag = FragTracker(TypicalPods.of(typical_of), cluster)
    rng = np.random.default_rng([seed, 1])
    chosen = make_policy(policy, rng, frag)
    cap = cluster.gpu_capacity_milli
    result = ReplayResult(policy, seed, [], cap)
    arrived = 0
    for k, pod in enumerate(workload):
        arrived += pod.total_gpu_milli
        rows = np.flatnonzero(cluster.fits(pod))
        if len(rows) == 0:
            result.placements.append(Placement(pod.name, None))
        else:
            node = select_host(chosen.score(cluster, pod, rows), rows, cluster.name_rank)
            devices = chosen.devices(cluster, pod, node)
            cluster.allocate(node, pod, devices)
            frag.refresh(node)
            result.placements.append(Placement(pod.name, cluster.names[node], devices))
        idle = cap - cluster.gpu_allocated_milli
        result.series_allocation.append(cluster.gpu_allocated_milli / cap if cap else 0.0)
        result.series_arrived.append(arrived / cap if cap else 0.0)
        result.series_fragmentation.append(frag.total / idle if idle else 0.0)
        if on_arrival is not None:
            on_arrival(k)
    result.wall_seconds = time.perf_counter() - wall0
    result.cpu_seconds = time.process_time() - cpu0
    return result


__all__ = ["Placement", "ReplayResult", "cluster_of", "replay"]
