"""Reservation scheduling and allocation: reserve pods, occupancy, fit policies, conflicts, nomination, scoring,
allocateOnce and owner deletion."""

from __future__ import annotations

import json

import pytest
from rsv_helpers import (
    KOORD,
    ORDER,
    RESTRICTED_OPTIONS,
    events,
    placement,
    pod_message,
    ref,
    reservation,
    rsv_status,
    simulate,
)

from builders import PodBuilder, make_node, make_pod

A = {"app": "a"}


# ----- scheduling the reserve pod -----------------------------------------------------------------------


def test_reservation_that_fits_nowhere_stays_pending() -> None:
    sim = simulate(
        [
            make_node("node-1").capacity(cpu="2").obj(),
            make_node("node-2").capacity(cpu="2").obj(),
            reservation("r", "3", "1Gi"),
        ]
    )
    st = rsv_status(sim, "r")
    msg = "0/2 nodes are available: 2 Insufficient cpu."
    assert st["phase"] == "Pending"
    assert "nodeName" not in st
    assert [(c["type"], c["status"], c["reason"], c["message"]) for c in st["conditions"]] == [
        ("Scheduled", "False", "Unschedulable", msg)
    ]
    assert ("Warning", "FailedScheduling", msg) in events(sim, "r")


def test_reservation_goes_through_the_profile_filters() -> None:
    """Node taints, template node selector and resources apply to the reserve pod like to any pod."""
    tainted = make_node("node-1").capacity(cpu="8").obj()
    tainted["spec"] = {"taints": [{"key": "gpu", "value": "yes", "effect": "NoSchedule"}]}
    r = reservation("r", "2", "1Gi")
    r["spec"]["template"]["spec"]["nodeSelector"] = {"disk": "ssd"}
    sim = simulate(
        [tainted, make_node("node-2").obj(), make_node("node-3").capacity(cpu="1").label(disk="ssd").obj(), r]
    )
    st = rsv_status(sim, "r")
    assert (st["phase"], st["conditions"][0]["message"]) == (
        "Pending",
        "0/3 nodes are available: 1 Insufficient cpu, 1 node(s) didn't match Pod's node affinity/selector, "
        "1 node(s) had untolerated taint {gpu: yes}.",
    )


def test_reservation_pinned_to_a_full_node() -> None:
    sim = simulate(
        [
            make_node("node-1").capacity(cpu="1").obj(),
            make_node("node-2").capacity(cpu="8").obj(),
            reservation("r", "2", "1Gi", node_name="node-1"),
        ]
    )
    st = rsv_status(sim, "r")
    assert st["phase"] == "Pending"
    assert st["conditions"][0]["message"] == (
        "0/2 nodes are available: 1 Insufficient cpu, 1 node(s) didn't match the nodeName specified by reservation."
    )


def test_pinned_reservation_lands_on_its_node() -> None:
    sim = simulate(
        [
            make_node("node-1").obj(),
            make_node("node-2").capacity(cpu="64", memory="256Gi").obj(),
            reservation("r", "1", "1Gi", node_name="node-1"),
        ]
    )
    st = rsv_status(sim, "r")
    assert (st["phase"], st["nodeName"], st["allocatable"]) == (
        "Available",
        "node-1",
        {"cpu": "1", "memory": "1Gi"},
    )
    assert events(sim, "r") == [("Normal", "Scheduled", "Successfully assigned r to node-1")]


def test_default_scheduler_reservation_is_scheduled_too() -> None:
    sim = simulate([make_node("node-1").obj(), reservation("r", "1", "1Gi", scheduler="default-scheduler")])
    assert rsv_status(sim, "r")["nodeName"] == "node-1"


def test_unknown_scheduler_reservation_is_left_alone() -> None:
    sim = simulate([make_node("node-1").obj(), reservation("r", "1", "1Gi", scheduler="other-scheduler")])
    assert rsv_status(sim, "r") == {"phase": "Pending"}


# ----- occupancy -----------------------------------------------------------------------------------------


