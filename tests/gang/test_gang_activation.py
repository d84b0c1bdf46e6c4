"""ActivateSiblings: a member waiting at Permit brings its siblings out of the unschedulable pool and
backoffQ (kube's PodsToActivate / SchedulingQueue.Activate)."""

from __future__ import annotations

import heapq
from collections.abc import Callable
from typing import Any

import pytest
from gang_helpers import bound, cosched_config, pod_group, simulate

from berth.scheduler.framework import Status
from berth.scheduler.queue import SchedulingQueue
from berth.sim.engine import Simulation
from berth.sim.scenario import ObjectRef, Plan, Step
from builders import make_node, make_pod

# ----- the queue's activate() ----------------------------------------------------------------


class TimerClock:
    """A virtual clock whose timers run when the test advances it."""

    def __init__(self) -> None:
        self.t = 0.0
        self._timers: list[tuple[float, int, Callable[[], None]]] = []
        self._seq = 0

    def now(self) -> float:
        """Current time."""
        return self.t

    def call_at(self, when: float, fn: Callable[[], None], priority: int = 0) -> Any:
        """Schedule ``fn``."""
        self._seq += 1
        heapq.heappush(self._timers, (when, self._seq, fn))

    def advance(self, to: float) -> None:
        """Run the timers due up to ``to`` and stop there."""
        while self._timers and self._timers[0][0] <= to:
            when, _, fn = heapq.heappop(self._timers)
            self.t = max(self.t, when)
            fn()
        self.t = to


def _queue() -> tuple[SchedulingQueue, TimerClock]:
    clock = TimerClock()
    q = SchedulingQueue(clock, lambda p, ts: (p.name,), lambda p: Status())
    return q, clock


def _where(q: SchedulingQueue) -> dict[str, str]:
    return {qp.pod.name: qp.where for qp in q.pending()}


def test_activate_moves_unschedulable_and_backoff_pods_only() -> None:
    q, _ = _queue()
    for name in ("b", "u", "x"):
        q.add(make_pod(name).uid(name).info())
    popped = {}
    while (qp := q.pop()) is not None:
        popped[qp.pod.name] = qp
    q.add_unschedulable(popped["b"], {"P"}, q.scheduling_cycle, error=True)  # backoffQ (1 s)
    q.add_unschedulable(popped["u"], {"P"}, q.scheduling_cycle)  # the unschedulable pool
    q.add(make_pod("a").uid("a").info())  # activeQ; "x" stays in flight
    assert _where(q) == {"a": "active", "b": "backoff", "u": "unschedulable"}
    q.activate(["a", "b", "u", "x", "unknown"])
    assert _where(q) == {"a": "active", "b": "active", "u": "active"}
    names = []
    while (qp := q.pop()) is not None:
        names.append(qp.pod.name)
    assert names == ["a", "b", "u"]


def test_activated_pod_backed_off_again_keeps_its_new_backoff() -> None:
    q, clock = _queue()
    q.add(make_pod("a").uid("a").info())
    qp = q.pop()
    assert qp is not None
    # backoff 1 s: expires at t=1, in the window [1, 2) that is flushed at t=2
    q.add_unschedulable(qp, {"P"}, q.scheduling_cycle, error=True)
    q.activate(["a"])
    qp = q.pop()
    assert qp is not None and qp.attempts == 2
    clock.advance(0.5)
    # backoff 2 s: expires at t=2.5, flushed with its window at t=3
    q.add_unschedulable(qp, {"P"}, q.scheduling_cycle, error=True)
    clock.advance(2.0)  # the first backoff's flush must not release it
    assert _where(q) == {"a": "backoff"}
    clock.advance(2.99)
    assert _where(q) == {"a": "backoff"}
    clock.advance(3.0)
    assert _where(q) == {"a": "active"}


def test_a_pod_is_activated_at_most_once_per_instant() -> None:
    q, clock = _queue()
    q.add(make_pod("a").uid("a").info())
    qp = q.pop()
    assert qp is not None
    q.add_unschedulable(qp, {"P"}, q.scheduling_cycle)
    q.activate(["a"])
    qp = q.pop()
    assert qp is not None
    q.add_unschedulable(qp, {"P"}, q.scheduling_cycle)
    q.activate(["a"])  # same virtual instant: left in the unschedulable pool
    assert _where(q) == {"a": "unschedulable"}
    clock.advance(0.25)
    q.activate(["a"])
    assert _where(q) == {"a": "active"}


# ----- through the scheduler -----------------------------------------------------------------


@pytest.mark.parametrize(("activation", "bound_at_31"), [(True, ["g-0", "g-1"]), (False, [])])
def test_sibling_in_backoff_is_activated_when_a_member_waits(
    monkeypatch: pytest.MonkeyPatch, activation: bool, bound_at_31: list[str]
) -> None:
    """g-0 times out at Permit (5 s) while g-1 is gated; a Permit rejection leaves it in the unschedulable
    pool (kube's handleBindingCycleError moves the others, not the rejected pod). The gate is lifted at
    t=30: g-1 waits at Permit and activates g-0, which completes the quorum at once, so both bind at t=30.
    Without the activation nothing moves g-0 before the 5-minute flush: g-1 times out at 35 and nothing
    is bound at 31, nor at 40."""
    if not activation:
        monkeypatch.setattr(SchedulingQueue, "activate", lambda self, uids: None)
    sim = Simulation(config=cosched_config())
    # as with kube's SchedulerPopFromBackoffQ=false: otherwise the idle scheduler pops g-0 from backoffQ
    # early anyway, activation or not
    sim.scheduler.queue.pop_from_backoff = False
    objs = [
        pod_group("g", 2, timeout=5),
        make_pod("g-0").pod_group("g").req(cpu="1").obj(),
        make_pod("g-1").pod_group("g").req(cpu="1").gate("wait").obj(),
    ]
    ref = ObjectRef("v1", "Pod", "default", "g-1")
    steps = [
        Step(0, [make_node("n1").obj()]),
        Step(1, objs),
        Step(30, patch=[(ref, {"spec": {"schedulingGates": None}})]),
    ]
    sim.run(Plan(steps), until=31)
    assert sorted(bound(sim)) == bound_at_31
    if activation:
        scheduled = [
            (e["involvedObject"]["name"], e["firstTimestamp"])
            for e in sim.store.list(("", "Event"))[0]
            if e["reason"] == "Scheduled"
        ]
        assert sorted(scheduled) == [("g-0", "2024-01-01T00:00:30Z"), ("g-1", "2024-01-01T00:00:30Z")]
    else:
        sim.run(Plan([]), until=40)
        assert sorted(bound(sim)) == []


def test_activation_does_not_spin_when_members_keep_failing() -> None:
    """A gang of 6 on room for 2: members wait, the third fails and rejects them, and the next member
    to wait re-activates them; each member is activated once per instant, so time advances."""
    objs = [
        pod_group("big", 6),
        *(make_pod(f"big-{i}").pod_group("big").req(cpu="2").obj() for i in range(6)),
    ]
    sim = simulate([(0, [make_node("n1").obj()]), (1, objs)], until=40)
    assert bound(sim) == {}
    assert sim.clock.now() == 40
    assert sim.scheduler.stats.attempts < 200
