"""RemoveDuplicates: upstream's removeduplicates_test.go, validation_test.go and defaults_test.go as tables.

Upstream's fixtures: nodes of 2000m cpu / 3000 memory / 10 pods without labels (``BuildTestNode``), pods
requesting 100m cpu and 0 memory in namespace ``default`` (``BuildTestPod``), owned by ``ReplicaSet``
``replicaset-1``. Pods on a node are seen in name order (the store lists them so).
"""

from __future__ import annotations

from typing import Any

import pytest
from harness import run_plugin

from berth.descheduler.args import ArgsReader, PolicyError
from berth.descheduler.plugins.podselection import PodSelection
from berth.descheduler.plugins.removeduplicates import NAME, RemoveDuplicatesArgs, parse_args
from builders import HOSTNAME, make_node, make_pod

Obj = dict[str, Any]
CRITICAL = 2_000_000_000
MIRROR = {
    "kubernetes.io/created-by": '{"kind":"SerializedReference","apiVersion":"v1","reference":{"kind":"Pod"}}',
    "kubernetes.io/config.source": "api",
    "kubernetes.io/config.mirror": "mirror",
}
LOCAL_STORAGE = [{"name": "sample", "hostPath": {"path": "somePath"}, "emptyDir": {"sizeLimit": "10"}}]


def node(name: str, cpu: int = 2000, memory: int = 3000, pods: int = 10, **kw: Any) -> Obj:
    """Upstream's BuildTestNode: no labels unless given; ``taints``, ``labels``, ``unschedulable``."""
    b = make_node(name).unlabel(HOSTNAME).capacity(cpu=f"{cpu}m", memory=str(memory), pods=str(pods))
    b.label(kw.get("labels") or {})
    for t in kw.get("taints") or ():
        b.taints(t)
    if kw.get("unschedulable"):
        b.unschedulable()
    return b.obj()


def pod(
    name: str,
    node_name: str = "n1",
    *,
    ns: str = "default",
    owners: list[Obj] | None = None,
    cpu: int = 100,
    memory: int = 0,
    images: tuple[str, ...] = ("",),
    **spec: Any,
) -> Obj:
    """Upstream's BuildTestPod: one container per image requesting ``cpu`` milli-cpu and ``memory`` (the
    first), owned by ``owners`` (default: ReplicaSet replicaset-1)."""
    obj = make_pod(name).ns(ns).node(node_name).obj()
    obj["spec"]["containers"] = [{"name": f"c{i}", "image": image} for i, image in enumerate(images)]
    obj["spec"]["containers"][0]["resources"] = {"requests": {"cpu": f"{cpu}m", "memory": str(memory)}}
    obj["metadata"]["ownerReferences"] = rs() if owners is None else owners
    annotations = spec.pop("annotations", None)
    if annotations:
        obj["metadata"]["annotations"] = annotations
    obj["spec"].update(spec)
    return obj


def rs(name: str = "replicaset-1") -> list[Obj]:
    """A ReplicaSet owner reference list."""
    return [{"apiVersion": "v1", "kind": "ReplicaSet", "name": name, "uid": name}]


def ref(kind: str) -> list[Obj]:
    """An owner reference list of `kind` (upstream's GetNormalPodOwnerRefList / GetDaemonSetOwnerRefList)."""
    return [{"apiVersion": "v1", "kind": kind, "name": "", "uid": ""}]


TWO_NODES = [node("n1"), node("n2")]
DEV = [pod("p1", ns="dev"), pod("p2", ns="dev"), pod("p3", ns="dev")]
TEST = [pod("p8", ns="test"), pod("p9", ns="test"), pod("p10", ns="test")]
PROTECTED = [
    pod("p4", owners=ref("DaemonSet")),
    pod("p5", owners=ref("Pod"), volumes=LOCAL_STORAGE),
    pod("p6", owners=[], annotations=MIRROR),
    pod("p7", ns="kube-system", owners=[], priority=CRITICAL),
]
TAINT = {"key": "hardware", "value": "gpu", "effect": "NoSchedule"}

