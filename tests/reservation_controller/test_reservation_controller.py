"""The Reservation controller through a Simulation: owners, allocateOnce, expiry, node loss, GC."""

from __future__ import annotations

from typing import Any

import pytest

from berth.api.errors import NotFound
from berth.api.reservation import (
    RESERVATION_API_VERSION,
    RESERVATION_KEY,
)
from berth.api.watch import WatchEvent
from berth.clock import SimClock
from berth.controllers.reservation import ReservationController
from berth.sim.engine import Simulation
from berth.store import MemoryStore
from builders import make_node, make_pod

POD = ("", "Pod")
NODE = ("", "Node")
DAY = 86400.0
T0 = "2024-01-01T00:00:00Z"


def reservation(name: str = "r1", **spec: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        # a scheduler name no profile serves: the test plays the scheduler
        "template": {
            "spec": {
                "schedulerName": "manual",
                "containers": [{"name": "c", "resources": {"requests": {"cpu": "2", "memory": "2Gi"}}}],
            }
        },
        "owners": [{"labelSelector": {"matchLabels": {"app": "web"}}}],
    }
    body.update(spec)
    return {
        "apiVersion": RESERVATION_API_VERSION,
        "kind": "Reservation",
        "metadata": {"name": name},
        "spec": body,
    }


def make_available(sim: Simulation, name: str = "r1", node_name: str = "n1") -> dict[str, Any]:
    """Play the scheduler: bind the reservation to a node."""
    stamp = sim.store.timestamp()
    cond = {"lastProbeTime": stamp, "lastTransitionTime": stamp, "status": "True"}
    sim.store.patch(
        RESERVATION_KEY,
        "",
        name,
        {
            "status": {
                "phase": "Available",
                "nodeName": node_name,
                "allocatable": {"cpu": "2", "memory": "2Gi"},
                "conditions": [
                    {"type": "Scheduled", "reason": "Scheduled", **cond},
                    {"type": "Ready", "reason": "Available", **cond},
                ],
            }
        },
        subresource="status",
    )
    sim.run_until_idle()
    return sim.store.get(RESERVATION_KEY, "", name)


def status(sim: Simulation, name: str = "r1") -> dict[str, Any]:
    return dict(sim.store.get(RESERVATION_KEY, "", name).get("status") or {})


def exists(sim: Simulation, name: str = "r1") -> bool:
    try:
        sim.store.get(RESERVATION_KEY, "", name)
    except NotFound:
        return False
    return True


def refs(sim: Simulation, *names: str) -> list[dict[str, str]]:
    pods = [sim.store.get(POD, "default", n) for n in names]
    out = [{"namespace": "default", "name": p["metadata"]["name"], "uid": p["metadata"]["uid"]} for p in pods]
    return sorted(out, key=lambda ref: ref["uid"])


@pytest.fixture
def sim() -> Simulation:
    s = Simulation()
    s.store.create(make_node("n1").capacity(cpu="8", memory="16Gi").obj())
    s.store.create(make_node("n2").capacity(cpu="8", memory="16Gi").obj())
    s.run_until_idle()
    return s


def test_allocated_and_current_owners(sim: Simulation) -> None:
    sim.store.create(reservation(allocateOnce=False))
    r = make_available(sim)
    other = sim.store.create(reservation("r2", allocateOnce=False))
    sim.store.create(
        make_pod("a").label(app="web").allocated_to(r).node("n1").req(cpu="500m", memory="512Mi").obj()
    )
    sim.store.create(
        make_pod("b")
        .label(app="web")
        .allocated_to(r)
        .node("n1")
        .req({"nvidia.com/gpu": "1"}, cpu="1", memory="1Gi")
        .obj()
    )
    sim.store.create(
        make_pod("c").label(app="web").allocated_to(other).node("n1").req(cpu="500m", memory="512Mi").obj()
    )  # another reservation's owner
    sim.store.create(
        make_pod("d").label(app="web").allocated_to(r).node("n2").req(cpu="500m", memory="512Mi").obj()
    )  # not on the reservation's node
    sim.store.create(
        make_pod("e").label(app="web").node("n1").req(cpu="500m", memory="512Mi").obj()
    )  # no annotation
    sim.run_until_idle()
    st = status(sim)
    assert st["phase"] == "Available"
    assert st["allocated"] == {"cpu": "1500m", "memory": "1536Mi"}  # gpu masked: not in allocatable
    assert st["currentOwners"] == refs(sim, "a", "b")


