"""The event-and-timer driver of a controller that owns pods directly (StatefulSet, DaemonSet).

It keeps an informer-style `PodIndex`, turns store events into syncs of the owning object (coalesced per
object, run on a clock timer at the current time, like a workqueue), and retries failed syncs through the
`SyncController` backoff. Single-threaded; never sleeps.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from berth.api.contracts import Store
from berth.clock import Clock
from berth.controllers.workloads.common import POD_KEY, controller_of, parse_time
from berth.controllers.workloads.podindex import PodIndex
from berth.controllers.workloads.timers import ReconcileTimers

__all__ = ["PodOwnerDriver"]

Sync = Callable[[str, str], None]


class PodOwnerDriver:
    """Runs `sync(namespace, name)` of one kind's objects when they or the pods they control change."""

    def __init__(
        self, store: Store, clock: Clock, kind: tuple[str, str], *, adopts: bool = False, priority: int = 10
    ) -> None:
        """Follow objects of `kind` ((group, kind)) in `store`; `bind` sets the sync to run. With `adopts`, a pod
        without a controller syncs every object of the kind in its namespace (one may adopt it)."""
        self.adopts = adopts
        self.store = store
        self.clock = clock
        self.key = kind
        self.priority = priority
        self.pods = PodIndex()
        self._epoch = parse_time(store.timestamp(0.0)) or 0.0
        self._sync: Sync = lambda ns, name: None
        self._timers: ReconcileTimers[tuple[str, str]] = ReconcileTimers(clock, self._run, priority)
        self._names: dict[str, set[str]] = {}
        """Namespace → names of the objects of our kind there (an orphan pod may be theirs to adopt)."""
        for pod in store.list(POD_KEY)[0]:
            ref = controller_of(pod)
            if ref is not None and ref.get("kind") == kind[1]:
                self.pods.upsert(pod)

    def bind(self, sync: Sync) -> None:
        """Set the sync and queue every object already stored once."""
        self._sync = sync
        for obj in self.store.list(self.key)[0]:
            meta = obj["metadata"]
            self._add_name(meta.get("namespace", ""), meta["name"])
            self.enqueue(meta.get("namespace", ""), meta["name"])

    def _add_name(self, namespace: str, name: str) -> None:
        """Remember an object of our kind; the first one of a namespace indexes the orphans there (when it may
        adopt them)."""
        names = self._names.setdefault(namespace, set())
        if not names and self.adopts:
            for pod in self.store.list(POD_KEY, namespace)[0]:
                if controller_of(pod) is None:
                    self.pods.upsert(pod)
        names.add(name)

    def _follows(self, namespace: str, ref: Mapping[str, Any] | None) -> bool:
        """Whether a pod with controller `ref` is indexed: ours, or an orphan where an object of ours may adopt
        it. Every other pod is ignored cheaply (most pods are not ours)."""
        if ref is not None:
            return bool(ref.get("kind") == self.key[1])
        return self.adopts and bool(self._names.get(namespace))

    def now(self) -> float:
        """Unix seconds at the clock's current time."""
        return self._epoch + self.clock.now()

    def enqueue(self, namespace: str, name: str) -> None:
        """Sync the object at the current time (once, however often it is asked)."""
        self._timers.enqueue((namespace, name))

    def enqueue_after(self, namespace: str, name: str, delay: float) -> None:
        """Sync the object `delay` seconds from now (the earliest of the requests wins)."""
        self._timers.enqueue_after((namespace, name), delay)

    def enqueue_all(self) -> None:
        """Sync every stored object of the kind (a node changed, for DaemonSets)."""
        for obj in self.store.list(self.key)[0]:
            meta = obj["metadata"]
            self.enqueue(meta.get("namespace", ""), meta["name"])

    def _run(self, key: tuple[str, str]) -> None:
        self._sync(*key)

    def pending(self) -> int:
        """Number of syncs waiting to run now."""
        return self._timers.pending()

    def on_pod(self, type_: str, pod: Mapping[str, Any]) -> None:
        """Index the pod and sync the object of our kind that controls it (now or before)."""
        meta = pod["metadata"]
        ns = meta.get("namespace", "")
        if not meta.get("ownerReferences") and not self._names.get(ns) and not self.pods:
            return  # the common case, a bare pod where nothing of ours is: nothing to index or sync
        ref = controller_of(pod)
        if type_ == "DELETED" or not self._follows(ns, ref):
            self.pods.remove(pod)
            if type_ != "DELETED":
                return
        else:
            previous = self.pods.upsert(pod)
            if previous is not None:
                self._enqueue_uid(ns, previous)
        if ref is not None:
            if ref.get("kind") == self.key[1]:
                self.enqueue(ns, str(ref.get("name") or ""))
        elif self.adopts and type_ != "DELETED":
            for name in self._names.get(ns, ()):
                self.enqueue(ns, name)  # an orphan: the objects here may adopt it

    def on_owner(self, type_: str, obj: Mapping[str, Any]) -> None:
        """An object of our kind changed: sync it (a deleted one's pods are the garbage collector's)."""
        meta = obj["metadata"]
        ns, name = meta.get("namespace", ""), meta["name"]
        if type_ == "DELETED":
            names = self._names.get(ns)
            if names is not None:
                names.discard(name)
            return
        self._add_name(ns, name)
        self.enqueue(ns, name)

    def _enqueue_uid(self, namespace: str, uid: str) -> None:
        for obj in self.store.list(self.key, namespace)[0]:
            if obj["metadata"].get("uid") == uid:
                self.enqueue(namespace, obj["metadata"]["name"])
                return
