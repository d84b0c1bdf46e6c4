"""DefaultEvictor: upstream's defaultevictor_test.go, validation_test.go and defaults_test.go as tables.

Each case builds the cluster view from the objects as given (ownerReferences, priorities, start times and
deletion timestamps kept), builds the plugin from raw args and asks its Filter or PreEvictionFilter about
the first pod, as upstream's ``initializePlugin`` does.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

import pytest
from harness import args_error, new_store, run_plugin

from berth.api.timestamps import format_time, unix_seconds
from berth.descheduler.args import ArgsReader, PolicyError
from berth.descheduler.evictor import Limits, PodEvictor, ProfileEvictor
from berth.descheduler.framework import FILTER, PRE_EVICTION_FILTER, Handle
from berth.descheduler.plugins.defaultevictor import (
    DAEMON_SET_PODS,
    DEFAULT_POD_PROTECTIONS,
    EVICT_ANNOTATION,
    FAILED_BARE_PODS,
    PODS_WITH_LOCAL_STORAGE,
    PODS_WITH_PVC,
    PODS_WITH_RESOURCE_CLAIMS,
    PODS_WITHOUT_PDB,
    PREFER_NO_EVICTION_ANNOTATION,
    PVC_EXTRA,
    SPECS,
    SYSTEM_CRITICAL_PODS,
    SYSTEM_CRITICAL_PRIORITY,
    DefaultEvictor,
    DefaultEvictorArgs,
    parse_args,
)
from berth.descheduler.view import ClusterView
from builders import PodBuilder, make_node, make_pod

Obj = dict[str, Any]
NOW = "2024-06-01T12:00:00Z"
_NOW_S = unix_seconds(NOW) or 0.0
MIRROR = {
    "kubernetes.io/created-by": '{"kind":"SerializedReference","apiVersion":"v1","reference":{"kind":"Pod"}}',
    "kubernetes.io/config.source": "api",
    "kubernetes.io/config.mirror": "mirror",
}
NORMAL_OWNER = [{"kind": "Pod", "apiVersion": "v1"}]
RS_OWNER = [{"kind": "ReplicaSet", "apiVersion": "v1", "name": "replicaset-1"}]
SS_OWNER = [{"kind": "StatefulSet", "apiVersion": "v1", "name": "statefulset-1"}]
DS_OWNER = [{"kind": "DaemonSet", "apiVersion": "v1"}]
LOCAL_STORAGE = [{"name": "sample", "hostPath": {"path": "somePath"}, "emptyDir": {"sizeLimit": "10"}}]
PVC_FOO = [{"name": "pvc", "persistentVolumeClaim": {"claimName": "foo"}}]
Tweak = Callable[[PodBuilder], PodBuilder]


def ago(seconds: float) -> str:
    """The RFC 3339 time `seconds` before NOW."""
    return format_time(datetime.fromtimestamp(_NOW_S - seconds, UTC))


def pod(
    name: str, tweak: Tweak | None = None, *, node: str = "node1", cpu: str = "400m", mem: str = "0"
) -> Obj:
    """Upstream's ``buildTestPod``: a pod in ``default`` requesting `cpu` and `mem`, on `node`."""
    built = make_pod(name).req(cpu=cpu, memory=mem).node(node)
    return (tweak(built) if tweak else built).obj()


def node(name: str, *, cpu: str = "1000m", mem: str = "2000", pods: str = "13") -> Any:
    """Upstream's ``buildTestNode`` (a NodeBuilder, to be tweaked)."""
    return make_node(name).capacity(cpu=cpu, memory=mem, pods=pods)


def owners(refs: Sequence[Mapping[str, Any]]) -> Tweak:
    """Set ``metadata.ownerReferences``."""
    return lambda b: b.meta(ownerReferences=[dict(r) for r in refs])


def chain(*tweaks: Tweak) -> Tweak:
    """Apply tweaks in order."""

    def apply(b: PodBuilder) -> PodBuilder:
        for t in tweaks:
            b = t(b)
        return b

    return apply


def annotate(annotations: Mapping[str, str]) -> Tweak:
    """Set ``metadata.annotations`` (replacing any)."""
    return lambda b: b.meta(annotations=dict(annotations))


def namespace(name: str, **labels: str) -> Obj:
    """Upstream's ``BuildTestNamespace`` (with the ``kubernetes.io/metadata.name`` label) plus `labels`."""
    return {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {"name": name, "labels": {"kubernetes.io/metadata.name": name, **labels}},
    }


def pdb(name: str, app: str) -> Obj:
    """Upstream's ``BuildTestPDB``: selects ``app=<app>`` in ``default``."""
    return {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"selector": {"matchLabels": {"app": app}}, "maxUnavailable": 1},
    }


def pvc(name: str, storage_class: str) -> Obj:
    """Upstream's ``BuildTestPVC``."""
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"storageClassName": storage_class, "accessModes": ["ReadWriteOnce"]},
    }


def view_of(objects: Sequence[Obj], now: str = NOW) -> ClusterView:
    """The view of `objects` exactly as given."""

    def of(kind: str) -> list[Obj]:
        return [o for o in objects if o.get("kind") == kind]

    return ClusterView(
        nodes=of("Node"),
        pods=of("Pod"),
        now=unix_seconds(now) or 0.0,
        namespaces=of("Namespace"),
        pdbs=of("PodDisruptionBudget"),
        priority_classes=of("PriorityClass"),
    )


def evictor(
    objects: Sequence[Obj], args: Mapping[str, Any] | None = None, *, profile: str = "test"
) -> DefaultEvictor:
    """DefaultEvictor built from raw `args` over the objects (PVCs go to ``handle.extras``)."""
    view = view_of(objects)
    claims = {
        (o["metadata"]["namespace"], o["metadata"]["name"]): o
        for o in objects
        if o.get("kind") == "PersistentVolumeClaim"
    }
    handle = Handle(
        view,
        ProfileEvictor(PodEvictor(new_store(), None, Limits()), profile, [], []),
        profile,
        {PVC_EXTRA: claims},
    )
    parsed = SPECS[0].read_args(dict(args or {}), "DefaultEvictor.args")
    built = SPECS[0].build(parsed, handle)
    assert isinstance(built, DefaultEvictor)
    return built


