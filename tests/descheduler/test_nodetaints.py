"""RemovePodsViolatingNodeTaints: upstream's node_taint_test.go, validation_test.go and defaults_test.go as
tables.

Upstream's fixtures: nodes of 2000m cpu / 3000 memory / 10 pods without labels; pods requesting 100m cpu,
owned by a ``Pod``. Its taint helpers ignore their key/value arguments: every "test" or "testing" taint is
``testTaint1=test1``, and a toleration helper replaces the pod's tolerations rather than adding one.
"""

from __future__ import annotations

from typing import Any

import pytest
from harness import run_plugin

from berth.api.taints import Taint, parse_tolerations
from berth.descheduler.args import ArgsReader, PolicyError
from berth.descheduler.evictor import Limits
from berth.descheduler.plugins.nodetaints import NAME, RemovePodsViolatingNodeTaintsArgs, parse_args
from berth.descheduler.plugins.podselection import PodSelection
from builders import HOSTNAME, make_node, make_pod

Obj = dict[str, Any]
CRITICAL = 2_000_000_000
MIRROR = {"kubernetes.io/config.mirror": "mirror", "kubernetes.io/config.source": "api"}
LOCAL_STORAGE = [{"name": "sample", "hostPath": {"path": "somePath"}, "emptyDir": {"sizeLimit": "10"}}]
TEST_TAINT = {"key": "testTaint1", "value": "test1", "effect": "NoSchedule"}
PREFER_TAINT = {"key": "testTaint1", "value": "test1", "effect": "PreferNoSchedule"}


def node(
    name: str,
    *taints: Obj,
    cpu: int = 2000,
    memory: int = 3000,
    pods: int = 10,
    labels: dict[str, str] | None = None,
    unschedulable: bool = False,
) -> Obj:
    """Upstream's BuildTestNode with taints."""
    b = make_node(name).unlabel(HOSTNAME).capacity(cpu=f"{cpu}m", memory=str(memory), pods=str(pods))
    b.label(labels or {}).taints(*taints)
    if unschedulable:
        b.unschedulable()
    return b.obj()


def toleration(key: str, value: str, effect: str = "NoSchedule") -> list[Obj]:
    """Upstream's addTolerationToPod: one Equal toleration (replacing any other)."""
    return [{"key": key, "value": value, "effect": effect}]


TOLERATES = toleration("testTaint1", "test1")
TOLERATES_X = toleration("testTaintX1", "testX1")


def pod(
    name: str,
    node_name: str,
    *,
    owner: str | None = "Pod",
    ns: str = "default",
    tolerations: list[Obj] | None = None,
    priority: int | None = None,
    annotations: dict[str, str] | None = None,
    volumes: list[Obj] | None = None,
    node_selector: dict[str, str] | None = None,
) -> Obj:
    """Upstream's BuildTestPod (100m cpu) with a `owner` owner reference (none when None)."""
    b = make_pod(name).ns(ns).node(node_name).req(cpu="100m", memory="0").priority(priority)
    if owner is not None:
        b.owner(owner, "", "", api_version="v1", controller=None)
    if tolerations:
        b.tolerations(*tolerations)
    if annotations:
        b.annotate(annotations)
    if node_selector:
        b.node_selector(node_selector)
    obj = b.obj()
    if volumes:
        obj["spec"]["volumes"] = volumes
    return obj


def critical(name: str, node_name: str) -> Obj:
    """A system-critical pod in kube-system."""
    return pod(name, node_name, ns="kube-system", priority=CRITICAL)


N1 = node("n1", TEST_TAINT)
N2 = node("n2", TEST_TAINT)
PROTECTED = [
    critical("p7", "n2"),
    pod("p8", "n2", owner="DaemonSet"),
    pod("p9", "n2", volumes=LOCAL_STORAGE),
    pod("p10", "n2", annotations=MIRROR),
]
TOLERATING_AND_NOT = [
    pod("p1", "n1", tolerations=TOLERATES),
    pod("p2", "n1"),
    pod("p3", "n1", tolerations=TOLERATES),
]
P1_P5_P6 = [pod("p1", "n1", tolerations=TOLERATES), pod("p5", "n1"), pod("p6", "n1")]

