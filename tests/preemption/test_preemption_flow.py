"""DefaultPreemption's messages, eligibility, side effects and reservation-backed preemption, end to end."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest
from preemption_helpers import (
    classes,
    events,
    get_pod,
    nominated,
    preemption_config,
    scheduled_message,
    simulate,
    victims,
)

from berth.scheduler.builtin import builtin_registry
from berth.scheduler.framework import CycleState, PodInfo, Status
from berth.scheduler.framework.status import Code
from berth.sim.scenario import ObjectRef, Plan, Step
from builders import make_node, make_pod

PRIOS = classes(1, 50, 100, 200, 1000)
RESERVATION = ("scheduling.koordinator.sh", "Reservation")


def full_n1() -> list[dict[str, Any]]:
    """The PriorityClasses and n1 (4 cpu) filled by the p1 pods a and b (2 cpu each)."""
    return [
        *PRIOS,
        make_node("n1").obj(),
        *(make_pod(n).req(cpu="2").priority_class("p1").node("n1").obj() for n in "ab"),
    ]


def held_nominee(name: str, priority_class: str) -> dict[str, Any]:
    """A 1-cpu pod of ``priority_class`` nominated to n1 and held by a scheduling gate (it keeps the nomination)."""
    return (
        make_pod(name)
        .req(cpu="1")
        .priority_class(priority_class)
        .gate("example.com/hold")
        .nominated("n1")
        .obj()
    )


MESSAGE_CASES = [
    pytest.param(
        [make_node("n1").obj()],
        [make_pod("low").req(cpu="4").priority_class("p1").node("n1").obj()],
        make_pod("x").req(cpu="2").priority_class("p100").preemption_policy().obj(),
        "0/1 nodes are available: 1 Insufficient cpu. preemption: not eligible due to preemptionPolicy=Never.",
        id="preemption-policy-never",
    ),
    pytest.param(
        [make_node("n1").obj()],
        [make_pod("high").req(cpu="4").priority_class("p200").node("n1").obj()],
        make_pod("x").req(cpu="2").priority_class("p100").obj(),
        "0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: "
        "1 No preemption victims found for incoming pod.",
        id="no-lower-priority-pods",
    ),
    pytest.param(
        [
            make_node("n1").taints({"key": "k", "value": "v", "effect": "NoSchedule"}).obj(),
            make_node("n2").obj(),
            make_node("n3").obj(),
        ],
        [
            make_pod("high").req(cpu="4").priority_class("p200").node("n2").obj(),
            make_pod("top").req(cpu="3").priority_class("p1000").node("n3").obj(),
            make_pod("low").req(cpu="1").priority_class("p1").node("n3").obj(),
        ],
        make_pod("x").req(cpu="2").priority_class("p100").obj(),
        "0/3 nodes are available: 1 node(s) had untolerated taint {k: v}, 2 Insufficient cpu. preemption: "
        "0/3 nodes are available: 1 Insufficient cpu, 1 No preemption victims found for incoming pod, "
        "1 Preemption is not helpful for scheduling.",
        id="histogram-of-three-kinds",
    ),
    pytest.param(
        [make_node("n1").capacity(cpu="1").obj(), make_node("n2").capacity(cpu="1").obj()],
        [make_pod("low").req(cpu="1").priority_class("p1").node("n1").obj()],
        make_pod("x").req(cpu="1").priority_class("p100").node_selector(no="pe").obj(),
        "0/2 nodes are available: 2 node(s) didn't match Pod's node affinity/selector. preemption: "
        "0/2 nodes are available: 2 Preemption is not helpful for scheduling.",
        id="all-unresolvable",
    ),
]


@pytest.mark.parametrize(("nodes", "pods", "preemptor", "message"), MESSAGE_CASES)
def test_failure_messages(
    nodes: list[dict[str, Any]], pods: list[dict[str, Any]], preemptor: dict[str, Any], message: str
) -> None:
    sim = simulate([(0.0, PRIOS + nodes + pods), (10.0, [preemptor])], until=10.0)
    assert scheduled_message(sim, "x") == message
    assert victims(sim) == []
    assert nominated(sim, "x") == ""


def test_terminating_victims_on_the_nominated_node_block_a_second_preemption() -> None:
    sim = simulate(
        [
            (
                0.0,
                full_n1(),
            ),
            (10.0, [make_pod("x").req(cpu="3").priority_class("p100").obj()]),
            (
                20.0,
                [make_node("n2").capacity(cpu="1").obj()],
            ),  # a node event sends x back to the active queue
        ],
        until=20.0,
    )
    assert victims(sim) == ["a", "b"]
    assert [m for who, m in events(sim, "FailedScheduling") if who == "x"] == [
        "0/1 nodes are available: 1 Insufficient cpu.",
        "0/2 nodes are available: 2 Insufficient cpu. preemption: not eligible due to a terminating pod on "
        "the nominated node.",
    ]
    assert nominated(sim, "x") == "n1"


def test_unresolvable_nominated_node_allows_preempting_elsewhere() -> None:
    sim = simulate(
        [
            (
                0.0,
                [
                    *PRIOS,
                    make_node("n1").obj(),
                    make_node("n2").obj(),
                    make_pod("a").req(cpu="4").priority_class("p1").node("n1").obj(),
                    make_pod("b").req(cpu="4").priority_class("p50").node("n2").obj(),
                ],
            ),
            (10.0, [make_pod("x").req(cpu="3").priority_class("p100").obj()]),
        ],
        until=10.0,
    )
    assert nominated(sim, "x") == "n1" and victims(sim) == ["a"]
    taint = {"spec": {"taints": [{"key": "k", "value": "v", "effect": "NoSchedule"}]}}
    sim.run(Plan([Step(20.0, patch=[(ObjectRef("v1", "Node", "", "n1"), taint)])]), until=20.0)
    assert nominated(sim, "x") == "n2"
    assert victims(sim) == ["a", "b"]


def test_lower_priority_nominations_on_the_node_are_cleared() -> None:
    sim = simulate(
        [
            (
                0.0,
                [
                    *PRIOS,
                    make_node("n1").capacity(cpu="8").obj(),
                    make_pod("low").req(cpu="6").priority_class("p1").node("n1").obj(),
                ],
            ),
            (
                1.0,
                [held_nominee("nominee-low", "p50")],
            ),
            (
                1.0,
                [held_nominee("nominee-high", "p200")],
            ),
            (10.0, [make_pod("x").req(cpu="2").priority_class("p100").obj()]),
        ],
        until=10.0,
    )
    assert victims(sim) == ["low"]
    assert nominated(sim, "x") == "n1"
    assert nominated(sim, "nominee-low") == ""
    assert nominated(sim, "nominee-high") == "n1"


def test_higher_priority_nomination_counts_once_in_the_dry_run() -> None:
    # n1: 4 cpu, three 1-cpu low pods; a 1-cpu pod of higher priority is nominated there. x (2 cpu) needs
    # room for itself and the nominee: kube removes two low pods, not three.
    sim = simulate(
        [
            (
                0.0,
                [*PRIOS, make_node("n1").obj()]
                + [make_pod(f"low-{i}").req(cpu="1").priority_class("p1").node("n1").obj() for i in range(3)],
            ),
            (
                1.0,
                [held_nominee("nominee", "p200")],
            ),
            (10.0, [make_pod("x").req(cpu="2").priority_class("p100").obj()]),
        ],
        until=10.0,
    )
    assert victims(sim) == ["low-1", "low-2"]


class Hold:
    """A Permit plugin that holds pods labelled hold=yes for a minute."""

    name = "Hold"

    def permit(self, state: CycleState, pod: PodInfo, node_name: str) -> tuple[Status, float]:
        """Wait for pods labelled hold=yes."""
        if pod.labels.get("hold") == "yes":
            return Status(Code.WAIT), 60.0
        return Status(), 0.0


def test_victim_waiting_at_permit_is_rejected_not_deleted() -> None:
    registry = builtin_registry()
    registry.register("Hold", lambda args, handle: Hold())
    config = preemption_config(extra={"plugins": {"permit": {"enabled": [{"name": "Hold"}]}}})
    sim = simulate(
        [
            (
                0.0,
                [
                    *PRIOS,
                    make_node("n1").obj(),
                    make_pod("waiter").req(cpu="3").label(hold="yes").priority_class("p1").obj(),
                ],
            ),
            (10.0, [make_pod("x").req(cpu="2").priority_class("p100").obj()]),
        ],
        until=10.0,
        config=config,
        registry=registry,
    )
    waiter = get_pod(sim, "waiter")
    assert waiter is not None and "deletionTimestamp" not in waiter["metadata"]
    assert victims(sim) == []  # no DisruptionTarget: it never ran
    uid = get_pod(sim, "x")["metadata"]["uid"]  # type: ignore[index]
    assert events(sim, "Preempted") == [("waiter", f"Preempted by pod {uid} on node n1")]
    assert [m for who, m in events(sim, "FailedScheduling") if who == "waiter"] == ["preempted"]
    assert nominated(sim, "x") == "n1"
    # the rejection came while x was being scheduled: x retries after its backoff and takes n1
    sim.run(Plan([]), until=20.0)
    assert get_pod(sim, "x")["spec"]["nodeName"] == "n1"  # type: ignore[index]


def _reservations(sim: Any) -> list[Mapping[str, Any]]:
    return list(sim.store.list(RESERVATION)[0])


def test_reservation_backed_preemption() -> None:
    config = preemption_config({"reservePreemptedResources": True})
    sim = simulate(
        [
            (
                0.0,
                full_n1(),
            ),
            (10.0, [make_pod("x").req(cpu="3").label(app="x").priority_class("p100").obj()]),
        ],
        until=10.0,
        config=config,
    )
    x = get_pod(sim, "x")
    assert x is not None
    uid = x["metadata"]["uid"]
    assert victims(sim) == ["a", "b"]
    [rsv] = _reservations(sim)
    assert rsv["metadata"]["name"] == f"preemption-{uid}"
    spec = rsv["spec"]
    assert spec["owners"] == [{"object": {"name": "x", "namespace": "default", "uid": uid}}]
    assert spec["allocateOnce"] is True and spec["ttl"] == "5m"
    assert spec["template"]["metadata"] == {"namespace": "default", "labels": {"app": "x"}}
    tspec = spec["template"]["spec"]
    assert tspec["nodeName"] == "n1" and tspec["schedulerName"] == "default-scheduler"
    assert tspec["containers"] == x["spec"]["containers"] and "priority" not in tspec
    # the victims leave after 30 s; the reservation claims their room and x allocates it
    sim.run(Plan([]), until=60.0)
    x = get_pod(sim, "x")
    assert x is not None and x["spec"]["nodeName"] == "n1"
    assert x["metadata"]["annotations"]["scheduling.koordinator.sh/reservation-allocated"] == (
        f'{{"name":"preemption-{uid}","uid":"{rsv["metadata"]["uid"]}"}}'
    )
    [done] = _reservations(sim)
    assert done["status"]["phase"] == "Succeeded"


@pytest.mark.parametrize(("reserve", "winner"), [(False, "thief"), (True, "x")])
def test_freed_room_is_not_stolen_with_reservation_backed_preemption(reserve: bool, winner: str) -> None:
    """A pod that arrives while the victims terminate, outranks the preemptor (so kube's nomination does not
    hold it off; a same-priority pod is already held off by the nomination) and may not preempt, takes the
    freed room the moment the victims are gone, unless the preemption reserved it."""
    config = preemption_config({"reservePreemptedResources": reserve})
    sim = simulate(
        [
            (
                0.0,
                full_n1(),
            ),
            (10.0, [make_pod("x").req(cpu="3").priority_class("p100").obj()]),
            (20.0, [make_pod("thief").req(cpu="3").priority_class("p1000").preemption_policy().obj()]),
        ],
        until=120.0,
        config=config,
    )
    bound = {name: (get_pod(sim, name) or {}).get("spec", {}).get("nodeName") for name in ("x", "thief")}
    assert bound[winner] == "n1"
    loser = "x" if winner == "thief" else "thief"
    assert bound[loser] is None


def test_no_reservation_without_the_arg() -> None:
    sim = simulate(
        [
            (
                0.0,
                [
                    *PRIOS,
                    make_node("n1").obj(),
                    make_pod("a").req(cpu="4").priority_class("p1").node("n1").obj(),
                ],
            ),
            (10.0, [make_pod("x").req(cpu="3").priority_class("p100").obj()]),
        ],
        until=10.0,
    )
    assert victims(sim) == ["a"] and _reservations(sim) == []


def _reservation_obj(name: str, node_name: str, cpu: str) -> dict[str, Any]:
    return {
        "apiVersion": "scheduling.koordinator.sh/v1alpha1",
        "kind": "Reservation",
        "metadata": {"name": name},
        "spec": {
            "template": {
                "metadata": {"namespace": "default"},
                "spec": {
                    "nodeName": node_name,
                    "containers": [{"name": "c", "resources": {"requests": {"cpu": cpu}}}],
                },
            },
            "owners": [{"labelSelector": {"matchLabels": {"app": "nobody"}}}],
            "ttl": "0",
        },
    }


def test_reservations_are_never_victims() -> None:
    sim = simulate(
        [
            (0.0, [*PRIOS, make_node("n1").obj(), _reservation_obj("r1", "n1", "2")]),
            (1.0, [make_pod("low").req(cpu="2").priority_class("p1").node("n1").obj()]),
            (10.0, [make_pod("x").req(cpu="4").priority_class("p100").obj()]),
        ],
        until=10.0,
    )
    assert victims(sim) == []
    assert scheduled_message(sim, "x") == (
        "0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: 1 Insufficient cpu."
    )
    [rsv] = _reservations(sim)
    assert rsv["status"]["phase"] == "Available"


def test_reserve_pods_never_preempt() -> None:
    sim = simulate(
        [
            (
                0.0,
                [
                    *PRIOS,
                    make_node("n1").obj(),
                    make_pod("low").req(cpu="4").priority_class("p1").node("n1").obj(),
                ],
            ),
            (10.0, [_reservation_obj("r1", "n1", "2")]),
        ],
        until=10.0,
    )
    assert victims(sim) == []
    [rsv] = _reservations(sim)
    assert rsv["status"]["phase"] == "Pending"
    assert rsv["status"]["conditions"][0]["message"] == "0/1 nodes are available: 1 Insufficient cpu."


def test_failed_preemption_clears_the_pods_nomination() -> None:
    sim = simulate(
        [
            (
                0.0,
                [
                    *PRIOS,
                    make_node("n1").obj(),
                    make_pod("high").req(cpu="4").priority_class("p200").node("n1").obj(),
                ],
            ),
            (10.0, [make_pod("x").req(cpu="2").priority_class("p100").nominated("n1").obj()]),
        ],
        until=10.0,
    )
    assert nominated(sim, "x") == ""
    assert scheduled_message(sim, "x") == (
        "0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: "
        "1 No preemption victims found for incoming pod."
    )
