"""`DashboardState` over a MemoryStore: the node figures as pods, reservations and nodes come and go, and the
deltas the event streams send."""

from __future__ import annotations

from typing import Any

from dashboard_helpers import PODGROUP, QUOTA, reservation

from berth.clock import SimClock
from berth.server.dashboard_state import DashboardState, natural_key
from berth.store import MemoryStore
from builders import make_node, make_pod

POD = ("", "Pod")


def node_row(state: DashboardState, name: str) -> dict[str, Any]:
    state.refresh()
    return state.nodes[name]


def test_requested_and_reserved_follow_the_store() -> None:
    store = MemoryStore()
    store.create(make_node("n1").capacity(cpu="4", memory="8Gi", pods="110").obj())
    state = DashboardState(store)
    state.start()
    assert node_row(state, "n1")["allocatable"] == [4000, 8 * 1024**3, 110]
    store.create(make_pod("a").req(cpu="1", memory="1Gi").node("n1").obj())
    store.create(make_pod("b").req(cpu="500m").obj())  # pending
    row = node_row(state, "n1")
    assert row["requested"] == [1000, 1024**3, 1] and row["pods"] == 1
    assert list(state.pending) == ["default/b"] and state.bound == 1
    # a reservation counts as reserved once Available on a node, less what it allocated
    r = store.create(reservation("r1", "700m", "n1"))
    assert node_row(state, "n1")["reserved"] == [0, 0, 0]
    r = store.update_status(
        {**r, "status": {"phase": "Available", "nodeName": "n1", "allocatable": {"cpu": "700m"}}}
    )
    assert node_row(state, "n1")["reserved"] == [700, 0, 0]
    r = store.update_status({**r, "status": {**r["status"], "allocated": {"cpu": "200m"}}})
    assert node_row(state, "n1")["reserved"] == [500, 0, 0]
    assert state.reservations["r1"]["allocated"] == [200, 0]
    store.update_status({**r, "status": {**r["status"], "phase": "Succeeded"}})
    assert node_row(state, "n1")["reserved"] == [0, 0, 0]
    # a finished pod no longer counts; a deleted one neither
    a = store.get(POD, "default", "a")
    store.update_status({**a, "status": {"phase": "Succeeded"}})
    assert node_row(state, "n1")["requested"] == [0, 0, 0] and state.bound == 0
    store.delete(POD, "default", "b", grace_period_seconds=0)
    state.refresh()
    assert state.pending == {}
    assert state.totals()["pending"] == 0


def test_deltas_and_reset() -> None:
    store = MemoryStore()
    state = DashboardState(store)
    state.start()
    assert state.delta(state.seq) is None
    seq = state.seq
    store.create(make_node("n1").capacity(cpu="2").obj())
    store.create(make_node("n2").capacity(cpu="2").obj())
    state.refresh()
    delta = state.delta(seq)
    assert delta is not None and delta["seq"] == state.seq
    assert sorted(n["name"] for n in delta["nodes"]["set"]) == ["n1", "n2"]
    assert delta["totals"]["allocatable"][0] == 4000
    seq = state.seq
    store.delete(("", "Node"), "", "n2")
    state.refresh()
    delta = state.delta(seq)
    assert delta is not None and delta["nodes"] == {"set": [], "del": ["n2"]}
    assert state.delta(state.seq + 5) == {"seq": state.seq, "reset": True}  # a stream of a former state


def test_paging_in_natural_order() -> None:
    store = MemoryStore()
    for i in (10, 2, 1):
        store.create(make_node(f"n{i}").capacity(cpu="1").obj())
    state = DashboardState(store)
    state.start()
    snap = state.snapshot(1, 1)
    assert snap["nodes"]["total"] == 3 and [n["name"] for n in snap["nodes"]["items"]] == ["n2"]
    assert sorted(["n10", "n2", "n1"], key=natural_key) == ["n1", "n2", "n10"]


