"""RemovePodsHavingTooManyRestarts: upstream's toomanyrestarts_test.go, validation_test.go and defaults_test.go.

The cluster of upstream's ``initPods``: on node1, ``pod-0`` ... ``pod-9`` where pod i restarted 5i times in
its init container and 10i times in each of its two containers (25i in all); pod-6 belongs to a DaemonSet,
pod-7 has local storage and pod-8 is a mirror pod, so DefaultEvictor keeps those three; plus one 150m
consumer on node4 and one on node5. Upstream asserts counts; the names are asserted here too (most restarts
first).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from harness import args_error, run_plugin

from berth.descheduler.args import ArgsReader, PolicyError
from berth.descheduler.evictor import Limits
from berth.descheduler.plugins.toomanyrestarts import (
    NAME,
    RemovePodsHavingTooManyRestartsArgs,
    parse_args,
    pod_restarts,
)
from builders import make_node, make_pod

Obj = dict[str, Any]
Apply = Callable[[Obj], None]
NORMAL_OWNER = [{"kind": "Pod", "apiVersion": "v1"}]
MIRROR = {
    "kubernetes.io/created-by": '{"kind":"SerializedReference","apiVersion":"v1","reference":{"kind":"Pod"}}',
    "kubernetes.io/config.source": "api",
    "kubernetes.io/config.mirror": "mirror",
}


def node(name: str, cpu: str = "2000m") -> Any:
    """Upstream's ``buildTestNode``: 2000m cpu (unless given), 3000 memory, 10 pods."""
    return make_node(name).unlabel("kubernetes.io/hostname").capacity(cpu=cpu, memory="3000", pods="10")


def init_pods(apply: Apply | None = None) -> list[Obj]:
    """Upstream's ``initPods``."""
    pods: list[Obj] = []
    for i in range(10):
        p = (
            make_pod(f"pod-{i}")
            .req(cpu="100m", memory="0")
            .node("node1")
            .meta(ownerReferences=NORMAL_OWNER)
            .obj()
        )
        p["status"] = {
            "initContainerStatuses": [{"restartCount": 5 * i}],
            "containerStatuses": [{"restartCount": 10 * i}, {"restartCount": 10 * i}],
        }
        if i == 6:
            p["metadata"]["ownerReferences"] = [{"kind": "DaemonSet", "apiVersion": "v1"}]
        elif i == 7:
            p["spec"]["volumes"] = [{"name": "sample", "hostPath": {"path": "somePath"}, "emptyDir": {}}]
        elif i == 8:
            p["metadata"]["annotations"] = dict(MIRROR)
        if apply is not None:
            apply(p)
        pods.append(p)
    for name, on in (("CPU-consumer-1", "node4"), ("CPU-consumer-2", "node5")):
        pods.append(
            make_pod(name).req(cpu="150m", memory="100").node(on).meta(ownerReferences=NORMAL_OWNER).obj()
        )
    return pods


def _crash_loop(p: Obj) -> None:
    statuses = p.get("status", {}).get("containerStatuses")
    if statuses:
        statuses[0]["state"] = {"waiting": {"reason": "CrashLoopBackOff"}}


def _phase(phase: str) -> Apply:
    def apply(p: Obj) -> None:
        p.setdefault("status", {})["phase"] = phase

    return apply


def _init_crash_loop(p: Obj) -> None:
    p.setdefault("status", {})["initContainerStatuses"] = [
        {"state": {"waiting": {"reason": "CrashLoopBackOff"}}}
    ]


def args(threshold: int, including_init: bool, **more: Any) -> dict[str, Any]:
    """Upstream's ``createRemovePodsHavingTooManyRestartsAgrs``."""
    return {"podRestartThreshold": threshold, "includingInitContainers": including_init, **more}


_TAINTED = node("node2").taint("hardware", "gpu").obj()
_CORDONED = node("node3").unschedulable().obj()
_SMALL = node("node4", cpu="200m").obj()
_ALL_SIX = ["pod-9", "pod-5", "pod-4", "pod-3", "pod-2", "pod-1"]

