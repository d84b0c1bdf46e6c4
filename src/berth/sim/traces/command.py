"""``berth trace openb``: load the trace, build the paper's workload, then replay it under one policy (or emit
the nodes and pods as a Scenario for ``berth simulate``)."""

from __future__ import annotations

import json
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

import yaml

from berth.scheduler.plugins.gpushare.policies import POLICIES
from berth.scheduler.plugins.gpushare.state import GpuPod
from berth.sim.traces.openb import (
    PodTimes,
    TraceError,
    load_nodes,
    load_pod_times,
    load_pods,
    node_object,
    pod_object,
    replay_workload,
)
from berth.sim.traces.replay import ReplayResult, cluster_of, replay, replay_timed, timed_events

SCORE_PLUGIN_POLICY = {
    "RandomScore": "Random",
    "DotProductScore": "DotProduct",
    "GpuClusteringScore": "GpuClustering",
    "GpuPackingScore": "GpuPacking",
    "BestFitScore": "BestFit",
    "FGDScore": "FGD",
}


@dataclass(frozen=True, slots=True)
class OpenbOptions:
    """The options of one ``berth trace openb`` run."""

    folder: Path
    pod_list: str = "default"
    nodes: str = "gpu"
    inflation: float = 1.3
    seed: int = 42
    policy: str = "FGD"
    timed: bool = False
    """Replay at the trace's creation and deletion times instead of the paper's inflated arrivals."""


def policy_name(name: str) -> str:
    """The policy called ``name``: a paper policy (case-insensitive) or its score plugin's name (``FGDScore``)."""
    if name in SCORE_PLUGIN_POLICY:
        return SCORE_PLUGIN_POLICY[name]
    for p in POLICIES:
        if p.lower() == name.lower():
            return p
    raise TraceError(f'unknown policy "{name}" (known: {", ".join(POLICIES)})')


def policy_from_config(path: Path) -> str:
    """The policy of a KubeSchedulerConfiguration: its first profile's enabled GPU score plugin with the largest
    weight (the upstream experiments' rule)."""
    try:
        doc = yaml.safe_load(path.read_text())
    except (OSError, yaml.YAMLError) as e:
        raise TraceError(f"{path}: {e}") from None
    profiles = doc.get("profiles") if isinstance(doc, dict) else None
    if not isinstance(profiles, list) or not profiles or not isinstance(profiles[0], dict):
        raise TraceError(f"{path}: profiles: no scheduler profile")
    plugins = profiles[0].get("plugins") or {}
    best: tuple[int, str] | None = None
    for point in ("score", "multiPoint"):
        for entry in (plugins.get(point) or {}).get("enabled") or []:
            name = entry.get("name", "") if isinstance(entry, dict) else ""
            if name in SCORE_PLUGIN_POLICY:
                weight = int(entry.get("weight", 1) or 1)
                if best is None or weight > best[0]:
                    best = (weight, name)
    if best is None:
        known = ", ".join(SCORE_PLUGIN_POLICY)
        raise TraceError(f"{path}: profiles[0].plugins.score: no GPU score plugin enabled (one of {known})")
    return SCORE_PLUGIN_POLICY[best[1]]


def check_options(opts: OpenbOptions) -> None:
    """Reject bad options before any work: a missing folder, inflation ≤ 0, an unknown node list."""
    if not opts.folder.is_dir():
        raise TraceError(f'trace folder "{opts.folder}" does not exist or is not a directory')
    if not opts.inflation > 0:
        raise TraceError(f"--inflation must be > 0, got {opts.inflation}")
    if opts.nodes not in ("gpu", "all"):
        raise TraceError(f'--nodes must be gpu or all, got "{opts.nodes}"')


def run_openb(opts: OpenbOptions, quiet: bool = True) -> ReplayResult:
    """Replay the trace under ``opts``; a progress bar on a terminal unless ``quiet``."""
    check_options(opts)
    nodes = load_nodes(opts.folder, opts.nodes)
    pods = load_pods(opts.folder, opts.pod_list)
    if opts.timed:
        times = load_pod_times(opts.folder, opts.pod_list)
        progress = None if quiet else _progress(2 * len(pods), opts.policy)
        try:
            return replay_timed(
                nodes, pods, times, opts.policy, opts.seed, progress.tick if progress else None
            )
        finally:
            if progress is not None:
                progress.close()
    workload = replay_workload(pods, cluster_of(nodes).gpu_capacity_milli, opts.inflation, opts.seed)
    progress = None if quiet else _progress(len(workload), opts.policy)
    try:
        return replay(nodes, workload, pods, opts.policy, opts.seed, progress.tick if progress else None)
    finally:
        if progress is not None:
            progress.close()


