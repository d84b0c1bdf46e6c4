"""Coscheduling per extension point with a fake handle (scheduler-plugins' coscheduling_test.go and
core/core_test.go): QueueSort, PreFilter, PostFilter, Reserve/Unreserve, Permit, backoff and the caches."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from gang_helpers import pod_group as gang_pod_group

from berth.scheduler.framework import ClusterEvent, Code, CycleState, NodeTable, PodInfo, Status
from berth.scheduler.plugins.coscheduling import Coscheduling, CoschedulingArgs
from builders import make_node, make_pod

LABEL = "scheduling.x-k8s.io/pod-group"
EPOCH = datetime(2024, 1, 1, tzinfo=UTC)
Obj = dict[str, Any]


# ----- fakes and builders ------------------------------------------------------------------------
class FakeClock:
    """A settable clock."""

    def __init__(self) -> None:
        self.t = 0.0

    def now(self) -> float:
        """Current time."""
        return self.t


class FakeClient:
    """Only the timestamps (the plugin reads the epoch of clock time 0 from them)."""

    def timestamp(self, at: float | None = None) -> str:
        """RFC 3339 of clock time ``at``."""
        return (EPOCH + timedelta(seconds=at or 0.0)).strftime("%Y-%m-%dT%H:%M:%SZ")


class FakeWaiting:
    """A pod held at Permit that records what plugins did to it."""

    def __init__(self, pod: PodInfo) -> None:
        self._pod = pod
        self.allowed: list[str] = []
        self.rejected: list[tuple[str, str]] = []

    @property
    def pod(self) -> PodInfo:
        """The waiting pod."""
        return self._pod

    @property
    def node_name(self) -> str:
        """Where it was assumed."""
        return "node-a"

    def pending_plugins(self) -> list[str]:
        """Plugins it still waits for."""
        return ["Coscheduling"]

    def allow(self, plugin: str) -> None:
        """Record an Allow."""
        self.allowed.append(plugin)

    def reject(self, plugin: str, message: str) -> None:
        """Record a Reject."""
        self.rejected.append((plugin, message))


class FakeHandle:
    """The parts of the Handle Coscheduling uses: clock, client, node table, waiting pods, activation."""

    def __init__(self, table: NodeTable | None = None) -> None:
        self.clock = FakeClock()
        self.client = FakeClient()
        self.table = table or NodeTable()
        self.waiting: list[FakeWaiting] = []
        self.activated: list[list[str]] = []

    def node_table(self) -> NodeTable:
        """The node table."""
        return self.table

    def iterate_waiting_pods(self) -> list[FakeWaiting]:
        """Every waiting pod."""
        return list(self.waiting)

    def get_waiting_pod(self, uid: str) -> FakeWaiting | None:
        """The waiting pod ``uid``."""
        return next((w for w in self.waiting if w.pod.uid == uid), None)

    def activate_pods(self, uids: Sequence[str]) -> None:
        """Record one activation request (sorted uids)."""
        self.activated.append(sorted(uids))


def pod_group(
    name: str,
    ns: str = "ns",
    min_member: int = 1,
    *,
    created: float = 0.0,
    timeout: int | None = None,
    min_resources: Mapping[str, str] | None = None,
) -> Obj:
    """A PodGroup in ``ns`` created ``created`` seconds after the epoch."""
    stamp = (EPOCH + timedelta(seconds=created)).strftime("%Y-%m-%dT%H:%M:%SZ")
    return gang_pod_group(
        name, min_member, namespace=ns, created=stamp, timeout=timeout, min_resources=min_resources
    )


def setup(
    objs: Sequence[Obj] = (),
    nodes: Sequence[Obj] = (),
    args: CoschedulingArgs | None = None,
) -> tuple[Coscheduling, FakeHandle]:
    """A plugin fed with ``objs`` (pods, PodGroups) over a table of ``nodes`` holding the bound pods."""
    table = NodeTable()
    for n in nodes:
        table.set_node(n)
    handle = FakeHandle(table)
    plugin = Coscheduling(args or CoschedulingArgs(), handle)  # type: ignore[arg-type]
    for obj in objs:
        plugin.on_object_event("ADDED", obj)
        bound_to = (obj.get("spec") or {}).get("nodeName")
        if obj["kind"] == "Pod" and bound_to and bound_to in table.index:
            table.add_pod(table.index[bound_to], PodInfo(obj))
    return plugin, handle


def unresolvable(message: str) -> Status:
    """An UnschedulableAndUnresolvable status."""
    return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (message,))


def pre_filter(plugin: Coscheduling, handle: FakeHandle, obj: Obj) -> Status:
    """PreFilter's status for ``obj`` (its result is always None)."""
    result, status = plugin.pre_filter(CycleState(), PodInfo(obj), handle.table)
    assert result is None
    return status


