"""Reconcile timers of a workload controller: per key, one sync due now and one due later, on the clock."""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

from berth.clock import Clock, Timer

__all__ = ["ReconcileTimers"]

K = TypeVar("K", bound=Hashable)


class ReconcileTimers(Generic[K]):
    """Calls `run(key)` once per key however often the key is enqueued before it runs (a workqueue's dedup),
    now or after a delay (the earliest delayed request wins), at timer `priority`."""

    def __init__(self, clock: Clock, run: Callable[[K], None], priority: int) -> None:
        """Schedule `run` on `clock` at `priority`."""
        self.clock = clock
        self.run = run
        self.priority = priority
        self._now: dict[K, Timer] = {}
        self._later: dict[K, Timer] = {}

    def enqueue(self, key: K) -> None:
        """Run `key` at the current time (once, however often it is asked)."""
        if key in self._now:
            return
        self._now[key] = self.clock.call_at(self.clock.now(), lambda: self._fire(key), self.priority)

    def enqueue_after(self, key: K, delay: float) -> None:
        """Enqueue `key` `delay` seconds from now; an earlier request wins."""
        when = self.clock.now() + delay
        timer = self._later.get(key)
        if timer is not None and timer.active:
            if timer.when <= when:
                return
            timer.cancel()

        def fire() -> None:
            self._later.pop(key, None)
            self.enqueue(key)

        self._later[key] = self.clock.call_at(when, fire, self.priority)

    def pending(self) -> int:
        """Number of runs due now and not run yet."""
        return len(self._now)

    def _fire(self, key: K) -> None:
        self._now.pop(key, None)
        self.run(key)
