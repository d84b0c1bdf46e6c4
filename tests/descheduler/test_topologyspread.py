"""RemovePodsViolatingTopologySpreadConstraint: upstream's topologyspreadconstraint_test.go,
validation_test.go and defaults_test.go as tables.

Upstream's fixtures (``createTestPods``): pods ``pod-0``, ``pod-1``, ... in namespace ``ns1`` requesting
100m cpu, owned by ReplicaSet ``replicaset-1`` unless ``noOwners``; nodes built by ``BuildTestNode`` with
no labels but those given. The plugin runs over the test's nodes in the test's order and sees each node's
pods in name order (upstream's test sorts them so).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import pytest
from harness import build, new_store

from berth.api.labels import compile_label_selector
from berth.descheduler.args import ArgsReader, PolicyError
from berth.descheduler.evictor import Limits
from berth.descheduler.plugins.podselection import PodSelection
from berth.descheduler.plugins.topologyspread import (
    NAME,
    RemovePodsViolatingTopologySpreadConstraint,
    RemovePodsViolatingTopologySpreadConstraintArgs,
    SpreadConstraint,
    parse_args,
    sort_domain_pods,
)
from builders import HOSTNAME, make_node, make_pod

Obj = dict[str, Any]
NO_LIMITS = Limits()
FOO = {"foo": "bar"}
HASH = "pod-template-hash"


def node(
    name: str,
    cpu: int = 2000,
    memory: int = 3000,
    pods: int = 10,
    *taints: Obj,
    labels: dict[str, str] | None = None,
    **more: str,
) -> Obj:
    """Upstream's BuildTestNode with labels (`labels` and ``zone=...``) and taints."""
    b = make_node(name).unlabel(HOSTNAME).capacity(cpu=f"{cpu}m", memory=str(memory), pods=str(pods))
    return b.label({**(labels or {}), **more}).taints(*taints).obj()


def zones(*names_zones: str, cpu: int = 2000, memory: int = 3000, pods: int = 10) -> list[Obj]:
    """Nodes ``name:zone`` labelled ``zone=<zone>``."""
    out = []
    for item in names_zones:
        name, zone = item.split(":")
        out.append(node(name, cpu, memory, pods, zone=zone))
    return out


def constraint(max_skew: int = 1, key: str = "zone", when: str = "DoNotSchedule", **extra: Any) -> Obj:
    """Upstream's getDefaultTopologyConstraints: ``foo=bar`` over `key`."""
    return {
        "maxSkew": max_skew,
        "topologyKey": key,
        "whenUnsatisfiable": when,
        "labelSelector": {"matchLabels": dict(FOO)},
        **extra,
    }


@dataclass
class Group:
    """One entry of upstream's ``testPodList``."""

    count: int
    node: str
    labels: dict[str, str] | None = field(default_factory=lambda: dict(FOO))
    constraints: list[Obj] = field(default_factory=list)
    node_selector: dict[str, str] | None = None
    affinity: Obj | None = None
    no_owners: bool = False
    tolerations: list[Obj] | None = None
    terminating: bool = False


def create_pods(groups: Sequence[Group]) -> tuple[list[Obj], list[str]]:
    """Upstream's createTestPods: the pods and the names of those being deleted."""
    pods: list[Obj] = []
    terminating: list[str] = []
    for group in groups:
        for _ in range(group.count):
            name = f"pod-{len(pods)}"
            b = make_pod(name).ns("ns1").node(group.node).req(cpu="100m", memory="0")
            if group.labels is not None:
                b.label(group.labels)
            if not group.no_owners:
                b.owner("ReplicaSet", "replicaset-1", "rs-1", api_version="v1", controller=None)
            if group.constraints:
                b.spread(*group.constraints)
            if group.node_selector is not None:
                b.spec(nodeSelector=dict(group.node_selector))
            b.affinity(group.affinity)
            if group.tolerations:
                b.tolerations(*group.tolerations)
            pods.append(b.obj())
            if group.terminating:
                terminating.append(name)
    return pods, terminating