# ----- QueueSort ---------------------------------------------------------------------------------
LOW, HIGH = 10, 100
PG1 = pod_group("pg1", "ns1", created=1)
PG2 = pod_group("pg2", "ns2", created=2)


@pytest.mark.parametrize(
    ("p1", "t1", "p2", "t2", "groups", "want"),
    [
        # upstream TestLess, one row per case; tN is the pod's queue timestamp (seconds after the epoch)
        (("p1", "ns1", "", LOW), 0, ("p2", "ns2", "", HIGH), 0, [], False),
        (("p1", "ns1", "", HIGH), 0, ("p2", "ns2", "", LOW), 0, [], True),
        (("p1", "ns1", "", HIGH), 1, ("p2", "ns2", "", HIGH), 2, [], True),
        (("p1", "ns1", "", HIGH), 2, ("p2", "ns2", "", HIGH), 1, [], False),
        (("p1", "ns1", "pg1", LOW), 0, ("p2", "ns2", "", HIGH), 0, [pod_group("pg1", "ns1")], False),
        (("p1", "ns1", "pg1", HIGH), 0, ("p2", "ns2", "", LOW), 0, [pod_group("pg1", "ns1")], True),
        (("p1", "ns1", "pg1", HIGH), 1, ("p2", "ns2", "", HIGH), 2, [PG1], True),
        (
            ("p1", "ns1", "pg1", HIGH),
            2,
            ("p2", "ns2", "", HIGH),
            1,
            [pod_group("pg1", "ns1", created=2)],
            False,
        ),
        (("p1", "ns1", "pg1", LOW), 0, ("p2", "ns2", "pg2", HIGH), 0, [PG1, PG2], False),
        (("p1", "ns1", "pg1", HIGH), 0, ("p2", "ns2", "pg1", LOW), 0, [PG1, PG2], True),
        (("p1", "ns1", "pg1", HIGH), 1, ("p2", "ns2", "pg2", HIGH), 2, [PG1, PG2], True),
        (
            ("p1", "ns", "pg2", LOW),
            1,
            ("p2", "ns", "pg1", HIGH),
            2,
            [pod_group("pg1", "ns", created=1), pod_group("pg2", "ns", created=2)],
            False,
        ),
        # p1's group is not in its namespace: its own queue time (1) is before pg2's creation (2)
        (("p1", "ns1", "pg2", HIGH), 1, ("p2", "ns2", "pg2", HIGH), 1, [PG1, PG2], True),
        (("p1", "ns1", "", HIGH), 1, ("p2", "ns2", "pg2", HIGH), 1, [PG2], True),
        # equal priority and time: <namespace>/<name> decides
        (("a", "ns", "pg", 1), 5, ("b", "ns", "pg", 1), 3, [pod_group("pg")], True),
        (("b", "ns", "pg", 1), 3, ("a", "ns", "pg", 1), 5, [pod_group("pg")], False),
    ],
)
def test_queue_sort_less(
    p1: tuple[str, str, str, int],
    t1: float,
    p2: tuple[str, str, str, int],
    t2: float,
    groups: list[Obj],
    want: bool,
) -> None:
    """Rows: (name, namespace, pod group, priority) of each pod and its time in the queue."""
    plugin, _ = setup(groups)
    first, second = (
        make_pod(name).ns(ns).uid(name).pod_group(group).priority(prio).info()
        for name, ns, group, prio in (p1, p2)
    )
    assert plugin.less(first, t1, second, t2) is want