def read(args: Mapping[str, Any] | None) -> DefaultEvictorArgs:
    """Parse raw DefaultEvictor args."""
    return parse_args(ArgsReader(args, "DefaultEvictor.args"))


# ---- PreEvictionFilter (TestDefaultEvictorPreEvictionFilter) --------------------------------------------------


def _tainted(name: str) -> Obj:
    built: Obj = node(name).taint("hardware", "gpu").obj()
    return built


def _east(name: str, **kw: str) -> Obj:
    built: Obj = node(name, **kw).unlabel("kubernetes.io/hostname").label(datacenter="east").obj()
    return built


_TOLERATE_GPU = chain(owners(NORMAL_OWNER), lambda b: b.toleration("hardware", "Equal", "gpu", "NoSchedule"))
_EAST = chain(owners(NORMAL_OWNER), lambda b: b.node_selector(datacenter="east"))

PRE_EVICTION_CASES = [
    pytest.param(
        [pod("p1", owners(NORMAL_OWNER)), _tainted("node2"), _tainted("node3")],
        {"nodeFit": True},
        False,
        id="no tolerations, all other nodes tainted",
    ),
    pytest.param(
        [pod("p1", _TOLERATE_GPU), _tainted("node2"), _tainted("node3")],
        {"nodeFit": True},
        True,
        id="correct tolerations, all other nodes tainted",
    ),
    pytest.param(
        [
            pod("p1", chain(owners(NORMAL_OWNER), lambda b: b.node_selector(datacenter="fail"))),
            _east("node2"),
            _east("node3"),
        ],
        {"nodeFit": True},
        False,
        id="incorrect node selector",
    ),
    pytest.param(
        [pod("p1", _EAST), _east("node2"), _east("node3")],
        {"nodeFit": True},
        True,
        id="correct node selector",
    ),
    pytest.param(
        [
            pod("p1", _EAST, cpu="12m", mem="8"),
            _east("node2-TEST", cpu="10m", mem="16", pods="10"),
            _east("node3-TEST", cpu="10m", mem="16", pods="10"),
        ],
        {"nodeFit": True},
        False,
        id="correct node selector, only available nodes lack cpu",
    ),
    pytest.param(
        [
            pod("p1", _EAST, cpu="12m", mem="8"),
            pod("node2-pod-10GB-mem", lambda b: b.label(test="true"), node="node2", cpu="20m", mem="10"),
            pod("node3-pod-10GB-mem", lambda b: b.label(test="true"), node="node3", cpu="20m", mem="10"),
            _east("node2", cpu="100m", mem="16", pods="10"),
            _east("node3", cpu="100m", mem="20", pods="10"),
        ],
        {"nodeFit": True},
        True,
        id="correct node selector, one node has enough memory",
    ),
    pytest.param(
        [
            pod("p1", _EAST, cpu="12m", mem="8"),
            pod("node2-pod-10GB-mem", lambda b: b.label(test="true"), node="node2", cpu="10m", mem="10"),
            pod("node3-pod-10GB-mem", lambda b: b.label(test="true"), node="node3", cpu="10m", mem="10"),
            _east("node2", cpu="100m", mem="16", pods="10"),
            _east("node3", cpu="100m", mem="16", pods="10"),
        ],
        {"nodeFit": True},
        False,
        id="correct node selector, both nodes lack memory",
    ),
    pytest.param(
        [
            pod("p1", chain(owners(NORMAL_OWNER), lambda b: b.node_selector(datacenter="fail"))),
            _east("node2"),
            _east("node3"),
        ],
        {},
        True,
        id="incorrect node selector but nodeFit false",
    ),
    pytest.param(
        [
            pod("p1", chain(owners(NORMAL_OWNER), lambda b: b.ns("test").node_selector(datacenter="east"))),
            _east("node2"),
            _east("node3"),
            namespace("default"),
            namespace("test"),
        ],
        {"nodeFit": True, "namespaceLabelSelector": {"matchLabels": {"kubernetes.io/metadata.name": "test"}}},
        True,
        id="namespace matches the namespace selector",
    ),
    pytest.param(
        [
            pod("p1", chain(owners(NORMAL_OWNER), lambda b: b.node_selector(datacenter="fail"))),
            _east("node2"),
            _east("node3"),
            namespace("default"),
            namespace("test"),
        ],
        {"nodeFit": True, "namespaceLabelSelector": {"matchLabels": {"kubernetes.io/metadata.name": "test"}}},
        False,
        id="namespace does not match the namespace selector",
    ),
]


@pytest.mark.parametrize(("objects", "args", "expected"), PRE_EVICTION_CASES)
def test_pre_eviction_filter(objects: list[Obj], args: dict[str, Any], expected: bool) -> None:
    assert evictor(objects, args).pre_eviction_filter(objects[0]) is expected


# ---- Filter (TestDefaultEvictorFilter) --------------------------------------------------------------------------

_EVICT = {EVICT_ANNOTATION: "true"}


def _priority(value: int) -> Tweak:
    return lambda b: b.priority(value)


