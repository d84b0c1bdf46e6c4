"""The PodGroup controller's 48-hour check (scheduler-plugins' PodGroupReconciler): a group whose
scheduling started more than 48 h after its creation and that has no running member is left alone,
with a Warning ``Timeout`` Event at each reconcile."""

from __future__ import annotations

from typing import Any

import pytest
from gang_helpers import bound, pg_obj, pod_group, simulate

from berth.clock import SimClock
from berth.controllers.podgroup import PodGroupController, schedule_timed_out
from berth.store import MemoryStore
from builders import make_node, make_pod

HOURS = 3600.0
PG_KEY = ("scheduling.x-k8s.io", "PodGroup")
POD_KEY = ("", "Pod")


def _pg(phase: str, start: str | None, running: int = 0) -> dict[str, Any]:
    obj = pod_group("pg", 2)
    obj["metadata"]["creationTimestamp"] = "2024-01-01T00:00:00Z"
    status: dict[str, Any] = {"phase": phase}
    if start is not None:
        status["scheduleStartTime"] = start
    if running:
        status["running"] = running
    obj["status"] = status
    return obj


@pytest.mark.parametrize(
    ("phase", "start", "running", "want"),
    [
        ("Scheduling", "2024-01-03T00:00:01Z", 0, True),
        ("Pending", "2024-01-03T00:00:01Z", 0, True),
        ("Scheduling", "2024-01-03T00:00:00Z", 0, False),  # exactly 48 h is not longer than 48 h
        ("Scheduling", "2024-01-03T00:00:01Z", 1, False),
        ("Running", "2024-01-03T00:00:01Z", 0, False),
        ("Scheduling", None, 0, False),  # never without a scheduleStartTime
    ],
)
def test_schedule_timed_out(phase: str, start: str | None, running: int, want: bool) -> None:
    assert schedule_timed_out(_pg(phase, start, running)) is want


def _timeout_events(sim: Any) -> list[tuple[str, str, str, str, str]]:
    return [
        (e["involvedObject"]["kind"], e["involvedObject"]["name"], e["type"], e["reason"], e["message"])
        for e in sim.store.list(("", "Event"))[0]
        if e["reason"] == "Timeout"
    ]


def test_group_whose_pods_come_after_48_hours_is_left_alone_with_a_timeout_event() -> None:
    late = 48 * HOURS + 1
    members = [
        make_pod("late-0").pod_group("late").req(cpu="1").obj(),
        make_pod("late-1").pod_group("late").req(cpu="1").obj(),
    ]
    sim = simulate([(0, [make_node("n1").obj(), pod_group("late", 2)]), (late, members)], until=late + 10)
    assert sorted(bound(sim)) == ["late-0", "late-1"]
    status = pg_obj(sim, "late")["status"]
    # the reconcile that saw the pods set Scheduling and scheduleStartTime; later ones only warn
    assert status == {"phase": "Scheduling", "scheduleStartTime": "2024-01-03T00:00:01Z"}
    events = _timeout_events(sim)
    assert events == [("PodGroup", "late", "Warning", "Timeout", "schedule time longer than 48 hours")]
    ev = next(e for e in sim.store.list(("", "Event"))[0] if e["reason"] == "Timeout")
    assert ev["source"] == {"component": "PodGroupController"}


def test_group_whose_pods_come_within_48_hours_runs() -> None:
    early = 48 * HOURS
    members = [
        make_pod("early-0").pod_group("early").req(cpu="1").obj(),
        make_pod("early-1").pod_group("early").req(cpu="1").obj(),
    ]
    sim = simulate([(0, [make_node("n1").obj(), pod_group("early", 2)]), (early, members)], until=early + 10)
    status = pg_obj(sim, "early")["status"]
    assert status == {"phase": "Running", "running": 2, "scheduleStartTime": "2024-01-03T00:00:00Z"}
    assert _timeout_events(sim) == []


def test_member_that_loses_its_label_leaves_the_group() -> None:
    store = MemoryStore()
    clock = SimClock()
    ctrl = PodGroupController(store, clock)
    store.subscribe(lambda ev: ctrl.handle_event(ev.type, ev.object))
    store.create(pod_group("pg", 1))
    pod = store.create(make_pod("p").pod_group("pg").node("n1").obj())
    pod = store.update_status({**pod, "status": {"phase": "Running"}})
    clock.run()
    store.update_status({**pod, "status": {"phase": "Running"}})  # a new version, to run another reconcile
    clock.run()
    assert store.get(PG_KEY, "default", "pg")["status"]["phase"] == "Running"
    pod = store.get(POD_KEY, "default", "p")
    store.update({**pod, "metadata": {**pod["metadata"], "labels": {}}})  # no longer a member
    clock.run()
    status = store.get(PG_KEY, "default", "pg")["status"]
    assert status == {"phase": "Pending", "scheduleStartTime": "2024-01-01T00:00:00Z"}  # no member runs