def test_available_reservation_blocks_other_pods_and_reservations() -> None:
    sim = simulate(
        [make_node("node-1").obj(), reservation("r", "3", "1Gi", node_name="node-1")],
        [
            make_pod("other").scheduler(KOORD).req(cpu="2", memory="1Gi").label(app="b").obj(),
            reservation("r2", "2", "1Gi"),
        ],
    )
    assert placement(sim, "other") == (None, None)
    assert pod_message(sim, "other") == "0/1 nodes are available: 1 Insufficient cpu."
    st = rsv_status(sim, "r2")
    assert (st["phase"], st["conditions"][0]["message"]) == (
        "Pending",
        "0/1 nodes are available: 1 Insufficient cpu.",
    )


def test_reserved_host_port_blocks_other_pods() -> None:
    sim = simulate(
        [make_node("node-1").obj(), reservation("r", "100m", "100Mi", node_name="node-1", ports=[8080])],
        [
            make_pod("other")
            .scheduler(KOORD)
            .req(cpu="100m", memory="100Mi")
            .label(app="b")
            .host_port(8080, protocol="TCP")
            .obj()
        ],
    )
    assert pod_message(sim, "other") == (
        "0/1 nodes are available: 1 node(s) didn't have free ports for the requested pod ports."
    )


def test_reserved_host_port_is_free_for_the_owner() -> None:
    sim = simulate(
        [make_node("node-1").obj(), reservation("r", "100m", "100Mi", node_name="node-1", ports=[8080])],
        [
            make_pod("owner")
            .scheduler(KOORD)
            .req(cpu="100m", memory="100Mi")
            .label(A)
            .host_port(8080, protocol="TCP")
            .obj()
        ],
    )
    assert placement(sim, "owner") == ("node-1", "r")


# ----- fit policies ---------------------------------------------------------------------------------------
# node-1: 4 cpu, 8Gi. r: 2 cpu, 2Gi, allocateOnce false. "filler" (non-owner, 2 cpu) fills the unreserved cpu
# when the case asks for it.

# Koordinator's PostFilter reasons for one owner-matched reservation on a node whose filters said "Insufficient cpu"
BY_NODE_CPU = "1 Reservation(s) for node reason that Insufficient cpu, 1 Reservation(s) matched owner total."
OWNER_TOTAL = "1 Reservation(s) matched owner total."

FIT_CASES: list[tuple[str, str | None, PodBuilder, bool, tuple[str | None, str | None, str | None]]] = [
    ("default-inside", None, make_pod("p").req(cpu="1", memory="1Gi"), False, ("node-1", "r", None)),
    (
        "default-overflow-to-node",
        None,
        make_pod("p").req(cpu="3", memory="1Gi"),
        False,
        ("node-1", "r", None),
    ),
    (
        "default-too-big",
        None,
        make_pod("p").req(cpu="5", memory="1Gi"),
        False,
        (None, None, "0/1 nodes are available: 1 Insufficient cpu. " + BY_NODE_CPU),
    ),
    ("aligned-inside", "Aligned", make_pod("p").req(cpu="2", memory="1Gi"), False, ("node-1", "r", None)),
    (
        "aligned-overflow-to-node",
        "Aligned",
        make_pod("p").req(cpu="3", memory="1Gi"),
        False,
        ("node-1", "r", None),
    ),
    (
        "aligned-node-full",
        "Aligned",
        make_pod("p").req(cpu="3", memory="1Gi"),
        True,
        (None, None, "0/1 nodes are available: 1 Insufficient cpu. " + BY_NODE_CPU),
    ),
    (
        "aligned-node-full-affinity",
        "Aligned",
        make_pod("p").req(cpu="3", memory="1Gi").reservation_affinity({"reservationSelector": {"pool": "x"}}),
        True,
        (None, None, "0/1 nodes are available: 1 Insufficient cpu. " + BY_NODE_CPU),
    ),
    (
        "restricted-inside",
        "Restricted",
        make_pod("p").req(cpu="2", memory="2Gi"),
        False,
        ("node-1", "r", None),
    ),
    (
        "restricted-cpu-affinity",
        "Restricted",
        make_pod("p").req(cpu="3", memory="1Gi").reservation_affinity({"reservationSelector": {"pool": "x"}}),
        False,
        (None, None, "0/1 nodes are available: 1 Reservation(s) Insufficient cpu. " + OWNER_TOTAL),
    ),
    (
        "restricted-memory-affinity",
        "Restricted",
        make_pod("p").req(cpu="1", memory="3Gi").reservation_affinity({"reservationSelector": {"pool": "x"}}),
        False,
        (None, None, "0/1 nodes are available: 1 Reservation(s) Insufficient memory. " + OWNER_TOTAL),
    ),
    (
        "restricted-cpu-affinity-by-name",
        "Restricted",
        make_pod("p").req(cpu="3", memory="1Gi").reservation_affinity({"name": "r"}),
        False,
        (
            None,
            None,
            "0/1 nodes are available: 1 Reservation(s) Insufficient cpu, requested: 3000, used: 0, capacity: 2000. "
            "1 Reservation(s) exactly matches the requested reservation name, 1 Reservation(s) matched owner total.",
        ),
    ),
    (
        "restricted-node-and-reservation-affinity",
        "Restricted",
        make_pod("p").req(cpu="3", memory="1Gi").reservation_affinity({"reservationSelector": {"pool": "x"}}),
        True,
        (None, None, "0/1 nodes are available: 1 Insufficient cpu. " + BY_NODE_CPU),
    ),
    # without affinity the pod may use the unreserved 2 cpu only, never the reserved part
    (
        "restricted-no-affinity-unreserved",
        "Restricted",
        make_pod("p").req(cpu="2", memory="3Gi"),
        False,
        ("node-1", None, None),
    ),
    (
        "restricted-no-affinity-too-big",
        "Restricted",
        make_pod("p").req(cpu="3", memory="1Gi"),
        False,
        (None, None, "0/1 nodes are available: 1 Insufficient cpu. " + BY_NODE_CPU),
    ),
]