def run(
    nodes: Sequence[Obj],
    groups: Sequence[Group],
    args: dict[str, Any] | None = None,
    *,
    node_fit: bool = False,
    limits: Limits = NO_LIMITS,
) -> list[str]:
    """Evicted pod names after one Balance over `nodes` (in their order)."""
    pods, terminating = create_pods(groups)
    store = new_store([*nodes, *pods])
    for name in terminating:
        store.delete(("", "Pod"), "ns1", name)
    plugin, pod_evictor, view = build(
        store, NAME, args or {}, evictor_args={"nodeFit": node_fit}, limits=limits
    )
    assert isinstance(plugin, RemovePodsViolatingTopologySpreadConstraint)
    plugin.balance([view.node_by_name[n["metadata"]["name"]] for n in nodes])
    return [e.name for e in pod_evictor.evictions]


C1 = [constraint(1)]
BOTH = {"constraints": ["DoNotSchedule", "ScheduleAnyway"]}
AB = zones("n1:zoneA", "n2:zoneB")
ABC = zones("n1:zoneA", "n2:zoneB", "n3:zoneC")


def os_nodes(*, extra: bool = False) -> list[Obj]:
    """Three linux and three (four) windows nodes labelled ``node=<lin|win>Node<X>`` and ``os``."""
    out = [node(f"n{i}", node=f"linNode{x}", os="linux") for i, x in enumerate("ABC", start=1)]
    out += [
        node(f"n{i}", node=f"winNode{x}", os="windows")
        for i, x in enumerate("ABCD" if extra else "ABC", start=4)
    ]
    return out


def node_spread(*counts_selectors: tuple[int, str, dict[str, str]]) -> list[Group]:
    """Groups on nodes with the per-node ``node`` constraint and a nodeSelector."""
    c = [constraint(1, key="node")]
    return [Group(count, on, constraints=c, node_selector=sel) for count, on, sel in counts_selectors]


WIN = {"os": "windows"}
REQUIRED_FOO = {
    "nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [{"matchExpressions": [{"key": "foo", "operator": "In", "values": ["bar"]}]}]
        }
    }
}
APP_SERVICE = {
    "nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [{"matchExpressions": [{"key": "app_service", "operator": "Exists"}]}]
        }
    }
}
TAINT_TEST = {"key": "taint-test", "value": "test", "effect": "NoSchedule"}
WHOAMI = [
    {
        "labelSelector": {"matchLabels": {"app": "whoami"}},
        "maxSkew": 1,
        "topologyKey": "topology.kubernetes.io/zone",
        "whenUnsatisfiable": "ScheduleAnyway",
    },
    {
        "labelSelector": {"matchLabels": {"app": "whoami"}},
        "maxSkew": 1,
        "topologyKey": HOSTNAME,
        "whenUnsatisfiable": "DoNotSchedule",
    },
]
SERVICE = [
    {
        "maxSkew": 1,
        "topologyKey": HOSTNAME,
        "whenUnsatisfiable": "DoNotSchedule",
        "labelSelector": {"matchLabels": {"app.kubernetes.io/name": "service"}},
    }
]
C_NAMES = sorted(f"pod-{i}" for i in range(1, 101))  # zone C's pods as listed (in name order)
C_LAST_34, C_NEXT_32 = C_NAMES[-34:], C_NAMES[-66:-34]  # 34 go to zone A, then 32 to zone B
IGNORE_AFFINITY = [constraint(1, nodeAffinityPolicy="Ignore")]
ARM = {"kubernetes.io/arch": "arm64"}