FILTER_CASES = [
    pytest.param([pod("bare_pod_failed", lambda b: b.phase("Failed"))], {}, False, id="failed bare pod"),
    pytest.param([pod("bare_pod")], {"evictFailedBarePods": True}, False, id="bare pod, evictFailedBarePods"),
    pytest.param(
        [pod("bare_pod_failed_but_can_be_evicted", lambda b: b.phase("Failed"))],
        {"evictFailedBarePods": True},
        True,
        id="failed bare pod, evictFailedBarePods",
    ),
    pytest.param([pod("p1", owners(NORMAL_OWNER))], {}, True, id="normal ownerRefs"),
    pytest.param(
        [pod("p2", chain(annotate(_EVICT), owners(NORMAL_OWNER)))],
        {},
        True,
        id="normal ownerRefs, evict annotation",
    ),
    pytest.param(
        [pod("p2", chain(annotate({PREFER_NO_EVICTION_ANNOTATION: ""}), owners(NORMAL_OWNER)))],
        {},
        True,
        id="prefer-no-eviction annotation, preference",
    ),
    pytest.param(
        [pod("p2", chain(annotate({PREFER_NO_EVICTION_ANNOTATION: ""}), owners(NORMAL_OWNER)))],
        {"noEvictionPolicy": "Mandatory"},
        False,
        id="prefer-no-eviction annotation, mandatory",
    ),
    pytest.param([pod("p3", owners(NORMAL_OWNER))], {}, True, id="replicaSet ownerRefs"),
    pytest.param(
        [pod("p4", chain(annotate(_EVICT), owners(RS_OWNER)))],
        {},
        True,
        id="replicaSet ownerRefs, evict annotation",
    ),
    pytest.param([pod("p18", owners(NORMAL_OWNER))], {}, True, id="statefulSet ownerRefs"),
    pytest.param(
        [pod("p19", chain(annotate(_EVICT), owners(SS_OWNER)))],
        {},
        True,
        id="statefulSet ownerRefs, evict annotation",
    ),
    pytest.param(
        [pod("p5", chain(owners(NORMAL_OWNER), lambda b: b.spec(volumes=LOCAL_STORAGE)))],
        {},
        False,
        id="local storage",
    ),
    pytest.param(
        [pod("p6", chain(owners(NORMAL_OWNER), lambda b: b.spec(volumes=LOCAL_STORAGE)))],
        {"evictLocalStoragePods": True},
        True,
        id="local storage, evictLocalStoragePods",
    ),
    pytest.param(
        [pod("p7", chain(annotate(_EVICT), owners(NORMAL_OWNER), lambda b: b.spec(volumes=LOCAL_STORAGE)))],
        {},
        True,
        id="local storage, evict annotation",
    ),
    pytest.param([pod("p8", owners(DS_OWNER))], {}, False, id="daemonSet"),
    pytest.param(
        [pod("p9", chain(annotate(_EVICT), owners(DS_OWNER)))], {}, True, id="daemonSet, evict annotation"
    ),
    pytest.param([pod("p10", chain(owners(NORMAL_OWNER), annotate(MIRROR)))], {}, False, id="mirror pod"),
    pytest.param(
        [pod("p11", chain(owners(NORMAL_OWNER), annotate({**MIRROR, **_EVICT})))],
        {},
        True,
        id="mirror pod, evict annotation",
    ),
    pytest.param(
        [pod("p12", chain(owners(NORMAL_OWNER), _priority(SYSTEM_CRITICAL_PRIORITY)))],
        {},
        False,
        id="system critical priority",
    ),
    pytest.param(
        [pod("p13", chain(owners(NORMAL_OWNER), _priority(SYSTEM_CRITICAL_PRIORITY), annotate(_EVICT)))],
        {},
        True,
        id="system critical priority, evict annotation",
    ),
    pytest.param(
        [pod("p14", chain(owners(NORMAL_OWNER), _priority(900)))],
        {"priorityThreshold": {"value": 800}},
        False,
        id="priority above the threshold",
    ),
    pytest.param(
        [pod("p15", chain(owners(NORMAL_OWNER), annotate(_EVICT), _priority(900)))],
        {"priorityThreshold": {"value": 800}},
        True,
        id="priority above the threshold, evict annotation",
    ),
    pytest.param(
        [pod("p16", chain(owners(NORMAL_OWNER), _priority(SYSTEM_CRITICAL_PRIORITY)))],
        {"evictSystemCriticalPods": True},
        True,
        id="system critical priority, evictSystemCriticalPods",
    ),
    pytest.param(
        [pod("p16", chain(owners(NORMAL_OWNER), annotate(_EVICT), _priority(SYSTEM_CRITICAL_PRIORITY)))],
        {"evictSystemCriticalPods": True},
        True,
        id="system critical priority, evictSystemCriticalPods, evict annotation",
    ),
    pytest.param(
        [pod("p17", chain(owners(NORMAL_OWNER), _priority(900)))],
        {"evictSystemCriticalPods": True, "priorityThreshold": {"value": 800}},
        True,
        id="priority above the threshold, evictSystemCriticalPods",
    ),
    pytest.param(
        [pod("p17", chain(owners(NORMAL_OWNER), annotate(_EVICT), _priority(900)))],
        {"evictSystemCriticalPods": True, "priorityThreshold": {"value": 800}},
        True,
        id="priority above the threshold, evictSystemCriticalPods, evict annotation",
    ),
    pytest.param(
        [pod("p1", owners(NORMAL_OWNER)), _tainted("node2"), _tainted("node3")],
        {"nodeFit": True},
        True,
        id="other nodes tainted: Filter ignores nodeFit",
    ),
    pytest.param(
        [
            pod("p1", owners([{**NORMAL_OWNER[0], "uid": "owner-uid"}]), cpu="1m", mem="1"),
            pod("p2", owners([{**NORMAL_OWNER[0], "uid": "owner-uid"}]), cpu="1m", mem="1"),
        ],
        {"minReplicas": 2},
        True,
        id="minReplicas 2, owner with 2 replicas",
    ),
    pytest.param(
        [
            pod("p1", owners([{**NORMAL_OWNER[0], "uid": "owner-uid"}]), cpu="1m", mem="1"),
            pod("p2", owners([{**NORMAL_OWNER[0], "uid": "owner-uid"}]), cpu="1m", mem="1"),
        ],
        {"minReplicas": 3},
        False,
        id="minReplicas 3, owner with 2 replicas",
    ),
    pytest.param(
        [
            pod("p1", owners([{**NORMAL_OWNER[0], "uid": "owner-uid"}, NORMAL_OWNER[0]]), cpu="1m", mem="1"),
            pod("p2", owners(NORMAL_OWNER), cpu="1m", mem="1"),
        ],
        {"minReplicas": 2},
        True,
        id="minReplicas 2, multiple owners",
    ),
    pytest.param(
        [pod("p1", chain(owners(NORMAL_OWNER), lambda b: b.start_time(ago(600))), cpu="1m", mem="1")],
        {"minPodAge": "50m"},
        False,
        id="minPodAge 50m, started 10 minutes ago",
    ),
    pytest.param(
        [pod("p1", chain(owners(NORMAL_OWNER), lambda b: b.start_time(ago(3600))), cpu="1m", mem="1")],
        {"minPodAge": "50m"},
        True,
        id="minPodAge 50m, started 60 minutes ago",
    ),
    pytest.param(
        [pod("p1", chain(owners(NORMAL_OWNER), lambda b: b.start_time(ago(3600))), cpu="1m", mem="1")],
        {},
        True,
        id="no minPodAge, started 60 minutes ago",
    ),
    pytest.param(
        [pod("p1", chain(owners(NORMAL_OWNER), lambda b: b.label(app="foo")), cpu="1m", mem="1")],
        {"ignorePodsWithoutPDB": True},
        False,
        id="ignorePodsWithoutPDB, no PDB",
    ),
    pytest.param(
        [
            pod("p1", chain(owners(NORMAL_OWNER), lambda b: b.label(app="foo")), cpu="1m", mem="1"),
            pdb("pdb1", "foo"),
        ],
        {"ignorePodsWithoutPDB": True},
        True,
        id="ignorePodsWithoutPDB, with PDB",
    ),
    pytest.param(
        [pod("p15", chain(owners(NORMAL_OWNER), lambda b: b.spec(volumes=PVC_FOO)))],
        {"ignorePvcPods": True},
        False,
        id="ignorePvcPods, pod with PVC",
    ),
    pytest.param(
        [pod("p15", chain(owners(NORMAL_OWNER), lambda b: b.spec(volumes=PVC_FOO)))],
        {},
        True,
        id="ignorePvcPods unset, pod with PVC",
    ),
    pytest.param(
        [pod("p18", chain(owners(NORMAL_OWNER), lambda b: b.spec(volumes=[{"name": "ls", "emptyDir": {}}])))],
        {"podProtections": {"defaultDisabled": [PODS_WITH_LOCAL_STORAGE]}},
        True,
        id="local storage, PodsWithLocalStorage disabled",
    ),
    pytest.param(
        [pod("p19", owners([{"kind": "DaemonSet", "name": "daemonset-test", "uid": "daemonset-uid"}]))],
        {"podProtections": {"defaultDisabled": [DAEMON_SET_PODS]}},
        True,
        id="daemonSet, DaemonSetPods disabled",
    ),
    pytest.param(
        [pod("p20", chain(owners(NORMAL_OWNER), lambda b: b.spec(volumes=PVC_FOO)))],
        {"podProtections": {"extraEnabled": [PODS_WITH_PVC]}},
        False,
        id="PVC, PodsWithPVC enabled",
    ),
    pytest.param(
        [pod("p21", owners(NORMAL_OWNER))],
        {"podProtections": {"extraEnabled": [PODS_WITHOUT_PDB]}},
        False,
        id="no PDB, PodsWithoutPDB enabled",
    ),
    pytest.param(
        [
            pod(
                "p20",
                chain(
                    owners(NORMAL_OWNER),
                    lambda b: b.spec(
                        resourceClaims=[{"name": "test-claim", "resourceClaimName": "test-resource-claim"}]
                    ),
                ),
            )
        ],
        {"podProtections": {"extraEnabled": [PODS_WITH_RESOURCE_CLAIMS]}},
        False,
        id="resource claims, PodsWithResourceClaims enabled",
    ),
    pytest.param(
        [pod("p23", chain(owners(NORMAL_OWNER), lambda b: b.spec(volumes=PVC_FOO))), pvc("foo", "standard")],
        {
            "podProtections": {
                "extraEnabled": [PODS_WITH_PVC],
                "config": {"PodsWithPVC": {"protectedStorageClasses": [{"name": "standard"}]}},
            }
        },
        False,
        id="protected storage class",
    ),
    pytest.param(
        [
            pod("p24", chain(owners(NORMAL_OWNER), lambda b: b.spec(volumes=PVC_FOO))),
            pvc("foo", "unprotected"),
        ],
        {
            "podProtections": {
                "extraEnabled": [PODS_WITH_PVC],
                "config": {"PodsWithPVC": {"protectedStorageClasses": [{"name": "protected"}]}},
            }
        },
        True,
        id="unprotected storage class",
    ),
    pytest.param(
        [pod("p25", chain(owners(NORMAL_OWNER), lambda b: b.spec(volumes=PVC_FOO)))],
        {
            "podProtections": {
                "extraEnabled": [PODS_WITH_PVC],
                "config": {"PodsWithPVC": {"protectedStorageClasses": [{"name": "protected"}]}},
            }
        },
        False,
        id="missing PVC, storage class unknown",
    ),
    pytest.param(
        [
            pod(
                "p26",
                chain(
                    owners(NORMAL_OWNER),
                    lambda b: b.spec(
                        volumes=[
                            {"name": "protected-pvc", "persistentVolumeClaim": {"claimName": "protected"}},
                            {
                                "name": "unprotected-pvc",
                                "persistentVolumeClaim": {"claimName": "unprotected"},
                            },
                        ]
                    ),
                ),
            ),
            pvc("protected", "protected"),
            pvc("unprotected", "unprotected"),
        ],
        {
            "podProtections": {
                "extraEnabled": [PODS_WITH_PVC],
                "config": {"PodsWithPVC": {"protectedStorageClasses": [{"name": "protected"}]}},
            }
        },
        False,
        id="protected and unprotected storage classes",
    ),
    # Berth's own cases: the remaining protections and priorities from classes.
    pytest.param(
        [pod("static", chain(owners(NORMAL_OWNER), annotate({"kubernetes.io/config.source": "file"})))],
        {},
        False,
        id="static pod",
    ),
    pytest.param(
        [pod("terminating", chain(owners(NORMAL_OWNER), lambda b: b.terminating(ago(5))))],
        {},
        False,
        id="terminating pod",
    ),
    pytest.param(
        [pod("terminating", chain(owners(NORMAL_OWNER), lambda b: b.terminating(ago(5)), annotate(_EVICT)))],
        {},
        True,
        id="terminating pod, evict annotation",
    ),
    pytest.param(
        [
            pod("classed", chain(owners(NORMAL_OWNER), lambda b: b.priority_class("high"))),
            {
                "apiVersion": "scheduling.k8s.io/v1",
                "kind": "PriorityClass",
                "metadata": {"name": "high"},
                "value": 900,
            },
        ],
        {"priorityThreshold": {"value": 800}},
        False,
        id="priority from the pod's class above the threshold",
    ),
    pytest.param(
        [pod("unknown-class", chain(owners(NORMAL_OWNER), lambda b: b.priority_class("nope")))],
        {"priorityThreshold": {"value": 0}},
        True,
        id="no priority at all is under any threshold",
    ),
    pytest.param(
        [pod("p1", chain(owners(NORMAL_OWNER), lambda b: b.label(app="a")))],
        {"labelSelector": {"matchLabels": {"app": "b"}}},
        False,
        id="labelSelector does not match",
    ),
    pytest.param(
        [pod("p1", chain(owners(NORMAL_OWNER), lambda b: b.label(app="a")))],
        {"labelSelector": {"matchLabels": {"app": "a"}}},
        True,
        id="labelSelector matches",
    ),
    pytest.param(
        [pod("p1", owners(NORMAL_OWNER))],
        {"minPodAge": "1m"},
        False,
        id="minPodAge without startTime",
    ),
]