@pytest.mark.parametrize(
    ("policy", "pod", "filler", "expected"), [c[1:] for c in FIT_CASES], ids=[c[0] for c in FIT_CASES]
)
def test_fit_policy(
    policy: str | None,
    pod: PodBuilder,
    filler: bool,
    expected: tuple[str | None, str | None, str | None],
) -> None:
    r = reservation(
        "r", "2", "2Gi", node_name="node-1", allocate_once=False, policy=policy, labels={"pool": "x"}
    )
    first = (
        [make_pod("filler").scheduler(KOORD).req(cpu="2", memory="1Gi").label(app="b").obj()]
        if filler
        else []
    )
    sim = simulate([make_node("node-1").obj(), r], first, [pod.scheduler(KOORD).label(A).obj()])
    if filler:
        assert placement(sim, "filler") == ("node-1", None)
    assert (*placement(sim, "p"), pod_message(sim, "p")) == expected


def test_restricted_options_limit_the_restricted_resources() -> None:
    """Only cpu is restricted: 3Gi memory may come from the node while cpu stays inside the reservation."""
    r = reservation(
        "r",
        "2",
        "2Gi",
        node_name="node-1",
        policy="Restricted",
        annotations={RESTRICTED_OPTIONS: json.dumps({"resources": ["cpu"]})},
    )
    sim = simulate(
        [make_node("node-1").obj(), r],
        [
            make_pod("p")
            .scheduler(KOORD)
            .req(cpu="2", memory="3Gi")
            .label(A)
            .reservation_affinity({"name": "r"})
            .obj()
        ],
    )
    assert placement(sim, "p") == ("node-1", "r")


def test_aligned_never_takes_from_two_reservations() -> None:
    """Two 2-cpu reservations fill node-1; a 3-cpu owner would need both."""
    rs = [
        reservation(n, "2", "2Gi", node_name="node-1", policy="Aligned", allocate_once=False)
        for n in ("r1", "r2")
    ]
    sim = simulate(
        [make_node("node-1").obj(), *rs],
        [make_pod("p").scheduler(KOORD).req(cpu="3", memory="1Gi").label(A).obj()],
    )
    assert (*placement(sim, "p"), pod_message(sim, "p")) == (
        None,
        None,
        "0/1 nodes are available: 1 Insufficient cpu. "
        "2 Reservation(s) for node reason that Insufficient cpu, 2 Reservation(s) matched owner total.",
    )


# ----- allocate-policy conflicts ---------------------------------------------------------------------------

CONFLICTS = [
    ("default-then-aligned", None, "Aligned", True),
    ("default-then-restricted", None, "Restricted", True),
    ("aligned-then-default", "Aligned", None, True),
    ("restricted-then-default", "Restricted", None, True),
    ("aligned-then-restricted", "Aligned", "Restricted", False),
    ("default-then-default", None, None, False),
    ("aligned-then-aligned", "Aligned", "Aligned", False),
]