FIND_DUPLICATES = [
    ("three pods in dev, same ReplicaSet: one evicted", DEV, TWO_NODES, {}, False, ["p3"]),
    ("ReplicaSet kind excluded: none", DEV, TWO_NODES, {"excludeOwnerKinds": ["ReplicaSet"]}, False, []),
    ("three pods in test, same ReplicaSet: one evicted", TEST, TWO_NODES, {}, False, ["p9"]),
    (
        "dev and test, ReplicaSets of the same name: two evicted",
        DEV + TEST,
        TWO_NODES,
        {},
        False,
        ["p3", "p9"],
    ),
    ("DaemonSet, local storage, mirror, critical: none", PROTECTED, TWO_NODES, {}, False, []),
    ("all pods: two evicted", DEV + PROTECTED + TEST, TWO_NODES, {}, False, ["p3", "p9"]),
    (
        "same owner, different images: none",
        [
            pod("p11", ns="different-images", images=("foo",)),
            pod("p12", ns="different-images", images=("bar",)),
        ],
        TWO_NODES,
        {},
        False,
        [],
    ),
    (
        "a pod with several containers does not match itself",
        [pod("p13", ns="different-images", images=("", "foo"))],
        TWO_NODES,
        {},
        False,
        [],
    ),
    (
        "matching owners, not all images matching: none",
        [
            pod("p11", ns="different-images", images=("foo",)),
            pod("p13", ns="different-images", images=("", "foo")),
        ],
        TWO_NODES,
        {},
        False,
        [],
    ),
    ("nodeFit: the only other node is tainted", DEV, [node("n1"), node("n3", taints=[TAINT])], {}, True, []),
    (
        "nodeFit: the only other node does not match the pods' nodeSelector",
        [
            pod("p15", ns="node-fit", nodeSelector={"datacenter": "west"}),
            pod("NOT1", ns="node-fit", nodeSelector={"datacenter": "west"}),
            pod("NOT2", ns="node-fit", nodeSelector={"datacenter": "west"}),
        ],
        [node("n1"), node("n4", labels={"datacenter": "east"})],
        {},
        True,
        [],
    ),
    (
        "nodeFit: the only other node is unschedulable",
        DEV,
        [node("n1"), node("n5", unschedulable=True)],
        {},
        True,
        [],
    ),
    (
        "nodeFit: the only other node has not enough cpu",
        [*DEV, pod("CPU-eater", "n6", ns="test", owners=[], cpu=150, memory=150)],
        [node("n1"), node("n6", cpu=200, memory=200)],
        {},
        True,
        [],
    ),
    (
        "nodeFit: the only other node has enough cpu",
        [*DEV, pod("CPU-saver", "n6", ns="test", owners=[], cpu=100, memory=150)],
        [node("n1"), node("n6", cpu=200, memory=200)],
        {},
        True,
        ["p3"],
    ),
]


@pytest.mark.parametrize(
    ("pods", "nodes", "args", "node_fit", "evicted"),
    [case[1:] for case in FIND_DUPLICATES],
    ids=[case[0] for case in FIND_DUPLICATES],
)
def test_find_duplicate_pods(
    pods: list[Obj], nodes: list[Obj], args: dict[str, Any], node_fit: bool, evicted: list[str]
) -> None:
    """TestFindDuplicatePods."""
    got = run_plugin([*nodes, *pods], NAME, args, evictor_args={"nodeFit": node_fit})
    assert sorted(got) == sorted(evicted)


def two_rs() -> list[Obj]:
    return [*rs("replicaset-1"), *rs("replicaset-2")]


def tolerating(key: str, value: str) -> list[Obj]:
    return [{"key": key, "value": value, "operator": "Equal", "effect": "NoSchedule"}]


def not_master(key: str) -> Obj:
    return {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {
                        "matchExpressions": [
                            {"key": "node-role.kubernetes.io/control-plane", "operator": "DoesNotExist"},
                            {"key": key, "operator": "DoesNotExist"},
                        ]
                    }
                ]
            }
        }
    }