@pytest.mark.parametrize(("objects", "args", "expected"), FILTER_CASES)
def test_filter(objects: list[Obj], args: dict[str, Any], expected: bool) -> None:
    plugin = evictor(objects, args)
    assert plugin.filter(objects[0]) is expected
    assert (plugin.reasons(objects[0]) == []) is expected


def test_priority_threshold_by_class_name() -> None:
    objects = [
        pod("p900", chain(owners(NORMAL_OWNER), _priority(900))),
        pod("p700", chain(owners(NORMAL_OWNER), _priority(700))),
        {
            "apiVersion": "scheduling.k8s.io/v1",
            "kind": "PriorityClass",
            "metadata": {"name": "t"},
            "value": 800,
        },
    ]
    plugin = evictor(objects, {"priorityThreshold": {"name": "t"}})
    assert [plugin.filter(p) for p in objects[:2]] == [False, True]


def test_priority_threshold_unknown_class_is_an_error() -> None:
    with pytest.raises(PolicyError) as err:
        evictor([], {"priorityThreshold": {"name": "missing"}}, profile="p")
    assert str(err.value) == (
        'profile "p": plugin "DefaultEvictor": args.priorityThreshold.name: unable to get priority value from the '
        'priority class: priorityclasses.scheduling.k8s.io "missing" not found'
    )


