"""Clocks: the source of time and timers for every Berth component.

`SimClock` is virtual time: a heap of ``(when, priority, seq, timer)`` entries; `step()` jumps straight to the
next due timer. `RealClock` is the same machine over ``time.monotonic()``: it only changes how time is read and
that `step()` sleeps until the next timer is due. Both are single-threaded; callbacks run inside `step()`.
"""

from __future__ import annotations

import heapq
import time
from collections.abc import Callable
from typing import Protocol

__all__ = ["Clock", "RealClock", "SimClock", "Timer"]


class Timer:
    """A scheduled callback; `cancel()` it to stop it from running (a no-op once it ran)."""

    __slots__ = ("_owner", "cancelled", "fn", "priority", "when")

    def __init__(self, owner: SimClock, when: float, priority: int, fn: Callable[[], None]) -> None:
        """Create a timer owned by `owner` (use `Clock.call_at` / `call_later` instead)."""
        self._owner: SimClock | None = owner
        self.when = when
        self.priority = priority
        self.fn = fn
        self.cancelled = False

    def cancel(self) -> None:
        """Prevent the callback from running; harmless when already cancelled or already run."""
        owner = self._owner
        if owner is None:
            return
        self.cancelled = True
        self._owner = None
        owner._forget()

    @property
    def active(self) -> bool:
        """True while the timer is still waiting to run."""
        return self._owner is not None

    def __repr__(self) -> str:
        """Debug representation."""
        state = "cancelled" if self.cancelled else ("pending" if self._owner is not None else "done")
        return f"Timer(when={self.when!r}, priority={self.priority}, {state}, fn={self.fn!r})"


class Clock(Protocol):
    """What components need from a clock: the current time and timers."""

    def now(self) -> float:
        """Seconds since the clock's epoch."""
        ...

    def call_at(self, when: float, fn: Callable[[], None], priority: int = 0) -> Timer:
        """Run `fn` at time `when` (lower `priority` first among timers due at the same time)."""
        ...

    def call_later(self, delay: float, fn: Callable[[], None], priority: int = 0) -> Timer:
        """Run `fn` `delay` seconds from now."""
        ...


class SimClock:
    """Virtual time driven by a timer heap; time only moves when `step()` / `run()` advance it."""

    __slots__ = ("_heap", "_live", "_now", "_seq")

    def __init__(self, start: float = 0.0) -> None:
        """Create a clock whose time starts at `start` seconds."""
        self._now = float(start)
        self._heap: list[tuple[float, int, int, Timer]] = []
        self._seq = 0
        self._live = 0

    def now(self) -> float:
        """The current virtual time in seconds."""
        return self._now

    def call_at(self, when: float, fn: Callable[[], None], priority: int = 0) -> Timer:
        """Schedule `fn` at absolute time `when`; a time in the past runs at the next step without going back."""
        timer = Timer(self, when, priority, fn)
        self._seq += 1
        heapq.heappush(self._heap, (when, priority, self._seq, timer))
        self._live += 1
        return timer

    def call_later(self, delay: float, fn: Callable[[], None], priority: int = 0) -> Timer:
        """Schedule `fn` `delay` seconds after `now()`."""
        return self.call_at(self.now() + delay, fn, priority)

    def pending(self) -> int:
        """Number of timers that are scheduled and not cancelled."""
        return self._live

    def peek(self) -> float | None:
        """Time of the next live timer, or None when there is none."""
        heap = self._heap
        while heap and heap[0][3].cancelled:
            heapq.heappop(heap)
        return heap[0][0] if heap else None

    def _pop(self) -> Timer | None:
        """Remove and return the next live timer (marked as run), or None."""
        heap = self._heap
        while heap:
            timer = heapq.heappop(heap)[3]
            if not timer.cancelled:
                timer._owner = None
                self._live -= 1
                return timer
        return None

    def _forget(self) -> None:
        """Account for a cancelled timer; compacts the heap when it is mostly dead entries."""
        self._live -= 1
        heap = self._heap
        if len(heap) > 1024 and self._live < len(heap) // 4:
            self._heap = [entry for entry in heap if not entry[3].cancelled]
            heapq.heapify(self._heap)

    def step(self) -> bool:
        """Advance time to the next live timer (never backwards) and run it; False when no timer is left."""
        timer = self._pop()
        if timer is None:
            return False
        if timer.when > self._now:
            self._now = timer.when
        timer.fn()
        return True

    def run(self, until: float | None = None) -> None:
        """Run timers in order until none is left or the next one is after `until`; then time becomes `until`."""
        if until is None:
            while self.step():
                pass
            return
        while True:
            nxt = self.peek()
            if nxt is None or nxt > until:
                break
            self.step()
        self._reach(until)

    def _reach(self, until: float) -> None:
        """Make the clock read at least `until` (virtual time simply jumps)."""
        if until > self._now:
            self._now = until


class RealClock(SimClock):
    """Wall-clock time (``time.monotonic()``) with the same timer API; `step()` sleeps until a timer is due.

    `now()` is seconds since the clock was created plus `start`.
    """

    __slots__ = ("_origin", "_sleep")

    def __init__(self, start: float = 0.0, *, sleep: Callable[[float], None] = time.sleep) -> None:
        """Create a real-time clock reading `start` at creation; `sleep` is injectable for tests."""
        super().__init__(start)
        self._origin = time.monotonic() - float(start)
        self._sleep = sleep

    def now(self) -> float:
        """Seconds elapsed since creation, plus `start`."""
        return time.monotonic() - self._origin

    def step(self) -> bool:
        """Sleep until the next live timer is due, then run it; False when no timer is left."""
        nxt = self.peek()
        if nxt is None:
            return False
        delay = nxt - self.now()
        if delay > 0:
            self._sleep(delay)
        timer = self._pop()
        if timer is None:  # pragma: no cover - only if the timer was cancelled from another thread
            return False
        timer.fn()
        return True

    def _reach(self, until: float) -> None:
        """Sleep until the clock reads `until`."""
        delay = until - self.now()
        if delay > 0:
            self._sleep(delay)