@pytest.mark.parametrize(
    ("first", "second", "conflict"), [c[1:] for c in CONFLICTS], ids=[c[0] for c in CONFLICTS]
)
def test_policy_conflict(first: str | None, second: str | None, conflict: bool) -> None:
    sim = simulate(
        [make_node("node-1").obj(), reservation("r1", "1", "1Gi", node_name="node-1", policy=first)],
        [reservation("r2", "1", "1Gi", node_name="node-1", policy=second)],
    )
    st = rsv_status(sim, "r2")
    if conflict:
        assert (st["phase"], st["conditions"][0]["message"]) == (
            "Pending",
            "0/1 nodes are available: 1 node(s) reservation allocate policy conflict.",
        )
    else:
        assert (st["phase"], st["nodeName"]) == ("Available", "node-1")


def test_policy_conflict_moves_the_reservation_to_another_node() -> None:
    sim = simulate(
        [
            make_node("node-1").capacity(cpu="16", memory="64Gi").obj(),
            make_node("node-2").obj(),
            reservation("r1", "1", "1Gi", node_name="node-1"),
        ],
        [reservation("r2", "1", "1Gi", policy="Aligned")],
    )
    assert rsv_status(sim, "r2")["nodeName"] == "node-2"


# ----- nomination -----------------------------------------------------------------------------------------

NOMINATION = [
    # (id, [(name, cpu, memory, labels)], pod cpu, expected reservation)
    ("most-allocated-wins", [("r-a", "4", "4Gi", {}), ("r-b", "2", "4Gi", {})], "2", "r-b"),
    ("most-allocated-wins-reversed-names", [("r-b", "4", "4Gi", {}), ("r-a", "2", "4Gi", {})], "2", "r-a"),
    ("tie-smaller-name", [("r-y", "2", "2Gi", {}), ("r-x", "2", "2Gi", {})], "1", "r-x"),
    ("order-label-first", [("r-a", "4", "4Gi", {ORDER: "1"}), ("r-b", "2", "4Gi", {})], "2", "r-a"),
    ("lower-order-first", [("r-a", "2", "4Gi", {ORDER: "2"}), ("r-b", "2", "4Gi", {ORDER: "1"})], "1", "r-b"),
    ("order-zero-ignored", [("r-a", "4", "4Gi", {ORDER: "0"}), ("r-b", "2", "4Gi", {})], "2", "r-b"),
    ("order-invalid-ignored", [("r-a", "4", "4Gi", {ORDER: "x"}), ("r-b", "2", "4Gi", {})], "2", "r-b"),
    ("only-fitting-one", [("r-a", "1", "1Gi", {}), ("r-b", "3", "8Gi", {})], "3", "r-b"),
]


@pytest.mark.parametrize(
    ("rs", "cpu", "expected"), [c[1:] for c in NOMINATION], ids=[c[0] for c in NOMINATION]
)
def test_nomination(rs: list[tuple[str, str, str, dict[str, str]]], cpu: str, expected: str) -> None:
    objs = [
        reservation(n, c, m, node_name="node-1", allocate_once=False, labels=lab or None, policy="Aligned")
        for n, c, m, lab in rs
    ]
    sim = simulate(
        [make_node("node-1").capacity(cpu="8", memory="16Gi").obj(), *objs],
        [make_pod("p").scheduler(KOORD).req(cpu=cpu, memory="1Gi").label(A).obj()],
    )
    assert placement(sim, "p") == ("node-1", expected)


def test_order_label_picks_the_node() -> None:
    rs = [
        reservation("r-1", "1", "1Gi", node_name="node-1", labels={ORDER: "2"}),
        reservation("r-2", "1", "1Gi", node_name="node-2", labels={ORDER: "1"}),
    ]
    for seed in range(3):
        sim = simulate(
            [make_node("node-1").obj(), make_node("node-2").obj(), *rs],
            [make_pod("p").scheduler(KOORD).req(cpu="1", memory="1Gi").label(A).obj()],
            seed=seed,
        )
        assert placement(sim, "p") == ("node-2", "r-2")