def test_priority_threshold_class_above_system_critical_is_an_error() -> None:
    cls = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "x"}}
    with pytest.raises(PolicyError, match="priority threshold can't be greater than 2000000000"):
        evictor([{**cls, "value": SYSTEM_CRITICAL_PRIORITY + 1}], {"priorityThreshold": {"name": "x"}})


def test_reinitialization() -> None:
    """TestReinitialization: the plugin can be built twice over the same view."""
    objects = [
        pod("p1", owners([{**NORMAL_OWNER[0], "uid": "u1"}, NORMAL_OWNER[0]]), cpu="1m", mem="1"),
        pod("p2", owners(NORMAL_OWNER), cpu="1m", mem="1"),
    ]
    first = evictor(objects, {"minReplicas": 2})
    second = DefaultEvictor(first.args, first.handle)
    assert first.filter(objects[0]) and second.filter(objects[0])


# ---- namespace label selectors (TestMultipleProfilesWithDifferentNamespaceLabelSelectors, ...) -------------


def _ns_pod(name: str, ns: str) -> Obj:
    return pod(name, chain(owners(NORMAL_OWNER), lambda b: b.ns(ns)), cpu="100m", mem="100")


def test_profiles_with_different_namespace_label_selectors() -> None:
    pods = {
        "prod": _ns_pod("pod-in-prod", "ns-prod"),
        "test": _ns_pod("pod-in-test", "ns-test"),
        "backend": _ns_pod("pod-in-backend", "ns-backend"),
    }
    objects = [
        node("node1", pods="10").obj(),
        namespace("ns-prod", env="prod"),
        namespace("ns-test", env="test"),
        namespace("ns-backend", team="backend"),
        *pods.values(),
    ]
    profile1 = evictor(
        objects, {"namespaceLabelSelector": {"matchLabels": {"env": "prod"}}}, profile="ns-prod"
    )
    profile2 = evictor(
        objects, {"namespaceLabelSelector": {"matchLabels": {"team": "backend"}}}, profile="ns-backend"
    )
    assert {k: profile1.pre_eviction_filter(p) for k, p in pods.items()} == {
        "prod": True,
        "test": False,
        "backend": False,
    }
    assert {k: profile2.pre_eviction_filter(p) for k, p in pods.items()} == {
        "prod": False,
        "test": False,
        "backend": True,
    }


def _ns_exact(name: str, labels: Mapping[str, str]) -> Obj:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "labels": dict(labels)}}


