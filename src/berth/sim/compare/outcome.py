"""One run of ``berth compare`` → a flat dict of metrics (`run_one`), the same whichever process runs it.

The metrics (`METRICS`), at the end of the run:

* ``placed`` / ``pending``: pods bound to a node / pods without one (a trace: pods placed / that found no node);
* ``gpuAllocation`` (traces): allocated GPU milli over the cluster's GPU capacity, as ``berth trace openb``;
* ``cpuAllocation`` / ``memoryAllocation``: requests of the pods bound to Ready nodes (not Succeeded or Failed)
  over the allocatable of the Ready nodes;
* ``fragmentation`` (traces): the fragmented share of idle GPU (the FGD paper's measure, ``berth trace openb``);
* ``imbalance``: population standard deviation of the per-node CPU utilisation (requested / allocatable) over
  the Ready nodes;
* ``preemptions``: preemption victims the scheduler chose (kube's ``scheduler_preemption_victims`` sum; a trace
  replay never preempts);
* ``latencyP50`` / ``latencyP99``: virtual seconds from a pod's creation to its binding, nearest-rank percentiles
  over the pods created unbound and bound during the run (exact clock times, recorded as the store commits the
  writes; objects' timestamps carry whole seconds only); None when no pod was bound (and for traces, which
  place each arrival at once);
* ``wallSeconds``: the run's wall time (this metric alone differs between two runs of the same inputs).

A trace outcome also carries ``replayCpuSeconds``, the process time of the replay alone (not a metric), and
an outcome of a run asked for them (``--report-html``) its ``series`` (`berth.sim.compare.series`).
"""

from __future__ import annotations

import math
import statistics
import time
from collections.abc import Mapping, Sequence
from typing import Any

from berth.api.resources import node_allocatable, pod_requests
from berth.api.watch import WatchEvent
from berth.sim.compare.runs import RunSpec
from berth.sim.compare.workload import ScenarioWorkload, TraceWorkload, scenario_plan

Metric = int | float | None
Outcome = dict[str, Any]

METRICS = (
    "placed",
    "pending",
    "gpuAllocation",
    "cpuAllocation",
    "memoryAllocation",
    "fragmentation",
    "imbalance",
    "preemptions",
    "latencyP50",
    "latencyP99",
    "wallSeconds",
)
"""The metrics of an outcome, in table order."""

TRACE_ONLY = ("gpuAllocation", "fragmentation")
_FINISHED = ("Succeeded", "Failed")


class RunFailed(RuntimeError):
    """A run raised: the message names the workload, the config and the seed, then the error."""


def run_one(spec: RunSpec) -> Outcome:
    """Run ``spec`` here and now: ``{"workload", "config", "seed", <every metric>}``; RunFailed when it raises."""
    t0 = time.perf_counter()
    w = spec.workload
    try:
        if isinstance(w, TraceWorkload):
            metrics = _trace(w, spec.config.for_trace(), spec.seed, spec.series)
        else:
            metrics = _scenario(w, spec.config.doc, spec.config.label, spec.seed, spec.until, spec.series)
    except Exception as e:
        raise RunFailed(
            f'run of "{w.label}" under {spec.config.label} with seed {spec.seed} failed: {type(e).__name__}: {e}'
        ) from e
    metrics["wallSeconds"] = time.perf_counter() - t0
    out: Outcome = {"workload": w.label, "config": spec.config.label, "seed": spec.seed}
    out |= {m: metrics.get(m) for m in METRICS}
    for extra in ("replayCpuSeconds", "series"):
        if extra in metrics:
            out[extra] = metrics[extra]
    return out


def percentile(values: Sequence[float], p: float) -> float | None:
    """The nearest-rank ``p``-th percentile (the smallest value with at least p % of the values at or below
    it); None for no values."""
    if not values:
        return None
    ordered = sorted(values)
    return ordered[max(0, math.ceil(p / 100 * len(ordered)) - 1)]


class _Latency:
    """Creation and first binding times of pods, from the store's commits (the virtual clock at the write)."""

    def __init__(self, sim: Any) -> None:
        self.clock = sim.clock
        self.created: dict[str, float] = {}
        self.bound: dict[str, float] = {}
        self.unsubscribe = sim.store.subscribe(self._event, ("", "Pod"))

    def _event(self, ev: WatchEvent) -> None:
        obj = ev.object
        uid = str((obj.get("metadata") or {}).get("uid") or "")
        node = (obj.get("spec") or {}).get("nodeName")
        if ev.type == "ADDED":
            if not node:
                self.created[uid] = self.clock.now()
        elif ev.type == "MODIFIED" and node and uid in self.created and uid not in self.bound:
            self.bound[uid] = self.clock.now()

    def seconds(self) -> list[float]:
        return [at - self.created[uid] for uid, at in self.bound.items()]