def test_sample_has_the_report_series() -> None:
    """A sample point's figures: cluster and per-instance-type utilisation, pending wait, creation-to-binding
    latency, scheduled pods, preemption victims and evictions, reservation occupancy and quota use."""
    clock = SimClock()
    store = MemoryStore(clock=clock)
    typ = "node.kubernetes.io/instance-type"
    store.create(make_node("n1").capacity(cpu="4", memory="8Gi", pods="110").label({typ: "small"}).obj())
    store.create(make_node("n2").capacity(cpu="8", memory="16Gi", pods="110").label({typ: "large"}).obj())
    store.create(make_node("n3").capacity(cpu="8", memory="16Gi", pods="110").label({typ: "large"}).obj())
    store.create(make_pod("a").req(cpu="1", memory="1Gi").node("n1").obj())
    store.create(make_pod("b").req(cpu="2", memory="2Gi").node("n2").obj())
    store.create(make_pod("d").req(cpu="1").node("n3").obj())
    store.create(make_pod("e").req(cpu="1").node("n3").obj())
    store.create(make_pod("c").req(cpu="500m").obj())  # pending, created at t = 0
    r = store.create(reservation("r1", "700m", "n1"))
    store.update_status(
        {
            **r,
            "status": {
                "phase": "Available",
                "nodeName": "n1",
                "allocatable": {"cpu": "700m", "memory": "1Gi"},
                "allocated": {"cpu": "200m"},
            },
        }
    )
    q = store.create(dict(QUOTA))
    store.update_status({**q, "status": {"used": {"cpu": "1500m", "memory": "2Gi"}}})
    state = DashboardState(store)
    state.start()
    epoch = store.unix_time()
    p = state.sample(epoch + 10)
    gi = 1024**3
    assert p["requested"] == [5000, 3 * gi, 4] and p["allocatable"] == [20000, 40 * gi, 330]
    assert p["cpuRequested"] == 5000 and p["pending"] == 1 and p["bound"] == 4  # the former fields
    assert p["groupLabel"] == typ
    assert p["groups"] == {
        "large": {"requested": [4000, 2 * gi, 3], "allocatable": [16000, 32 * gi, 220]},
        "small": {"requested": [1000, gi, 1], "allocatable": [4000, 8 * gi, 110]},
    }
    assert p["pendingWaitMean"] == 10.0 and p["pendingWaitMax"] == 10.0
    assert p["latencyMean"] is None and p["boundSince"] == 0 and p["scheduled"] == 0
    assert p["reserved"] == [700, gi] and p["reservationAllocated"] == [200, 0]
    assert p["quotas"] == {
        "default/team-a": {"used": [1500, 2 * gi], "min": [2000, 4 * gi], "max": [6000, 12 * gi]}
    }
    # c is bound 3 s after its creation; d is preempted, e evicted
    clock.run(3.0)
    store.bind("default", "c", "n1")
    for name, reason in (("d", "PreemptionByScheduler"), ("e", "EvictionByEvictionAPI")):
        pod = store.get(POD, "default", name)
        cond = {"type": "DisruptionTarget", "status": "True", "reason": reason}
        store.update_status({**pod, "status": {**(pod.get("status") or {}), "conditions": [cond]}})
        store.delete(POD, "default", name, grace_period_seconds=0)
    state.refresh()
    p = state.sample(epoch + 12)
    assert p["pending"] == 0 and p["pendingWaitMean"] == 0.0
    assert p["boundSince"] == 1 and p["latencyMean"] == 3.0 and p["latencyMax"] == 3.0
    assert p["scheduled"] == 1 and p["preemptionVictims"] == 1 and p["evictions"] == 1
    assert p["groups"]["small"]["requested"] == [1500, gi, 2]
    assert p["groups"]["large"]["requested"] == [2000, 2 * gi, 1]
    assert state.sample(epoch + 14)["latencyMean"] is None  # only the pods bound since the last point
    assert len(state.samples) == 3


def test_groups_by_shape_without_instance_types() -> None:
    store = MemoryStore()
    store.create(make_node("n1").capacity(cpu="4", memory="8Gi", pods="110").obj())
    store.create(make_node("n2").capacity(cpu="4", memory="8Gi", pods="110").obj())
    store.create(make_node("n3").capacity(cpu="2", memory="4Gi", pods="110").obj())
    store.create(make_pod("a").req(cpu="1", memory="1Gi").node("n3").obj())
    state = DashboardState(store)
    state.start()
    p = state.sample(0.0)
    gi = 1024**3
    assert p["groupLabel"] == "shape"
    assert p["groups"] == {
        "2 cpu / 4 GiB": {"requested": [1000, gi, 1], "allocatable": [2000, 4 * gi, 110]},
        "4 cpu / 8 GiB": {"requested": [0, 0, 0], "allocatable": [8000, 16 * gi, 220]},
    }
    # the sums follow nodes leaving and a label arriving (kept as rows change, not recounted per sample)
    store.delete(("", "Node"), "", "n3")
    state.refresh()
    assert state.sample(2.0)["groups"] == {
        "4 cpu / 8 GiB": {"requested": [0, 0, 0], "allocatable": [8000, 16 * gi, 220]}
    }
    n1 = store.get(("", "Node"), "", "n1")
    labels = {**n1["metadata"].get("labels", {}), "node.kubernetes.io/instance-type": "m"}
    store.update({**n1, "metadata": {**n1["metadata"], "labels": labels}})
    store.create(make_pod("b").req(cpu="2").node("n2").obj())
    state.refresh()
    p = state.sample(4.0)
    assert p["groupLabel"] == "node.kubernetes.io/instance-type"
    assert p["groups"] == {
        "(none)": {"requested": [2000, 0, 1], "allocatable": [4000, 8 * gi, 110]},
        "m": {"requested": [0, 0, 0], "allocatable": [4000, 8 * gi, 110]},
    }


def test_gangs_short_of_min_member() -> None:
    """The live "PodGroups short of minMember" figure follows the PodGroup's status, with the report's rule."""
    store = MemoryStore(clock=SimClock())
    group = store.create(dict(PODGROUP))
    state = DashboardState(store)
    state.start()
    need = int(group["spec"]["minMember"])
    assert state.sample(0.0)["gangsWaiting"] == 1
    store.update_status({**group, "status": {"phase": "Scheduling", "scheduled": need - 1}})
    state.refresh()
    assert state.sample(2.0)["gangsWaiting"] == 1
    group = store.get(
        ("scheduling.x-k8s.io", "PodGroup"), group["metadata"]["namespace"], group["metadata"]["name"]
    )
    store.update_status({**group, "status": {"phase": "Scheduling", "scheduled": need}})
    state.refresh()
    assert state.sample(4.0)["gangsWaiting"] == 0