# description, objects, plugin args, evictor args, limits, evicted
CASES: list[tuple[str, list[Obj], dict[str, Any], dict[str, Any], Limits, list[str]]] = [
    ("pods not tolerating the taint are evicted", [N1, *TOLERATING_AND_NOT], {}, {}, Limits(), ["p2"]),
    (
        "pods with other tolerations are evicted",
        [N1, pod("p1", "n1", tolerations=TOLERATES), pod("p3", "n1", tolerations=TOLERATES), pod("p4", "n1", tolerations=TOLERATES_X)],
        {}, {}, Limits(), ["p4"],
    ),
    ("maxNoOfPodsToEvictTotal", [N1, *P1_P5_P6], {}, {}, Limits(per_node=2, total=1), ["p5"]),
    ("maxPodsToEvictPerNode", [N1, *P1_P5_P6], {}, {}, Limits(per_node=1), ["p5"]),
    ("maxNoOfPodsToEvictPerNamespace", [N1, *P1_P5_P6], {}, {}, Limits(per_namespace=1), ["p5"]),
    ("protected pods are not evicted", [N2, *PROTECTED], {}, {}, Limits(), []),
    ("local storage pods evicted when allowed", [N2, *PROTECTED], {}, {"evictLocalStoragePods": True}, Limits(), ["p9"]),
    (
        "only the non-critical pod is evicted",
        [N2, critical("p7", "n2"), pod("p8", "n2", owner="DaemonSet"), pod("p10", "n2", annotations=MIRROR), pod("p11", "n2")],
        {}, {}, Limits(), ["p11"],
    ),
    (
        "critical pods evicted when allowed",
        [N1, N2, pod("p2", "n1"), critical("p7", "n2"), pod("p9", "n2", volumes=LOCAL_STORAGE), pod("p10", "n2", annotations=MIRROR)],
        {}, {"evictSystemCriticalPods": True}, Limits(), ["p2", "p7"],
    ),
    ("nodeFit: the other node is tainted too", [N1, N2, *TOLERATING_AND_NOT], {}, {"nodeFit": True}, Limits(), []),
    (
        "nodeFit: the other node does not match the selector",
        [
            N1,
            node("n3", labels={"datacenter": "east"}),
            pod("p1", "n1", tolerations=TOLERATES),
            pod("p3", "n1", tolerations=TOLERATES),
            pod("p11", "n2", node_selector={"datacenter": "west"}),
        ],
        {}, {"nodeFit": True}, Limits(), [],
    ),
    ("nodeFit: the other node is unschedulable", [N1, node("n4", unschedulable=True), *TOLERATING_AND_NOT], {}, {"nodeFit": True}, Limits(), []),
    (
        "PreferNoSchedule not enforced by default",
        [node("n5", PREFER_TAINT), pod("p13", "n5", tolerations=toleration("testTaint0", "test0", "PreferNoSchedule"))],
        {}, {}, Limits(), [],
    ),
    (
        "PreferNoSchedule enforced with includePreferNoSchedule",
        [node("n5", PREFER_TAINT), pod("p13", "n5", tolerations=toleration("testTaint0", "test0", "PreferNoSchedule"))],
        {"includePreferNoSchedule": True}, {}, Limits(), ["p13"],
    ),
    ("excluded by key", [N1, pod("p2", "n1")], {"excludedTaints": ["excludedTaint1", "testTaint1"]}, {}, Limits(), []),
    ("excluded by key=value", [N1, pod("p2", "n1")], {"excludedTaints": ["testTaint1=test1"]}, {}, Limits(), []),
    ("excluded key, other value", [N1, pod("p2", "n1")], {"excludedTaints": ["testTaint1=test2"]}, {}, Limits(), ["p2"]),
    (
        "nodeFit: the only other node has not enough resources",
        [N1, node("n6", PREFER_TAINT, cpu=1, memory=1, pods=1), pod("p2", "n1"), critical("p7", "n2"), pod("p9", "n2", volumes=LOCAL_STORAGE), pod("p10", "n2", annotations=MIRROR)],
        {}, {"evictSystemCriticalPods": True, "nodeFit": True}, Limits(), [],
    ),
    (
        "included taints: pods on another node",
        [node("n7", TEST_TAINT, TEST_TAINT), pod("p1", "n1", tolerations=TOLERATES)],
        {"includedTaints": ["testTaint1=test1"]}, {}, Limits(), [],
    ),
    (
        "taint not included",
        [N1, pod("p1", "n1", tolerations=TOLERATES), pod("p2", "n1"), pod("p4", "n1", tolerations=TOLERATES_X)],
        {"includedTaints": ["testTaint2=test2"]}, {}, Limits(), [],
    ),
    ("taint included", [N1, *TOLERATING_AND_NOT], {"includedTaints": ["testTaint1=test1"]}, {}, Limits(), ["p2"]),
    (
        "every taint counts without includedTaints",
        [node("n7", TEST_TAINT, TEST_TAINT), pod("p14", "n7", tolerations=TOLERATES), pod("p15", "n7", tolerations=toleration("testingTaint1", "testing1"))],
        {}, {}, Limits(), ["p15"],
    ),
]  # fmt: skip


@pytest.mark.parametrize(
    ("objects", "args", "evictor_args", "limits", "evicted"),
    [c[1:] for c in CASES],
    ids=[c[0] for c in CASES],
)
def test_delete_pods_violating_node_taints(
    objects: list[Obj], args: dict[str, Any], evictor_args: dict[str, Any], limits: Limits, evicted: list[str]
) -> None:
    """TestDeletePodsViolatingNodeTaints (the duplicated per-namespace case once)."""
    assert run_plugin(objects, NAME, args, evictor_args=evictor_args, limits=limits) == evicted


