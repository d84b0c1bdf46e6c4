"""LowNodeUtilization and HighNodeUtilization: upstream's plugin table tests (lownodeutilization_test.go,
highnodeutilization_test.go), run through the harness with DefaultEvictor, plus Berth's own cases."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from harness import run_plugin

from berth.descheduler.evictor import Limits
from builders import PodBuilder, make_node, make_pod

Obj = dict[str, Any]
Mod = Callable[[PodBuilder], PodBuilder]

EXT = "example.com/foo"
LOW_PRIORITY = 0
HIGH_PRIORITY = 10000
SYSTEM_CRITICAL_PRIORITY = 2_000_000_000
MIRROR_ANNOTATIONS = {
    "kubernetes.io/created-by": '{"kind":"SerializedReference","apiVersion":"v1","reference":{"kind":"Pod"}}',
    "kubernetes.io/config.source": "api",
    "kubernetes.io/config.mirror": "mirror",
}


def node(
    name: str,
    millicpu: int,
    memory: int,
    pods: int,
    *,
    unschedulable: bool = False,
    ext: int | None = None,
    labels: dict[str, str] | None = None,
    taints: tuple[dict[str, str], ...] = (),
) -> Obj:
    """``BuildTestNode(name, millicpu, mem, pods, ...)``: capacity = allocatable."""
    b = make_node(name).capacity(cpu=f"{millicpu}m", memory=str(memory), pods=str(pods))
    if ext is not None:
        b.capacity({EXT: str(ext)})
    if labels:
        b.label(labels)
    if unschedulable:
        b.unschedulable()
    if taints:
        b.taints(*taints)
    return b.obj()


def pod(name: str, millicpu: int, memory: int, node_name: str, *mods: Mod) -> Obj:
    """``BuildTestPod(name, cpu, memory, nodeName, ...)``: one container requesting cpu and memory (even
    zero ones), in namespace ``default``."""
    b = make_pod(name).node(node_name).req(cpu=f"{millicpu}m", memory=str(memory))
    for mod in mods:
        b = mod(b)
    return b.obj()


def rs(b: PodBuilder) -> PodBuilder:
    """``SetRSOwnerRef``."""
    return b.owner("ReplicaSet", "replicaset-1", "", api_version="v1", controller=None)


def ds(b: PodBuilder) -> PodBuilder:
    """``SetDSOwnerRef``."""
    return b.owner("DaemonSet", "", "", api_version="v1", controller=None)


def normal_owner(b: PodBuilder) -> PodBuilder:
    """``SetNormalOwnerRef`` (an owner of kind Pod)."""
    return b.owner("Pod", "", "", api_version="v1", controller=None)


def local_storage_mirror(b: PodBuilder) -> PodBuilder:
    """A pod with a hostPath/emptyDir volume that is also a mirror pod (upstream's ``withLocalStorage``)."""
    volume = {"name": "sample", "hostPath": {"path": "somePath"}, "emptyDir": {"sizeLimit": "10"}}
    return normal_owner(b).spec(volumes=[volume]).annotate(MIRROR_ANNOTATIONS)


def critical(b: PodBuilder) -> PodBuilder:
    """A system-critical pod in kube-system (upstream's ``withCriticalPod``)."""
    return normal_owner(b).ns("kube-system").priority(SYSTEM_CRITICAL_PRIORITY)


def critical_no_owner(b: PodBuilder) -> PodBuilder:
    """A system-critical pod in kube-system without an owner."""
    return b.ns("kube-system").priority(SYSTEM_CRITICAL_PRIORITY)


def prio(value: int) -> Mod:
    """``SetPodPriority``."""
    return lambda b: b.priority(value)


def ns(namespace: str) -> Mod:
    """Set the pod's namespace."""
    return lambda b: b.ns(namespace)


def best_effort(b: PodBuilder) -> PodBuilder:
    """``MakeBestEffortPod``: no requests, no limits."""
    return b.spec(containers=[{"name": "c", "image": "busybox"}])


def ext(amount: int) -> Mod:
    """``SetPodExtendedResourceRequest(pod, example.com/foo, amount)``."""
    return lambda b: b.req({EXT: str(amount)})


def selector(**labels: str) -> Mod:
    """A ``spec.nodeSelector``."""
    return lambda b: b.node_selector(labels)


def required_affinity(key: str, *values: str) -> Mod:
    """Required node affinity ``key In values``."""
    term = {"matchExpressions": [{"key": key, "operator": "In", "values": list(values)}]}
    return lambda b: b.node_affinity(term)


def tolerate(key: str, value: str) -> Mod:
    """A toleration ``key=value`` (operator and effect empty)."""
    return lambda b: b.toleration(key=key, value=value)


# ---- LowNodeUtilization (upstream TestLowNodeUtilization) ------------------------------------------------

N1, N2, N3 = "n1", "n2", "n3"
CPU_PODS_30 = {"cpu": 30, "pods": 30}
CPU_PODS_50 = {"cpu": 50, "pods": 50}


def _three_nodes(pods_n1: int = 9) -> list[Obj]:
    return [
        node(N1, 4000, 3000, pods_n1),
        node(N2, 4000, 3000, 10),
        node(N3, 4000, 3000, 10, unschedulable=True),
    ]


def _unevictable_n1(*names: str) -> list[Obj]:
    """p6 (DaemonSet), p7 (local storage + mirror), p8 (system critical) on n1, under `names`."""
    a, b, c = names or ("p6", "p7", "p8")
    return [
        pod(a, 400, 0, N1, ds),
        pod(b, 400, 0, N1, local_storage_mirror),
        pod(c, 400, 0, N1, critical),
    ]


def _rs_pods(node_name: str, *names: str, cpu: int = 400, memory: int = 0) -> list[Obj]:
    return [pod(n, cpu, memory, node_name, rs) for n in names]


LOW_CASES: list[tuple[str, dict[str, Any], list[Obj], list[str] | int]] = [
    (
        "no evictable pods",
        {"thresholds": CPU_PODS_30, "targetThresholds": CPU_PODS_50},
        [
            *_three_nodes(),
            pod("p1", 400, 0, N1, ds),
            pod("p2", 400, 0, N1, ds),
            pod("p3", 400, 0, N1, ds),
            pod("p4", 400, 0, N1, ds),
            pod("p5", 400, 0, N1, local_storage_mirror),
            pod("p6", 400, 0, N1, critical_no_owner),
            pod("p9", 400, 0, N2, rs),
        ],
        [],
    ),
    (
        # the reference case: 8 x 400m on a 4000m node, thresholds cpu/pods 30, targets 50
        "without priorities",
        {"thresholds": CPU_PODS_30, "targetThresholds": CPU_PODS_50},
        [
            *_three_nodes(),
            *_rs_pods(N1, "p1", "p2", "p3", "p4", "p5"),
            pod("p6", 400, 0, N1, ds),
            pod("p7", 400, 0, N1, local_storage_mirror),
            pod("p8", 400, 0, N1, critical_no_owner),
            pod("p9", 400, 0, N2, rs),
        ],
        ["p1", "p2", "p3", "p4"],
    ),
    (
        "without priorities, but excluding namespaces",
        {
            "thresholds": CPU_PODS_30,
            "targetThresholds": CPU_PODS_50,
            "evictableNamespaces": {"exclude": ["namespace1"]},
        },
        [
            *_three_nodes(),
            *(pod(n, 400, 0, N1, normal_owner, ns("namespace1")) for n in ("p1", "p2", "p3", "p4", "p5")),
            pod("p6", 400, 0, N1, ds),
            pod("p7", 400, 0, N1, local_storage_mirror),
            pod("p8", 400, 0, N1, critical_no_owner),
            pod("p9", 400, 0, N2, rs),
        ],
        [],
    ),
    (
        # upstream builds the plugin with evictableNamespaces.include (which validation refuses, see
        # test_nodeutilization_args) and the plugin ignores it: only the owned pods go
        "without priorities, but include only default namespace (include ignored)",
        {"thresholds": CPU_PODS_30, "targetThresholds": CPU_PODS_50},
        [
            *_three_nodes(),
            *_rs_pods(N1, "p1", "p2"),
            pod("p3", 400, 0, N1, ns("namespace3")),
            pod("p4", 400, 0, N1, ns("namespace4")),
            pod("p5", 400, 0, N1, ns("namespace5")),
            *_unevictable_n1(),
            pod("p9", 400, 0, N2, rs),
        ],
        ["p1", "p2"],
    ),
    (
        "without priorities stop when cpu capacity is depleted",
        {"thresholds": CPU_PODS_30, "targetThresholds": CPU_PODS_50},
        [
            *_three_nodes(),
            *_rs_pods(N1, "p1", "p2", "p3", "p4", "p5"),
            *_unevictable_n1(),
            pod("p9", 400, 0, N2, rs),
        ],
        4,
    ),
    (
        "with priorities",
        {"thresholds": CPU_PODS_30, "targetThresholds": CPU_PODS_50},
        [
            *_three_nodes(),
            *(pod(n, 400, 0, N1, rs, prio(HIGH_PRIORITY)) for n in ("p1", "p2", "p3", "p4")),
            pod("p5", 400, 0, N1, rs, prio(LOW_PRIORITY)),
            pod("p6", 400, 0, N1, ds, prio(HIGH_PRIORITY)),
            pod("p7", 400, 0, N1, local_storage_mirror, prio(LOW_PRIORITY)),
            pod("p8", 400, 0, N1, critical),
            pod("p9", 400, 0, N2, rs),
        ],
        ["p5", "p1", "p2", "p3"],
    ),
    (
        "without priorities evicting best-effort pods only",
        {"thresholds": CPU_PODS_30, "targetThresholds": CPU_PODS_50},
        [
            *_three_nodes(),
            pod("p1", 400, 0, N1, rs, best_effort),
            pod("p2", 400, 0, N1, rs, best_effort),
            pod("p3", 400, 0, N1, rs),
            pod("p4", 400, 0, N1, rs, best_effort),
            pod("p5", 400, 0, N1, rs, best_effort),
            *_unevictable_n1(),
            pod("p9", 400, 0, N2, rs),
        ],
        ["p1", "p2", "p4", "p5"],
    ),
    (
        # 4 pods could go for pods, only 3 before the extended resource is used up
        "with extended resource",
        {"thresholds": {"pods": 30, EXT: 30}, "targetThresholds": {"pods": 50, EXT: 50}},
        [
            node(N1, 4000, 3000, 9, ext=8),
            node(N2, 4000, 3000, 10, ext=8),
            node(N3, 4000, 3000, 10, unschedulable=True),
            *(pod(n, 0, 0, N1, rs, ext(1)) for n in ("p1", "p2", "p3", "p4", "p5")),
            pod("p6", 0, 0, N1, normal_owner, ext(1)),
            pod("p7", 0, 0, N1, local_storage_mirror, ext(1)),
            pod("p8", 0, 0, N1, critical, ext(1)),
            pod("p9", 0, 0, N2, rs, ext(1)),
        ],
        ["p1", "p2", "p3"],
    ),
    (
        # n2 has none of the extended resource: both nodes are underutilized, none is over
        "with extended resource in some of nodes",
        {"thresholds": {"pods": 30, EXT: 30}, "targetThresholds": {"pods": 50, EXT: 50}},
        [
            node(N1, 4000, 3000, 9, ext=8),
            node(N2, 4000, 3000, 10),
            node(N3, 4000, 3000, 10, unschedulable=True),
            pod("p1", 0, 0, N1, rs, ext(1)),
            pod("p9", 0, 0, N2, rs),
        ],
        [],
    ),
    (
        "with extended resource in some of nodes with deviation",
        {
            "thresholds": {"pods": 5, EXT: 10},
            "targetThresholds": {"pods": 5, EXT: 10},
            "useDeviationThresholds": True,
        },
        [
            node(N1, 4000, 3000, 10, ext=8),
            node(N2, 4000, 3000, 10, ext=8),
            node(N3, 4000, 3000, 10, unschedulable=True),
            pod("p1", 0, 0, N1, rs, ext(1)),
            pod("p2", 0, 0, N2, rs, ext(7)),
            pod("p3", 0, 0, N2, rs),
            pod("p8", 0, 0, N3, rs),
            pod("p9", 0, 0, N3, rs),
        ],
        ["p2"],
    ),
    (
        "without priorities, but only other node is unschedulable",
        {"thresholds": CPU_PODS_30, "targetThresholds": CPU_PODS_50},
        [
            node(N1, 4000, 3000, 9),
            node(N2, 4000, 3000, 10, unschedulable=True),
            *_rs_pods(N1, "p1", "p2", "p3", "p4", "p5"),
            *_unevictable_n1(),
        ],
        [],
    ),
    (
        "without priorities, but only other node doesn't match pod node selector for p4 and p5",
        {"thresholds": CPU_PODS_30, "targetThresholds": CPU_PODS_50},
        [
            node(N1, 4000, 3000, 9),
            node(N2, 4000, 3000, 10, labels={"datacenter": "east"}),
            *_rs_pods(N1, "p1", "p2", "p3"),
            pod("p4", 400, 0, N1, normal_owner, selector(datacenter="west")),
            pod("p5", 400, 0, N1, normal_owner, selector(datacenter="west")),
            *_unevictable_n1(),
        ],
        ["p1", "p2", "p3"],
    ),
    (
        "without priorities, but only other node doesn't match pod node affinity for p4 and p5",
        {"thresholds": CPU_PODS_30, "targetThresholds": CPU_PODS_50},
        [
            node(N1, 4000, 3000, 9),
            node(N2, 4000, 3000, 10, labels={"datacenter": "east"}),
            *_rs_pods(N1, "p1", "p2", "p3"),
            pod("p4", 400, 0, N1, normal_owner, required_affinity("datacenter", "west")),
            pod("p5", 400, 0, N1, normal_owner, required_affinity("datacenter", "west")),
            *_unevictable_n1(),
            pod("p9", 0, 0, N2, rs),
        ],
        ["p1", "p2", "p3"],
    ),
    (
        "deviation thresholds",
        {
            "thresholds": {"cpu": 5, "pods": 5},
            "targetThresholds": {"cpu": 5, "pods": 5},
            "useDeviationThresholds": True,
        },
        [
            *_three_nodes(),
            *_rs_pods(N1, "p1", "p2", "p3", "p4", "p5"),
            *_unevictable_n1(),
            pod("p9", 400, 0, N2, rs),
        ],
        ["p1", "p2"],
    ),
    (
        # n1 and n2 have all their memory requested: the destinations have no memory left
        "deviation thresholds and overevicting memory",
        {
            "thresholds": {"cpu": 5, "pods": 5},
            "targetThresholds": {"cpu": 5, "pods": 5},
            "useDeviationThresholds": True,
        },
        [
            node(N1, 4000, 3000, 10),
            node(N2, 4000, 3000, 10),
            node(N3, 4000, 3000, 10, unschedulable=True),
            *_rs_pods(N1, "p1", "p2", "p3", "p4", "p5", memory=375),
            pod("p6", 400, 375, N1, ds),
            pod("p7", 400, 375, N1, local_storage_mirror),
            pod("p8", 400, 375, N1, critical),
            pod("p9", 400, 3000, N2, rs),
        ],
        [],
    ),
    (
        "without priorities different evictions for requested and actual resources",
        {"thresholds": CPU_PODS_30, "targetThresholds": CPU_PODS_50},
        [
            node(N1, 4000, 3000, 9),
            node(N2, 4000, 3000, 10, labels={"datacenter": "east"}),
            *_rs_pods(N1, "p1", "p2", "p3"),
            pod("p4", 400, 0, N1, normal_owner, required_affinity("datacenter", "west")),
            pod("p5", 400, 0, N1, normal_owner, required_affinity("datacenter", "west")),
            *_unevictable_n1(),
            pod("p9", 0, 0, N2, rs),
        ],
        3,
    ),
    (
        "without priorities with node eviction limit",
        {"thresholds": CPU_PODS_30, "targetThresholds": CPU_PODS_50, "evictionLimits": {"node": 2}},
        [
            *_three_nodes(),
            *_rs_pods(N1, "p1", "p2", "p3", "p4", "p5"),
            pod("p6", 400, 0, N1, ds),
            pod("p7", 400, 0, N1, local_storage_mirror),
            pod("p8", 400, 0, N1, critical_no_owner),
            pod("p9", 400, 0, N2, rs),
        ],
        ["p1", "p2"],
    ),
]


def _check(evicted: list[str], expected: list[str] | int) -> None:
    if isinstance(expected, int):
        assert len(evicted) == expected, evicted
    else:
        assert evicted == expected


@pytest.mark.parametrize(
    ("args", "objects", "expected"), [c[1:] for c in LOW_CASES], ids=[c[0] for c in LOW_CASES]
)
def test_low_node_utilization(args: dict[str, Any], objects: list[Obj], expected: list[str] | int) -> None:
    """Upstream's TestLowNodeUtilization (requested usage), DefaultEvictor with nodeFit."""
    _check(run_plugin(objects, "LowNodeUtilization", args, evictor_args={"nodeFit": True}), expected)


# ---- LowNodeUtilization with taints (upstream TestLowNodeUtilizationWithTaints) --------------------------

_TAINT = {"key": "key", "value": "value", "effect": "NoSchedule"}


def _taint_nodes(with_taints: bool) -> tuple[Obj, Obj, Obj]:
    return (
        node("n1", 2000, 3000, 10),
        node("n2", 1000, 3000, 10),
        node("n3", 1000, 3000, 10, taints=(_TAINT,) if with_taints else ()),
    )


def _n1_pods(count: int) -> list[Obj]:
    return [pod(f"pod_{i}_n1", 200, 0, "n1", rs) for i in range(1, count + 1)]


_TOLERATING = pod("tolerate_pod", 200, 0, "n1", rs, tolerate("key", "value"))
_LOW_TAINT_ARGS = {"thresholds": {"pods": 20}, "targetThresholds": {"pods": 70}}

LOW_TAINT_CASES: list[tuple[str, list[Obj], Limits, list[str]]] = [
    (
        "No taints",
        [*_taint_nodes(False), *_n1_pods(8), pod("pod_9_n2", 200, 0, "n2", rs)],
        Limits(per_node=1),
        ["pod_1_n1"],
    ),
    (
        "No pod tolerates node taint",
        [_taint_nodes(True)[0], _taint_nodes(True)[2], *_n1_pods(8), pod("pod_9_n3", 200, 0, "n3", rs)],
        Limits(per_node=0),
        [],
    ),
    (
        "Pod which tolerates node taint",
        [
            _taint_nodes(True)[0],
            _taint_nodes(True)[2],
            *_n1_pods(7),
            _TOLERATING,
            pod("pod_9_n3", 200, 0, "n3", rs),
        ],
        Limits(per_node=1),
        ["tolerate_pod"],
    ),
    (
        "Pod which tolerates node taint, set maxPodsToEvictTotal(0), should not be expelled",
        [
            _taint_nodes(True)[0],
            _taint_nodes(True)[2],
            *_n1_pods(7),
            _TOLERATING,
            pod("pod_9_n3", 200, 0, "n3", rs),
        ],
        Limits(per_node=0),
        [],
    ),
    (
        "Pod which tolerates node taint, total limit 0",
        [
            _taint_nodes(True)[0],
            _taint_nodes(True)[2],
            *_n1_pods(7),
            _TOLERATING,
            pod("pod_9_n3", 200, 0, "n3", rs),
        ],
        Limits(per_node=1, total=0),
        [],
    ),
]


@pytest.mark.parametrize(
    ("objects", "limits", "expected"), [c[1:] for c in LOW_TAINT_CASES], ids=[c[0] for c in LOW_TAINT_CASES]
)
def test_low_node_utilization_with_taints(objects: list[Obj], limits: Limits, expected: list[str]) -> None:
    """Upstream's TestLowNodeUtilizationWithTaints (its per-node limit is the expected count)."""
    got = run_plugin(
        objects, "LowNodeUtilization", _LOW_TAINT_ARGS, evictor_args={"nodeFit": True}, limits=limits
    )
    assert got == expected


# ---- HighNodeUtilization (upstream TestHighNodeUtilization) -----------------------------------------------

HIGH_CASES: list[tuple[str, dict[str, Any], list[Obj], list[str] | int]] = [
    (
        "no node below threshold usage",
        {"thresholds": {"cpu": 20, "pods": 20}},
        [
            node(N1, 4000, 3000, 10),
            node(N2, 4000, 3000, 10),
            node(N3, 4000, 3000, 10),
            *_rs_pods(N1, "p1", "p2", "p3"),
            *_rs_pods(N2, "p4", "p5", "p6"),
            *_rs_pods(N3, "p7", "p8", "p9"),
        ],
        [],
    ),
    (
        "no evictable pods",
        {"thresholds": {"cpu": 40, "pods": 40}},
        [
            node(N1, 4000, 3000, 9),
            node(N2, 4000, 3000, 10),
            node(N3, 4000, 3000, 10),
            pod("p1", 400, 0, N1, local_storage_mirror),
            pod("p2", 400, 0, N1, critical),
            pod("p3", 400, 0, N2, ds),
            pod("p4", 400, 0, N2, ds),
            *_rs_pods(N3, "p5", "p6", "p7", "p8"),
        ],
        [],
    ),
    (
        "no node to schedule evicted pods",
        {"thresholds": {"cpu": 20, "pods": 20}},
        [
            node(N1, 4000, 3000, 10),
            node(N2, 4000, 3000, 10),
            node(N3, 4000, 3000, 10, unschedulable=True),
            *_rs_pods(N1, "p1"),
            *_rs_pods(N2, "p2"),
            *_rs_pods(N3, "p3", "p4", "p5"),
        ],
        [],
    ),
    (
        "without priorities",
        {"thresholds": {"cpu": 30, "pods": 30}},
        [
            node(N1, 4000, 3000, 10),
            node(N2, 4000, 3000, 10),
            node(N3, 4000, 3000, 10, unschedulable=True),
            *_rs_pods(N1, "p1"),
            pod("p2", 400, 0, N1, critical),
            *_rs_pods(N2, "p3", "p4", "p5", "p6"),
            *_rs_pods(N3, "p7"),
        ],
        ["p7", "p1"],
    ),
    (
        "without priorities stop when resource capacity is depleted",
        {"thresholds": {"cpu": 30, "pods": 30}},
        [
            node(N1, 2000, 3000, 10),
            node(N2, 2000, 3000, 10),
            node(N3, 2000, 3000, 10, unschedulable=True),
            *_rs_pods(N1, "p1"),
            *_rs_pods(N2, "p2", "p3", "p4", "p5"),
            *_rs_pods(N3, "p6"),
        ],
        1,
    ),
    (
        "with priorities",
        {"thresholds": {"cpu": 30}},
        [
            node(N1, 4000, 3000, 10),
            node(N2, 2000, 3000, 10),
            node(N3, 2000, 3000, 10, unschedulable=True),
            pod("p1", 400, 0, N1, rs, prio(LOW_PRIORITY)),
            pod("p2", 400, 0, N1, rs, prio(HIGH_PRIORITY)),
            *_rs_pods(N2, "p5", "p6", "p7", "p8"),
            pod("p9", 400, 0, N3, ds),
        ],
        ["p1"],
    ),
    (
        "without priorities evicting best-effort pods only",
        {"thresholds": {"cpu": 30}},
        [
            node(N1, 3000, 3000, 10),
            node(N2, 3000, 3000, 5),
            node(N3, 3000, 3000, 10, unschedulable=True),
            pod("p1", 0, 0, N1, rs, best_effort),
            pod("p2", 400, 0, N1, rs),
            *_rs_pods(N2, "p3", "p4", "p5", "p6"),
        ],
        ["p1"],
    ),
    (
        "with extended resource",
        {"thresholds": {"cpu": 20, EXT: 40}},
        [
            node(N1, 4000, 3000, 10, ext=8),
            node(N2, 4000, 3000, 10, ext=8),
            node(N3, 4000, 3000, 10, unschedulable=True),
            pod("p1", 100, 0, N1, rs, ext(1)),
            pod("p2", 100, 0, N1, rs, ext(1)),
            *(pod(n, 500, 0, N2, rs, ext(1)) for n in ("p3", "p4", "p5", "p6")),
        ],
        ["p1", "p2"],
    ),
    (
        "with extended resource in some of nodes",
        {"thresholds": {"cpu": 40, EXT: 40}},
        [
            node(N1, 4000, 3000, 10, ext=8),
            node(N2, 4000, 3000, 10),
            node(N3, 4000, 3000, 10, unschedulable=True),
            pod("p1", 100, 0, N1, rs, ext(1)),
            pod("p2", 100, 0, N1, rs, ext(1)),
            *_rs_pods(N2, "p3", "p4", "p5", "p6", cpu=500),
        ],
        [],
    ),
    (
        "Other node match pod node selector",
        {"thresholds": {"cpu": 30, "pods": 30}},
        [
            node(N1, 4000, 3000, 9, labels={"datacenter": "west"}),
            node(N2, 4000, 3000, 10),
            *_rs_pods(N1, "p1", "p2", "p3"),
            pod("p4", 400, 0, N1, ds),
            pod("p5", 400, 0, N2, rs, selector(datacenter="west")),
        ],
        ["p5"],
    ),
    (
        "Other node does not match pod node selector",
        {"thresholds": {"cpu": 30, "pods": 30}},
        [
            node(N1, 4000, 3000, 9),
            node(N2, 4000, 3000, 10),
            *_rs_pods(N1, "p1", "p2", "p3"),
            pod("p4", 400, 0, N1, ds),
            pod("p5", 400, 0, N2, rs, selector(datacenter="west")),
        ],
        [],
    ),
    (
        "Other node does not have enough Memory",
        {"thresholds": {"cpu": 30, "pods": 30}},
        [
            node(N1, 4000, 200, 9),
            node(N2, 4000, 3000, 10),
            *_rs_pods(N1, "p1", "p2", "p3", memory=50),
            pod("p4", 400, 50, N1, ds),
            pod("p5", 400, 100, N2, rs),
        ],
        [],
    ),
    (
        "with extended resource threshold and no extended resource pods",
        {"thresholds": {EXT: 40}, "evictionModes": ["OnlyThresholdingResources"]},
        [
            node(N1, 4000, 3000, 10, ext=10),
            node(N2, 4000, 3000, 10, ext=10),
            node(N3, 4000, 3000, 10, ext=10),
            pod("p1", 100, 0, N1, rs, ext(3)),
            pod("p2", 100, 0, N1, rs, ext(3)),
            *_rs_pods(N2, "p3", "p4", "p5", "p6", cpu=500),
        ],
        [],
    ),
]


@pytest.mark.parametrize(
    ("args", "objects", "expected"), [c[1:] for c in HIGH_CASES], ids=[c[0] for c in HIGH_CASES]
)
def test_high_node_utilization(args: dict[str, Any], objects: list[Obj], expected: list[str] | int) -> None:
    """Upstream's TestHighNodeUtilization, DefaultEvictor with nodeFit."""
    _check(run_plugin(objects, "HighNodeUtilization", args, evictor_args={"nodeFit": True}), expected)


# ---- HighNodeUtilization with taints (upstream TestHighNodeUtilizationWithTaints) ------------------------


def _high_taint_nodes(with_taints: bool) -> tuple[Obj, Obj, Obj]:
    return (
        node("n1", 1000, 3000, 10),
        node("n2", 1000, 3000, 10),
        node("n3", 1000, 3000, 10, taints=(_TAINT,) if with_taints else ()),
    )


HIGH_TAINT_CASES: list[tuple[str, list[Obj], Limits, list[str]]] = [
    (
        "No taints",
        [*_high_taint_nodes(False), *_n1_pods(3), pod("pod_4_n2", 200, 0, "n2", rs)],
        Limits(per_node=1),
        ["pod_4_n2"],
    ),
    (
        "No pod tolerates node taint",
        [
            _high_taint_nodes(True)[0],
            _high_taint_nodes(True)[2],
            *_n1_pods(1),
            pod("pod_2_n3", 200, 0, "n3", rs),
        ],
        Limits(per_node=0),
        [],
    ),
    (
        "Pod which tolerates node taint",
        [
            _high_taint_nodes(True)[0],
            _high_taint_nodes(True)[2],
            pod("pod_1_n1", 100, 0, "n1", rs),
            _TOLERATING,
            pod("pod_9_n3", 500, 0, "n3", rs),
        ],
        Limits(per_node=1),
        ["tolerate_pod"],
    ),
]


@pytest.mark.parametrize(
    ("objects", "limits", "expected"), [c[1:] for c in HIGH_TAINT_CASES], ids=[c[0] for c in HIGH_TAINT_CASES]
)
def test_high_node_utilization_with_taints(objects: list[Obj], limits: Limits, expected: list[str]) -> None:
    """Upstream's TestHighNodeUtilizationWithTaints: DefaultEvictor without nodeFit."""
    got = run_plugin(objects, "HighNodeUtilization", {"thresholds": {"cpu": 40}}, limits=limits)
    assert got == expected


# ---- Berth's own cases: early returns, orderings and bookkeeping across nodes ----------------------------

_REFERENCE = LOW_CASES[1][2]


@pytest.mark.parametrize(("number_of_nodes", "expected"), [(0, 4), (1, 0), (5, 0)])
def test_low_number_of_nodes(number_of_nodes: int, expected: int) -> None:
    """Nothing moves while the underutilized nodes are no more than numberOfNodes (here 1: n2)."""
    args = {"thresholds": CPU_PODS_30, "targetThresholds": CPU_PODS_50, "numberOfNodes": number_of_nodes}
    assert len(run_plugin(_REFERENCE, "LowNodeUtilization", args, evictor_args={"nodeFit": True})) == expected


@pytest.mark.parametrize(("number_of_nodes", "expected"), [(1, ["p7", "p1"]), (2, []), (3, [])])
def test_high_number_of_nodes(number_of_nodes: int, expected: list[str]) -> None:
    """HighNodeUtilization "without priorities" has 2 underutilized nodes."""
    args = {"thresholds": {"cpu": 30, "pods": 30}, "numberOfNodes": number_of_nodes}
    assert (
        run_plugin(HIGH_CASES[3][2], "HighNodeUtilization", args, evictor_args={"nodeFit": True}) == expected
    )


def test_low_all_nodes_underutilized() -> None:
    objects = [node(N1, 4000, 3000, 10), node(N2, 4000, 3000, 10), *_rs_pods(N1, "a"), *_rs_pods(N2, "b")]
    args = {"thresholds": CPU_PODS_30, "targetThresholds": CPU_PODS_50}
    assert run_plugin(objects, "LowNodeUtilization", args) == []


def test_low_no_node_over_target() -> None:
    objects = [
        node(N1, 4000, 3000, 10),
        node(N2, 4000, 3000, 10),
        *_rs_pods(N1, "a", "b", "c", "d", "e"),
        *_rs_pods(N2, "f"),
    ]
    args = {"thresholds": CPU_PODS_30, "targetThresholds": CPU_PODS_50}
    assert run_plugin(objects, "LowNodeUtilization", args) == []


def _two_sources() -> list[Obj]:
    """n1 at 60% and n2 at 80% of cpu and pods; n3 empty."""
    return [
        node(N1, 4000, 3000, 10),
        node(N2, 4000, 3000, 10),
        node(N3, 4000, 3000, 10),
        *_rs_pods(N1, "a1", "a2", "a3", "a4", "a5", "a6"),
        *_rs_pods(N2, "b1", "b2", "b3", "b4", "b5", "b6", "b7", "b8"),
    ]


@pytest.mark.parametrize(
    ("limits", "expected"),
    [
        # n2 first (most used) down to its target (3 pods), then n1 until n3's room for pods is gone
        (Limits(), ["b1", "b2", "b3", "a1"]),
        # the policy's node limit ends a node, the next one goes on
        (Limits(per_node=1), ["b1", "a1"]),
        # the total limit ends the cycle
        (Limits(total=2), ["b1", "b2"]),
    ],
)
def test_low_sources_by_usage_and_shared_room(limits: Limits, expected: list[str]) -> None:
    args = {"thresholds": CPU_PODS_30, "targetThresholds": CPU_PODS_50}
    got = run_plugin(
        _two_sources(), "LowNodeUtilization", args, evictor_args={"nodeFit": True}, limits=limits
    )
    assert got == expected


def test_low_plugin_node_limit_counts_per_node() -> None:
    args = {"thresholds": CPU_PODS_30, "targetThresholds": CPU_PODS_50, "evictionLimits": {"node": 1}}
    assert run_plugin(_two_sources(), "LowNodeUtilization", args) == ["b1", "a1"]


def test_low_finished_pods_use_nothing() -> None:
    """Succeeded and Failed pods count neither for usage nor for eviction."""
    objects = [
        node(N1, 4000, 3000, 10),
        node(N2, 4000, 3000, 10),
        *_rs_pods(N1, "a", "b"),
        *(pod(n, 400, 0, N1, rs, lambda b: b.phase("Succeeded")) for n in ("s1", "s2", "s3", "s4")),
        pod("f1", 400, 0, N1, rs, lambda b: b.phase("Failed")),
    ]
    args = {"thresholds": {"cpu": 10, "pods": 10}, "targetThresholds": {"cpu": 15, "pods": 15}}
    assert run_plugin(objects, "LowNodeUtilization", args) == ["a"]


def test_low_deviation_resource_no_node_has() -> None:
    """With deviation thresholds a resource that no node lists has no threshold, so cpu alone classifies
    (average 20%: n2 at 0% is under 10%, n1 at 40% over 30%); but the destinations' room for that resource
    is 0, so nothing moves, as upstream."""
    objects = [node(N1, 4000, 3000, 10), node(N2, 4000, 3000, 10), *_rs_pods(N1, "a", "b", "c", "d")]
    args = {
        "thresholds": {"cpu": 10, EXT: 10},
        "targetThresholds": {"cpu": 10, EXT: 10},
        "useDeviationThresholds": True,
    }
    assert run_plugin(objects, "LowNodeUtilization", args) == []
    args = {"thresholds": {"cpu": 10}, "targetThresholds": {"cpu": 10}, "useDeviationThresholds": True}
    assert run_plugin(objects, "LowNodeUtilization", args) == ["a"]


def test_high_excluded_namespace() -> None:
    objects = [o for o in HIGH_CASES[3][2] if o["metadata"]["name"] != "p7"]
    objects.append(pod("p7", 400, 0, N3, rs, ns("skip")))
    args = {"thresholds": {"cpu": 30, "pods": 30}, "evictableNamespaces": {"exclude": ["skip"]}}
    assert run_plugin(objects, "HighNodeUtilization", args, evictor_args={"nodeFit": True}) == ["p1"]


def test_high_only_thresholding_resources() -> None:
    """With OnlyThresholdingResources the best-effort p1 (no cpu request) stays; p2 goes instead."""
    args = {"thresholds": {"cpu": 30}, "evictionModes": ["OnlyThresholdingResources"]}
    assert run_plugin(HIGH_CASES[6][2], "HighNodeUtilization", args, evictor_args={"nodeFit": True}) == ["p2"]


def test_high_unschedulable_node_is_a_source_not_a_destination() -> None:
    objects = [
        node(N1, 4000, 3000, 10),
        node(N2, 4000, 3000, 10, unschedulable=True),
        *_rs_pods(N1, "a", "b", "c", "d", "e", "f", "g", "h"),
        *_rs_pods(N2, "i", "j", "k", "l", "m", "n"),
    ]
    # n1 at 80%, n2 (cordoned) at 60%: with 50% neither is underutilized
    assert run_plugin(objects, "HighNodeUtilization", {"thresholds": {"cpu": 50}}) == []
    # with 70% n2 is; n1 takes pods until its 2 free pod slots (and its 800m) are used up
    assert run_plugin(objects, "HighNodeUtilization", {"thresholds": {"cpu": 70}}) == ["i", "j"]
    # with 90% both are underutilized: nothing to do
    assert run_plugin(objects, "HighNodeUtilization", {"thresholds": {"cpu": 90}}) == []


def test_low_refused_eviction_is_skipped() -> None:
    """A pod the eviction API refuses (its PodDisruptionBudget allows no disruption) is skipped; the next
    pods go and the room is not debited for it."""
    guarded = pod("b1", 400, 0, N2, rs, lambda b: b.label(app="guarded").running())
    objects = [g if g["metadata"]["name"] != "b1" else guarded for g in _two_sources()]
    pdb = {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": "guard", "namespace": "default", "generation": 1},
        "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "guarded"}}},
        "status": {
            "observedGeneration": 1,
            "disruptionsAllowed": 0,
            "currentHealthy": 1,
            "desiredHealthy": 1,
            "expectedPods": 1,
        },
    }
    args = {"thresholds": CPU_PODS_30, "targetThresholds": CPU_PODS_50}
    assert run_plugin([*objects, pdb], "LowNodeUtilization", args) == ["b2", "b3", "b4", "a1"]