def test_queue_sort_key_uses_group_creation_time() -> None:
    plugin, _ = setup([pod_group("pg", "ns", created=7)])
    assert plugin.sort_key(make_pod("m").ns("ns").uid("m").pod_group("pg").priority(3).info(), 42.0) == (
        -3,
        7.0,
        "ns/m",
    )
    assert plugin.sort_key(make_pod("lone").ns("ns").uid("lone").priority(3).info(), 42.0) == (
        -3,
        42.0,
        "ns/lone",
    )
    # a member whose PodGroup does not exist sorts by its own queue time
    assert plugin.sort_key(make_pod("m").ns("ns").uid("m").pod_group("other").info(), 42.0) == (
        0,
        42.0,
        "ns/m",
    )


# ----- PreFilter ---------------------------------------------------------------------------------
TWO_NODES = [make_node("node-a").capacity(pods="32").obj(), make_node("node-b").capacity(pods="32").obj()]


@pytest.mark.parametrize(
    ("target", "others", "groups", "nodes", "want"),
    [
        (
            "p",
            [
                make_pod("p1").ns("ns").uid("p1").pod_group("pg1").obj(),
                make_pod("p2").ns("ns").uid("p2").pod_group("pg2").obj(),
            ],
            [pod_group("pg1")],
            TWO_NODES,
            Status(),
        ),
        (
            "p",
            [make_pod("p").ns("ns").uid("p").pod_group("pg-non-existent").obj()],
            [pod_group("pg1", min_member=1)],
            TWO_NODES,
            Status(),
        ),
        (
            "p",
            [
                make_pod("p").ns("ns").uid("p").pod_group("pg1").obj(),
                make_pod("pg2-1").ns("ns").uid("pg2-1").pod_group("pg2").obj(),
            ],
            [pod_group("pg1", min_member=2), pod_group("pg2", min_member=2)],
            TWO_NODES,
            unresolvable(
                "pre-filter pod p cannot find enough sibling pods, current pods number: 1, minMember of group: 2"
            ),
        ),
        (
            "p1a",
            [
                make_pod("p1a").ns("ns").uid("p1a").pod_group("pg1").obj(),
                make_pod("p1b").ns("ns").uid("p1b").pod_group("pg1").obj(),
            ],
            [pod_group("pg1", min_member=2)],
            TWO_NODES,
            Status(),
        ),
        (
            "p1a",
            [
                make_pod("p1a").ns("ns").uid("p1a").pod_group("pg1").obj(),
                make_pod("p1b").ns("ns").uid("p1b").pod_group("pg1").obj(),
                make_pod("p1c").ns("ns").uid("p1c").pod_group("pg1").obj(),
            ],
            [pod_group("pg1", min_member=2)],
            TWO_NODES,
            Status(),
        ),
        # 2 nodes of 4 cpu: minResources 6 cpu passes (even though no single node holds it) ...
        (
            "p1a",
            [
                make_pod("p1a").ns("ns").uid("p1a").pod_group("pg1").obj(),
                make_pod("p1b").ns("ns").uid("p1b").pod_group("pg1").obj(),
            ],
            [pod_group("pg1", min_member=2, min_resources={"cpu": "6"})],
            TWO_NODES,
            Status(),
        ),
        # ... 10 cpu does not: the gap is what the whole cluster lacks
        (
            "p1a",
            [
                make_pod("p1a").ns("ns").uid("p1a").pod_group("pg1").obj(),
                make_pod("p1b").ns("ns").uid("p1b").pod_group("pg1").obj(),
            ],
            [pod_group("pg1", min_member=2, min_resources={"cpu": "10"})],
            TWO_NODES,
            unresolvable("resource gap: map[cpu:2]"),
        ),
        # minMember pods are requested as well ("pods" resource), fractional cpu printed as Go does
        (
            "p1a",
            [
                make_pod("p1a").ns("ns").uid("p1a").pod_group("pg1").obj(),
                make_pod("p1b").ns("ns").uid("p1b").pod_group("pg1").obj(),
                make_pod("p1c").ns("ns").uid("p1c").pod_group("pg1").obj(),
            ],
            [pod_group("pg1", min_member=3, min_resources={"cpu": "8500m"})],
            [make_node("node-a").capacity(pods="1").obj(), make_node("node-b").capacity(pods="1").obj()],
            unresolvable("resource gap: map[cpu:500m pods:1]"),
        ),
        # CheckClusterResource: 2 nodes of 3 cpu with 2 + 1 cpu used by others leave 3 < 4 ...
        (
            "m",
            [
                make_pod("m").ns("ns").uid("m").pod_group("pg1").obj(),
                make_pod("p1").ns("ns").uid("p1").req(cpu="2").node("node-a").obj(),
                make_pod("p2").ns("ns").uid("p2").req(cpu="1").node("node-b").obj(),
            ],
            [pod_group("pg1", min_member=1, min_resources={"cpu": "4"})],
            [
                make_node("node-a").capacity(cpu="3", pods="32").obj(),
                make_node("node-b").capacity(cpu="3", pods="32").obj(),
            ],
            unresolvable("resource gap: map[cpu:1]"),
        ),
        # ... but the group's own placed member p1 is not counted as used: 5 >= 4
        (
            "m",
            [
                make_pod("m").ns("ns").uid("m").pod_group("pg1").obj(),
                make_pod("p1").ns("ns").uid("p1").pod_group("pg1").req(cpu="2").node("node-a").obj(),
                make_pod("p2").ns("ns").uid("p2").req(cpu="1").node("node-b").obj(),
            ],
            [pod_group("pg1", min_member=1, min_resources={"cpu": "4"})],
            [
                make_node("node-a").capacity(cpu="3", pods="32").obj(),
                make_node("node-b").capacity(cpu="3", pods="32").obj(),
            ],
            Status(),
        ),
    ],
)
def test_pre_filter(
    target: str, others: list[Obj], groups: list[Obj], nodes: list[Obj], want: Status
) -> None:
    plugin, handle = setup([*groups, *others], nodes)
    obj = (
        next((o for o in others if o["metadata"]["name"] == target), None)
        or make_pod(target).ns("ns").uid(target).obj()
    )
    assert pre_filter(plugin, handle, obj) == want


