"""Replaying a GPU workload onto a cluster under one GPU placement policy: one arrival at a time with no
departures (the FGD paper's way), or at the trace's recorded creation and deletion times (``--timed``);
recording the GPU allocation ratio, the arrived GPU demand and the fragmentation after each event."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from berth.scheduler.plugins.gpushare.frag import TypicalPods
from berth.scheduler.plugins.gpushare.policies import FragTracker, Policy, make_policy, select_host
from berth.scheduler.plugins.gpushare.state import GpuCluster, GpuPod
from berth.sim.traces.openb import PodTimes, TraceNode


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
    series_time: list[float] = field(default_factory=list)
    """Trace seconds of each recorded event (``--timed`` only)."""
    timed: bool = False
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
            "timed": self.timed,
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
            if self.timed:
                out["series"]["time"] = self.series_time
        return out


def cluster_of(nodes: Sequence[TraceNode]) -> GpuCluster:
    """The columnar GPU cluster of the trace's nodes (memory in bytes)."""
    return GpuCluster.build(
        [(n.name, n.cpu_milli, n.memory_mib * 1024 * 1024, n.gpu, n.model) for n in nodes]
    )


@dataclass(slots=True)
class _Replayer:
    """One policy placing pods on the columnar cluster and recording the ratios after each event."""

    cluster: GpuCluster
    frag: FragTracker
    policy: Policy
    result: ReplayResult
    rows: dict[str, int] = field(default_factory=dict)

    def place(self, pod: GpuPod) -> Placement:
        """Put ``pod`` where the policy says; a placement without a node when nothing fits."""
        rows = np.flatnonzero(self.cluster.fits(pod))
        if len(rows) == 0:
            return Placement(pod.name, None)
        node = select_host(self.policy.score(self.cluster, pod, rows), rows, self.cluster.name_rank)
        devices = self.policy.devices(self.cluster, pod, node)
        self.cluster.allocate(node, pod, devices)
        self.frag.refresh(node)
        return Placement(pod.name, self.cluster.names[node], devices)

    def release(self, pod: GpuPod, placed: Placement) -> None:
        """Give back what ``pod`` took at ``placed``."""
        if not self.rows:
            self.rows = {name: i for i, name in enumerate(self.cluster.names)}
        node = self.rows[str(placed.node)]
        self.cluster.release(node, pod, placed.devices)
        self.frag.refresh(node)

    def record(self, demand_milli: int) -> None:
        """Append the ratios of this moment, ``demand_milli`` being the arrived (or present) GPU demand."""
        cluster, cap, r = self.cluster, self.result.gpu_capacity_milli, self.result
        idle = cap - cluster.gpu_allocated_milli
        r.series_allocation.append(cluster.gpu_allocated_milli / cap if cap else 0.0)
        r.series_arrived.append(demand_milli / cap if cap else 0.0)
        r.series_fragmentation.append(self.frag.total / idle if idle else 0.0)


def _replayer(nodes: Sequence[TraceNode], typical_of: Sequence[GpuPod], policy: str, seed: int) -> _Replayer:
    cluster = cluster_of(nodes)
    frag = FragTracker(TypicalPods.of(typical_of), cluster)
    rng = np.random.default_rng([seed, 1])
    chosen = make_policy(policy, rng, frag)
    # the paper's simulator names its nodes with a random prefix, so ties between equal scores go to a random
    # node fixed for the run, not to the trace's first node name (drawn from a child of `rng`: the Random
    # policy's own draws stay as they are)
    cluster.prefix_names(rng.spawn(1)[0].permutation(cluster.size))
    return _Replayer(cluster, frag, chosen, ReplayResult(policy, seed, [], cluster.gpu_capacity_milli))


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
    run = _replayer(nodes, typical_of, policy, seed)
    arrived = 0
    for k, pod in enumerate(workload):
        arrived += pod.total_gpu_milli
        run.result.placements.append(run.place(pod))
        run.record(arrived)
        if on_arrival is not None:
            on_arrival(k)
    result = run.result
    result.wall_seconds = time.perf_counter() - wall0
    result.cpu_seconds = time.process_time() - cpu0
    return result


def timed_events(pods: Sequence[GpuPod], times: Mapping[str, PodTimes]) -> list[tuple[int, int, int]]:
    """``(second, kind, pod index)`` in replay order: 0 a departure, 1 an arrival, 2 the departure of a pod
    deleted the second it was created; at the same second departures free room before arrivals, and pods keep
    the list's order."""
    events: list[tuple[int, int, int]] = []
    for i, pod in enumerate(pods):
        t = times[pod.name]
        events.append((t.creation, 1, i))
        if t.deletion is not None:
            events.append((t.deletion, 0 if t.deletion > t.creation else 2, i))
    events.sort()
    return events


def replay_timed(
    nodes: Sequence[TraceNode],
    pods: Sequence[GpuPod],
    times: Mapping[str, PodTimes],
    policy: str,
    seed: int,
    on_event: Callable[[int], None] | None = None,
) -> ReplayResult:
    """Replay ``pods`` at their recorded creation and deletion times under ``policy``. A pod that does not fit
    waits, as in the scheduler's queue, and is tried again (in arrival order) whenever a departure frees room;
    one deleted while waiting never runs. The arrived ratio is the demand of the pods present (running or
    waiting); fragmentation is measured against the list's own typical pods."""
    wall0, cpu0 = time.perf_counter(), time.process_time()
    run = _replayer(nodes, pods, policy, seed)
    result = run.result
    result.timed = True
    result.placements = [Placement(p.name, None) for p in pods]
    waiting: dict[int, None] = {}
    present = 0
    for k, (second, kind, i) in enumerate(timed_events(pods, times)):
        pod = pods[i]
        if kind == 1:
            present += pod.total_gpu_milli
            placed = run.place(pod)
            result.placements[i] = placed
            if placed.node is None:
                waiting[i] = None
        else:
            present -= pod.total_gpu_milli
            if i in waiting:
                del waiting[i]
            else:
                run.release(pod, result.placements[i])
                for j in list(waiting):
                    again = run.place(pods[j])
                    if again.node is not None:
                        result.placements[j] = again
                        del waiting[j]
        run.record(present)
        result.series_time.append(float(second))
        if on_event is not None:
            on_event(k)
    result.wall_seconds = time.perf_counter() - wall0
    result.cpu_seconds = time.process_time() - cpu0
    return result


__all__ = ["Placement", "ReplayResult", "cluster_of", "replay", "replay_timed", "timed_events"]