def _two_owners(sim: Simulation) -> None:
    """A reusable reservation on n1 with owners a (500m, 512Mi) and b (1, 1Gi) running on it."""
    sim.store.create(reservation(allocateOnce=False))
    r = make_available(sim)
    sim.store.create(
        make_pod("a").label(app="web").allocated_to(r).node("n1").req(cpu="500m", memory="512Mi").obj()
    )
    sim.store.create(
        make_pod("b").label(app="web").allocated_to(r).node("n1").req(cpu="1", memory="1Gi").obj()
    )
    sim.run_until_idle()
    assert status(sim)["allocated"] == {"cpu": "1500m", "memory": "1536Mi"}


def test_owner_deletion_and_completion_give_resources_back(sim: Simulation) -> None:
    _two_owners(sim)

    sim.store.delete(POD, "default", "a")  # graceful: deletionTimestamp set, still there
    sim.run_until_idle()
    assert sim.store.get(POD, "default", "a")["metadata"]["deletionTimestamp"] == T0.replace(
        "00:00Z", "00:30Z"
    )
    st = status(sim)
    assert st["allocated"] == {"cpu": "1", "memory": "1Gi"}
    assert st["currentOwners"] == refs(sim, "b")

    b = sim.store.get(POD, "default", "b")
    sim.store.update_status({**b, "status": {**b["status"], "phase": "Succeeded"}})
    sim.run_until_idle()
    st = status(sim)
    assert "allocated" not in st
    assert "currentOwners" not in st
    assert st["phase"] == "Available"


def test_owner_losing_its_allocation_gives_resources_back(sim: Simulation) -> None:
    _two_owners(sim)

    a = sim.store.get(POD, "default", "a")
    sim.store.update({**a, "metadata": {**a["metadata"], "annotations": {}}})  # no allocation any more
    sim.run_until_idle()
    st = status(sim)
    assert st["allocated"] == {"cpu": "1", "memory": "1Gi"}
    assert st["currentOwners"] == refs(sim, "b")


def test_allocate_once_succeeds_on_first_owner(sim: Simulation) -> None:
    sim.store.create(reservation())
    r = make_available(sim)
    sim.advance(100.0)
    sim.store.create(
        make_pod("a").label(app="web").allocated_to(r).node("n1").req(cpu="1", memory="1Gi").obj()
    )
    sim.run_until_idle()
    st = status(sim)
    assert st["phase"] == "Succeeded"
    assert st["allocated"] == {"cpu": "1", "memory": "1Gi"}
    assert st["currentOwners"] == refs(sim, "a")
    assert st["conditions"] == [
        {
            "type": "Scheduled",
            "status": "True",
            "reason": "Scheduled",
            "lastProbeTime": T0,
            "lastTransitionTime": T0,
        },
        {
            "type": "Ready",
            "status": "False",
            "reason": "Succeeded",
            "lastProbeTime": "2024-01-01T00:01:40Z",
            "lastTransitionTime": T0,
        },
    ]
    # a Succeeded reservation is no longer synced: deleting its owner changes nothing
    sim.store.delete(POD, "default", "a", grace_period_seconds=0)
    sim.run_until_idle()
    assert status(sim)["allocated"] == {"cpu": "1", "memory": "1Gi"}


def test_succeeded_reservation_is_collected_after_a_day(sim: Simulation) -> None:
    sim.store.create(reservation())
    r = make_available(sim)
    sim.advance(100.0)
    sim.store.create(
        make_pod("a").label(app="web").allocated_to(r).node("n1").req(cpu="500m", memory="512Mi").obj()
    )
    sim.advance(100.0 + DAY - 1)
    assert exists(sim)
    sim.advance(100.0 + DAY)
    assert not exists(sim)
    # the owner keeps running as an ordinary pod
    assert sim.store.get(POD, "default", "a")["status"]["phase"] == "Running"


@pytest.mark.parametrize(
    ("spec", "expires_at"),
    [
        ({"ttl": "1h"}, 3600.0),
        ({"ttl": "90s"}, 90.0),
        ({"expires": "2024-01-01T00:10:00Z"}, 600.0),
        ({"ttl": "1h", "expires": "2024-01-01T00:10:00Z"}, 600.0),
        ({}, DAY),
    ],
)
def test_pending_reservation_expires(sim: Simulation, spec: dict[str, Any], expires_at: float) -> None:
    sim.store.create(reservation(**spec))
    sim.advance(expires_at - 1)
    assert status(sim) == {"phase": "Pending"}
    sim.advance(expires_at)
    stamp = sim.store.timestamp(expires_at)
    assert status(sim) == {
        "phase": "Failed",
        "conditions": [
            {
                "type": "Ready",
                "status": "False",
                "reason": "Expired",
                "lastProbeTime": stamp,
                "lastTransitionTime": stamp,
            }
        ],
    }
    sim.advance(expires_at + DAY - 1)
    assert exists(sim)
    sim.advance(expires_at + DAY)
    assert not exists(sim)


