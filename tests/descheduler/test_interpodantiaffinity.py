"""RemovePodsViolatingInterPodAntiAffinity: upstream's pod_antiaffinity_test.go and validation_test.go as
tables, plus the term semantics upstream relies on.

Upstream's fixtures: nodes of 2000m cpu / 3000 memory / 10 pods, ``n1`` labelled only
``region=main-region``; pods requesting 100m cpu in namespace ``default``; ``SetPodAntiAffinity(key, value)``
is one required term ``key In (value)`` over topology key ``region``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest
from harness import build, new_store

from berth.descheduler.args import ArgsReader, PolicyError
from berth.descheduler.evictor import Limits
from berth.descheduler.plugins.interpodantiaffinity import (
    NAME,
    RemovePodsViolatingInterPodAntiAffinity,
    RemovePodsViolatingInterPodAntiAffinityArgs,
    parse_args,
)
from berth.descheduler.plugins.podselection import PodSelection
from builders import HOSTNAME, make_node, make_pod

Obj = dict[str, Any]
NO_LIMITS = Limits()
CRITICAL = 2_000_000_000
REGION = {"region": "main-region"}


def node(name: str, cpu: int = 2000, memory: int = 3000, pods: int = 10, **kw: Any) -> Obj:
    """Upstream's BuildTestNode (no labels unless given)."""
    b = make_node(name).unlabel(HOSTNAME).capacity(cpu=f"{cpu}m", memory=str(memory), pods=str(pods))
    b.label(kw.get("labels") or {})
    if kw.get("unschedulable"):
        b.unschedulable()
    return b.obj()


def anti(key: str, value: str, topology_key: str = "region", **term: Any) -> Obj:
    """Upstream's SetPodAntiAffinity: one required term ``key In (value)``."""
    return {
        "podAntiAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [
                {
                    "labelSelector": {
                        "matchExpressions": [{"key": key, "operator": "In", "values": [value]}]
                    },
                    "topologyKey": topology_key,
                    **term,
                }
            ]
        }
    }


def pod(
    name: str,
    node_name: str = "n1",
    *,
    owned: bool = True,
    labels: dict[str, str] | None = None,
    affinity: Obj | None = None,
    priority: int | None = None,
    ns: str = "default",
    **spec: Any,
) -> Obj:
    """Upstream's BuildTestPod (100m cpu), with a ``Pod`` owner reference unless `owned` is False."""
    b = (
        make_pod(name)
        .ns(ns)
        .node(node_name)
        .req(cpu="100m", memory="0")
        .priority(priority)
        .affinity(affinity)
    )
    if labels:
        b.label(labels)
    if owned:
        b.owner("Pod", "", "", api_version="v1", controller=None)
    obj = b.obj()
    obj["spec"].update(spec)
    return obj


def run(
    objects: Sequence[Obj],
    args: dict[str, Any] | None = None,
    *,
    terminating: Sequence[str] = (),
    limits: Limits = NO_LIMITS,
    node_fit: bool = False,
) -> list[str]:
    """Evicted pod names after one run; the pods named in `terminating` are being deleted first."""
    store = new_store(objects)
    for name in terminating:
        store.delete(("", "Pod"), "default", name)
    plugin, pod_evictor, view = build(
        store, NAME, args or {}, evictor_args={"nodeFit": node_fit}, limits=limits
    )
    assert isinstance(plugin, RemovePodsViolatingInterPodAntiAffinity)
    plugin.deschedule(view.nodes)
    return [e.name for e in pod_evictor.evictions]


FOO_BAR = anti("foo", "bar")
FOUR = [
    pod("p1", affinity=FOO_BAR),
    pod("p2", labels={"foo": "bar"}),
    pod("p3", affinity=FOO_BAR),
    pod("p4", affinity=FOO_BAR),
]
NON_EVICTABLE = pod("non-evict", owned=False, labels={"foo": "bar"}, priority=CRITICAL)
N1 = node("n1", labels=REGION)
P8 = pod("p8", owned=False, nodeSelector={"datacenter": "west"})

CASES: list[tuple[str, list[Obj], Limits, bool, list[str]]] = [
    ("maximum pods to evict - 0", [N1, *FOUR], Limits(), False, ["p1", "p3", "p4"]),
    ("maximum pods to evict - 3", [N1, *FOUR], Limits(per_node=3), False, ["p1", "p3", "p4"]),
    ("maxPodsToEvictPerNamespace=3", [N1, *FOUR], Limits(per_namespace=3), False, ["p1", "p3", "p4"]),
    ("maxNoOfPodsToEvictTotal=1", [N1, *FOUR], Limits(per_namespace=3, total=1), False, ["p1"]),
    (
        "evict only 1 pod after sorting",
        [
            N1,
            pod("p5", labels={"foo": "bar"}, affinity=anti("foo1", "bar1"), priority=100),
            pod("p6", labels={"foo": "bar"}, affinity=anti("foo1", "bar1"), priority=50),
            pod("p7", labels={"foo1": "bar1"}, affinity=FOO_BAR, priority=0),
        ],
        Limits(),
        False,
        ["p7"],
    ),
    (
        "evicts the pod that conflicts with a critical pod, not the critical pod",
        [N1, pod("p1", affinity=FOO_BAR), NON_EVICTABLE],
        Limits(per_node=1),
        False,
        ["p1"],
    ),
    (
        "node selectors do not match the available nodes",
        [N1, node("n2", labels={"datacenter": "east"}), P8, NON_EVICTABLE],
        Limits(per_node=1),
        True,
        [],
    ),
    (
        "the only other node is not schedulable",
        [N1, node("n3", unschedulable=True), P8, NON_EVICTABLE],
        Limits(per_node=1),
        True,
        [],
    ),
    (
        "the only other node has not enough resources",
        [N1, node("n4", cpu=2, memory=2, pods=1), *FOUR],
        Limits(per_node=3),
        True,
        [],
    ),
    (
        "violation among different nodes of one region",
        [
            N1,
            node("n5", cpu=200, labels=REGION),
            pod("p1", affinity=FOO_BAR),
            pod("p11", "n5", labels={"foo": "bar"}),
        ],
        Limits(),
        False,
        ["p1"],
    ),
]


