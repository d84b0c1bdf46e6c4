"""The scheduler_perf workloads of kube (test/integration/scheduler_perf): node and pod templates, op lists.

Each workload mirrors its ``performance-config.yaml`` entry (the ``5000Nodes_*`` performance variants):
the same node template and zone labelling (``labelNodePrepareStrategy``), the same pod templates, the same
namespaces, and the same counts. Objects are created in kube's op order; the last op is the measured one.
Nodes carry ``kubernetes.io/hostname`` as scheduler_perf's node preparer sets it.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from workloads import make_node

ZONE = "topology.kubernetes.io/zone"
HOSTNAME = "kubernetes.io/hostname"
Obj = dict[str, Any]


# ----- pod templates (test/integration/scheduler_perf/templates/*.yaml) ------------------------------
def _pause(image: str = "registry.k8s.io/pause:3.10.1") -> Obj:
    res = {"cpu": "100m", "memory": "500Mi"}
    return {
        "image": image,
        "name": "pause",
        "ports": [{"containerPort": 80}],
        "resources": {"limits": dict(res), "requests": dict(res)},
    }


def _pod(name: str, namespace: str, spec: Obj, labels: dict[str, str] | None = None, image: str = "") -> Obj:
    meta: Obj = {"name": name, "namespace": namespace}
    if labels:
        meta["labels"] = dict(labels)
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": meta,
        "spec": {**spec, "containers": [_pause(image) if image else _pause()]},
    }


def _term(color: str, topology_key: str) -> Obj:
    return {
        "labelSelector": {"matchLabels": {"color": color}},
        "topologyKey": topology_key,
        "namespaces": ["sched-1", "sched-0"],
    }


def pod_default(name: str, namespace: str) -> Obj:
    """pod-default.yaml."""
    return _pod(name, namespace, {})


def pod_with_pod_affinity(name: str, namespace: str) -> Obj:
    """pod-with-pod-affinity.yaml: required affinity to color=blue pods in the same zone."""
    spec = {
        "affinity": {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [_term("blue", ZONE)]}}
    }
    return _pod(name, namespace, spec, {"color": "blue"})


def pod_with_pod_anti_affinity(name: str, namespace: str) -> Obj:
    """pod-with-pod-anti-affinity.yaml: required anti-affinity to color=green pods on the same host."""
    spec = {
        "affinity": {
            "podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [_term("green", HOSTNAME)]}
        }
    }
    return _pod(name, namespace, spec, {"color": "green"}, image="registry.k8s.io/pause:3.10.2")


def pod_with_preferred_pod_affinity(name: str, namespace: str) -> Obj:
    """pod-with-preferred-pod-affinity.yaml: weight-1 affinity to color=red pods on the same host."""
    pref = [{"podAffinityTerm": _term("red", HOSTNAME), "weight": 1}]
    spec = {"affinity": {"podAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": pref}}}
    return _pod(name, namespace, spec, {"color": "red"})


def pod_with_preferred_pod_anti_affinity(name: str, namespace: str) -> Obj:
    """pod-with-preferred-pod-anti-affinity.yaml: weight-1 anti-affinity to color=yellow pods on the same host."""
    pref = [{"podAffinityTerm": _term("yellow", HOSTNAME), "weight": 1}]
    spec = {"affinity": {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": pref}}}
    return _pod(name, namespace, spec, {"color": "yellow"})


def pod_with_node_affinity(name: str, namespace: str) -> Obj:
    """pod-with-node-affinity.yaml: required zone In [zone1, zone2]."""
    term = {"matchExpressions": [{"key": ZONE, "operator": "In", "values": ["zone1", "zone2"]}]}
    spec = {
        "affinity": {
            "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [term]}}
        }
    }
    return _pod(name, namespace, spec)


def pod_with_topology_spreading(name: str, namespace: str) -> Obj:
    """pod-with-topology-spreading.yaml: zone maxSkew 5, DoNotSchedule, over color=blue pods."""
    spec = {
        "topologySpreadConstraints": [
            {
                "maxSkew": 5,
                "topologyKey": ZONE,
                "whenUnsatisfiable": "DoNotSchedule",
                "labelSelector": {"matchLabels": {"color": "blue"}},
            }
        ]
    }
    return _pod(name, namespace, spec, {"color": "blue"}, image="registry.k8s.io/pause:3.10")


PodTemplate = Callable[[str, str], Obj]


# ----- workloads -------------------------------------------------------------------------------------
@dataclass(frozen=True)
class PodsOp:
    """A createPods op: ``count`` pods of ``template`` in ``namespace`` (the share of the workload's pods)."""

    template: PodTemplate
    namespace: str
    count: int


@dataclass(frozen=True)
class Workload:
    """One scheduler_perf test case at its performance size, with Berth's target and kube's CI floor."""

    name: str
    nodes: int
    zones: tuple[str, ...]  # labelNodePrepareStrategy values for topology.kubernetes.io/zone; () for none
    init: tuple[PodsOp, ...]
    measured: PodsOp
    target: float | None  # Berth's pods/s target (issue 6); None: no floor, report only
    kube_floor: float | None  # the threshold kube's ci-benchmark-scheduler-perf enforces

    @property
    def init_pods(self) -> int:
        """All init pods of the workload at its own size."""
        return sum(op.count for op in self.init)


def _same(
    template: PodTemplate, init_ns: str, measure_ns: str, init: int, measure: int
) -> tuple[PodsOp, ...]:
    return (PodsOp(template, init_ns, init), PodsOp(template, measure_ns, measure))


def _build() -> dict[str, Workload]:
    out: list[Workload] = []

    def add(
        name: str,
        nodes: int,
        zones: tuple[str, ...],
        ops: tuple[PodsOp, ...],
        target: float | None,
        floor: float | None,
    ) -> None:
        out.append(Workload(name, nodes, zones, ops[:-1], ops[-1], target, floor))

    # createPods without a namespace uses "namespace-<op index>" in scheduler_perf
    add("SchedulingBasic", 5000, (), _same(pod_default, "namespace-1", "namespace-2", 1000, 10000), 3000, 680)
    add(
        "SchedulingPodAntiAffinity",
        5000,
        (),
        _same(pod_with_pod_anti_affinity, "sched-0", "sched-1", 1000, 2000),
        600,
        60,
    )
    add(
        "SchedulingPodAffinity",
        5000,
        ("zone1",),
        _same(pod_with_pod_affinity, "sched-0", "sched-1", 5000, 5000),
        350,
        35,
    )
    add(
        "SchedulingPreferredPodAffinity",
        5000,
        (),
        _same(pod_with_preferred_pod_affinity, "sched-0", "sched-1", 5000, 5000),
        900,
        90,
    )
    add(
        "SchedulingPreferredPodAntiAffinity",
        5000,
        (),
        _same(pod_with_preferred_pod_anti_affinity, "sched-0", "sched-1", 5000, 5000),
        900,
        90,
    )
    add(
        "SchedulingNodeAffinity",
        5000,
        ("zone1",),
        _same(pod_with_node_affinity, "namespace-1", "namespace-2", 5000, 10000),
        2200,
        220,
    )
    add(
        "TopologySpreading",
        5000,
        ("moon-1", "moon-2", "moon-3"),
        (PodsOp(pod_default, "namespace-1", 5000), PodsOp(pod_with_topology_spreading, "namespace-2", 5000)),
        None,
        460,
    )
    mixed_init = tuple(
        PodsOp(t, "sched-0", 2000)
        for t in (
            pod_default,
            pod_with_pod_affinity,
            pod_with_pod_anti_affinity,
            pod_with_preferred_pod_affinity,
            pod_with_preferred_pod_anti_affinity,
        )
    )
    add(
        "MixedSchedulingBasePod",
        5000,
        ("zone1",),
        (*mixed_init, PodsOp(pod_default, "namespace-7", 5000)),
        1400,
        140,
    )
    return {w.name: w for w in out}


WORKLOADS: dict[str, Workload] = _build()


def scaled(count: int, nodes: int, base_nodes: int) -> int:
    """``count`` scaled by ``nodes / base_nodes`` (at least 1 when ``count`` is positive)."""
    if count <= 0:
        return 0
    return max(1, round(count * nodes / base_nodes))


def build(w: Workload, nodes: int | None = None, seed: int = 0) -> tuple[list[Obj], list[Obj]]:
    """(setup objects: nodes then init pods in op order, measured pods) for ``w`` at ``nodes`` nodes.

    Pod counts scale with the node count (``--nodes``), keeping pods per node as at the workload's size.
    Zone labels are drawn per node from the workload's values with a seeded RNG, as kube's
    LabelNodePrepareStrategy draws them at random.
    """
    n = w.nodes if nodes is None else nodes
    rng = random.Random(seed)
    setup: list[Obj] = []
    for i in range(n):
        labels = {ZONE: rng.choice(w.zones)} if w.zones else None
        setup.append(make_node(f"scheduler-perf-{i}", labels=labels))
    for k, op in enumerate(w.init):
        setup += [op.template(f"init-{k}-{j}", op.namespace) for j in range(scaled(op.count, n, w.nodes))]
    m = w.measured
    measured = [m.template(f"pod-{j}", m.namespace) for j in range(scaled(m.count, n, w.nodes))]
    return setup, measured
