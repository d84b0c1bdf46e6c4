"""RemoveFailedPods: upstream's failedpods_test.go, validation_test.go and defaults_test.go as tables.

Upstream's test builds the plugin without defaulting, so its ``minPodLifetimeSeconds`` is unset unless a case
sets it; here such cases pass ``minPodLifetimeSeconds: 0`` (the same test), since reading the args applies
upstream's default of 3600. Pods are created "now" (the view's ``now``), ReplicaSet-owned, requesting 1m cpu
and 1 byte, as upstream's ``buildTestPod``. The view is built from the objects exactly as given.
"""

from __future__ import annotations

import functools
from datetime import UTC, datetime
from typing import Any

import pytest
from harness import args_error, run_plugin

from berth.api.timestamps import format_time, unix_seconds
from berth.descheduler.args import ArgsReader
from berth.descheduler.evictor import Limits
from berth.descheduler.plugins.failedpods import NAME, RemoveFailedPodsArgs, parse_args
from builders import make_node, make_pod

Obj = dict[str, Any]
NOW = "2024-06-01T12:00:00Z"
_NOW_S = unix_seconds(NOW) or 0.0
RS_OWNER = [{"kind": "ReplicaSet", "apiVersion": "v1", "name": "replicaset-1"}]


def ago(seconds: float) -> str:
    """The RFC 3339 time `seconds` before NOW."""
    return format_time(datetime.fromtimestamp(_NOW_S - seconds, UTC))


run_as_given = functools.partial(run_plugin, as_given=True, now=NOW)
"""`run_plugin` over the view of the objects exactly as given, at NOW."""


def node(name: str, cpu: str = "2000m", mem: str = "3000", unschedulable: bool = False) -> Obj:
    """Upstream's ``BuildTestNode(name, cpu, mem, 10)``."""
    built = make_node(name).capacity(cpu=cpu, memory=mem, pods="10")
    if unschedulable:
        built = built.unschedulable()
    got: Obj = built.obj()
    return got