CASES = [
    pytest.param(
        args(10000, True), init_pods(), [node("node1").obj()], Limits(), False, [], id="all under threshold"
    ),
    pytest.param(
        args(1, True), init_pods(), [node("node1").obj()], Limits(), False, _ALL_SIX, id="threshold 1"
    ),
    pytest.param(
        args(25, True),
        init_pods(),
        [node("node1").obj()],
        Limits(),
        False,
        _ALL_SIX,
        id="threshold 25 with init",
    ),
    pytest.param(
        args(25, False),
        init_pods(),
        [node("node1").obj()],
        Limits(),
        False,
        _ALL_SIX[:5],
        id="threshold 25 no init",
    ),
    pytest.param(
        args(20, True),
        init_pods(),
        [node("node1").obj()],
        Limits(),
        False,
        _ALL_SIX,
        id="threshold 20 with init",
    ),
    pytest.param(
        args(20, False),
        init_pods(),
        [node("node1").obj()],
        Limits(),
        False,
        _ALL_SIX,
        id="threshold 20 no init",
    ),
    pytest.param(
        args(5 * 25 + 1, True),
        init_pods(),
        [node("node1").obj()],
        Limits(),
        False,
        ["pod-9"],
        id="threshold 126",
    ),
    pytest.param(
        args(5 * 20 + 1, False),
        init_pods(),
        [node("node1").obj()],
        Limits(),
        False,
        ["pod-9"],
        id="threshold 101",
    ),
    pytest.param(
        args(1, True),
        init_pods(),
        [node("node1").obj()],
        Limits(per_node=3),
        False,
        _ALL_SIX[:3],
        id="per node 3",
    ),
    pytest.param(
        args(1, True),
        init_pods(),
        [node("node1").obj()],
        Limits(per_namespace=3),
        False,
        _ALL_SIX[:3],
        id="per namespace 3",
    ),
    pytest.param(
        args(1, True),
        init_pods(),
        [node("node1").obj(), _TAINTED],
        Limits(per_node=3),
        True,
        [],
        id="nodeFit, the other node tainted",
    ),
    pytest.param(
        args(1, True),
        init_pods(),
        [node("node1").obj(), _CORDONED],
        Limits(per_node=3),
        True,
        [],
        id="nodeFit, the other node unschedulable",
    ),
    pytest.param(
        args(1, True),
        init_pods(),
        [node("node1").obj(), _SMALL],
        Limits(per_node=3),
        True,
        [],
        id="nodeFit, the other node lacks cpu",
    ),
    pytest.param(
        args(1, True),
        init_pods(),
        [node("node1").obj(), node("node5").obj()],
        Limits(per_node=3),
        True,
        _ALL_SIX[:3],
        id="nodeFit, the other node has cpu",
    ),
    pytest.param(
        {"podRestartThreshold": 1, "states": ["CrashLoopBackOff"]},
        init_pods(_crash_loop),
        [node("node1").obj(), node("node5").obj()],
        Limits(per_node=3),
        True,
        ["pod-9", "pod-5", "pod-4"],
        id="CrashLoopBackOff pods, states CrashLoopBackOff",
    ),
    pytest.param(
        {"podRestartThreshold": 1, "states": ["CrashLoopBackOff"]},
        init_pods(),
        [node("node1").obj(), node("node5").obj()],
        Limits(per_node=3),
        True,
        [],
        id="no CrashLoopBackOff, states CrashLoopBackOff",
    ),
    pytest.param(
        {"podRestartThreshold": 1, "states": ["Running"]},
        init_pods(_phase("Running")),
        [node("node1").obj()],
        Limits(per_node=3),
        False,
        ["pod-9", "pod-5", "pod-4"],
        id="running pods, states Running",
    ),
    pytest.param(
        {"podRestartThreshold": 1, "states": ["Running"]},
        init_pods(_phase("Pending")),
        [node("node1").obj()],
        Limits(per_node=3),
        False,
        [],
        id="pending pods, states Running",
    ),
    pytest.param(
        {"podRestartThreshold": 1, "states": ["CrashLoopBackOff"], "includingInitContainers": True},
        init_pods(_init_crash_loop),
        [node("node1").obj()],
        Limits(per_node=3),
        False,
        ["pod-9", "pod-5", "pod-4"],
        id="init CrashLoopBackOff, including init containers",
    ),
    pytest.param(
        {"podRestartThreshold": 1, "states": ["CrashLoopBackOff"], "includingInitContainers": False},
        init_pods(_init_crash_loop),
        [node("node1").obj()],
        Limits(per_node=3),
        False,
        [],
        id="init CrashLoopBackOff, not including init containers",
    ),
]


@pytest.mark.parametrize(("raw", "pods", "nodes", "limits", "node_fit", "expected"), CASES)
def test_remove_pods_having_too_many_restarts(
    raw: dict[str, Any],
    pods: list[Obj],
    nodes: list[Obj],
    limits: Limits,
    node_fit: bool,
    expected: list[str],
) -> None:
    got = run_plugin([*nodes, *pods], NAME, raw, evictor_args={"nodeFit": node_fit}, limits=limits)
    assert got == expected


