"""RemovePodsViolatingNodeAffinity: upstream's node_affinity_test.go and validation_test.go as tables.

Upstream's fixture (``addPodsToNode``): on one node, ``podWithNodeAffinity`` (required, or preferred with
weight 10, on ``kubernetes.io/desiredNode=yes``), ``pod1`` and ``pod2``, all owned by a ``Pod``; nodes of
2000m cpu / 3000 memory / 10 pods, ``nodeWithLabels`` carrying that label.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest
from harness import build, new_store

from berth.descheduler.args import ArgsReader, PolicyError
from berth.descheduler.evictor import Limits
from berth.descheduler.plugins.nodeaffinity import (
    NAME,
    PREFERRED,
    REQUIRED,
    RemovePodsViolatingNodeAffinity,
    RemovePodsViolatingNodeAffinityArgs,
    parse_args,
)
from berth.descheduler.plugins.podselection import PodSelection
from builders import HOSTNAME, make_node, make_pod

Obj = dict[str, Any]
NO_LIMITS = Limits()
KEY, VALUE = "kubernetes.io/desiredNode", "yes"
WITH, WITHOUT, UNSCHEDULABLE = "nodeWithLabels", "nodeWithoutLabels", "unschedulableNodeWithLabels"


def node(name: str, *, labels: dict[str, str] | None = None, unschedulable: bool = False) -> Obj:
    """Upstream's BuildTestNode(name, 2000, 3000, 10)."""
    b = make_node(name).unlabel(HOSTNAME).capacity(cpu="2000m", memory="3000", pods="10").label(labels or {})
    if unschedulable:
        b.unschedulable()
    return b.obj()


NODES = {
    WITH: node(WITH, labels={KEY: VALUE}),
    WITHOUT: node(WITHOUT),
    UNSCHEDULABLE: node(UNSCHEDULABLE, labels={KEY: VALUE}, unschedulable=True),
}
TERM = {"matchExpressions": [{"key": KEY, "operator": "In", "values": [VALUE]}]}


def affinity(kind: str, weight: int = 10, term: Obj = TERM) -> Obj:
    """Node affinity of `kind` (required, or preferred with `weight`) on `term`."""
    if kind == REQUIRED:
        return {"nodeAffinity": {REQUIRED: {"nodeSelectorTerms": [term]}}}
    return {"nodeAffinity": {PREFERRED: [{"weight": weight, "preference": term}]}}


def pod(name: str, node_name: str, *, ns: str = "default", aff: Obj | None = None, **labels: str) -> Obj:
    """Upstream's BuildTestPod (100m cpu) owned by a ``Pod``."""
    b = make_pod(name).ns(ns).node(node_name).req(cpu="100m", memory="0").affinity(aff)
    b.owner("Pod", "", "", api_version="v1", controller=None)
    if labels:
        b.label(labels)
    return b.obj()


def pods_on(node_name: str, kind: str) -> list[Obj]:
    """Upstream's addPodsToNode."""
    return [
        pod("podWithNodeAffinity", node_name, aff=affinity(kind)),
        pod("pod1", node_name),
        pod("pod2", node_name),
    ]


def run(
    objects: Sequence[Obj],
    args: dict[str, Any],
    *,
    limits: Limits = NO_LIMITS,
    node_fit: bool = False,
    terminating: bool = False,
) -> list[str]:
    """Evicted pod names after one run over the view's nodes; with `terminating`, every pod is being
    deleted first."""
    store = new_store(objects)
    if terminating:
        for obj in objects:
            if obj["kind"] == "Pod":
                store.delete(("", "Pod"), obj["metadata"]["namespace"], obj["metadata"]["name"])
    plugin, pod_evictor, view = build(store, NAME, args, evictor_args={"nodeFit": node_fit}, limits=limits)
    assert isinstance(plugin, RemovePodsViolatingNodeAffinity)
    plugin.deschedule(view.nodes)
    return [e.name for e in pod_evictor.evictions]