# description, nodes, groups, args, nodeFit, evicted (upstream's count; names where upstream names them or
# where this implementation's deterministic order picks them)
CASES: list[tuple[str, list[Obj], list[Group], dict[str, Any], bool, list[str]]] = [
    (
        "2 domains [2,1], maxSkew=1, move 0",
        AB,
        [Group(1, "n1", constraints=[constraint(1)]), Group(1, "n1"), Group(1, "n2")],
        {}, False, [],
    ),
    ("2 domains [3,1], move 1", AB, [Group(1, "n1", constraints=C1), Group(2, "n1"), Group(1, "n2")], {}, False, ["pod-2"]),
    (
        "2 domains [3,1], move 1 (both constraints)",
        AB, [Group(1, "n1", constraints=[constraint(1, when="ScheduleAnyway")]), Group(2, "n1"), Group(1, "n2")],
        BOTH, False, ["pod-2"],
    ),
    (
        "2 domains [3,1], move 1 (soft constraints)",
        AB, [Group(1, "n1", constraints=[constraint(1, when="ScheduleAnyway")]), Group(2, "n1"), Group(1, "n2")],
        BOTH, False, ["pod-2"],
    ),
    (
        "2 domains [3,1], no pods eligible",
        AB,
        [Group(1, "n1", constraints=C1, no_owners=True), Group(2, "n1", no_owners=True), Group(1, "n2", no_owners=True)],
        {}, False, [],
    ),
    (
        "2 domains [3,1], exclude kube-system",
        AB, [Group(1, "n1", constraints=C1), Group(2, "n1"), Group(1, "n2")],
        {"namespaces": {"exclude": ["kube-system"]}}, True, ["pod-2"],
    ),
    ("2 domains [5,2], move 1", AB, [Group(1, "n1", constraints=C1), Group(4, "n1"), Group(2, "n2")], {}, False, ["pod-4"]),
    ("2 domains [4,0], move 2", AB, [Group(1, "n1", constraints=C1), Group(3, "n1")], {}, False, ["pod-2", "pod-3"]),
    (
        "2 domains [4,0], nodeSelector and nodeAffinity pods stay",
        AB,
        [
            Group(1, "n1", constraints=C1, node_selector={"zone": "zoneA"}),
            Group(1, "n1", constraints=C1, node_selector={"zone": "zoneA"}),
            Group(1, "n1", constraints=C1, affinity=REQUIRED_FOO),
            Group(1, "n1", constraints=C1),
        ],
        {}, True, ["pod-3"],
    ),
    (
        "6 domains [0,0,0,3,3,2], balanced",
        os_nodes(), node_spread((3, "n4", WIN), (3, "n5", WIN), (2, "n6", WIN)), {}, False, [],
    ),
    (
        "7 domains [0,0,0,3,3,2,0], two pods move to the new node",
        os_nodes(extra=True), node_spread((3, "n4", WIN), (3, "n5", WIN), (2, "n6", WIN)), {}, False, ["pod-5", "pod-2"],
    ),
    (
        "6 domains [0,0,0,4,3,1], one pod from node 4",
        os_nodes(), node_spread((4, "n4", WIN), (3, "n5", WIN), (1, "n6", WIN)), {}, False, ["pod-3"],
    ),
    (
        "6 domains [0,0,0,4,3,1], node 4's pods fit only there",
        os_nodes(), node_spread((4, "n4", {"node": "winNodeA"}), (3, "n5", WIN), (1, "n6", WIN)), {}, True, [],
    ),
    (
        "2 domains [4,0], selector matches both nodes",
        [node("n1", zone="zoneA", region="boston"), node("n2", zone="zoneB", region="boston")],
        [
            Group(1, "n1", constraints=C1, node_selector={"region": "boston"}),
            Group(3, "n1", node_selector={"region": "boston"}),
        ],
        {}, False, ["pod-2", "pod-3"],
    ),
    (
        "3 domains [0,1,100], move 66",
        ABC, [Group(1, "n2", constraints=C1), Group(100, "n3")], {}, False, C_LAST_34 + C_NEXT_32,
    ),
    (
        "4 domains [0,1,3,5], move 3",
        zones("n1:zoneA", "n2:zoneB", "n3:zoneC", "n4:zoneD"),
        [Group(1, "n2", constraints=C1), Group(3, "n3"), Group(5, "n4")],
        {}, False, ["pod-7", "pod-8", "pod-6"],
    ),
    ("2 domains [2,6], maxSkew=2, move 1", AB, [Group(1, "n1", constraints=[constraint(2)]), Group(1, "n1"), Group(6, "n2")], {}, False, ["pod-7"]),
    (
        "2 domains [2,6], maxSkew=2, node taints",
        [node("n1", 2000, 3000, 10, {"key": "hardware", "value": "gpu", "effect": "NoSchedule"}, zone="zoneA"), node("n2", zone="zoneB")],
        [Group(1, "n1", constraints=[constraint(2)]), Group(1, "n1"), Group(6, "n2")],
        {}, True, [],
    ),
    (
        "2 domains [2,6], maxSkew=2, not enough cpu on node1",
        [node("n1", 200, zone="zoneA"), node("n2", zone="zoneB")],
        [Group(1, "n1", constraints=[constraint(2)]), Group(1, "n1"), Group(6, "n2")],
        {}, True, [],
    ),
    (
        "multiple constraints (6 nodes / 2 zones, 4 pods)",
        [node(f"n{i}", labels={"topology.kubernetes.io/zone": z, HOSTNAME: f"n{i}"}) for i, z in enumerate("AAABBB", start=1)],
        [Group(1, f"n{i}", labels={"app": "whoami"}, constraints=WHOAMI) for i in (1, 2, 3, 4)],
        BOTH, False, ["pod-2"],
    ),
    (
        "3 domains [8,7,0], move 5",
        ABC, [Group(8, "n1", constraints=C1), Group(7, "n2", constraints=C1)],
        {}, False, ["pod-5", "pod-6", "pod-7", "pod-8", "pod-9"],
    ),
    (
        "3 domains [5,5,5], move 0",
        ABC, [Group(5, "n1", constraints=C1), Group(5, "n2", constraints=C1), Group(5, "n3", constraints=C1)], {}, False, [],
    ),
    (
        "2 domains [2,0], the pod tolerates the tainted node",
        [node("n1", zone="zoneA"), node("n2", 2000, 3000, 10, TAINT_TEST, zone="zoneB")],
        [
            Group(1, "n1", constraints=C1, tolerations=[{"key": "taint-test", "value": "test", "operator": "Equal", "effect": "NoSchedule"}]),
            Group(1, "n1", node_selector={"zone": "zoneA"}),
        ],
        {}, False, ["pod-0"],
    ),
    (
        "2 domains [2,0], the pod does not tolerate the tainted node",
        [node("n1", zone="zoneA"), node("n2", 2000, 3000, 10, TAINT_TEST, zone="zoneB")],
        [Group(1, "n1", constraints=C1), Group(1, "n1", node_selector={"zone": "zoneA"})],
        {}, False, [],
    ),
    (
        "2 domains [2,0], the pod does not tolerate the tainted node, nodeFit",
        [node("n1", zone="zoneA"), node("n2", 2000, 3000, 10, TAINT_TEST, zone="zoneB")],
        [Group(1, "n1", constraints=C1), Group(1, "n1", node_selector={"zone": "zoneA"})],
        {}, True, [],
    ),
    (
        "2 domains [2,0], PreferNoSchedule taint",
        [node("n1", zone="zoneA"), node("n2", 2000, 3000, 10, {**TAINT_TEST, "effect": "PreferNoSchedule"}, zone="zoneB")],
        [Group(1, "n1", constraints=C1), Group(1, "n1", node_selector={"zone": "zoneA"})],
        {}, False, ["pod-0"],
    ),
    (
        "2 domains [2,0], unmatched labelSelector arg",
        AB, [Group(1, "n1", constraints=C1), Group(1, "n1")],
        {"labelSelector": {"matchExpressions": [{"key": "foo", "operator": "In", "values": ["baz"]}]}}, False, [],
    ),
    (
        "2 domains [2,0], matched labelSelector arg",
        AB, [Group(1, "n1", constraints=C1), Group(1, "n1")],
        {"labelSelector": {"matchExpressions": [{"key": "foo", "operator": "In", "values": ["bar"]}]}}, False, ["pod-1"],
    ),
    (
        "2 domains [2,0], matched labelSelector arg (NotIn)",
        AB, [Group(1, "n1", constraints=C1), Group(1, "n1")],
        {"labelSelector": {"matchExpressions": [{"key": "foo", "operator": "NotIn", "values": ["baz"]}]}}, False, ["pod-1"],
    ),
    (
        "2 domains [2,0], matchLabelKeys, same ReplicaSet",
        AB,
        [Group(2, "n1", labels={**FOO, HASH: "foo"}, constraints=[constraint(1, matchLabelKeys=[HASH])])],
        {"labelSelector": {"matchExpressions": [{"key": "foo", "operator": "NotIn", "values": ["baz"]}]}}, False, ["pod-1"],
    ),
    (
        "2 domains [2,0], matchLabelKeys, two ReplicaSets",
        AB,
        [
            Group(1, "n1", labels={**FOO, HASH: "foo"}, constraints=[constraint(1, matchLabelKeys=[HASH])]),
            Group(1, "n1", labels={**FOO, HASH: "bar"}, constraints=[constraint(1, matchLabelKeys=[HASH])]),
        ],
        {"labelSelector": {"matchExpressions": [{"key": "foo", "operator": "NotIn", "values": ["baz"]}]}}, False, [],
    ),
    (
        "2 domains [4,2], 2 pods terminating",
        AB,
        [Group(2, "n1", constraints=C1), Group(2, "n1", constraints=C1, terminating=True), Group(2, "n2", constraints=C1)],
        {"labelSelector": {"matchExpressions": [{"key": "foo", "operator": "In", "values": ["bar"]}]}}, False, [],
    ),
    (
        "3 domains [2,3,4], nodeFit, not enough cpu in zoneA",
        zones("n1:zoneA", cpu=250, memory=2000, pods=9) + zones("n2:zoneB", "n3:zoneC", cpu=1000, memory=2000, pods=9),
        [Group(2, "n1", constraints=C1), Group(3, "n2", constraints=C1), Group(4, "n3", constraints=C1)],
        {}, True, [],
    ),
    (
        "3 domains [2,3,4], topologyBalanceNodeFit=false, not enough cpu in zoneA",
        zones("n1:zoneA", cpu=250, memory=2000, pods=9) + zones("n2:zoneB", "n3:zoneC", cpu=1000, memory=2000, pods=9),
        [Group(2, "n1", constraints=C1), Group(3, "n2", constraints=C1), Group(4, "n3", constraints=C1)],
        {"topologyBalanceNodeFit": False}, True, ["pod-8"],
    ),
    (
        "3 domains [[1,0],[1,1],[2,1]], nodeFit, not enough cpu in zoneA",
        [
            *zones("A1:zoneA", cpu=150, memory=2000, pods=9),
            *zones("B1:zoneB", "C1:zoneC", cpu=1000, memory=2000, pods=9),
            *zones("A2:zoneA", cpu=50, memory=2000, pods=9),
            *zones("B2:zoneB", "C2:zoneC", cpu=1000, memory=2000, pods=9),
        ],
        [Group(1, "A1", constraints=C1), Group(1, "B1", constraints=C1), Group(1, "B2", constraints=C1), Group(2, "C1", constraints=C1), Group(1, "C2", constraints=C1)],
        {}, True, [],
    ),
    (
        "2 domains [[1,4],[2,1]], nodeFit, move 1",
        zones("A1:zoneA", "A2:zoneA", "B1:zoneB", "B2:zoneB", cpu=1000, memory=2000, pods=9),
        [Group(1, "A1", constraints=C1), Group(4, "A2", constraints=C1), Group(2, "B1", constraints=C1), Group(1, "B2", constraints=C1)],
        {}, True, ["pod-4"],
    ),
    (
        "2 domains [3,1], tainted nodes",
        [
            node(
                "controlplane1", 2000, 3000, 10,
                {"effect": "NoSchedule", "key": "node-role.kubernetes.io/controlplane", "value": "true"},
                {"effect": "NoSchedule", "key": "node-role.kubernetes.io/etcd", "value": "true"},
                zone="zoneA", labels={HOSTNAME: "cp-1"},
            ),
            node("infraservices1", 2000, 3000, 10, {"effect": "NoSchedule", "key": "infra_service"}, zone="zoneA", infra_service="true", labels={HOSTNAME: "infra-1"}),
            node("app1", zone="zoneA", app_service="true", labels={HOSTNAME: "app-1"}),
            node("app2", zone="zoneB", app_service="true", labels={HOSTNAME: "app-2"}),
        ],
        [
            Group(2, "app1", labels={"app.kubernetes.io/name": "service"}, constraints=SERVICE, affinity=APP_SERVICE),
            Group(2, "app2", labels={"app.kubernetes.io/name": "service"}, constraints=SERVICE, affinity=APP_SERVICE),
        ],
        {}, True, [],
    ),
    (
        "3 domains [2,1,0] with selectors, nodeAffinityPolicy=Ignore, move 1",
        [node("A1", zone="zoneA", labels=ARM), node("B1", zone="zoneB", labels=ARM), node("C1", zone="zoneC", labels=ARM)],
        [
            Group(1, "A1", constraints=IGNORE_AFFINITY, node_selector=dict(ARM)),
            Group(1, "A1", constraints=IGNORE_AFFINITY, node_selector={"zone": "zoneA", **ARM}),
            Group(1, "B1", constraints=IGNORE_AFFINITY, node_selector=dict(ARM)),
        ],
        {}, False, ["pod-0"],
    ),
]  # fmt: skip