def test_no_execute_taints_and_empty_included_list() -> None:
    """NoExecute taints are not this plugin's; ``includedTaints: []`` (given, empty) enforces no taint."""
    objects = [
        node("n1", {"key": "k", "effect": "NoExecute"}, {"key": "j", "value": "v", "effect": "NoSchedule"})
    ]
    objects.append(pod("p", "n1"))
    assert run_plugin(objects, NAME, {}) == ["p"]
    assert run_plugin(objects, NAME, {"excludedTaints": ["j"]}) == []
    assert run_plugin(objects, NAME, {"includedTaints": ["j=v"]}) == ["p"]
    assert run_plugin(objects, NAME, {"includedTaints": ["j"]}) == ["p"]
    assert run_plugin(objects, NAME, {"includedTaints": []}) == []


def test_namespaces_and_label_selector() -> None:
    """``namespaces`` and ``labelSelector`` restrict the pods considered."""
    labelled = make_pod("b").ns("other").node("n1").label(app="b").owner("Pod", "", "", controller=None).obj()
    objects = [N1, pod("a", "n1"), labelled]
    assert run_plugin(objects, NAME, {}) == ["a", "b"]
    assert run_plugin(objects, NAME, {"namespaces": {"include": ["other"]}}) == ["b"]
    assert run_plugin(objects, NAME, {"namespaces": {"exclude": ["other"]}}) == ["a"]
    assert run_plugin(objects, NAME, {"labelSelector": {"matchLabels": {"app": "b"}}}) == ["b"]


TOLERATES_TAINT = [
    ("same key and effect, Exists, taint without value", {"key": "foo", "operator": "Exists", "effect": "NoSchedule"}, Taint("foo", "", "NoSchedule"), True),
    ("same key and effect, Exists, taint with a value", {"key": "foo", "operator": "Exists", "effect": "NoSchedule"}, Taint("foo", "bar", "NoSchedule"), True),
    ("empty key with Exists matches every taint of the effect", {"key": "", "operator": "Exists", "effect": "NoSchedule"}, Taint("foo", "bar", "NoSchedule"), True),
    ("same key, effect and value, Equal", {"key": "foo", "operator": "Equal", "value": "bar", "effect": "NoSchedule"}, Taint("foo", "bar", "NoSchedule"), True),
    ("different values, Equal", {"key": "foo", "operator": "Equal", "value": "value1", "effect": "NoSchedule"}, Taint("foo", "value2", "NoSchedule"), False),
    ("different effects, Equal", {"key": "foo", "operator": "Equal", "value": "bar", "effect": "NoSchedule"}, Taint("foo", "bar", "NoExecute"), False),
]  # fmt: skip


@pytest.mark.parametrize(
    ("raw", "taint", "tolerated"), [c[1:] for c in TOLERATES_TAINT], ids=[c[0] for c in TOLERATES_TAINT]
)
def test_tolerates_taint(raw: Obj, taint: Taint, tolerated: bool) -> None:
    """TestToleratesTaint, on the toleration semantics the plugin uses."""
    assert parse_tolerations([raw])[0].tolerates(taint) is tolerated


def read(raw: dict[str, Any] | None) -> RemovePodsViolatingNodeTaintsArgs:
    return parse_args(ArgsReader(raw, "P.args"))


def test_defaults() -> None:
    """TestSetDefaults_RemovePodsViolatingNodeTaintsArgs."""
    assert read(None) == RemovePodsViolatingNodeTaintsArgs(PodSelection(), False, frozenset(), None)
    got = read({"namespaces": {}, "labelSelector": {}, "excludedTaints": ["ExcludedTaints"]})
    assert got.excluded_taints == frozenset({"ExcludedTaints"}) and got.included_taints is None
    assert got.selection.label_selector is not None and got.selection.label_selector.is_everything()


def test_validation() -> None:
    """TestValidateRemovePodsViolatingNodeTaintsArgs."""
    assert read({"namespaces": {"include": ["default"]}}).selection.include == frozenset({"default"})
    assert read({"labelSelector": {"matchLabels": {"role.kubernetes.io/node": ""}}}).selection.label_selector
    assert read({"excludedTaints": ["testTaint1=test1"]}).excluded_taints == frozenset({"testTaint1=test1"})
    with pytest.raises(PolicyError) as err:
        read({"namespaces": {"include": ["default"], "exclude": ["kube-system"]}})
    assert str(err.value) == "P.args.namespaces: only one of Include/Exclude namespaces can be set"
    with pytest.raises(PolicyError) as err:
        read({"labelSelector": {"matchExpressions": [{"operator": "In"}]}})
    assert str(err.value).startswith("P.args.labelSelector: matchExpressions[0].key: Invalid value")
    with pytest.raises(PolicyError) as err:
        read({"excludedTaints": ["do-not-evict"], "includedTaints": ["testTaint1=test1"]})
    assert (
        str(err.value)
        == "P.args.includedTaints: either includedTaints or excludedTaints can be set, but not both"
    )
    with pytest.raises(PolicyError) as err:
        read({"includePreferNoSchedule": "yes"})
    assert str(err.value) == "P.args.includePreferNoSchedule: must be a boolean, not string 'yes'"
