"""The scheduling queue: priority order, backoff 1 s doubling to 10 s, requeue on events and after 5 min."""

from __future__ import annotations

from typing import Any

from berth.clock import SimClock
from berth.scheduler.framework.podinfo import PodInfo
from berth.scheduler.framework.status import Code, Status
from berth.scheduler.queue import SchedulingQueue


def pod(name: str, priority: int = 0, gates: list[str] | None = None) -> PodInfo:
    spec: dict[str, Any] = {"priority": priority, "containers": [{"name": "c"}]}
    if gates:
        spec["schedulingGates"] = [{"name": g} for g in gates]
    return PodInfo(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}"},
            "spec": spec,
        }
    )


def gate(p: PodInfo) -> Status:
    if p.scheduling_gates:
        return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ("gated",), "SchedulingGates")
    return Status()


def make_queue(clock: SimClock, interested: Any = None) -> SchedulingQueue:
    return SchedulingQueue(clock, lambda p, t: (-p.priority, t), gate, interested=interested)


def test_pops_by_priority_then_arrival() -> None:
    clock = SimClock()
    q = make_queue(clock)
    q.add(pod("low", 1))
    clock.run(until=1)
    q.add(pod("high", 10))
    clock.run(until=2)
    q.add(pod("low2", 1))
    names = []
    while (qp := q.pop()) is not None:
        names.append(qp.pod.name)
    assert names == ["high", "low", "low2"]


def test_backoff_doubles_to_ten_seconds() -> None:
    clock = SimClock()
    q = make_queue(clock)
    q.add(pod("p"))
    qp = q.pop()
    waited = []
    for _ in range(6):
        assert qp is not None
        start = clock.now()
        q.add_unschedulable(qp, {"NodeResourcesFit"}, q.scheduling_cycle)
        q.move_all("Node", "Add")  # an event moves it to backoffQ
        while (qp := q.pop()) is None:
            assert clock.step()
        waited.append(clock.now() - start)
    assert waited == [1.0, 2.0, 4.0, 8.0, 10.0, 10.0]


def test_unschedulable_waits_for_relevant_event() -> None:
    clock = SimClock()
    interested = lambda qp, resource, action: resource == "Node"  # noqa: E731
    q = make_queue(clock, interested)
    q.add(pod("p"))
    qp = q.pop()
    assert qp is not None
    q.add_unschedulable(qp, {"NodeResourcesFit"}, q.scheduling_cycle)
    clock.run(until=20)
    q.move_all("Pod", "Delete")
    assert q.pop() is None
    q.move_all("Node", "Add")
    popped = q.pop()
    assert popped is not None and popped.pod.name == "p"


def test_move_during_cycle_sends_to_backoff() -> None:
    clock = SimClock()
    q = make_queue(clock)
    q.add(pod("p"))
    qp = q.pop()
    assert qp is not None
    cycle = q.scheduling_cycle
    q.move_all("Node", "Add")  # happened while the pod was in flight
    q.add_unschedulable(qp, {"X"}, cycle)
    assert "uid-p" not in q.unschedulable
    clock.step()
    again = q.pop()
    assert again is not None and clock.now() == 1.0


def test_flushed_after_five_minutes() -> None:
    clock = SimClock()
    q = make_queue(clock, lambda *a: False)
    q.add(pod("p"))
    qp = q.pop()
    assert qp is not None
    q.add_unschedulable(qp, {"X"}, q.scheduling_cycle)
    clock.run(until=299)
    assert q.pop() is None
    clock.run(until=330)
    again = q.pop()
    assert again is not None and again.pod.name == "p"


def test_gated_pod_enters_active_when_gates_removed() -> None:
    clock = SimClock()
    q = make_queue(clock)
    q.add(pod("g", gates=["wait"]))
    assert q.pop() is None
    assert q.unschedulable["uid-g"].where == "gated"
    q.update(pod("g"))
    popped = q.pop()
    assert popped is not None and popped.pod.name == "g"


def test_deleted_pod_never_pops() -> None:
    clock = SimClock()
    q = make_queue(clock)
    q.add(pod("p"))
    q.delete("uid-p")
    assert q.pop() is None