_NS_OBJECTS = [
    _ns_exact("ns-prod", {"env": "prod", "tier": "frontend"}),
    _ns_exact("ns-staging", {"env": "staging", "tier": "backend"}),
    _ns_exact("ns-test", {"env": "test"}),
    _ns_exact("ns-nolabels", {}),
]
_NS_PODS = {
    "prod": _ns_pod("pod-in-prod", "ns-prod"),
    "staging": _ns_pod("pod-in-staging", "ns-staging"),
    "test": _ns_pod("pod-in-test", "ns-test"),
    "nolabels": _ns_pod("pod-in-nolabels", "ns-nolabels"),
}


@pytest.mark.parametrize(
    ("selector", "passing", "failing"),
    [
        pytest.param(
            {
                "matchLabels": {"tier": "frontend"},
                "matchExpressions": [{"key": "env", "operator": "In", "values": ["prod", "staging"]}],
            },
            ["prod"],
            ["staging", "test"],
            id="MatchLabels and MatchExpressions In",
        ),
        pytest.param(
            {"matchLabels": {"tier": "backend"}, "matchExpressions": [{"key": "env", "operator": "Exists"}]},
            ["staging"],
            ["prod", "test"],
            id="MatchLabels and MatchExpressions Exists",
        ),
        pytest.param(
            {
                "matchExpressions": [
                    {"key": "tier", "operator": "Exists"},
                    {"key": "env", "operator": "In", "values": ["staging"]},
                ]
            },
            ["staging"],
            ["prod", "test"],
            id="Exists and In",
        ),
        pytest.param(
            {"matchExpressions": [{"key": "tier", "operator": "DoesNotExist"}]},
            ["test", "nolabels"],
            ["prod", "staging"],
            id="DoesNotExist",
        ),
        pytest.param(
            {"matchExpressions": [{"key": "env", "operator": "NotIn", "values": ["prod", "test"]}]},
            ["staging"],
            ["prod", "test"],
            id="NotIn",
        ),
    ],
)
def test_namespace_label_selector_operations(
    selector: dict[str, Any], passing: list[str], failing: list[str]
) -> None:
    plugin = evictor(
        [node("node1").obj(), *_NS_OBJECTS, *_NS_PODS.values()], {"namespaceLabelSelector": selector}
    )
    assert [plugin.pre_eviction_filter(_NS_PODS[k]) for k in passing] == [True] * len(passing)
    assert [plugin.pre_eviction_filter(_NS_PODS[k]) for k in failing] == [False] * len(failing)


def test_namespace_label_selector_needs_the_namespace_object() -> None:
    plugin = evictor(
        [_ns_pod("p", "ghost")],
        {"namespaceLabelSelector": {"matchExpressions": [{"key": "tier", "operator": "DoesNotExist"}]}},
    )
    assert plugin.pre_eviction_filter(_ns_pod("p", "ghost")) is False


def test_node_fit_uses_the_evictor_node_selector() -> None:
    objects = [
        pod("p1", owners(NORMAL_OWNER)),
        node("node1").obj(),
        node("node2").label(pool="a").obj(),
        node("node3").label(pool="b").taint("hardware", "gpu").obj(),
    ]
    assert evictor(objects, {"nodeFit": True}).pre_eviction_filter(objects[0]) is True
    assert (
        evictor(objects, {"nodeFit": True, "nodeSelector": "pool=b"}).pre_eviction_filter(objects[0]) is False
    )


def test_node_fit_ignores_nodes_that_are_not_ready() -> None:
    not_ready = node("node2").obj()
    not_ready["status"]["conditions"] = [{"type": "Ready", "status": "False"}]
    objects = [pod("p1", owners(NORMAL_OWNER)), node("node1").obj(), not_ready]
    assert evictor(objects, {"nodeFit": True}).pre_eviction_filter(objects[0]) is False


# ---- effective protections (TestGetEffectivePodProtections_TableDriven, Test_protectedPVCStorageClasses) ----


@pytest.mark.parametrize(
    ("protections", "expected"),
    [
        pytest.param({"defaultDisabled": [], "extraEnabled": []}, set(DEFAULT_POD_PROTECTIONS), id="empty"),
        pytest.param(
            {"defaultDisabled": [PODS_WITH_LOCAL_STORAGE]},
            {DAEMON_SET_PODS, SYSTEM_CRITICAL_PODS, FAILED_BARE_PODS},
            id="disable one default",
        ),
        pytest.param(
            {"defaultDisabled": [DAEMON_SET_PODS, SYSTEM_CRITICAL_PODS]},
            {PODS_WITH_LOCAL_STORAGE, FAILED_BARE_PODS},
            id="disable two defaults",
        ),
        pytest.param(
            {"extraEnabled": [PODS_WITH_PVC]},
            {*DEFAULT_POD_PROTECTIONS, PODS_WITH_PVC},
            id="enable one extra",
        ),
        pytest.param(
            {"extraEnabled": [PODS_WITH_PVC, PODS_WITHOUT_PDB]},
            {*DEFAULT_POD_PROTECTIONS, PODS_WITH_PVC, PODS_WITHOUT_PDB},
            id="enable two extras",
        ),
        pytest.param(
            {"defaultDisabled": [FAILED_BARE_PODS, DAEMON_SET_PODS], "extraEnabled": [PODS_WITH_PVC]},
            {PODS_WITH_LOCAL_STORAGE, SYSTEM_CRITICAL_PODS, PODS_WITH_PVC},
            id="disable and enable",
        ),
        pytest.param(
            {"extraEnabled": [PODS_WITH_RESOURCE_CLAIMS]},
            {*DEFAULT_POD_PROTECTIONS, PODS_WITH_RESOURCE_CLAIMS},
            id="enable PodsWithResourceClaims",
        ),
        pytest.param(
            {
                "defaultDisabled": [FAILED_BARE_PODS, DAEMON_SET_PODS],
                "extraEnabled": [PODS_WITH_PVC, PODS_WITH_RESOURCE_CLAIMS],
            },
            {PODS_WITH_LOCAL_STORAGE, SYSTEM_CRITICAL_PODS, PODS_WITH_PVC, PODS_WITH_RESOURCE_CLAIMS},
            id="disable two, enable two",
        ),
    ],
)
def test_effective_pod_protections(protections: dict[str, Any], expected: set[str]) -> None:
    got = read({"podProtections": protections}).pod_protections
    assert set(got) == expected and len(got) == len(expected)