MISPLACED = [NODES[WITHOUT], NODES[WITH]]
CASES: list[tuple[str, str, str, list[Obj], Limits, bool, bool, list[str]]] = [
    ("correctly scheduled", REQUIRED, WITH, [NODES[WITH]], Limits(), False, False, []),
    ("correctly scheduled", PREFERRED, WITH, [NODES[WITH]], Limits(), False, False, []),
    ("misplaced, another node available", REQUIRED, WITHOUT, MISPLACED, Limits(), False, False, ["podWithNodeAffinity"]),
    ("misplaced, a better node available", PREFERRED, WITHOUT, MISPLACED, Limits(), False, False, ["podWithNodeAffinity"]),
    ("maxPodsToEvictPerNode=1", REQUIRED, WITHOUT, MISPLACED, Limits(per_node=1), False, False, ["podWithNodeAffinity"]),
    ("maxPodsToEvictPerNode=1", PREFERRED, WITHOUT, MISPLACED, Limits(per_node=1), False, False, ["podWithNodeAffinity"]),
    ("maxPodsToEvictPerNode=0", REQUIRED, WITHOUT, MISPLACED, Limits(per_node=0), False, False, []),
    ("maxPodsToEvictPerNode=0", PREFERRED, WITHOUT, MISPLACED, Limits(per_node=0), False, False, []),
    ("maxPodsToEvictPerNode=1, terminating", REQUIRED, WITHOUT, MISPLACED, Limits(per_node=1), False, True, []),
    ("maxPodsToEvictPerNode=1, terminating", PREFERRED, WITHOUT, MISPLACED, Limits(per_node=1), False, True, []),
    ("maxNoOfPodsToEvictPerNamespace=1", REQUIRED, WITHOUT, MISPLACED, Limits(per_namespace=1), False, False, ["podWithNodeAffinity"]),
    ("maxNoOfPodsToEvictTotal=0", REQUIRED, WITHOUT, MISPLACED, Limits(per_namespace=1, total=0), False, False, []),
    ("maxNoOfPodsToEvictPerNamespace=1", PREFERRED, WITHOUT, MISPLACED, Limits(per_namespace=1), False, False, ["podWithNodeAffinity"]),
    ("maxNoOfPodsToEvictPerNamespace=0", REQUIRED, WITHOUT, MISPLACED, Limits(per_namespace=0), False, False, []),
    ("maxNoOfPodsToEvictPerNamespace=0", PREFERRED, WITHOUT, MISPLACED, Limits(per_namespace=0), False, False, []),
    ("maxNoOfPodsToEvictPerNamespace=1, terminating", REQUIRED, WITHOUT, MISPLACED, Limits(per_namespace=1), False, True, []),
    ("maxNoOfPodsToEvictPerNamespace=1, terminating", PREFERRED, WITHOUT, MISPLACED, Limits(per_namespace=1), False, True, []),
    ("no node where the pod fits", REQUIRED, WITHOUT, [NODES[WITHOUT], NODES[UNSCHEDULABLE]], Limits(), True, False, []),
    ("no node where the pod fits", PREFERRED, WITHOUT, [NODES[WITHOUT], NODES[UNSCHEDULABLE]], Limits(), True, False, []),
    ("pods' node not in the cycle", REQUIRED, WITHOUT, [NODES[WITH], NODES[UNSCHEDULABLE]], Limits(per_node=1), True, False, []),
    ("pods' node not in the cycle", PREFERRED, WITHOUT, [NODES[WITH], NODES[UNSCHEDULABLE]], Limits(per_node=1), True, False, []),
]  # fmt: skip


@pytest.mark.parametrize(
    ("kind", "on", "nodes", "limits", "node_fit", "terminating", "evicted"),
    [c[1:] for c in CASES],
    ids=[f"{c[0]} [{c[1][:8]}]" for c in CASES],
)
def test_remove_pods_violating_node_affinity(
    kind: str,
    on: str,
    nodes: list[Obj],
    limits: Limits,
    node_fit: bool,
    terminating: bool,
    evicted: list[str],
) -> None:
    """TestRemovePodsViolatingNodeAffinity (the invalid-type case is a validation error here)."""
    objects = [*nodes, *pods_on(on, kind)]
    got = run(
        objects, {"nodeAffinityType": [kind]}, limits=limits, node_fit=node_fit, terminating=terminating
    )
    assert got == evicted


def test_types_run_in_order_and_share_the_limits() -> None:
    """Each ``nodeAffinityType`` runs over all nodes in turn; the total limit ends the run."""
    objects = [
        NODES[WITH],
        NODES[WITHOUT],
        pod("a-required", WITHOUT, aff=affinity(REQUIRED)),
        pod("b-preferred", WITHOUT, aff=affinity(PREFERRED)),
        pod("c-required", WITHOUT, aff=affinity(REQUIRED)),
    ]
    both = {"nodeAffinityType": [PREFERRED, REQUIRED]}
    assert run(objects, both) == ["b-preferred", "a-required", "c-required"]
    assert run(objects, both, limits=Limits(total=2)) == ["b-preferred", "a-required"]
    assert run(objects, {"nodeAffinityType": [REQUIRED]}, limits=Limits(per_node=1)) == ["a-required"]