def test_pre_filter_members_leave_when_terminal_or_deleted() -> None:
    objs = [
        pod_group("pg", min_member=2),
        make_pod("a").ns("ns").uid("a").pod_group("pg").obj(),
        make_pod("b").ns("ns").uid("b").pod_group("pg").obj(),
    ]
    plugin, handle = setup(objs, TWO_NODES)
    assert pre_filter(plugin, handle, objs[1]) == Status()
    done = make_pod("b").ns("ns").uid("b").pod_group("pg").phase("Succeeded").obj()
    plugin.on_object_event("MODIFIED", done)
    msg = "pre-filter pod a cannot find enough sibling pods, current pods number: 1, minMember of group: 2"
    assert pre_filter(plugin, handle, objs[1]) == unresolvable(msg)
    plugin.on_object_event("ADDED", make_pod("c").ns("ns").uid("c").pod_group("pg").obj())
    assert pre_filter(plugin, handle, objs[1]) == Status()
    plugin.on_object_event("DELETED", make_pod("c").ns("ns").uid("c").pod_group("pg").obj())
    assert pre_filter(plugin, handle, objs[1]) == unresolvable(msg)


@pytest.mark.parametrize(
    ("permit_wait", "check_at", "want"),
    [
        # the passed minResources check is remembered for permitWaitingTimeSeconds (go-cache: the
        # entry still counts at its expiration instant) ...
        (10, 10.0, Status()),
        (10, 10.5, unresolvable("resource gap: map[cpu:4]")),
        # ... or go-cache's default 3 s when that is 0
        (0, 3.0, Status()),
        (0, 3.5, unresolvable("resource gap: map[cpu:4]")),
    ],
)
def test_pre_filter_remembers_permitted_group(permit_wait: int, check_at: float, want: Status) -> None:
    objs = [
        pod_group("pg", min_member=1, min_resources={"cpu": "4"}),
        make_pod("a").ns("ns").uid("a").pod_group("pg").obj(),
    ]
    args = CoschedulingArgs(permit_waiting_time_seconds=permit_wait)
    plugin, handle = setup(objs, [make_node("node-a").capacity(pods="32").obj()], args)
    assert pre_filter(plugin, handle, objs[1]) == Status()
    # the node fills up with another pod: only the cache lets the group through
    filler = make_pod("filler").ns("ns").uid("filler").req(cpu="4").node("node-a").obj()
    handle.table.add_pod(0, PodInfo(filler))
    handle.clock.t = check_at
    assert pre_filter(plugin, handle, objs[1]) == want


