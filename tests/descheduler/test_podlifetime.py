"""PodLifeTime: upstream's pod_lifetime_test.go, validation_test.go and defaults_test.go as tables.

Upstream's pods are "older" (created 2009-11-10T23:00:00Z) or "newer" (created now); here "now" is the view's
``now`` (`NOW`). The view is built from the objects exactly as given (creation and deletion timestamps, owner
references and statuses kept); evictions go through an embedded store holding the same objects. Upstream
asserts the count and, for some cases, a subset of the names; the full list, oldest first, is asserted here.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import pytest
from harness import args_error, run_plugin

from berth.api.timestamps import format_time, unix_seconds
from berth.descheduler.args import ArgsReader
from berth.descheduler.evictor import Limits
from berth.descheduler.plugins.podlifetime import NAME, ConditionFilter, PodLifeTimeArgs, parse_args
from builders import make_node, make_pod

Obj = dict[str, Any]
Apply = Callable[[Obj], None]
NOW = "2024-06-01T12:00:00Z"
_NOW_S = unix_seconds(NOW) or 0.0
OLDER = "2009-11-10T23:00:00Z"
NEWER = NOW
RS_OWNER = [{"kind": "ReplicaSet", "apiVersion": "v1", "name": "replicaset-1"}]


def ago(seconds: float) -> str:
    """The RFC 3339 time `seconds` before NOW."""
    return format_time(datetime.fromtimestamp(_NOW_S - seconds, UTC))


OLD_TRANSITION = ago(2 * 3600)
NEW_TRANSITION = ago(60)


run_as_given = functools.partial(run_plugin, as_given=True, now=NOW)
"""`run_plugin` over the view of the objects exactly as given, at NOW."""


def node1(name: str = "n1") -> Obj:
    """Upstream's ``buildTestNode1``: 2000m cpu, 3000 memory, 10 pods."""
    built: Obj = make_node(name).capacity(cpu="2000m", memory="3000", pods="10").obj()
    return built


def pod(
    name: str,
    created: str | None,
    apply: Apply | None = None,
    *,
    owners: list[dict[str, str]] | None = None,
    node: str = "n1",
    cpu: str = "100m",
    mem: str = "0",
) -> Obj:
    """Upstream's ``buildTestPodForNode1`` (no owner unless given; `created` None: no creationTimestamp)."""
    built = make_pod(name).req(cpu=cpu, memory=mem).node(node)
    if created is not None:
        built = built.created(created)
    if owners:
        built = built.meta(ownerReferences=[dict(o) for o in owners])
    obj: Obj = built.obj()
    if apply is not None:
        apply(obj)
    return obj


def rs_pod(name: str, created: str | None, apply: Apply | None = None, **kw: Any) -> Obj:
    """Upstream's ``buildTestPodWithRSOwnerRefForNode1``."""
    return pod(name, created, apply, owners=RS_OWNER, **kw)


def pending_rs_pod(name: str, created: str, apply: Apply | None = None) -> Obj:
    """Upstream's ``buildTestPodWithRSOwnerRefWithPendingPhaseForNode1``."""

    def both(p: Obj) -> None:
        status(phase="Pending")(p)
        if apply is not None:
            apply(p)

    return rs_pod(name, created, both)


def build_pod(name: str, apply: Apply | None = None) -> Obj:
    """Upstream's ``buildPod``: ReplicaSet-owned, on node1, no creationTimestamp (Go's zero time)."""
    return pod(name, None, apply, owners=RS_OWNER, node="node1", cpu="1m", mem="1")


def status(**fields: Any) -> Apply:
    """Set status fields."""

    def apply(p: Obj) -> None:
        p.setdefault("status", {}).update(fields)

    return apply


def waiting(reason: str, key: str = "containerStatuses") -> Apply:
    """One container status of `key` waiting with `reason`."""
    return status(**{key: [{"state": {"waiting": {"reason": reason}}}]})


