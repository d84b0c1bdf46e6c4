"""What the ReplicaSet and Deployment controllers share: their wiring and the workqueue's retry backoff."""

from __future__ import annotations

from collections.abc import Callable

from berth.api.contracts import Recorder, Store
from berth.controllers.workloads.podindex import PodIndex

Requeue = Callable[[str, str, float], None]

__all__ = ["Requeue", "SyncController"]


class SyncController:
    """A controller that syncs one object at a time and retries failed syncs with exponential backoff
    (client-go's default rate limiter: 5 ms doubling, at most 1000 s)."""

    def __init__(
        self,
        store: Store,
        pods: PodIndex,
        recorder: Recorder,
        now: Callable[[], float],
        requeue: Requeue,
    ) -> None:
        """`now()` is Unix seconds at the clock's current time; `requeue` schedules a later sync."""
        self.store = store
        self.pods = pods
        self.recorder = recorder
        self._now = now
        self._requeue = requeue
        self._failures: dict[tuple[str, str], int] = {}

    def _retry_later(self, namespace: str, name: str) -> None:
        """The sync failed: try again after the object's next backoff step."""
        n = self._failures.get((namespace, name), 0)
        self._failures[(namespace, name)] = n + 1
        self._requeue(namespace, name, min(0.005 * 2**n, 1000.0))

    def _forget(self, namespace: str, name: str) -> None:
        """The sync succeeded (or the object is gone): reset its backoff."""
        self._failures.pop((namespace, name), None)