def test_post_filter_and_unreserve_forget_the_permitted_group() -> None:
    objs = [
        pod_group("pg", min_member=2, min_resources={"cpu": "4"}),
        make_pod("a").ns("ns").uid("a").pod_group("pg").obj(),
        make_pod("b").ns("ns").uid("b").pod_group("pg").obj(),
    ]
    plugin, handle = setup(objs, [make_node("node-a").capacity(pods="32").obj()])
    assert pre_filter(plugin, handle, objs[1]) == Status()
    handle.table.add_pod(0, make_pod("filler").ns("ns").uid("filler").req(cpu="4").node("node-a").info())
    assert pre_filter(plugin, handle, objs[1]) == Status()  # remembered
    plugin.post_filter(CycleState(), PodInfo(objs[2]), None)  # type: ignore[arg-type]
    assert pre_filter(plugin, handle, objs[1]) == unresolvable("resource gap: map[cpu:4]")


# ----- PostFilter --------------------------------------------------------------------------------
REJECTED_PG1 = "PodGroup ns/pg1 gets rejected due to Pod p is unschedulable even after PostFilter"


@pytest.mark.parametrize(
    ("min_member", "assigned", "percentage", "want", "rejects"),
    [
        # upstream TestPostFilter
        (1, 1, 10, Status(Code.UNSCHEDULABLE), False),
        (2, 1, 10, Status(Code.UNSCHEDULABLE, (REJECTED_PG1,)), True),
        # podGroupRejectPercentage: the waiting members are kept while at most that share is missing
        (10, 9, 10, Status(Code.UNSCHEDULABLE), False),
        (10, 8, 10, Status(Code.UNSCHEDULABLE, (REJECTED_PG1,)), True),
        (10, 8, 20, Status(Code.UNSCHEDULABLE), False),
        (10, 9, 0, Status(Code.UNSCHEDULABLE, (REJECTED_PG1,)), True),
        (10, 0, 100, Status(Code.UNSCHEDULABLE), False),
        (3, 0, 10, Status(Code.UNSCHEDULABLE, (REJECTED_PG1,)), True),
    ],
)
def test_post_filter(min_member: int, assigned: int, percentage: int, want: Status, rejects: bool) -> None:
    members = [
        make_pod(f"m{i}").ns("ns").uid(f"m{i}").pod_group("pg1").node("node-a").obj() for i in range(assigned)
    ]
    objs = [
        pod_group("pg1", min_member=min_member),
        *members,
        make_pod("p").ns("ns").uid("p").pod_group("pg1").obj(),
    ]
    args = CoschedulingArgs(pod_group_reject_percentage=percentage)
    plugin, handle = setup(objs, [make_node("node-a").capacity(pods="32").obj()], args)
    sibling = FakeWaiting(make_pod("w").ns("ns").uid("w").pod_group("pg1").info())
    stranger = FakeWaiting(make_pod("x").ns("ns").uid("x").pod_group("pg2").info())
    other_ns = FakeWaiting(make_pod("y").ns("ns2").uid("y").pod_group("pg1").info())
    handle.waiting = [sibling, stranger, other_ns]
    result, status = plugin.post_filter(CycleState(), PodInfo(objs[-1]), None)  # type: ignore[arg-type]
    assert result is not None and result.nominated_node_name == ""
    assert status == want
    assert sibling.rejected == ([("Coscheduling", "optimistic rejection in PostFilter")] if rejects else [])
    assert stranger.rejected == [] and other_ns.rejected == []


def test_post_filter_without_group() -> None:
    plugin, _ = setup([pod_group("pg1", min_member=2)])
    _, status = plugin.post_filter(CycleState(), make_pod("p").ns("ns").uid("p").info(), None)  # type: ignore[arg-type]
    assert status == Status(Code.UNSCHEDULABLE, ("can not find pod group",))
    _, status = plugin.post_filter(
        CycleState(), make_pod("q").ns("ns").uid("q").pod_group("gone").info(), None
    )  # type: ignore[arg-type]
    assert status == Status(Code.UNSCHEDULABLE, ("can not find pod group",))