def status(
    reason: str = "",
    phase: str = "",
    init: dict[str, Any] | None = None,
    container: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Upstream's ``newPodStatus``: a container state (init or not) makes the phase Failed."""
    out: dict[str, Any] = {}
    if reason:
        out["reason"] = reason
    if phase:
        out["phase"] = phase
    if init is not None:
        out["initContainerStatuses"] = [{"state": init}]
        out["phase"] = "Failed"
    if container is not None:
        out["containerStatuses"] = [{"state": container}]
        out["phase"] = "Failed"
    return out


def pod(
    name: str, on: str, pod_status: dict[str, Any], *, deleted: str | None = None, created: str = NOW
) -> Obj:
    """Upstream's ``buildTestPod``: ReplicaSet-owned, created now, optionally terminating."""
    built = make_pod(name).req(cpu="1m", memory="1").node(on).created(created).meta(ownerReferences=RS_OWNER)
    if deleted is not None:
        built = built.terminating(deleted)
    obj: Obj = built.obj()
    if pod_status:
        obj["status"] = pod_status
    return obj


def args(
    including_init: bool = False,
    reasons: list[str] | None = None,
    exit_codes: list[int] | None = None,
    exclude_kinds: list[str] | None = None,
    min_age: int | None = None,
) -> dict[str, Any]:
    """Upstream's ``createRemoveFailedPodsArgs`` (an unset min age is 0: upstream's test skips defaulting)."""
    out: dict[str, Any] = {"minPodLifetimeSeconds": 0 if min_age is None else min_age}
    if including_init:
        out["includingInitContainers"] = True
    if reasons is not None:
        out["reasons"] = reasons
    if exit_codes is not None:
        out["exitCodes"] = exit_codes
    if exclude_kinds is not None:
        out["excludeOwnerKinds"] = exclude_kinds
    return out


def term(**fields: Any) -> dict[str, Any]:
    """A terminated container state."""
    return {"terminated": fields}


def wait(reason: str) -> dict[str, Any]:
    """A waiting container state."""
    return {"waiting": {"reason": reason}}


N1 = [node("node1")]

CASES = [
    pytest.param({"minPodLifetimeSeconds": 0}, N1, [], False, [], id="default empty args, no failures"),
    pytest.param(args(), N1, [], False, [], id="no failures"),
    pytest.param(
        args(),
        N1,
        [pod("p1", "node1", status(container=term(reason="NodeAffinity")))],
        False,
        ["p1"],
        id="container terminated NodeAffinity",
    ),
    pytest.param(
        args(exit_codes=[1]),
        N1,
        [pod("p1", "node1", status(container=term(exitCode=1)))],
        False,
        ["p1"],
        id="container terminated exitCode 1",
    ),
    pytest.param(
        args(exit_codes=[1]),
        N1,
        [pod("p1", "node1", status(container=term(reason="NodeAffinity", exitCode=1)))],
        False,
        ["p1"],
        id="container terminated exitCode 1 and NodeAffinity",
    ),
    pytest.param(
        args(exit_codes=[2]),
        N1,
        [pod("p1", "node1", status(container=term(exitCode=1)))],
        False,
        [],
        id="exitCode 1, expected 2",
    ),
    pytest.param(
        args(exit_codes=[1, 2, 3]),
        N1,
        [
            pod("p1", "node1", status(container=term(exitCode=1))),
            pod("p2", "node1", status(container=term(exitCode=2))),
        ],
        False,
        ["p1", "p2"],
        id="exit codes 1 and 2, expected 1-3",
    ),
    pytest.param(
        args(exit_codes=[1]),
        N1,
        [
            pod("p1", "node1", status(container=term(exitCode=1))),
            pod("p2", "node1", status(container=term(exitCode=2))),
        ],
        False,
        ["p1"],
        id="exit codes 1 and 2, expected 1",
    ),
    pytest.param(
        args(including_init=True),
        N1,
        [pod("p1", "node1", status(init=term(reason="NodeAffinity")))],
        False,
        ["p1"],
        id="init container terminated NodeAffinity",
    ),
    pytest.param(
        args(including_init=True, exit_codes=[1]),
        N1,
        [pod("p1", "node1", status(container=term(exitCode=1)))],
        False,
        ["p1"],
        id="init flag, container exitCode 1",
    ),
    pytest.param(
        args(including_init=True, exit_codes=[1]),
        N1,
        [pod("p1", "node1", status(container=term(exitCode=2)))],
        False,
        [],
        id="init flag, container exitCode 2, expected 1",
    ),
    pytest.param(
        args(including_init=True),
        N1,
        [pod("p1", "node1", status(init=wait("CreateContainerConfigError")))],
        False,
        ["p1"],
        id="init container waiting CreateContainerConfigError",
    ),
    pytest.param(
        args(including_init=True),
        [node("node1"), node("node2")],
        [
            pod("p1", "node1", status(init=term(reason="CreateContainerConfigError"))),
            pod("p2", "node2", status(init=term(reason="CreateContainerConfigError"))),
        ],
        False,
        ["p1", "p2"],
        id="two nodes, two evictions",
    ),
    pytest.param(
        args(reasons=["CreateContainerConfigError"]),
        N1,
        [pod("p1", "node1", status(container=term(reason="CreateContainerConfigError")))],
        False,
        ["p1"],
        id="reason CreateContainerConfigError",
    ),
    pytest.param(
        args(reasons=["CreateContainerConfigError", "NodeAffinity"]),
        N1,
        [pod("p1", "node1", status(container=term(reason="CreateContainerConfigError")))],
        False,
        ["p1"],
        id="reasons CreateContainerConfigError and NodeAffinity",
    ),
    pytest.param(
        args(reasons=["CreateContainerConfigError"]),
        N1,
        [pod("p1", "node1", status(container=term(reason="NodeAffinity")))],
        False,
        [],
        id="reason CreateContainerConfigError, terminated NodeAffinity",
    ),
    pytest.param(
        args(reasons=["CreateContainerConfigError"]),
        N1,
        [pod("p1", "node1", status(init=wait("CreateContainerConfigError")))],
        False,
        [],
        id="reason of an init container without the flag",
    ),
    pytest.param(
        args(min_age=3600),
        N1,
        [pod("p1", "node1", status(container=term(reason="NodeAffinity")))],
        False,
        [],
        id="lifetime 1 hour",
    ),
    pytest.param(
        args(),
        [node("node1"), node("node2", mem="2000", unschedulable=True)],
        [pod("p1", "node1", status(container=term(reason="NodeAffinity")))],
        True,
        [],
        id="nodeFit, the other node unschedulable",
    ),
    pytest.param(
        args(reasons=["CreateContainerConfigError"]),
        [node("node1", cpu="1m", mem="1"), node("node2", cpu="0", mem="0")],
        [pod("p1", "node1", status(container=term(reason="CreateContainerConfigError")))],
        True,
        [],
        id="nodeFit, the other node lacks resources",
    ),
    pytest.param(
        args(including_init=True, exclude_kinds=["ReplicaSet"]),
        N1,
        [pod("p1", "node1", status(init=term(reason="NodeAffinity")))],
        False,
        [],
        id="ReplicaSet excluded",
    ),
    pytest.param(
        args(including_init=True, exclude_kinds=["DaemonSet"]),
        N1,
        [pod("p1", "node1", status(init=term(reason="NodeAffinity")))],
        False,
        ["p1"],
        id="DaemonSet excluded",
    ),
    pytest.param(
        args(including_init=True, exclude_kinds=["DaemonSet"]),
        N1,
        [pod("p1", "node1", status(init=term(reason="NodeAffinity")), deleted=NOW)],
        False,
        [],
        id="terminating pod",
    ),
    pytest.param(
        args(),
        N1,
        [pod("p1", "node1", status(reason="Shutdown", phase="Failed"))],
        True,
        [],
        id="Shutdown, nodeFit and no other node",
    ),
    pytest.param(
        args(reasons=["Shutdown"]),
        N1,
        [
            pod("p1", "node1", status(reason="Shutdown", phase="Failed")),
            pod("p2", "node1", status(reason="Shutdown", phase="Failed")),
        ],
        False,
        ["p1", "p2"],
        id="reason Shutdown",
    ),
    # Berth's own cases
    pytest.param(
        {},
        N1,
        [
            pod("young", "node1", status(phase="Failed"), created=ago(3599)),
            pod("old", "node1", status(phase="Failed"), created=ago(3600)),
        ],
        False,
        ["old"],
        id="default minPodLifetimeSeconds 3600",
    ),
    pytest.param(
        args(),
        N1,
        [
            pod("running", "node1", status(phase="Running")),
            pod("succeeded", "node1", status(phase="Succeeded")),
        ],
        False,
        [],
        id="only failed pods",
    ),
    pytest.param(
        args(exit_codes=[0]),
        N1,
        [pod("p1", "node1", status(container=term(reason="Completed")))],
        False,
        ["p1"],
        id="exit code 0 when unset",
    ),
]


@pytest.mark.parametrize(("raw", "nodes", "pods", "node_fit", "expected"), CASES)
def test_remove_failed_pods(
    raw: dict[str, Any], nodes: list[Obj], pods: list[Obj], node_fit: bool, expected: list[str]
) -> None:
    assert run_as_given([*nodes, *pods], NAME, raw, evictor_args={"nodeFit": node_fit}) == expected


def test_limits() -> None:
    objects = [
        node("a"),
        node("b"),
        *(pod(f"a{i}", "a", status(phase="Failed")) for i in range(3)),
        *(pod(f"b{i}", "b", status(phase="Failed")) for i in range(2)),
    ]
    assert run_as_given(objects, NAME, args(), limits=Limits(per_node=2)) == ["a0", "a1", "b0", "b1"]
    assert run_as_given(objects, NAME, args(), limits=Limits(total=4)) == ["a0", "a1", "a2", "b0"]
    assert run_as_given(objects, NAME, args(), limits=Limits(per_namespace=1)) == ["a0"]


def test_namespaces_and_labels() -> None:
    p_web = pod("web", "node1", status(phase="Failed"))
    p_web["metadata"]["labels"] = {"app": "web"}
    p_sys = pod("sys", "node1", status(phase="Failed"))
    p_sys["metadata"]["namespace"] = "kube-system"
    objects = [node("node1"), p_web, p_sys]
    assert run_as_given(objects, NAME, {**args(), "namespaces": {"exclude": ["kube-system"]}}) == ["web"]
    assert run_as_given(objects, NAME, {**args(), "namespaces": {"include": ["kube-system"]}}) == ["sys"]
    assert run_as_given(objects, NAME, {**args(), "labelSelector": {"matchLabels": {"app": "web"}}}) == [
        "web"
    ]


# ---- validation and defaults ---------------------------------------------------------------------------------

_W = "RemoveFailedPods.args"


def read(raw: dict[str, Any] | None) -> RemoveFailedPodsArgs:
    """Parse raw args."""
    return parse_args(ArgsReader(raw, _W))


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        pytest.param(
            {
                "namespaces": {"include": ["default"]},
                "excludeOwnerKinds": ["Job"],
                "reasons": ["ReasonDoesNotMatch"],
                "minPodLifetimeSeconds": 3600,
            },
            None,
            id="valid namespace args",
        ),
        pytest.param(
            {"namespaces": {"include": ["default"], "exclude": ["kube-system"]}},
            f"{_W}.namespaces: only one of Include/Exclude namespaces can be set",
            id="invalid namespaces args",
        ),
        pytest.param(
            {"labelSelector": {"matchLabels": {"role.kubernetes.io/node": ""}}},
            None,
            id="valid label selector",
        ),
        pytest.param(
            {"labelSelector": {"matchExpressions": [{"operator": "In"}]}},
            f'{_W}.labelSelector: matchExpressions[0].key: Invalid value: "": name part must be non-empty',
            id="invalid label selector",
        ),
        pytest.param(
            {"minPodLifetimeSeconds": -1},
            f"{_W}.minPodLifetimeSeconds: must be at least 0, not -1",
            id="negative min age",
        ),
        pytest.param(
            {"excludeOwnerKind": ["Job"]},
            f'{_W}: strict decoding error: unknown field "excludeOwnerKind" (did you mean "excludeOwnerKinds"?)',
            id="unknown field",
        ),
    ],
)
def test_validate(raw: dict[str, Any], message: str | None) -> None:
    assert args_error(read, raw) == message


def test_defaults() -> None:
    assert read({}) == RemoveFailedPodsArgs(min_pod_lifetime_seconds=3600)
    got = read(
        {
            "namespaces": {},
            "labelSelector": {},
            "excludeOwnerKinds": ["ReplicaSet"],
            "minPodLifetimeSeconds": 0,
            "reasons": ["reason"],
            "includingInitContainers": True,
        }
    )
    assert (
        got.exclude_owner_kinds,
        got.min_pod_lifetime_seconds,
        got.reasons,
        got.including_init_containers,
    ) == (
        frozenset({"ReplicaSet"}),
        0,
        frozenset({"reason"}),
        True,
    )