@pytest.mark.parametrize(
    ("objects", "limits", "node_fit", "evicted"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_pod_anti_affinity(objects: list[Obj], limits: Limits, node_fit: bool, evicted: list[str]) -> None:
    """TestPodAntiAffinity (the duplicated "critical pod" case once)."""
    assert run(objects, limits=limits, node_fit=node_fit) == evicted


def test_terminating_pods_are_not_evicted() -> None:
    """TestPodAntiAffinity "No pod to evicted since all pod terminating", with a pod they repel added."""
    objects = [
        N1,
        pod("p9", affinity=FOO_BAR),
        pod("p10", affinity=FOO_BAR),
        pod("p12", labels={"foo": "bar"}, owned=False),
    ]
    assert run(objects) == ["p10", "p9"]
    assert run(objects, terminating=["p9", "p10"]) == []


def test_topology_and_namespaces() -> None:
    """Same node always counts; another node only with the same value of the topology key; a term's
    namespaces are its ``namespaces`` list, else the pod's own namespace (``namespaceSelector`` ignored)."""
    hosts = [node("a", labels={"zone": "z1"}), node("b", labels={"zone": "z1"}), node("c")]
    repelled = pod("target", "b", labels={"app": "x"}, owned=False)
    by_zone = pod("p-zone", "a", affinity=anti("app", "x", "zone"))
    by_missing_key = pod("p-nokey", "c", affinity=anti("app", "x", "rack"))
    same_node_no_key = pod("p-same", "b", affinity=anti("app", "x", "rack"))
    assert run([*hosts, repelled, by_zone, by_missing_key, same_node_no_key]) == ["p-zone", "p-same"]

    other_ns = pod("target", "a", ns="other", labels={"app": "x"}, owned=False)
    own_ns = pod("p-own", "a", affinity=anti("app", "x", "zone"))
    listed = pod("p-listed", "a", affinity=anti("app", "x", "zone", namespaces=["other"]))
    selector_only = pod("p-sel", "a", affinity=anti("app", "x", "zone", namespaceSelector={}))
    assert run([*hosts, other_ns, own_ns, listed, selector_only]) == ["p-listed"]


def test_args_select_the_pods_seen() -> None:
    """``namespaces`` and ``labelSelector`` restrict both the candidates and the pods they are repelled by."""
    objects = [N1, pod("p1", affinity=FOO_BAR, labels={"tier": "web"}), pod("p2", labels={"foo": "bar"})]
    assert run(objects) == ["p1"]
    assert run(objects, {"labelSelector": {"matchLabels": {"tier": "web"}}}) == []
    assert run(objects, {"namespaces": {"exclude": ["default"]}}) == []
    assert run(objects, {"namespaces": {"include": ["default"]}}) == ["p1"]


def test_sorted_low_to_high_priority_then_qos() -> None:
    """Pods are tried lowest priority first (no priority before any), then BestEffort, Burstable,
    Guaranteed; an evicted pod no longer repels the others."""
    both: dict[str, Any] = {"labels": {"foo": "bar"}, "affinity": FOO_BAR}
    guaranteed = pod("a-guaranteed", **both)
    guaranteed["spec"]["containers"][0]["resources"] = {
        "requests": {"cpu": "100m", "memory": "1Mi"},
        "limits": {"cpu": "100m", "memory": "1Mi"},
    }
    best_effort = pod("b-besteffort", **both)
    best_effort["spec"]["containers"][0].pop("resources")
    objects = [N1, guaranteed, best_effort, pod("c-burstable", **both), pod("d-prio", priority=1, **both)]
    assert run(objects) == ["b-besteffort", "c-burstable", "a-guaranteed"]


def read(raw: dict[str, Any] | None) -> RemovePodsViolatingInterPodAntiAffinityArgs:
    return parse_args(ArgsReader(raw, "P.args"))


def test_defaults_and_validation() -> None:
    """TestSetDefaults / TestValidateRemovePodsViolatingInterPodAntiAffinityArgs."""
    assert read(None) == RemovePodsViolatingInterPodAntiAffinityArgs(PodSelection())
    assert read({"namespaces": {"include": ["default"]}}).selection.include == frozenset({"default"})
    selector = read(
        {"labelSelector": {"matchLabels": {"role.kubernetes.io/node": ""}}}
    ).selection.label_selector
    assert selector is not None and selector.matches({"role.kubernetes.io/node": ""})
    with pytest.raises(PolicyError) as err:
        read({"namespaces": {"include": ["default"], "exclude": ["kube-system"]}})
    assert str(err.value) == "P.args.namespaces: only one of Include/Exclude namespaces can be set"
    with pytest.raises(PolicyError) as err:
        read({"labelSelector": {"matchExpressions": [{"operator": "In"}]}})
    assert (
        str(err.value)
        == 'P.args.labelSelector: matchExpressions[0].key: Invalid value: "": name part must be non-empty'
    )