def test_namespaces_and_label_selector() -> None:
    pods = [
        make_pod(name)
        .ns(ns)
        .node("n1")
        .label(app=app)
        .owner("ReplicaSet")
        .status(containerStatuses=[{"restartCount": 3}])
        .obj()
        for name, ns, app in (("a", "x", "web"), ("b", "y", "web"), ("c", "x", "db"))
    ]
    objects = [make_node("n1").obj(), *pods]
    base = {"podRestartThreshold": 3}
    assert run_plugin(objects, NAME, {**base, "namespaces": {"include": ["x"]}}) == ["a", "c"]
    assert run_plugin(objects, NAME, {**base, "namespaces": {"exclude": ["x"]}}) == ["b"]
    assert run_plugin(objects, NAME, {**base, "labelSelector": {"matchLabels": {"app": "web"}}}) == ["a", "b"]


def test_total_limit_stops_the_run() -> None:
    objects = [make_node("n1").obj(), make_node("n2").obj()]
    for i, on in enumerate(("n1", "n1", "n2")):
        objects.append(
            make_pod(f"p{i}")
            .node(on)
            .owner("ReplicaSet")
            .status(containerStatuses=[{"restartCount": i + 1}])
            .obj()
        )
    assert run_plugin(objects, NAME, {"podRestartThreshold": 1}, limits=Limits(total=1)) == ["p1"]
    assert run_plugin(objects, NAME, {"podRestartThreshold": 1}, limits=Limits(per_node=1)) == ["p1", "p2"]


def test_pod_restarts() -> None:
    p = init_pods()[3]
    assert (pod_restarts(p, True), pod_restarts(p, False)) == (75, 60)


# ---- validation and defaults ---------------------------------------------------------------------------------

_W = "RemovePodsHavingTooManyRestarts.args"


def read(raw: dict[str, Any] | None) -> RemovePodsHavingTooManyRestartsArgs:
    """Parse raw args."""
    return parse_args(ArgsReader(raw, _W))


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        pytest.param({"podRestartThreshold": 1, "states": ["Running"]}, None, id="valid"),
        pytest.param(
            {"podRestartThreshold": 0},
            f"{_W}.podRestartThreshold: invalid PodsHavingTooManyRestarts threshold",
            id="threshold 0",
        ),
        pytest.param(
            {"podRestartThreshold": 1, "states": ["Failed"]},
            f"{_W}.states: states must be one of [CrashLoopBackOff Running]",
            id="invalid states",
        ),
        pytest.param({"podRestartThreshold": 1, "states": ["CrashLoopBackOff"]}, None, id="CrashLoopBackOff"),
        pytest.param(
            {"podRestartThreshold": 0, "states": ["Failed"]},
            f"{_W}.podRestartThreshold: invalid PodsHavingTooManyRestarts threshold; "
            f"{_W}.states: states must be one of [CrashLoopBackOff Running]",
            id="threshold and states",
        ),
        pytest.param(
            {"podRestartThreshold": 1, "namespaces": {"include": ["a"], "exclude": ["b"]}},
            f"{_W}.namespaces: only one of Include/Exclude namespaces can be set",
            id="include and exclude",
        ),
        pytest.param(
            {
                "podRestartThreshold": 1,
                "labelSelector": {"matchExpressions": [{"key": "a", "operator": "In"}]},
            },
            f"{_W}.labelSelector: matchExpressions[0].values: Invalid value: []: "
            "for 'in', 'notin' operators, values set can't be empty",
            id="invalid label selector",
        ),
        pytest.param(
            {"podRestartThreshold": 1, "podRestartTreshold": 2},
            f'{_W}: strict decoding error: unknown field "podRestartTreshold" (did you mean "podRestartThreshold"?)',
            id="unknown field",
        ),
    ],
)
def test_validate(raw: dict[str, Any], message: str | None) -> None:
    assert args_error(read, raw) == message


def test_defaults() -> None:
    with pytest.raises(PolicyError):
        read({})
    got = read(
        {
            "namespaces": {},
            "labelSelector": {},
            "podRestartThreshold": 10,
            "includingInitContainers": True,
            "states": ["Running"],
        }
    )
    assert (got.pod_restart_threshold, got.including_init_containers, got.states) == (
        10,
        True,
        frozenset({"Running"}),
    )
    assert got.selection.include == got.selection.exclude == frozenset()