def test_legacy_flags_give_the_protections() -> None:
    assert read({}).pod_protections == (
        PODS_WITH_LOCAL_STORAGE,
        DAEMON_SET_PODS,
        SYSTEM_CRITICAL_PODS,
        FAILED_BARE_PODS,
    )
    assert read(
        {
            "evictLocalStoragePods": True,
            "evictDaemonSetPods": True,
            "evictSystemCriticalPods": True,
            "evictFailedBarePods": True,
            "ignorePvcPods": True,
            "ignorePodsWithoutPDB": True,
        }
    ).pod_protections == (PODS_WITH_PVC, PODS_WITHOUT_PDB)


@pytest.mark.parametrize(
    ("protections", "expected"),
    [
        pytest.param(None, (), id="no PodProtections config"),
        pytest.param({"config": {}}, (), id="no PodsWithPVC config"),
        pytest.param(
            {"config": {"PodsWithPVC": {"protectedStorageClasses": [{"name": "sc1"}, {"name": "sc2"}]}}},
            ("sc1", "sc2"),
            id="storage classes specified",
        ),
    ],
)
def test_protected_storage_classes(protections: dict[str, Any] | None, expected: tuple[str, ...]) -> None:
    raw = {} if protections is None else {"podProtections": protections}
    assert read(raw).protected_storage_classes == expected


# ---- validation (TestValidateDefaultEvictorArgs) and defaults ---------------------------------------------------

_W = "DefaultEvictor.args"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        pytest.param(
            {"priorityThreshold": {"value": 1, "name": "priority-name"}},
            f"{_W}.priorityThreshold: priority threshold misconfigured, only one of priorityThreshold fields can be set",
            id="invalid priority",
        ),
        pytest.param(
            {"noEvictionPolicy": "invalid-no-eviction-policy"},
            f'{_W}.noEvictionPolicy: noEvictionPolicy accepts only ["Preferred" "Mandatory"] values',
            id="invalid no eviction policy",
        ),
        pytest.param(
            {"podProtections": {"defaultDisabled": [], "extraEnabled": []}}, None, id="no deprecated fields"
        ),
        pytest.param(
            {
                "podProtections": {
                    "defaultDisabled": [DAEMON_SET_PODS, PODS_WITH_LOCAL_STORAGE],
                    "extraEnabled": [PODS_WITH_PVC],
                }
            },
            None,
            id="both defaultDisabled and extraEnabled",
        ),
        pytest.param({"podProtections": {"extraEnabled": [PODS_WITH_PVC]}}, None, id="extraEnabled"),
        pytest.param(
            {"evictLocalStoragePods": True, "podProtections": {"defaultDisabled": [DAEMON_SET_PODS]}},
            f"{_W}.podProtections: cannot use Deprecated fields alongside PodProtections.ExtraEnabled or "
            "PodProtections.DefaultDisabled",
            id="deprecated field with defaultDisabled",
        ),
        pytest.param(
            {"evictDaemonSetPods": True, "podProtections": {"extraEnabled": [PODS_WITH_PVC]}},
            f"{_W}.podProtections: cannot use Deprecated fields alongside PodProtections.ExtraEnabled or "
            "PodProtections.DefaultDisabled",
            id="deprecated field with extraEnabled",
        ),
        pytest.param({"minReplicas": 1}, None, id="minReplicas 1 is only a warning"),
        pytest.param(
            {"podProtections": {"extraEnabled": ["InvalidPolicy"]}},
            f'{_W}.podProtections.extraEnabled[0]: invalid pod protection policy in ExtraEnabled: "InvalidPolicy". '
            "Valid options are: [PodsWithPVC PodsWithoutPDB PodsWithResourceClaims]",
            id="extraEnabled unknown",
        ),
        pytest.param(
            {"podProtections": {"extraEnabled": ["PodsWithPVCC"]}},
            f'{_W}.podProtections.extraEnabled[0]: invalid pod protection policy in ExtraEnabled: "PodsWithPVCC". '
            "Valid options are: [PodsWithPVC PodsWithoutPDB PodsWithResourceClaims]",
            id="extraEnabled misspelled",
        ),
        pytest.param(
            {"podProtections": {"extraEnabled": [DAEMON_SET_PODS]}},
            f'{_W}.podProtections.extraEnabled[0]: invalid pod protection policy in ExtraEnabled: "DaemonSetPods". '
            "Valid options are: [PodsWithPVC PodsWithoutPDB PodsWithResourceClaims]",
            id="extraEnabled lists a default",
        ),
        pytest.param(
            {"podProtections": {"defaultDisabled": ["InvalidPolicy"]}},
            f"{_W}.podProtections.defaultDisabled[0]: invalid pod protection policy in DefaultDisabled: "
            '"InvalidPolicy". Valid options are: [PodsWithLocalStorage SystemCriticalPods FailedBarePods '
            "DaemonSetPods]",
            id="defaultDisabled unknown",
        ),
        pytest.param(
            {"podProtections": {"defaultDisabled": ["PodsWithLocalStorag"]}},
            f"{_W}.podProtections.defaultDisabled[0]: invalid pod protection policy in DefaultDisabled: "
            '"PodsWithLocalStorag". Valid options are: [PodsWithLocalStorage SystemCriticalPods FailedBarePods '
            "DaemonSetPods]",
            id="defaultDisabled misspelled",
        ),
        pytest.param(
            {"podProtections": {"defaultDisabled": [PODS_WITH_PVC]}},
            f"{_W}.podProtections.defaultDisabled[0]: invalid pod protection policy in DefaultDisabled: "
            '"PodsWithPVC". Valid options are: [PodsWithLocalStorage SystemCriticalPods FailedBarePods '
            "DaemonSetPods]",
            id="defaultDisabled lists an extra",
        ),
        pytest.param(
            {"podProtections": {"extraEnabled": [PODS_WITH_PVC, PODS_WITH_PVC]}},
            f"{_W}.podProtections.extraEnabled: PodProtections.ExtraEnabled contains duplicate entries",
            id="extraEnabled duplicate",
        ),
        pytest.param(
            {"podProtections": {"defaultDisabled": [PODS_WITH_LOCAL_STORAGE, PODS_WITH_LOCAL_STORAGE]}},
            f"{_W}.podProtections.defaultDisabled: PodProtections.DefaultDisabled contains duplicate entries",
            id="defaultDisabled duplicate",
        ),
        pytest.param(
            {
                "noEvictionPolicy": "invalid-no-eviction-policy",
                "podProtections": {
                    "extraEnabled": [PODS_WITH_PVC, PODS_WITH_PVC],
                    "defaultDisabled": [PODS_WITH_LOCAL_STORAGE, PODS_WITH_LOCAL_STORAGE, PODS_WITHOUT_PDB],
                },
            },
            f'{_W}.noEvictionPolicy: noEvictionPolicy accepts only ["Preferred" "Mandatory"] values; '
            f"{_W}.podProtections.defaultDisabled[2]: invalid pod protection policy in DefaultDisabled: "
            '"PodsWithoutPDB". Valid options are: [PodsWithLocalStorage SystemCriticalPods FailedBarePods '
            f"DaemonSetPods]; {_W}.podProtections.defaultDisabled: PodProtections.DefaultDisabled contains duplicate "
            f"entries; {_W}.podProtections.extraEnabled: PodProtections.ExtraEnabled contains duplicate entries",
            id="several errors",
        ),
        pytest.param(
            {
                "podProtections": {
                    "extraEnabled": [PODS_WITH_PVC],
                    "config": {
                        "PodsWithPVC": {
                            "protectedStorageClasses": [
                                {"name": ""},
                                {"name": "protected-storage-class-0"},
                                {"name": ""},
                                {"name": "protected-storage-class-1"},
                            ]
                        }
                    },
                }
            },
            f"{_W}.podProtections.config.PodsWithPVC.protectedStorageClasses[0].name: "
            "PodProtections.Config.PodsWithPVC.ProtectedStorageClasses[0] name cannot be empty; "
            f"{_W}.podProtections.config.PodsWithPVC.protectedStorageClasses[2].name: "
            "PodProtections.Config.PodsWithPVC.ProtectedStorageClasses[2] name cannot be empty",
            id="protected storage class without a name",
        ),
        # Berth's own: load-time checks and strict decoding.
        pytest.param(
            {"priorityThreshold": {"value": SYSTEM_CRITICAL_PRIORITY + 1}},
            f"{_W}.priorityThreshold.value: priority threshold can't be greater than 2000000000",
            id="threshold above system critical",
        ),
        pytest.param(
            {"nodeSelector": "a in (b"},
            f"{_W}.nodeSelector: invalid node selector 'a in (b': unable to parse requirement: found '', "
            "expected: ',' or ')'",
            id="invalid nodeSelector",
        ),
        pytest.param(
            {"nodefit": True},
            f'{_W}: strict decoding error: unknown field "nodefit" (did you mean "nodeFit"?)',
            id="unknown field",
        ),
        pytest.param(
            {"podProtections": {"extraEnabled": [PODS_WITH_PVC], "configs": {}}},
            f'{_W}.podProtections: strict decoding error: unknown field "configs" (did you mean "config"?)',
            id="unknown podProtections field",
        ),
        pytest.param(
            {"minPodAge": "5 minutes"},
            f"{_W}.minPodAge: invalid duration '5 minutes'",
            id="invalid minPodAge",
        ),
    ],
)
def test_validate(args: dict[str, Any], message: str | None) -> None:
    assert args_error(read, args) == message