def terminated(key: str = "containerStatuses", **fields: Any) -> Apply:
    """One container status of `key` terminated with `fields` (reason, exitCode)."""
    return status(**{key: [{"state": {"terminated": fields}}]})


def chain(*applies: Apply) -> Apply:
    """Apply in order."""

    def apply(p: Obj) -> None:
        for a in applies:
            a(p)

    return apply


def meta(**fields: Any) -> Apply:
    """Set metadata fields."""

    def apply(p: Obj) -> None:
        p["metadata"].update(fields)

    return apply


def cond(type_: str, status_: str = "", reason: str = "", at: str | None = None) -> dict[str, Any]:
    """A pod condition."""
    out: dict[str, Any] = {"type": type_}
    if status_:
        out["status"] = status_
    if reason:
        out["reason"] = reason
    if at:
        out["lastTransitionTime"] = at
    return out


MAX = {"maxPodLifeTimeSeconds": 600}
PVC = {"volumes": [{"name": "pvc", "persistentVolumeClaim": {"claimName": "foo"}}]}


def _spec(**fields: Any) -> Apply:
    def apply(p: Obj) -> None:
        p["spec"].update(fields)

    return apply


N1 = [node1()]
NODE1 = [node1("node1")]

CASES = [
    # TestPodLifeTime
    pytest.param(
        {**MAX, "labelSelector": {"matchLabels": {"foo": "bar"}}},
        [
            *N1,
            rs_pod("p14", OLDER, meta(deletionTimestamp=NOW)),
            rs_pod("p15", OLDER, meta(deletionTimestamp=NOW)),
        ],
        {},
        Limits(),
        [],
        id="terminating pods",
    ),
    # TestPodLifeTime_EvictorConfiguration
    pytest.param(
        MAX,
        [*N1, rs_pod("p11", OLDER, _spec(**PVC))],
        {"ignorePvcPods": True},
        Limits(),
        [],
        id="ignorePvcPods",
    ),
    pytest.param(
        MAX, [*N1, rs_pod("p11", OLDER, _spec(**PVC))], {}, Limits(), ["p11"], id="pvc pods evicted"
    ),
    # TestPodLifeTime_GenericFiltering
    pytest.param(
        {**MAX, "labelSelector": {"matchLabels": {"foo": "bar"}}},
        [
            *N1,
            rs_pod("p12", OLDER, meta(labels={"foo": "bar"})),
            rs_pod("p13", OLDER, meta(labels={"foo": "bar1"})),
        ],
        {},
        Limits(),
        ["p12"],
        id="label selector",
    ),
    # TestPodLifeTime_EvictionLimits
    pytest.param(
        MAX,
        [*N1, rs_pod("p1", NEWER), rs_pod("p2", OLDER), pending_rs_pod("p9", OLDER)],
        {},
        Limits(),
        ["p2", "p9"],
        id="2 oldest pods, no limits",
    ),
    pytest.param(
        MAX,
        [*N1, rs_pod("p1", NEWER), rs_pod("p2", OLDER)],
        {},
        Limits(per_namespace=1),
        ["p2"],
        id="per namespace 1",
    ),
    pytest.param(
        MAX,
        [*N1, rs_pod("p1", NEWER), rs_pod("p2", OLDER)],
        {},
        Limits(per_namespace=2, total=1),
        ["p2"],
        id="total 1",
    ),
    pytest.param(
        MAX, [*N1, rs_pod("p1", NEWER), rs_pod("p2", OLDER)], {}, Limits(per_node=1), ["p2"], id="per node 1"
    ),
    # TestPodLifeTime_ContainerWaitingReasons
    pytest.param(
        {**MAX, "states": ["ContainerCreating"]},
        [
            *N1,
            pending_rs_pod("p9", OLDER),
            rs_pod("container-creating-stuck", OLDER, waiting("ContainerCreating"), cpu="0", mem="0"),
        ],
        {},
        Limits(),
        ["container-creating-stuck"],
        id="ContainerCreating",
    ),
    pytest.param(
        {**MAX, "states": ["PodInitializing"]},
        [
            *N1,
            pending_rs_pod("p9", OLDER),
            rs_pod("pod-initializing-stuck", OLDER, waiting("PodInitializing"), cpu="0", mem="0"),
        ],
        {},
        Limits(),
        ["pod-initializing-stuck"],
        id="PodInitializing",
    ),
    *(
        pytest.param(
            {**MAX, "states": [reason]},
            [*N1, pending_rs_pod("p9", OLDER, waiting(reason))],
            {},
            Limits(),
            ["p9"],
            id=reason,
        )
        for reason in (
            "ImagePullBackOff",
            "CrashLoopBackOff",
            "CreateContainerConfigError",
            "ErrImagePull",
            "CreateContainerError",
            "InvalidImageName",
        )
    ),
    pytest.param(
        {**MAX, "states": ["CreateContainerError"]},
        [*N1, pending_rs_pod("p9", OLDER, waiting("CreateContainerError", "initContainerStatuses"))],
        {},
        Limits(),
        [],
        id="init container waiting, not including init containers",
    ),
    pytest.param(
        {**MAX, "states": ["CreateContainerError"], "includingInitContainers": True},
        [*N1, pending_rs_pod("p9", OLDER, waiting("CreateContainerError", "initContainerStatuses"))],
        {},
        Limits(),
        ["p9"],
        id="init container waiting, including init containers",
    ),
    pytest.param(
        {**MAX, "states": ["CreateContainerError"]},
        [*N1, pending_rs_pod("p9", OLDER, waiting("CreateContainerError", "ephemeralContainerStatuses"))],
        {},
        Limits(),
        [],
        id="ephemeral container waiting, not including ephemeral containers",
    ),
    pytest.param(
        {**MAX, "states": ["CreateContainerError"], "includingEphemeralContainers": True},
        [*N1, pending_rs_pod("p9", OLDER, waiting("CreateContainerError", "ephemeralContainerStatuses"))],
        {},
        Limits(),
        ["p9"],
        id="ephemeral container waiting, including ephemeral containers",
    ),
    pytest.param(
        {**MAX, "states": ["ContainerCreating"]},
        [*N1, pending_rs_pod("p9", OLDER, waiting("ImagePullBackOff"))],
        {},
        Limits(),
        [],
        id="ImagePullBackOff ignored by states ContainerCreating",
    ),
    # TestPodLifeTime_PodStatusReasons
    *(
        pytest.param(
            {**MAX, "states": [reason]},
            [*N1, pending_rs_pod("p9", OLDER, status(reason=reason))],
            {},
            Limits(),
            ["p9"],
            id=f"pod status reason {reason}",
        )
        for reason in ("NodeLost", "NodeAffinity", "Shutdown", "UnexpectedAdmissionError")
    ),
    # TestPodLifeTime_AgeThreshold
    pytest.param(
        MAX, [*N1, rs_pod("p1", NEWER), rs_pod("p2", OLDER)], {}, Limits(), ["p2"], id="1 new, 1 old"
    ),
    pytest.param(MAX, [*N1, rs_pod("p3", NEWER), rs_pod("p4", NEWER)], {}, Limits(), [], id="2 new"),
    pytest.param(
        MAX,
        [*N1, rs_pod("p5", NEWER), rs_pod("p6", ago(605))],
        {},
        Limits(),
        ["p6"],
        id="1 created 605 seconds ago",
    ),
    pytest.param(
        MAX, [*N1, pod("p7", NEWER), pod("p8", ago(595))], {}, Limits(), [], id="1 created 595 seconds ago"
    ),
    # TestPodLifeTime_PodPhaseStates
    pytest.param(
        {**MAX, "states": ["Pending"]},
        [*N1, pending_rs_pod("p9", OLDER), rs_pod("p10", OLDER, status(phase="Running"))],
        {},
        Limits(),
        ["p9"],
        id="phase Pending",
    ),
    *(
        pytest.param(
            {**MAX, "states": [phase]},
            [*N1, rs_pod("p16", OLDER, status(phase=phase))],
            {},
            Limits(),
            ["p16"],
            id=f"phase {phase}",
        )
        for phase in ("Succeeded", "Failed", "Unknown")
    ),
    # TestStatesWithTerminatedReasons
    pytest.param(
        {"states": ["NodeAffinity"]},
        [*NODE1, build_pod("p1", chain(status(phase="Failed"), terminated(reason="NodeAffinity")))],
        {},
        Limits(),
        ["p1"],
        id="terminated reason via states",
    ),
    pytest.param(
        {"states": ["Shutdown"]},
        [*NODE1, build_pod("p1", status(phase="Failed", reason="Shutdown"))],
        {},
        Limits(),
        ["p1"],
        id="pod status reason via states",
    ),
    pytest.param(
        {"states": ["CreateContainerConfigError"], "includingInitContainers": True},
        [*NODE1, build_pod("p1", terminated("initContainerStatuses", reason="CreateContainerConfigError"))],
        {},
        Limits(),
        ["p1"],
        id="terminated reason of an init container",
    ),
    pytest.param(
        {"states": ["CreateContainerConfigError"]},
        [*NODE1, build_pod("p1", terminated("initContainerStatuses", reason="CreateContainerConfigError"))],
        {},
        Limits(),
        [],
        id="terminated reason of an init container without the flag",
    ),
    # TestConditionFiltering
    pytest.param(
        {"conditions": [{"reason": "PodCompleted", "status": "True"}]},
        [
            *NODE1,
            build_pod("p1", status(conditions=[cond("Initialized", "True", "PodCompleted", OLD_TRANSITION)])),
            build_pod("p2", status(conditions=[cond("Initialized", "True", "OtherReason", OLD_TRANSITION)])),
        ],
        {},
        Limits(),
        ["p1"],
        id="condition reason",
    ),
    pytest.param(
        {"conditions": [{"type": "Ready"}]},
        [*NODE1, build_pod("p1", status(conditions=[cond("Ready", "False", at=OLD_TRANSITION)]))],
        {},
        Limits(),
        ["p1"],
        id="condition type only",
    ),
    pytest.param(
        {"conditions": [{"reason": "PodCompleted"}]},
        [*NODE1, build_pod("p1", status(conditions=[cond("Ready", "True", "SomethingElse")]))],
        {},
        Limits(),
        [],
        id="no matching condition",
    ),
    # TestTransitionTimeFiltering
    pytest.param(
        {
            "states": ["Succeeded"],
            "conditions": [
                {"reason": "PodCompleted", "status": "True", "minTimeSinceLastTransitionSeconds": 300}
            ],
        },
        [
            *NODE1,
            build_pod(
                "p1",
                status(
                    phase="Succeeded",
                    conditions=[
                        cond("Initialized", "True", "PodCompleted", OLD_TRANSITION),
                        cond("Ready", "False", "PodCompleted", OLD_TRANSITION),
                    ],
                ),
            ),
        ],
        {},
        Limits(),
        ["p1"],
        id="old transition",
    ),
    pytest.param(
        {"states": ["Succeeded"], "conditions": [{"minTimeSinceLastTransitionSeconds": 14400}]},
        [
            *NODE1,
            build_pod(
                "p1", status(phase="Succeeded", conditions=[cond("Ready", "False", at=NEW_TRANSITION)])
            ),
        ],
        {},
        Limits(),
        [],
        id="recent transition",
    ),
    pytest.param(
        {"conditions": [{"reason": "PodCompleted", "minTimeSinceLastTransitionSeconds": 300}]},
        [
            *NODE1,
            build_pod(
                "p1",
                status(
                    conditions=[
                        cond("Initialized", reason="PodCompleted", at=OLD_TRANSITION),
                        cond("Ready", reason="OtherReason", at=NEW_TRANSITION),
                    ]
                ),
            ),
        ],
        {},
        Limits(),
        ["p1"],
        id="transition time of the matching condition only",
    ),
    pytest.param(
        {"states": ["Running"], "conditions": [{"minTimeSinceLastTransitionSeconds": 300}]},
        [*NODE1, build_pod("p1", status(phase="Running"))],
        {},
        Limits(),
        [],
        id="no conditions on the pod",
    ),
    # TestOwnerKindsFiltering
    pytest.param(
        {"states": ["Failed"], "ownerKinds": {"exclude": ["Job"]}},
        [
            *NODE1,
            build_pod(
                "p1",
                chain(
                    status(phase="Failed"),
                    meta(ownerReferences=[{"kind": "Job", "name": "job1", "apiVersion": "batch/v1"}]),
                ),
            ),
        ],
        {},
        Limits(),
        [],
        id="exclude Job: Job pod kept",
    ),
    pytest.param(
        {"states": ["Failed"], "ownerKinds": {"exclude": ["Job"]}},
        [
            *NODE1,
            build_pod(
                "p1",
                chain(
                    status(phase="Failed"),
                    meta(ownerReferences=[{"kind": "Job", "name": "job1", "apiVersion": "batch/v1"}]),
                ),
            ),
            build_pod("p2", status(phase="Failed")),
        ],
        {},
        Limits(),
        ["p2"],
        id="exclude Job: other pod evicted",
    ),
    pytest.param(
        {"states": ["Failed"], "ownerKinds": {"include": ["Job"]}},
        [
            *NODE1,
            build_pod(
                "p1",
                chain(
                    status(phase="Failed"),
                    meta(ownerReferences=[{"kind": "Job", "name": "job1", "apiVersion": "batch/v1"}]),
                ),
            ),
            build_pod("p2", status(phase="Failed")),
        ],
        {},
        Limits(),
        ["p1"],
        id="include Job only",
    ),
    # TestStatesWithEphemeralContainers
    pytest.param(
        {"states": ["OOMKilled"], "includingEphemeralContainers": True},
        [*NODE1, build_pod("p1", terminated("ephemeralContainerStatuses", reason="OOMKilled"))],
        {},
        Limits(),
        ["p1"],
        id="terminated reason of an ephemeral container",
    ),
    pytest.param(
        {"states": ["OOMKilled"]},
        [*NODE1, build_pod("p1", terminated("ephemeralContainerStatuses", reason="OOMKilled"))],
        {},
        Limits(),
        [],
        id="ephemeral container without the flag",
    ),
    # TestExitCodesFiltering
    pytest.param(
        {"states": ["Failed"], "exitCodes": [1]},
        [*NODE1, build_pod("p1", chain(status(phase="Failed"), terminated(exitCode=1)))],
        {},
        Limits(),
        ["p1"],
        id="matching exit code",
    ),
    pytest.param(
        {"states": ["Failed"], "exitCodes": [2]},
        [*NODE1, build_pod("p1", chain(status(phase="Failed"), terminated(exitCode=1)))],
        {},
        Limits(),
        [],
        id="exit code not matched",
    ),
    # TestCombinedFilters
    pytest.param(
        {
            "states": ["Succeeded"],
            "conditions": [
                {"reason": "PodCompleted", "status": "True", "minTimeSinceLastTransitionSeconds": 300}
            ],
        },
        [
            *NODE1,
            build_pod(
                "stale-completed",
                status(
                    phase="Succeeded",
                    conditions=[
                        cond("Initialized", "True", "PodCompleted", OLD_TRANSITION),
                        cond("Ready", "False", "PodCompleted", OLD_TRANSITION),
                    ],
                ),
            ),
            build_pod(
                "recent-completed",
                status(
                    phase="Succeeded",
                    conditions=[cond("Initialized", "True", "PodCompleted", NEW_TRANSITION)],
                ),
            ),
            build_pod("running-pod", status(phase="Running")),
        ],
        {},
        Limits(),
        ["stale-completed"],
        id="Succeeded, PodCompleted condition and transition time",
    ),
    pytest.param(
        {"states": ["Failed"], "maxPodLifeTimeSeconds": 0, "ownerKinds": {"exclude": ["Job"]}},
        [
            *NODE1,
            build_pod("failed-rs", chain(status(phase="Failed"), terminated(reason="Error"))),
            build_pod(
                "failed-job",
                chain(
                    status(phase="Failed"),
                    meta(ownerReferences=[{"kind": "Job", "name": "job1", "apiVersion": "batch/v1"}]),
                ),
            ),
        ],
        {},
        Limits(),
        ["failed-rs"],
        id="Failed, min age and exclude Job",
    ),
]