# ----- podGroupBackoffSeconds --------------------------------------------------------------------
@pytest.mark.parametrize(
    ("backoff", "members", "check_at", "want"),
    [
        # upstream TestPodGroupBackoffTime: rejected at t=100 with a 5 s backoff
        (5, 3, 100.0, unresolvable("podGroup ns/pg1 failed recently")),
        (5, 3, 105.0, unresolvable("podGroup ns/pg1 failed recently")),  # still at its expiration
        (5, 3, 105.5, Status()),
        # no backoff configured, or fewer pods than minMember (PreFilter's own refusal then)
        (0, 3, 100.0, Status()),
        (
            5,
            2,
            100.0,
            unresolvable(
                "pre-filter pod pod3 cannot find enough sibling pods, current pods number: 2, "
                "minMember of group: 3"
            ),
        ),
    ],
)
def test_pod_group_backoff(backoff: int, members: int, check_at: float, want: Status) -> None:
    pods = [
        make_pod(f"pod{i + 1}").ns("ns").uid(f"pod{i + 1}").pod_group("pg1").obj() for i in range(members)
    ]
    objs = [pod_group("pg1", min_member=3), *pods]
    plugin, handle = setup(
        objs,
        [make_node("node-a").capacity(pods="32").obj()],
        CoschedulingArgs(pod_group_backoff_seconds=backoff),
    )
    handle.clock.t = 100.0
    state = CycleState()
    status, _ = plugin.permit(state, PodInfo(pods[0]), "node-a")
    assert status.code == Code.WAIT
    plugin.post_filter(CycleState(), PodInfo(pods[1]), None)  # type: ignore[arg-type]
    handle.clock.t = check_at
    target = pods[2] if members == 3 else make_pod("pod3").ns("ns").uid("pod3").pod_group("pg1").obj()
    assert pre_filter(plugin, handle, target) == want


# ----- Permit ------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("target", "objs", "want"),
    [
        (
            make_pod("p").ns("ns").uid("p").obj(),
            [pod_group("pg1", min_member=1), pod_group("pg2", min_member=2)],
            (Status(), 0.0),
        ),
        (
            make_pod("p").ns("ns").uid("p").pod_group("pg-non-existent").obj(),
            [pod_group("pg1", min_member=2)],
            (Status(Code.UNSCHEDULABLE, ("PodGroup not found",)), 0.0),
        ),
        (
            make_pod("p").ns("ns").uid("p").pod_group("pg2").obj(),
            [pod_group("pg1", min_member=1), pod_group("pg2", min_member=2)],
            (Status(Code.WAIT), 60.0),
        ),
        (
            make_pod("p").ns("ns").uid("p").pod_group("pg1").obj(),
            [pod_group("pg1", min_member=1), pod_group("pg2", min_member=2)],
            (Status(), 0.0),
        ),
        (
            make_pod("p1a").ns("ns").uid("p1a").pod_group("pg1").obj(),
            [
                pod_group("pg1", min_member=2),
                make_pod("p1b").ns("ns").uid("p1b").pod_group("pg1").node("node").obj(),
            ],
            (Status(), 0.0),
        ),
    ],
)
def test_permit(target: Obj, objs: list[Obj], want: tuple[Status, float]) -> None:
    plugin, _ = setup([*objs, target])
    assert plugin.permit(CycleState(), PodInfo(target), "node") == want


@pytest.mark.parametrize(
    ("pg_timeout", "permit_wait", "want"),
    [
        (None, 60, 60.0),
        (None, 8, 8.0),
        (None, 0, 60.0),  # DefaultWaitTime
        (5, 8, 5.0),  # the PodGroup's scheduleTimeoutSeconds wins
        (5, 0, 5.0),
        (0, 8, 8.0),  # a PodGroup timeout of 0 falls back to the plugin arg ...
        (0, 0, 0.0),  # ... as it is
    ],
)
def test_permit_wait_time(pg_timeout: int | None, permit_wait: int, want: float) -> None:
    target = make_pod("p").ns("ns").uid("p").pod_group("pg").obj()
    args = CoschedulingArgs(permit_waiting_time_seconds=permit_wait)
    plugin, _ = setup([pod_group("pg", min_member=2, timeout=pg_timeout), target], args=args)
    assert plugin.permit(CycleState(), PodInfo(target), "node") == (Status(Code.WAIT), want)