MASTER_TAINT = {"key": "node-role.kubernetes.io/control-plane", "effect": "NoSchedule"}
WORKERS = ["worker1"] * 5 + ["worker2"] * 3 + ["worker3"]
WORKER_NODES = [node("worker1"), node("worker2"), node("worker3")]


def spread(prefix: str, counts: dict[str, int], start: int = 1, **kw: Any) -> list[Obj]:
    """Pods ``<prefix><start>``... placed `counts[node]` per node, in order."""
    out: list[Obj] = []
    i = start
    for node_name, count in counts.items():
        for _ in range(count):
            out.append(pod(f"{prefix}{i}", node_name, **kw))
            i += 1
    return out


def alternating(apply: Any) -> list[Obj]:
    """p1..p9 on worker1 (5), worker2 (3), worker3 (1), built with apply(i) extra fields (k1 odd, k2 even)."""
    return [pod(f"p{i}", n, **apply("k1" if i % 2 else "k2")) for i, n in enumerate(WORKERS, start=1)]


UNIFORMLY = [
    (
        "evict uniformly (5,3,1) -> (3,3,3)",
        spread("p", {"n1": 5, "n2": 3, "n3": 1}),
        [node("n1"), node("n2"), node("n3")],
        ["p4", "p5"],
    ),
    (
        "one node left out: (5,3) -> (4,4)",
        spread("p", {"n1": 5, "n2": 3, "n3": 1}),
        [node("n1"), node("n2")],
        ["p5"],
    ),
    (
        "two ReplicaSets on every pod: the same two pods for each owner",
        spread("p", {"n1": 5, "n2": 3, "n3": 1}, start=11, owners=two_rs()),
        [node("n1"), node("n2"), node("n3")],
        ["p14", "p15"],
    ),
    (
        "two owners, (5,3,1) and (1,3,5)",
        spread("p", {"n1": 5, "n2": 3, "n3": 1}, start=11)
        + spread("p", {"n1": 1, "n2": 3, "n3": 5}, start=21, owners=rs("replicaset-2")),
        [node("n1"), node("n2"), node("n3")],
        ["p14", "p15", "p28", "p29"],
    ),
    (
        "fewer pods than nodes: (2,0,0) -> (1,1,0)",
        spread("p", {"n1": 2}),
        [node("n1"), node("n2"), node("n3")],
        ["p2"],
    ),
    (
        "fewer pods than nodes, only same-image pods are duplicates",
        [pod(f"p{i}", images=("", image)) for i, image in enumerate(("foo", "bar", "baz", "foo"), start=1)],
        [node("n1"), node("n2"), node("n3")],
        ["p4"],
    ),
    ("a single pod, three nodes", spread("p", {"n1": 1}), [node("n1"), node("n2"), node("n3")], []),
    (
        "respecting taints",
        alternating(lambda k: {"tolerations": tolerating(k, "v1" if k == "k1" else "v2")}),
        [*WORKER_NODES, *(node(f"master{i}", taints=[MASTER_TAINT]) for i in (1, 2, 3))],
        ["p4", "p5"],
    ),
    (
        "respecting required node affinity",
        alternating(lambda k: {"affinity": not_master(k)}),
        [
            *WORKER_NODES,
            *(node(f"master{i}", labels={"node-role.kubernetes.io/control-plane": ""}) for i in (1, 2, 3)),
        ],
        ["p4", "p5"],
    ),
    (
        "respecting node selector",
        alternating(lambda k: {"nodeSelector": {"node-role.kubernetes.io/worker": k}}),
        [
            *(node(f"worker{i}", labels={"node-role.kubernetes.io/worker": "k2"}) for i in (1, 2, 3)),
            *(node(f"master{i}") for i in (1, 2, 3)),
        ],
        ["p4", "p5"],
    ),
    (
        "node selector with zero target nodes",
        alternating(lambda k: {"nodeSelector": {"node-role.kubernetes.io/worker": k}}),
        [*WORKER_NODES, *(node(f"master{i}") for i in (1, 2, 3))],
        [],
    ),
]