def test_defaults() -> None:
    """TestSetDefaults_DefaultEvictorArgs: nothing is defaulted; values are kept."""
    assert read({}) == DefaultEvictorArgs()
    got = read(
        {
            "nodeSelector": "NodeSelector",
            "evictLocalStoragePods": True,
            "evictDaemonSetPods": True,
            "evictSystemCriticalPods": True,
            "ignorePvcPods": True,
            "evictFailedBarePods": True,
            "priorityThreshold": {"value": 800},
            "nodeFit": True,
            "ignorePodsWithoutPDB": True,
        }
    )
    assert got == DefaultEvictorArgs(
        node_selector="NodeSelector",
        evict_local_storage_pods=True,
        evict_daemon_set_pods=True,
        evict_system_critical_pods=True,
        ignore_pvc_pods=True,
        evict_failed_bare_pods=True,
        priority_threshold_value=800,
        node_fit=True,
        ignore_pods_without_pdb=True,
    )
    assert read({"labelSelector": {}, "minPodAge": "1h30m"}) == DefaultEvictorArgs(min_pod_age=5400.0)


def test_spec_serves_the_evictor_points() -> None:
    assert SPECS[0].name == "DefaultEvictor" and SPECS[0].points == frozenset((FILTER, PRE_EVICTION_FILTER))


def test_strategies_see_the_evictor() -> None:
    """Through the harness: RemoveFailedPods keeps a failed bare pod unless evictFailedBarePods."""
    objects = [
        make_node("n1").obj(),
        make_node("n2").obj(),
        make_pod("bare").node("n1").phase("Failed").obj(),
        make_pod("owned").node("n1").phase("Failed").owner("ReplicaSet").obj(),
    ]
    args = {"minPodLifetimeSeconds": 0}
    assert run_plugin(objects, "RemoveFailedPods", args) == ["owned"]
    assert run_plugin(objects, "RemoveFailedPods", args, evictor_args={"evictFailedBarePods": True}) == [
        "bare",
        "owned",
    ]
