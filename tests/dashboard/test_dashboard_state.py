"""`DashboardState` over a MemoryStore: the node figures as pods, reservations and nodes come and go, and the
deltas the event streams send."""

from __future__ import annotations

from typing import Any

from dashboard_helpers import reservation

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