# ----- scoring --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_node_with_usable_reservation_beats_an_emptier_node(seed: int) -> None:
    cluster = [
        make_node("node-1").obj(),
        make_node("node-2").capacity(cpu="32", memory="128Gi").obj(),
        make_pod("busy").scheduler(KOORD).req(cpu="1", memory="4Gi").label(app="b").node("node-1").obj(),
        reservation("r", "1", "1Gi", node_name="node-1"),
    ]
    sim = simulate(
        cluster,
        [
            make_pod("owner").scheduler(KOORD).req(cpu="500m", memory="512Mi").label(A).obj(),
            make_pod("stranger").scheduler(KOORD).req(cpu="500m", memory="512Mi").obj(),
        ],
        seed=seed,
    )
    assert placement(sim, "owner") == ("node-1", "r")
    assert placement(sim, "stranger") == ("node-2", None)


def test_fuller_reservation_node_scores_higher() -> None:
    """The pod would fill r-small completely (score 100) but r-big only by a quarter."""
    cluster = [
        make_node("node-1").obj(),
        make_node("node-2").obj(),
        reservation("r-big", "2", "2Gi", node_name="node-1"),
        reservation("r-small", "500m", "512Mi", node_name="node-2"),
    ]
    for seed in range(3):
        sim = simulate(
            cluster,
            [make_pod("p").scheduler(KOORD).req(cpu="500m", memory="512Mi").label(A).obj()],
            seed=seed,
        )
        assert placement(sim, "p") == ("node-2", "r-small")


# ----- allocateOnce and owner deletion ----------------------------------------------------------------------


def test_allocate_once_returns_the_rest_to_the_node() -> None:
    sim = simulate(
        [make_node("node-1").obj(), reservation("r", "3", "2Gi", node_name="node-1")],
        [make_pod("first").scheduler(KOORD).req(cpu="1", memory="1Gi").label(A).obj()],
        [
            make_pod("second").scheduler(KOORD).req(cpu="1", memory="1Gi").label(A).obj(),
            make_pod("stranger").scheduler(KOORD).req(cpu="2", memory="1Gi").label(app="b").obj(),
        ],
    )
    st = rsv_status(sim, "r")
    assert (st["phase"], st["allocated"]) == ("Succeeded", {"cpu": "1", "memory": "1Gi"})
    assert placement(sim, "first") == ("node-1", "r")
    assert placement(sim, "second") == ("node-1", None)
    assert placement(sim, "stranger") == ("node-1", None)


def test_allocate_once_false_serves_many_owners() -> None:
    sim = simulate(
        [make_node("node-1").obj(), reservation("r", "3", "3Gi", node_name="node-1", allocate_once=False)],
        [make_pod("o1").scheduler(KOORD).req(cpu="1", memory="1Gi").label(A).obj()],
        [make_pod("o2").scheduler(KOORD).req(cpu="1", memory="1Gi").label(A).obj()],
        [make_pod("o3").scheduler(KOORD).req(cpu="1", memory="1Gi").label(A).obj()],
        [make_pod("o4").scheduler(KOORD).req(cpu="2", memory="1Gi").label(A).obj()],
    )
    for n in ("o1", "o2", "o3"):
        assert placement(sim, n) == ("node-1", "r")
    assert placement(sim, "o4") == (None, None)
    assert pod_message(sim, "o4") == "0/1 nodes are available: 1 Insufficient cpu. " + BY_NODE_CPU
    st = rsv_status(sim, "r")
    assert (st["phase"], st["allocated"], len(st["currentOwners"])) == (
        "Available",
        {"cpu": "3", "memory": "3Gi"},
        3,
    )


def test_deleting_an_owner_gives_its_resources_back() -> None:
    sim = simulate(
        [make_node("node-1").obj(), reservation("r", "3", "2Gi", node_name="node-1", allocate_once=False)],
        [make_pod("a").scheduler(KOORD).req(cpu="3", memory="1Gi").label(A).obj()],
        [
            make_pod("b").scheduler(KOORD).req(cpu="2", memory="1Gi").label(A).obj(),
            make_pod("stranger").scheduler(KOORD).req(cpu="2", memory="1Gi").label(app="b").obj(),
        ],
        steps=[{"at": "5s", "delete": [ref("Pod", "a", "default")]}],
    )
    assert placement(sim, "b") == ("node-1", "r")
    assert placement(sim, "stranger") == (None, None)
    st = rsv_status(sim, "r")
    assert (st["phase"], st["allocated"], [o["name"] for o in st["currentOwners"]]) == (
        "Available",
        {"cpu": "2", "memory": "1Gi"},
        ["b"],
    )