@pytest.mark.parametrize(("args", "objects", "evictor_args", "limits", "expected"), CASES)
def test_pod_life_time(
    args: dict[str, Any],
    objects: list[Obj],
    evictor_args: dict[str, Any],
    limits: Limits,
    expected: list[str],
) -> None:
    assert run_as_given(objects, NAME, args, evictor_args=evictor_args, limits=limits) == expected


def test_oldest_first_across_nodes() -> None:
    objects = [
        node1("a"),
        node1("b"),
        rs_pod("young-a", ago(700), node="a"),
        rs_pod("old-b", ago(9000), node="b"),
        rs_pod("mid-a", ago(5000), node="a"),
    ]
    assert run_as_given(objects, NAME, MAX) == ["old-b", "mid-a", "young-a"]
    assert run_as_given(objects, NAME, MAX, limits=Limits(per_node=1)) == ["old-b", "mid-a"]
    assert run_as_given(objects, NAME, MAX, limits=Limits(total=2)) == ["old-b", "mid-a"]


def test_namespaces() -> None:
    objects = [node1(), rs_pod("a", OLDER), rs_pod("b", OLDER, meta(namespace="kube-system"))]
    assert run_as_given(objects, NAME, {**MAX, "namespaces": {"include": ["kube-system"]}}) == ["b"]
    assert run_as_given(objects, NAME, {**MAX, "namespaces": {"exclude": ["kube-system"]}}) == ["a"]


