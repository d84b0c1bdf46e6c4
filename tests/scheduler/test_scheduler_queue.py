"""The scheduling queue: priority order, backoff 1 s doubling to 10 s, requeue on events and after 5 min,
and kube's SchedulerPopFromBackoffQ (whole-second backoff windows, early pops by an idle scheduler)."""

from __future__ import annotations

from typing import Any

from berth.clock import SimClock
from berth.scheduler.framework.podinfo import PodInfo
from berth.scheduler.framework.status import Code, Status
from berth.scheduler.queue import SchedulingQueue
from builders import make_pod


def gate(p: PodInfo) -> Status:
    if p.scheduling_gates:
        return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ("gated",), "SchedulingGates")
    return Status()


def make_queue(
    clock: SimClock, interested: Any = None, *, pop_from_backoff: bool = False, skip_early: Any = None
) -> SchedulingQueue:
    return SchedulingQueue(
        clock,
        lambda p, t: (-p.priority, t),
        gate,
        interested=interested,
        pop_from_backoff=pop_from_backoff,
        skip_early=skip_early,
    )


def test_pops_by_priority_then_arrival() -> None:
    clock = SimClock()
    q = make_queue(clock)
    q.add(make_pod("low").uid("uid-low").priority(1).info())
    clock.run(until=1)
    q.add(make_pod("high").uid("uid-high").priority(10).info())
    clock.run(until=2)
    q.add(make_pod("low2").uid("uid-low2").priority(1).info())
    names = []
    while (qp := q.pop()) is not None:
        names.append(qp.pod.name)
    assert names == ["high", "low", "low2"]


def test_backoff_doubles_to_ten_seconds() -> None:
    clock = SimClock()
    q = make_queue(clock)
    q.add(make_pod("p").uid("uid-p").info())
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
    q.add(make_pod("p").uid("uid-p").info())
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
    q.add(make_pod("p").uid("uid-p").info())
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
    q.add(make_pod("p").uid("uid-p").info())
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
    q.add(make_pod("g").uid("uid-g").gate("wait").info())
    assert q.pop() is None
    assert q.unschedulable["uid-g"].where == "gated"
    q.update(make_pod("g").uid("uid-g").info())
    popped = q.pop()
    assert popped is not None and popped.pod.name == "g"


def test_deleted_pod_never_pops() -> None:
    clock = SimClock()
    q = make_queue(clock)
    q.add(make_pod("p").uid("uid-p").info())
    q.delete("uid-p")
    assert q.pop() is None


def _where(q: SchedulingQueue, uid: str) -> str:
    return next(qp.where for qp in q._pods.values() if qp.pod.uid == uid)


def test_backoff_completes_with_its_whole_second_window() -> None:
    clock = SimClock()
    q = make_queue(clock, pop_from_backoff=True)
    q.add(
        make_pod("busy").uid("uid-busy").priority(100).info()
    )  # keeps activeQ non-empty, so nothing is popped early
    clock.run(until=0.3)
    q.add(make_pod("p").uid("uid-p").info())
    qp = q.pop()
    assert qp is not None and qp.pod.name == "busy"
    qp = q.pop()
    assert qp is not None and qp.pod.name == "p"
    q.add(make_pod("busy2").uid("uid-busy2").priority(100).info())
    q.add_unschedulable(qp, {"NodeResourcesFit"}, q.scheduling_cycle)
    q.move_all("Node", "Add")
    # failed at 0.3 with a 1 s backoff: expires at 1.3, in the window [1, 2), flushed at 2.0
    clock.run(until=1.99)
    assert _where(q, "uid-p") == "backoff"
    clock.run(until=2.0)
    assert _where(q, "uid-p") == "active"


def test_idle_queue_pops_backoff_by_window_then_priority_but_not_errors() -> None:
    clock = SimClock()
    q = make_queue(clock, pop_from_backoff=True)
    for name, prio in (("low", 1), ("high", 5), ("err", 9)):
        q.add(make_pod(name).uid(f"uid-{name}").priority(prio).info())
    popped = {}
    while (qp := q.pop()) is not None:
        popped[qp.pod.name] = qp
    for name in ("low", "high"):
        q.add_unschedulable(popped[name], {"X"}, q.scheduling_cycle)
    q.add_unschedulable(popped["err"], set(), q.scheduling_cycle, error=True)
    q.move_all("Node", "Add")
    assert {n: _where(q, f"uid-{n}") for n in popped} == {
        "low": "backoff",
        "high": "backoff",
        "err": "backoff",
    }
    first, second, third = q.pop(), q.pop(), q.pop()
    assert (first and first.pod.name, second and second.pod.name, third) == ("high", "low", None)
    assert first is not None and first.attempts == 2 and clock.now() == 0.0
    assert first.popped_early


def test_early_pop_at_most_once_per_instant() -> None:
    clock = SimClock()
    q = make_queue(clock, pop_from_backoff=True)
    q.add(make_pod("p").uid("uid-p").info())
    qp = q.pop()
    assert qp is not None
    cycle = q.scheduling_cycle
    q.move_all("Node", "Add")  # an event while it was in flight: it goes to backoffQ
    q.add_unschedulable(qp, {"X"}, cycle)
    again = q.pop()
    assert again is not None and again.pod.name == "p"
    cycle = q.scheduling_cycle
    q.move_all("Node", "Add")
    q.add_unschedulable(again, {"X"}, cycle)
    assert q.pop() is None  # same instant: left in backoffQ
    clock.call_at(0.5, lambda: None)
    clock.step()
    third = q.pop()
    assert third is not None and third.pod.name == "p"


def test_early_pop_skips_pods_the_scheduler_knows_would_fail() -> None:
    clock = SimClock()
    q = make_queue(clock, pop_from_backoff=True, skip_early=lambda qp: qp.pod.name.startswith("twin"))
    for name in ("twin-a", "other"):
        q.add(make_pod(name).uid(f"uid-{name}").info())
    popped = [q.pop(), q.pop()]
    cycle = q.scheduling_cycle
    q.move_all("Node", "Add")
    for qp in popped:
        assert qp is not None
        q.add_unschedulable(qp, {"X"}, cycle)
    nxt = q.pop()
    assert nxt is not None and nxt.pod.name == "other"
    assert q.pop() is None
    assert _where(q, "uid-twin-a") == "backoff"  # still flushed when its backoff completes
    clock.run(until=2.0)
    assert _where(q, "uid-twin-a") == "active"


def test_event_during_attempt_matters_only_to_interested_plugins() -> None:
    clock = SimClock()
    interested = lambda qp, resource, action: resource == "Node"  # noqa: E731
    q = make_queue(clock, interested, pop_from_backoff=True)
    q.add(make_pod("p").uid("uid-p").info())
    qp = q.pop()
    assert qp is not None
    cycle = q.scheduling_cycle
    q.move_all("Pod", "Delete")  # its rejecting plugin does not care: it waits as unschedulable
    q.add_unschedulable(qp, {"X"}, cycle)
    assert "uid-p" in q.unschedulable
    assert q.pop() is None
    q.move_all("Node", "Add")
    again = q.pop()
    assert again is not None and again.pod.name == "p"