def test_ttl_zero_never_expires(sim: Simulation) -> None:
    sim.store.create(reservation(ttl="0", expires="2024-01-01T00:10:00Z"))
    sim.advance(10 * DAY)
    assert status(sim) == {"phase": "Pending"}


def test_available_reservation_expires_and_owners_keep_running(sim: Simulation) -> None:
    sim.store.create(reservation(ttl="1h", allocateOnce=False))
    r = make_available(sim)
    sim.store.create(
        make_pod("a").label(app="web").allocated_to(r).node("n1").req(cpu="500m", memory="512Mi").obj()
    )
    sim.advance(3600.0)
    st = status(sim)
    assert st["phase"] == "Failed"
    assert st["conditions"][1] == {
        "type": "Ready",
        "status": "False",
        "reason": "Expired",
        "lastProbeTime": "2024-01-01T01:00:00Z",
        "lastTransitionTime": "2024-01-01T01:00:00Z",
    }
    assert st["currentOwners"] == refs(sim, "a")
    sim.advance(3600.0 + DAY)
    assert not exists(sim)
    assert sim.store.get(POD, "default", "a")["status"]["phase"] == "Running"


def test_changing_ttl_moves_the_expiry(sim: Simulation) -> None:
    sim.store.create(reservation(ttl="1h"))
    sim.advance(60.0)
    sim.store.patch(RESERVATION_KEY, "", "r1", {"spec": {"ttl": "2h"}})
    sim.advance(7199.0)
    assert status(sim)["phase"] == "Pending"
    sim.advance(7200.0)
    assert status(sim)["phase"] == "Failed"


def test_node_deletion_fails_and_collects_at_once(sim: Simulation) -> None:
    sim.store.create(reservation(allocateOnce=False))
    make_available(sim)
    sim.store.create(reservation("r2"))
    r2 = make_available(sim, "r2", "n1")
    sim.store.create(
        make_pod("a").label(app="web").allocated_to(r2).node("n1").req(cpu="500m", memory="512Mi").obj()
    )  # r2 becomes Succeeded
    sim.store.create(reservation("r3"))
    make_available(sim, "r3", "n2")
    sim.run_until_idle()
    assert status(sim, "r2")["phase"] == "Succeeded"
    seen: list[tuple[str, str | None]] = []

    def record(ev: WatchEvent) -> None:
        if ev.object.get("kind") == "Reservation":
            seen.append((ev.type, (ev.object.get("status") or {}).get("phase")))

    sim.store.subscribe(record)
    sim.store.delete(NODE, "", "n1")
    sim.run_until_idle()
    assert seen == [("MODIFIED", "Failed"), ("DELETED", "Failed"), ("DELETED", "Succeeded")]
    assert not exists(sim, "r1")
    assert not exists(sim, "r2")
    assert status(sim, "r3")["phase"] == "Available"


def test_reservation_bound_to_a_missing_node_fails(sim: Simulation) -> None:
    sim.store.create(reservation())
    sim.run_until_idle()
    phases: list[tuple[str, str | None]] = []
    sim.store.subscribe(lambda ev: phases.append((ev.type, (ev.object.get("status") or {}).get("phase"))))
    sim.store.patch(
        RESERVATION_KEY,
        "",
        "r1",
        {"status": {"phase": "Available", "nodeName": "ghost"}},
        subresource="status",
    )
    sim.run_until_idle()
    assert phases == [("MODIFIED", "Available"), ("MODIFIED", "Failed"), ("DELETED", "Failed")]
    assert not exists(sim)


def test_deleting_a_reservation_cancels_its_timers(sim: Simulation) -> None:
    sim.store.create(reservation(ttl="1h"))
    sim.run_until_idle()
    sim.store.delete(RESERVATION_KEY, "", "r1")
    sim.store.create(reservation(ttl="3h"))
    sim.advance(3600.0)
    assert status(sim)["phase"] == "Pending"


def test_gc_seconds_is_configurable() -> None:
    clock = SimClock()
    store = MemoryStore(clock=clock)
    controller = ReservationController(store, clock, gc_seconds=60.0)
    store.subscribe(lambda ev: controller.handle_event(ev.type, ev.object))
    store.create(reservation(ttl="10s"))
    clock.run(until=10.0)
    assert store.get(RESERVATION_KEY, "", "r1")["status"]["phase"] == "Failed"
    clock.run(until=69.0)
    assert store.get(RESERVATION_KEY, "", "r1")["status"]["phase"] == "Failed"
    clock.run(until=70.0)
    with pytest.raises(NotFound):
        store.get(RESERVATION_KEY, "", "r1")