def test_future_creation_is_not_old() -> None:
    assert run_as_given([node1(), rs_pod("p", ago(-700))], NAME, {"maxPodLifeTimeSeconds": 0}) == []


# ---- validation (TestValidation, TestValidateRemovePodLifeTimeArgs) and defaults -------------------------------

_W = "PodLifeTime.args"
_STATES = (
    "states must be one of [Completed ContainerCannotRun ContainerCreating CrashLoopBackOff "
    "CreateContainerConfigError CreateContainerError DeadlineExceeded ErrImagePull Error Evicted Failed "
    "ImagePullBackOff InvalidImageName NodeAffinity NodeLost OOMKilled Pending PodInitializing Running Shutdown "
    "StartError Succeeded UnexpectedAdmissionError Unknown]"
)
_NO_CRITERION = "at least one filtering criterion must be specified (maxPodLifeTimeSeconds, states, conditions, or exitCodes)"


def read(raw: dict[str, Any] | None) -> PodLifeTimeArgs:
    """Parse raw args."""
    return parse_args(ArgsReader(raw, _W))


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        pytest.param({"states": ["Running"]}, None, id="states"),
        pytest.param({"conditions": [{"reason": "PodCompleted"}]}, None, id="conditions"),
        pytest.param({"maxPodLifeTimeSeconds": 600}, None, id="maxPodLifeTimeSeconds"),
        pytest.param({"states": ["Running"], "maxPodLifeTimeSeconds": 600}, None, id="states and max"),
        pytest.param(
            {"states": ["Succeeded"], "conditions": [{"reason": "PodCompleted"}]},
            None,
            id="states and conditions",
        ),
        pytest.param({"exitCodes": [1]}, None, id="exitCodes only"),
        pytest.param(
            {"conditions": [{"reason": "PodCompleted", "minTimeSinceLastTransitionSeconds": 300}]},
            None,
            id="condition with min transition time",
        ),
        pytest.param(
            {"conditions": [{"minTimeSinceLastTransitionSeconds": 300}]}, None, id="only min transition time"
        ),
        pytest.param({}, f"{_W}: {_NO_CRITERION}", id="no criterion"),
        pytest.param(
            {"states": ["Running"], "namespaces": {"include": ["a"], "exclude": ["b"]}},
            f"{_W}.namespaces: only one of Include/Exclude namespaces can be set",
            id="include and exclude namespaces",
        ),
        pytest.param(
            {"states": ["Running"], "ownerKinds": {"include": ["Job"], "exclude": ["ReplicaSet"]}},
            f"{_W}.ownerKinds: only one of Include/Exclude ownerKinds can be set",
            id="include and exclude ownerKinds",
        ),
        pytest.param({"states": ["NotAState"]}, f"{_W}.states: {_STATES}", id="bad state"),
        pytest.param(
            {"conditions": [{}]},
            f"{_W}.conditions[0]: conditions[0]: at least one of type, status, reason, or "
            "minTimeSinceLastTransitionSeconds must be set",
            id="empty condition filter",
        ),
        # validation_test.go
        pytest.param({"maxPodLifeTimeSeconds": 1, "states": ["Running"]}, None, id="valid arg"),
        pytest.param(
            {"maxPodLifeTimeSeconds": 1, "states": ["Succeeded", "Failed"]}, None, id="Succeeded, Failed"
        ),
        pytest.param(
            {"maxPodLifeTimeSeconds": 1, "states": ["CrashLoopBackOff"]}, None, id="CrashLoopBackOff"
        ),
        pytest.param(
            {"maxPodLifeTimeSeconds": 1, "states": ["InvalidState"]},
            f"{_W}.states: {_STATES}",
            id="invalid state",
        ),
        pytest.param({"states": ["InvalidState"]}, f"{_W}.states: {_STATES}", id="no max and invalid state"),
        # Berth: strict decoding
        pytest.param(
            {"maxPodLifeTimeSeconds": -1},
            f"{_W}.maxPodLifeTimeSeconds: must be at least 0, not -1",
            id="negative max",
        ),
        pytest.param(
            {"maxPodLifetimeSeconds": 600},
            f'{_W}: strict decoding error: unknown field "maxPodLifetimeSeconds" '
            '(did you mean "maxPodLifeTimeSeconds"?)',
            id="unknown field",
        ),
        pytest.param(
            {"exitCodes": ["1"]},
            f"{_W}.exitCodes[0]: must be an integer, not '1'",
            id="exit code not an integer",
        ),
        pytest.param(
            {"conditions": [{"reasons": "x"}]},
            f'{_W}.conditions[0]: strict decoding error: unknown field "reasons" (did you mean "reason"?)',
            id="unknown condition field",
        ),
    ],
)
def test_validate(raw: dict[str, Any], message: str | None) -> None:
    assert args_error(read, raw) == message


def test_defaults() -> None:
    got = read(
        {"namespaces": {}, "labelSelector": {"matchLabels": {"foo": "bar"}}, **MAX, "states": ["Pending"]}
    )
    assert (got.max_pod_life_time_seconds, got.states, got.selection.include) == (
        600,
        frozenset({"Pending"}),
        frozenset(),
    )
    selector = got.selection.label_selector
    assert selector is not None and selector.matches({"foo": "bar"})
    assert read({"conditions": [{"type": "Ready", "minTimeSinceLastTransitionSeconds": 5}]}).conditions == (
        ConditionFilter(type="Ready", min_time_since_last_transition_seconds=5),
    )