@pytest.mark.parametrize(
    ("pods", "nodes", "evicted"), [case[1:] for case in UNIFORMLY], ids=[case[0] for case in UNIFORMLY]
)
def test_remove_duplicates_uniformly(pods: list[Obj], nodes: list[Obj], evicted: list[str]) -> None:
    """TestRemoveDuplicatesUniformly (plugin run over the test's nodes only)."""
    names = [n["metadata"]["name"] for n in nodes]
    got = run_plugin([*nodes, *pods], NAME, {}, nodes=names)
    assert sorted(got) == sorted(evicted)


def test_two_owner_pods_are_evicted_once() -> None:
    """A pod that is a duplicate for two owners is evicted once (upstream's fake client counts it twice:
    4 evictions of p14 and p15), in the order the owners were found."""
    pods = spread("p", {"n1": 5, "n2": 3, "n3": 1}, start=11, owners=two_rs())
    assert run_plugin([node("n1"), node("n2"), node("n3"), *pods], NAME, {}) == ["p14", "p15"]


def test_eviction_order_and_node_limit() -> None:
    """Duplicates are taken from the end of the node's list; the node limit stops that node only."""
    from berth.descheduler.evictor import Limits

    pods = spread("a", {"n1": 5, "n2": 1}) + spread("b", {"n1": 4}, owners=rs("replicaset-2"))
    objects = [node("n1"), node("n2"), *pods]
    assert run_plugin(objects, NAME, {}) == ["a4", "a5", "b3", "b4"]
    assert run_plugin(objects, NAME, {}, limits=Limits(per_node=1)) == ["a4"]
    assert run_plugin(objects, NAME, {}, limits=Limits(total=3)) == ["a4", "a5", "b3"]


def test_namespaces_include_and_exclude() -> None:
    """``namespaces.include`` / ``exclude`` restrict the pods considered."""
    objects = [*TWO_NODES, *DEV, *TEST]
    assert run_plugin(objects, NAME, {"namespaces": {"include": ["dev"]}}) == ["p3"]
    assert run_plugin(objects, NAME, {"namespaces": {"exclude": ["dev"]}}) == ["p9"]


def read(raw: dict[str, Any] | None) -> RemoveDuplicatesArgs:
    return parse_args(ArgsReader(raw, "RemoveDuplicates.args"))


def test_defaults() -> None:
    """TestSetDefaults_RemoveDuplicatesArgs."""
    assert read(None) == RemoveDuplicatesArgs(PodSelection(), frozenset())
    assert read({"namespaces": {}, "excludeOwnerKinds": ["ReplicaSet"]}) == RemoveDuplicatesArgs(
        PodSelection(), frozenset({"ReplicaSet"})
    )


def test_validation() -> None:
    """TestValidateRemoveDuplicatesArgs, plus strict decoding."""
    ok = read({"excludeOwnerKinds": ["Job"], "namespaces": {"include": ["default"]}})
    assert ok.selection.include == frozenset({"default"})
    with pytest.raises(PolicyError) as err:
        read(
            {"excludeOwnerKinds": ["Job"], "namespaces": {"include": ["default"], "exclude": ["kube-system"]}}
        )
    assert str(err.value) == (
        "RemoveDuplicates.args.namespaces: only one of Include/Exclude namespaces can be set"
    )
    with pytest.raises(PolicyError) as err:
        read({"labelSelector": {}})
    assert str(err.value) == ('RemoveDuplicates.args: strict decoding error: unknown field "labelSelector"')
    with pytest.raises(PolicyError) as err:
        read({"namespaces": {"includes": ["a"]}})
    assert str(err.value) == (
        'RemoveDuplicates.args.namespaces: strict decoding error: unknown field "includes" (did you mean "include"?)'
    )