def emit_openb(opts: OpenbOptions, out: TextIO) -> int:
    """Write the trace's nodes (initial objects) and a Scenario creating the workload's pods (one a second, or
    with ``timed`` at their recorded times, deleted at theirs); returns the number of pods."""
    check_options(opts)
    nodes = load_nodes(opts.folder, opts.nodes)
    pods = load_pods(opts.folder, opts.pod_list)
    docs: list[dict[str, Any]] = [node_object(n) for n in nodes]
    steps: list[dict[str, Any]]
    if opts.timed:
        steps = _timed_steps(pods, load_pod_times(opts.folder, opts.pod_list))
        count = len(pods)
    else:
        workload = replay_workload(pods, cluster_of(nodes).gpu_capacity_milli, opts.inflation, opts.seed)
        steps = [{"at": f"{i + 1}s", "create": [pod_object(p)]} for i, p in enumerate(workload)]
        count = len(workload)
    docs.append(
        {
            "apiVersion": "berth.dev/v1alpha1",
            "kind": "Scenario",
            "metadata": {"name": f"openb-{opts.pod_list}-{'timed' if opts.timed else opts.seed}"},
            "spec": {"steps": steps},
        }
    )
    yaml.safe_dump_all(docs, out, sort_keys=False)
    return count


def _timed_steps(pods: list[GpuPod], times: dict[str, PodTimes]) -> list[dict[str, Any]]:
    """One Scenario step per second of the trace at which pods are created or deleted."""
    steps: list[dict[str, Any]] = []
    for second, kind, i in timed_events(pods, times):
        if not steps or steps[-1]["at"] != f"{second}s":
            steps.append({"at": f"{second}s"})
        step = steps[-1]
        if kind == 1:
            step.setdefault("create", []).append(pod_object(pods[i]))
        else:
            step.setdefault("delete", []).append(
                {"apiVersion": "v1", "kind": "Pod", "namespace": "default", "name": pods[i].name}
            )
    return steps


def write_report(result: ReplayResult, path: Path) -> None:
    """The JSON report of ``--report``."""
    path.write_text(json.dumps(result.report(), indent=1) + "\n")


def summary(result: ReplayResult) -> str:
    """The one-paragraph summary printed after a run."""
    r = result.report(series=False)
    return (
        f"policy {r['policy']} seed {r['seed']}: {r['podsScheduled']} pods scheduled, {r['podsFailed']} failed; "
        f"GPU allocation {100 * r['gpuAllocationRatio']:.2f}% at {100 * r['arrivedGpuRatio']:.2f}% arrived, "
        f"fragmentation {100 * r['fragmentationRatio']:.2f}% of idle GPU; {r['wallSeconds']:.1f}s wall, "
        f"{r['cpuSeconds']:.1f}s CPU\n"
    )


class _Bar:
    """A rich progress bar over arrivals, shown on standard error once the run passes a second."""

    def __init__(self, total: int, policy: str) -> None:
        from rich.console import Console
        from rich.progress import Progress

        self.progress = Progress(console=Console(stderr=True), transient=True)
        self.task = self.progress.add_task(f"openb {policy}", total=total)
        self.started = False
        self._time = time.monotonic
        self._t0 = self._time()
        self._n = 0

    def tick(self, k: int) -> None:
        """Count arrival ``k``; draw at most every 256 arrivals, after the first second."""
        self._n = k + 1
        if self._n % 256:
            return
        if not self.started:
            if self._time() - self._t0 < 1.0:
                return
            self.progress.start()
            self.started = True
        self.progress.update(self.task, completed=self._n)

    def close(self) -> None:
        """Remove the bar."""
        if self.started:
            self.progress.stop()


def _progress(total: int, policy: str) -> _Bar | None:
    return _Bar(total, policy) if sys.stderr.isatty() else None


__all__ = [
    "SCORE_PLUGIN_POLICY",
    "OpenbOptions",
    "check_options",
    "emit_openb",
    "policy_from_config",
    "policy_name",
    "run_openb",
    "summary",
    "write_report",
]