@pytest.mark.parametrize(
    ("nodes", "groups", "args", "node_fit", "evicted"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_topology_spread_constraint(
    nodes: list[Obj], groups: list[Group], args: dict[str, Any], node_fit: bool, evicted: list[str]
) -> None:
    """TestTopologySpreadConstraint."""
    assert run(nodes, groups, args, node_fit=node_fit) == evicted


def test_node_inclusion_policies() -> None:
    """With the default nodeAffinityPolicy (Honor) nodes the constraint's pod may not use are no domain;
    with nodeTaintsPolicy Honor, nor are nodes with taints it does not tolerate."""
    nodes = [node("a", zone="z1", pool="x"), node("b", zone="z2", pool="y")]
    pinned = [Group(2, "a", constraints=C1, node_selector={"pool": "x"})]
    assert run(nodes, pinned) == []
    assert run(nodes, [Group(2, "a", constraints=[constraint(1, nodeAffinityPolicy="Ignore")])]) == ["pod-1"]
    tainted = [node("a", zone="z1"), node("b", 2000, 3000, 10, TAINT_TEST, zone="z2")]
    assert run(tainted, [Group(2, "a", constraints=C1)], {"topologyBalanceNodeFit": False}) == ["pod-1"]
    honor = [constraint(1, nodeTaintsPolicy="Honor")]
    assert run(tainted, [Group(2, "a", constraints=honor)], {"topologyBalanceNodeFit": False}) == []


def test_limits() -> None:
    """The chosen pods are evicted in the order chosen; a node whose limit is hit is skipped."""
    groups = [Group(1, "n1", constraints=C1), Group(5, "n1"), Group(1, "n2")]
    assert run(AB, groups) == ["pod-4", "pod-5"]
    assert run(AB, groups, limits=Limits(per_node=1)) == ["pod-4"]
    assert run(AB, groups, limits=Limits(total=1)) == ["pod-4"]


def sortable(name: str, *, evictable: bool = True, priority: int | None = None, **spec: Any) -> Obj:
    """A pod for TestSortDomains (its evictability in an annotation, as upstream's mock)."""
    obj = make_pod(name).annotate(evictable="true" if evictable else "false").priority(priority).obj()
    obj["spec"].update(spec)
    return obj


def is_evictable(pod: Obj) -> bool:
    return bool(pod["metadata"]["annotations"]["evictable"] == "true")


SORT_DOMAINS = [
    ("empty input", [], []),
    (
        "single domain with mixed pods",
        [sortable("non-evictable-pod", evictable=False), sortable("evictable-with-affinity", priority=10), sortable("evictable-high-priority", priority=15)],
        ["non-evictable-pod", "evictable-with-affinity", "evictable-high-priority"],
    ),
    (
        "domain a: different priorities",
        [sortable("high-priority-affinity", priority=20), sortable("low-priority-no-affinity", priority=5)],
        ["low-priority-no-affinity", "high-priority-affinity"],
    ),
    (
        "domain b: non-evictable first",
        [sortable("medium-priority-affinity", priority=15), sortable("non-evictable-pod", evictable=False)],
        ["non-evictable-pod", "medium-priority-affinity"],
    ),
    (
        "selector or affinity first",
        [sortable("pod-with-affinity", priority=10, affinity={"nodeAffinity": {}}), sortable("pod-no-affinity", priority=15)],
        ["pod-with-affinity", "pod-no-affinity"],
    ),
    (
        "no priority before any, selector before none",
        [sortable("p-5", priority=5), sortable("p-none"), sortable("sel-9", priority=9, nodeSelector={}), sortable("sel-none", nodeSelector={"a": "b"})],
        ["sel-none", "sel-9", "p-none", "p-5"],
    ),
]  # fmt: skip


@pytest.mark.parametrize(("pods", "order"), [c[1:] for c in SORT_DOMAINS], ids=[c[0] for c in SORT_DOMAINS])
def test_sort_domains(pods: list[Obj], order: list[str]) -> None:
    """TestSortDomains (one domain at a time)."""
    assert [p["metadata"]["name"] for p in sort_domain_pods(pods, is_evictable)] == order


def test_identical_constraints() -> None:
    """TestCheckIdenticalConstraints: equal fields compare equal; another skew or key does not."""
    selector = compile_label_selector({"matchLabels": dict(FOO)})
    existing = SpreadConstraint(2, "zone", selector, "Honor", "Ignore", None, None)
    assert SpreadConstraint(
        2, "zone", compile_label_selector({"matchLabels": dict(FOO)}), "Honor", "Ignore", None, None
    ) in {existing}
    assert SpreadConstraint(3, "node", selector, "Honor", "Ignore", None, None) not in {existing}


def read(raw: dict[str, Any] | None) -> RemovePodsViolatingTopologySpreadConstraintArgs:
    return parse_args(ArgsReader(raw, "P.args"))


def test_defaults() -> None:
    """TestSetDefaults_RemovePodsViolatingTopologySpreadConstraintArgs."""
    default = RemovePodsViolatingTopologySpreadConstraintArgs(PodSelection(), ("DoNotSchedule",), True)
    assert read(None) == default
    assert read({"constraints": None}) == default
    got = read({"namespaces": {}, "labelSelector": {}, "constraints": ["DoNotSchedule", "ScheduleAnyway"]})
    assert got.constraints == ("DoNotSchedule", "ScheduleAnyway") and got.topology_balance_node_fit
    assert read({"topologyBalanceNodeFit": False}) == RemovePodsViolatingTopologySpreadConstraintArgs(
        PodSelection(), ("DoNotSchedule",), False
    )


def test_validation() -> None:
    """TestValidateRemovePodsViolatingTopologySpreadConstraintArgs."""
    assert read({"namespaces": {"include": ["default"]}}).selection.include == frozenset({"default"})
    assert read({"labelSelector": {"matchLabels": {"role.kubernetes.io/node": ""}}}).selection.label_selector
    assert read({"constraints": ["DoNotSchedule", "ScheduleAnyway"]}).constraints == (
        "DoNotSchedule",
        "ScheduleAnyway",
    )
    with pytest.raises(PolicyError) as err:
        read({"namespaces": {"include": ["default"], "exclude": ["kube-system"]}})
    assert str(err.value) == "P.args.namespaces: only one of Include/Exclude namespaces can be set"
    with pytest.raises(PolicyError) as err:
        read({"labelSelector": {"matchExpressions": [{"operator": "In"}]}})
    assert str(err.value).startswith("P.args.labelSelector: matchExpressions[0].key: Invalid value")
    with pytest.raises(PolicyError) as err:
        read({"constraints": ["foo"]})
    assert (
        str(err.value)
        == "P.args.constraints[0]: constraint 'foo' is not one of DoNotSchedule, ScheduleAnyway"
    )