def test_permit_quorum_allows_the_waiting_siblings_only() -> None:
    objs = [
        pod_group("pg1", min_member=3),
        *(make_pod(f"m{i}").ns("ns").uid(f"m{i}").pod_group("pg1").obj() for i in range(3)),
    ]
    plugin, handle = setup(objs)
    state = CycleState()
    first, second, third = (PodInfo(o) for o in objs[1:])
    for p in (first, second):
        assert plugin.reserve(state, p, "node-a") == Status()
        assert plugin.permit(state, p, "node-a") == (Status(Code.WAIT), 60.0)
    waiting = [FakeWaiting(first), FakeWaiting(second)]
    stranger = FakeWaiting(make_pod("x").ns("ns").uid("x").pod_group("pg2").info())
    other_ns = FakeWaiting(make_pod("y").ns("ns2").uid("y").pod_group("pg1").info())
    handle.waiting = [*waiting, stranger, other_ns]
    assert plugin.reserve(state, third, "node-b") == Status()
    assert plugin.permit(state, third, "node-b") == (Status(), 0.0)
    assert [w.allowed for w in waiting] == [["Coscheduling"], ["Coscheduling"]]
    assert stranger.allowed == [] and other_ns.allowed == []


def test_permit_first_assigned_member_activates_its_siblings() -> None:
    # upstream TestPodGroupBackoffTime: pod1 waits and asks for ns/pod2 and ns/pod3 to be activated
    objs = [
        pod_group("pg1", min_member=3),
        *(make_pod(f"pod{i}").ns("ns").uid(f"pod{i}").pod_group("pg1").obj() for i in (1, 2, 3)),
    ]
    objs.append(make_pod("stranger").ns("ns").uid("stranger").pod_group("pg2").obj())
    plugin, handle = setup(objs)
    state = CycleState()
    pod1, pod2 = PodInfo(objs[1]), PodInfo(objs[2])
    plugin.reserve(state, pod1, "node-a")
    assert plugin.permit(state, pod1, "node-a") == (Status(Code.WAIT), 60.0)
    assert handle.activated == [["pod2", "pod3"]]
    # the second assigned member waits without asking again (scheduler-plugins issue 682)
    plugin.reserve(state, pod2, "node-a")
    assert plugin.permit(state, pod2, "node-a") == (Status(Code.WAIT), 60.0)
    assert handle.activated == [["pod2", "pod3"]]
    # once the first is released, the next member to wait is the first again
    plugin.unreserve(state, pod1, "node-a")
    plugin.unreserve(state, pod2, "node-a")
    plugin.reserve(state, pod2, "node-a")
    plugin.permit(state, pod2, "node-a")
    assert handle.activated == [["pod2", "pod3"], ["pod1", "pod3"]]


# ----- Reserve / Unreserve -----------------------------------------------------------------------
def test_unreserve_rejects_waiting_siblings_and_releases_the_member() -> None:
    objs = [
        pod_group("pg1", min_member=2),
        make_pod("a").ns("ns").uid("a").pod_group("pg1").obj(),
        make_pod("b").ns("ns").uid("b").pod_group("pg1").obj(),
    ]
    plugin, handle = setup(objs)
    state = CycleState()
    a, b = PodInfo(objs[1]), PodInfo(objs[2])
    plugin.reserve(state, a, "node-a")
    sibling = FakeWaiting(b)
    stranger = FakeWaiting(make_pod("x").ns("ns").uid("x").pod_group("pg2").info())
    handle.waiting = [sibling, stranger]
    plugin.unreserve(state, a, "node-a")
    assert sibling.rejected == [("Coscheduling", "rejection in Unreserve")]
    assert stranger.rejected == []
    # a is no longer counted: b alone does not reach the quorum of 2
    handle.waiting = []
    assert plugin.permit(state, b, "node-a") == (Status(Code.WAIT), 60.0)


def test_unreserve_without_group_touches_nothing() -> None:
    plugin, handle = setup([pod_group("pg1", min_member=2)])
    waiting = FakeWaiting(make_pod("b").ns("ns").uid("b").pod_group("pg1").info())
    handle.waiting = [waiting]
    plugin.unreserve(CycleState(), make_pod("lone").ns("ns").uid("lone").info(), "node-a")
    plugin.unreserve(
        CycleState(), make_pod("orphan").ns("ns").uid("orphan").pod_group("missing").info(), "node-a"
    )
    assert waiting.rejected == []


def test_events_to_register() -> None:
    plugin, _ = setup()
    assert plugin.events_to_register() == [
        ClusterEvent("Pod", frozenset({"Add"})),
        ClusterEvent("PodGroup", frozenset({"Add", "Update"})),
    ]
