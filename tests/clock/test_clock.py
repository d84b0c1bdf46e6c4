"""Tests for berth.clock: SimClock ordering and RealClock stepping (with an injected sleep)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from berth.clock import Clock, RealClock, SimClock, Timer


def _recorder(clock: SimClock, log: list[tuple[float, str]], name: str) -> Callable[[], None]:
    return lambda: log.append((clock.now(), name))


def test_protocol_conformance() -> None:
    clocks: list[Clock] = [SimClock(), RealClock()]
    assert len(clocks) == 2


@pytest.mark.parametrize(
    ("schedule", "expected"),
    [
        # (when, priority, name) in scheduling order → run order
        ([(3.0, 0, "c"), (1.0, 0, "a"), (2.0, 0, "b")], [(1.0, "a"), (2.0, "b"), (3.0, "c")]),
        ([(1.0, 5, "low"), (1.0, -1, "high"), (1.0, 0, "mid")], [(1.0, "high"), (1.0, "mid"), (1.0, "low")]),
        ([(1.0, 0, "first"), (1.0, 0, "second")], [(1.0, "first"), (1.0, "second")]),
        ([], []),
    ],
)
def test_sim_order(schedule: list[tuple[float, int, str]], expected: list[tuple[float, str]]) -> None:
    clock = SimClock()
    log: list[tuple[float, str]] = []
    for when, prio, name in schedule:
        clock.call_at(when, _recorder(clock, log, name), priority=prio)
    assert clock.pending() == len(schedule)
    clock.run()
    assert log == expected
    assert clock.pending() == 0


def test_step_and_peek() -> None:
    clock = SimClock(start=10.0)
    log: list[tuple[float, str]] = []
    assert clock.peek() is None
    assert clock.step() is False
    clock.call_later(5.0, _recorder(clock, log, "x"))
    assert clock.peek() == 15.0
    assert clock.now() == 10.0
    assert clock.step() is True
    assert clock.now() == 15.0
    assert log == [(15.0, "x")]
    assert clock.step() is False


def test_time_never_goes_backwards() -> None:
    clock = SimClock(start=5.0)
    log: list[tuple[float, str]] = []
    clock.call_at(1.0, _recorder(clock, log, "past"))
    clock.step()
    assert log == [(5.0, "past")]
    assert clock.now() == 5.0


def test_cancel_is_lazy_and_counted() -> None:
    clock = SimClock()
    log: list[tuple[float, str]] = []
    t1 = clock.call_at(1.0, _recorder(clock, log, "a"))
    clock.call_at(2.0, _recorder(clock, log, "b"))
    t1.cancel()
    t1.cancel()  # idempotent
    assert t1.cancelled is True
    assert t1.active is False
    assert clock.pending() == 1
    assert clock.peek() == 2.0
    clock.run()
    assert log == [(2.0, "b")]


def test_cancel_after_run_is_noop() -> None:
    clock = SimClock()
    t = clock.call_at(1.0, lambda: None)
    clock.run()
    t.cancel()
    assert t.cancelled is False
    assert clock.pending() == 0


def test_callback_scheduled_for_now_runs_after_current() -> None:
    clock = SimClock()
    log: list[tuple[float, str]] = []

    def first() -> None:
        log.append((clock.now(), "first"))
        clock.call_later(0.0, _recorder(clock, log, "nested"), priority=-10)

    clock.call_at(1.0, first)
    clock.call_at(1.0, _recorder(clock, log, "sibling"), priority=-10)
    clock.run()
    # sibling has a lower priority value, so it runs first; nested runs after the callback that scheduled it
    assert log == [(1.0, "sibling"), (1.0, "first"), (1.0, "nested")]


def test_run_until() -> None:
    clock = SimClock()
    log: list[tuple[float, str]] = []
    for when in (1.0, 2.0, 3.0):
        clock.call_at(when, _recorder(clock, log, str(when)))
    clock.run(until=2.0)
    assert log == [(1.0, "1.0"), (2.0, "2.0")]
    assert clock.now() == 2.0
    assert clock.pending() == 1
    clock.run(until=2.5)
    assert clock.now() == 2.5
    clock.run(until=1.0)  # never backwards
    assert clock.now() == 2.5
    clock.run(until=10.0)
    assert log[-1] == (3.0, "3.0")
    assert clock.now() == 10.0


def test_many_cancellations_compact() -> None:
    clock = SimClock()
    timers = [clock.call_at(float(i), lambda: None) for i in range(5000)]
    for t in timers[:4900]:
        t.cancel()
    assert clock.pending() == 100
    assert clock.peek() == 4900.0
    count = 0
    while clock.step():
        count += 1
    assert count == 100


def test_timer_fields() -> None:
    clock = SimClock()
    t = clock.call_later(2.5, lambda: None, priority=3)
    assert isinstance(t, Timer)
    assert (t.when, t.priority, t.cancelled, t.active) == (2.5, 3, False, True)


class FakeSleep:
    """Records sleeps; never really sleeps."""

    def __init__(self) -> None:
        self.calls: list[float] = []

    def __call__(self, seconds: float) -> None:
        self.calls.append(seconds)


def test_real_clock_step_sleeps_until_due() -> None:
    sleep = FakeSleep()
    clock = RealClock(start=100.0, sleep=sleep)
    assert clock.now() >= 100.0
    ran: list[str] = []
    clock.call_later(3600.0, lambda: ran.append("late"))
    clock.call_at(0.0, lambda: ran.append("due"))
    assert clock.step() is True
    assert ran == ["due"]
    assert sleep.calls == []
    assert clock.step() is True
    assert ran == ["due", "late"]
    assert len(sleep.calls) == 1
    assert 3500.0 < sleep.calls[0] <= 3600.0
    assert clock.step() is False


def test_real_clock_run_until() -> None:
    sleep = FakeSleep()
    clock = RealClock(sleep=sleep)
    ran: list[str] = []
    clock.call_at(0.0, lambda: ran.append("a"))
    clock.call_at(1e9, lambda: ran.append("never"))
    clock.run(until=1000.0)
    assert ran == ["a"]
    assert clock.pending() == 1
    assert len(sleep.calls) == 1