def _scenario(
    w: ScenarioWorkload,
    doc: dict[str, Any] | None,
    label: str,
    seed: int,
    until: float | None,
    sample: float | None = None,
) -> dict[str, Any]:
    from berth.scheduler.framework.config import parse_config
    from berth.sim.engine import Simulation, run_end
    from berth.sim.initial import create_initial_objects

    config = None if doc is None else parse_config(doc, source=label)
    sim = Simulation(config=config, seed=seed)
    latency = _Latency(sim)
    timeline = None
    try:
        _, rest = create_initial_objects(sim.store, scenario_plan(w))  # every one admitted: checked before
        if sample is not None:
            from berth.sim.timeline import Timeline

            timeline = Timeline(sample)
            timeline.attach(sim, run_end(rest, until))
        sim.run(rest, until)
        objects = sim.objects()
        victims = sim.scheduler.stats.preemption_victims.total
    finally:
        latency.unsubscribe()
        sim.close()
    out: dict[str, Any] = dict(_cluster_metrics(objects))
    if timeline is not None:
        from berth.sim.compare.series import timeline_series

        out["series"] = timeline_series(timeline)
    waits = latency.seconds()
    out["preemptions"] = round(victims)
    out["latencyP50"] = percentile(waits, 50)
    out["latencyP99"] = percentile(waits, 99)
    return out


def _cluster_metrics(objects: Sequence[Mapping[str, Any]]) -> dict[str, Metric]:
    from berth.descheduler.view import is_node_ready

    ready: dict[str, dict[str, int]] = {}
    for o in objects:
        if o.get("kind") == "Node" and is_node_ready(o):
            ready[str(o["metadata"]["name"])] = node_allocatable(o)
    used: dict[str, dict[str, int]] = {name: {} for name in ready}
    placed = pending = 0
    for o in objects:
        if o.get("kind") != "Pod":
            continue
        node = (o.get("spec") or {}).get("nodeName")
        if not node:
            pending += 1
            continue
        placed += 1
        if node in used and (o.get("status") or {}).get("phase") not in _FINISHED:
            for k, v in pod_requests(o).items():
                used[node][k] = used[node].get(k, 0) + v
    return {
        "placed": placed,
        "pending": pending,
        "cpuAllocation": _ratio(used, ready, "cpu"),
        "memoryAllocation": _ratio(used, ready, "memory"),
        "imbalance": _imbalance([(used[n].get("cpu", 0), ready[n].get("cpu", 0)) for n in sorted(ready)]),
    }


def _ratio(used: Mapping[str, Mapping[str, int]], alloc: Mapping[str, Mapping[str, int]], res: str) -> float:
    total = sum(a.get(res, 0) for a in alloc.values())
    return sum(u.get(res, 0) for u in used.values()) / total if total else 0.0


def _imbalance(rows: Sequence[tuple[int, int]]) -> float:
    """Population standard deviation of requested / allocatable over the nodes with some allocatable."""
    utilisation = [u / a for u, a in rows if a > 0]
    return statistics.pstdev(utilisation) if utilisation else 0.0


def _trace(w: TraceWorkload, policy: str, seed: int, every: float | None = None) -> dict[str, Any]:
    from berth.sim.traces.openb import MIB, load_nodes, load_pods, replay_workload
    from berth.sim.traces.replay import cluster_of, replay

    opts = w.options(policy, seed)
    nodes = load_nodes(opts.folder, opts.nodes)
    pods = load_pods(opts.folder, opts.pod_list)
    workload = replay_workload(pods, cluster_of(nodes).gpu_capacity_milli, opts.inflation, seed)
    result = replay(nodes, workload, pods, policy, seed)
    report = result.report(series=False)
    cpu = dict.fromkeys((n.name for n in nodes), 0)
    memory = dict.fromkeys((n.name for n in nodes), 0)
    for pod, placement in zip(workload, result.placements, strict=True):
        if placement.node is not None:
            cpu[placement.node] += pod.cpu_milli
            memory[placement.node] += pod.memory
    cpu_total = sum(n.cpu_milli for n in nodes)
    memory_total = sum(n.memory_mib * MIB for n in nodes)
    out: dict[str, Any] = {}
    if every is not None:
        from berth.sim.compare.series import trace_series

        out["series"] = trace_series(result, int(every))
    return out | {
        "placed": result.pods_scheduled,
        "pending": result.pods_failed,
        "gpuAllocation": float(report["gpuAllocationRatio"]),
        "cpuAllocation": sum(cpu.values()) / cpu_total if cpu_total else 0.0,
        "memoryAllocation": sum(memory.values()) / memory_total if memory_total else 0.0,
        "fragmentation": float(report["fragmentationRatio"]),
        "imbalance": _imbalance([(cpu[n.name], n.cpu_milli) for n in nodes]),
        "preemptions": 0,
        "latencyP50": None,
        "latencyP99": None,
        "replayCpuSeconds": result.cpu_seconds,
    }


__all__ = ["METRICS", "TRACE_ONLY", "Metric", "Outcome", "RunFailed", "percentile", "run_one"]