def test_preferred_needs_a_strictly_better_node() -> None:
    """A pod whose node scores as well as the best node stays; the best node may be any cycle node."""
    heavy = {"matchExpressions": [{"key": "tier", "operator": "In", "values": ["gold"]}]}
    two_terms = {
        "nodeAffinity": {PREFERRED: [{"weight": 10, "preference": TERM}, {"weight": 30, "preference": heavy}]}
    }
    objects = [
        node("gold", labels={"tier": "gold"}),
        node("both", labels={"tier": "gold", KEY: VALUE}),
        node("plain", labels={KEY: VALUE}),
        pod("on-gold", "gold", aff=two_terms),
        pod("on-both", "both", aff=two_terms),
        pod("on-plain", "plain", aff=two_terms),
    ]
    assert run(objects, {"nodeAffinityType": [PREFERRED]}) == ["on-gold", "on-plain"]


def test_required_needs_required_affinity_and_a_fit() -> None:
    """A plain nodeSelector mismatch is not this plugin's business; a pod that fits nowhere stays."""
    selector_only = make_pod("selector-only").node(WITHOUT).node_selector({KEY: VALUE})
    selector_only.owner("Pod", "", "", api_version="v1", controller=None)
    nowhere = pod(
        "nowhere",
        WITHOUT,
        aff=affinity(REQUIRED, term={"matchExpressions": [{"key": "x", "operator": "Exists"}]}),
    )
    objects = [*MISPLACED, selector_only.obj(), nowhere]
    assert run(objects, {"nodeAffinityType": [REQUIRED]}) == []


def test_namespaces_and_label_selector() -> None:
    """``namespaces`` and ``labelSelector`` restrict the pods considered."""
    objects = [
        *MISPLACED,
        pod("a", WITHOUT, aff=affinity(REQUIRED), app="a"),
        pod("b", WITHOUT, ns="other", aff=affinity(REQUIRED), app="b"),
    ]
    required = {"nodeAffinityType": [REQUIRED]}
    assert run(objects, required) == ["a", "b"]
    assert run(objects, {**required, "namespaces": {"include": ["other"]}}) == ["b"]
    assert run(objects, {**required, "namespaces": {"exclude": ["other"]}}) == ["a"]
    assert run(objects, {**required, "labelSelector": {"matchLabels": {"app": "b"}}}) == ["b"]


def read(raw: dict[str, Any] | None) -> RemovePodsViolatingNodeAffinityArgs:
    return parse_args(ArgsReader(raw, "P.args"))


def test_validation() -> None:
    """TestValidateRemovePodsViolatingNodeAffinityArgs; an unknown type is rejected when read (upstream
    ignores it at run time: "Invalid Affinity type, should not evict any pods")."""
    assert read({"nodeAffinityType": [REQUIRED]}) == RemovePodsViolatingNodeAffinityArgs(
        (REQUIRED,), PodSelection()
    )
    empty: tuple[dict[str, Any] | None, ...] = (None, {"nodeAffinityType": []})
    for raw in empty:
        with pytest.raises(PolicyError) as err:
            read(raw)
        assert str(err.value) == "P.args.nodeAffinityType: nodeAffinityType needs to be set"
    with pytest.raises(PolicyError) as err:
        read(
            {
                "nodeAffinityType": [REQUIRED],
                "namespaces": {"include": ["default"], "exclude": ["kube-system"]},
            }
        )
    assert str(err.value) == "P.args.namespaces: only one of Include/Exclude namespaces can be set"
    with pytest.raises(PolicyError) as err:
        read({"nodeAffinityType": ["requiredDuringSchedulingRequiredDuringExecution"]})
    assert str(err.value) == (
        "P.args.nodeAffinityType[0]: unsupported value 'requiredDuringSchedulingRequiredDuringExecution': "
        f"must be one of {REQUIRED}, {PREFERRED}"
    )
    with pytest.raises(PolicyError) as err:
        read({"nodeAffinityType": [REQUIRED], "labelSelector": {"matchExpressions": [{"operator": "In"}]}})
    assert str(err.value).startswith("P.args.labelSelector: matchExpressions[0].key: Invalid value")
