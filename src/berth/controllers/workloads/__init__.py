"""apps/v1 workload controllers (ReplicaSet, Deployment) for the simulator, as kube-controller-manager's.

`WorkloadControllers` takes the store's watch events (`handle_event`), keeps an informer-style pod index,
and runs each object's reconcile on a clock timer at the current time; pending reconciles are coalesced per
object, so a burst of events reconciles once. Everything is single-threaded and never sleeps.

What a deleted Deployment or ReplicaSet owned is left to the garbage collector
(`berth.controllers.garbagecollector`), as in kube: these controllers only stop managing an object that is being
deleted.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from berth.api.contracts import Recorder, Store
from berth.api.errors import NotFound
from berth.api.labels import LabelSelectorError, Selector, compile_label_selector
from berth.clock import Clock
from berth.controllers.workloads.common import (
    DEPLOYMENT_KEY,
    POD_KEY,
    RS_KEY,
    controller_of,
    is_pod_active,
    parse_time,
)
from berth.controllers.workloads.deployment import DeploymentController
from berth.controllers.workloads.hashing import compute_hash
from berth.controllers.workloads.podindex import PodIndex
from berth.controllers.workloads.replicaset import ReplicaSetController, pod_from_template
from berth.controllers.workloads.timers import ReconcileTimers
from berth.store.events import EventRecorder

__all__ = [
    "RECONCILE_PRIORITY",
    "DeploymentController",
    "ReplicaSetController",
    "WorkloadControllers",
    "compute_hash",
    "pod_from_template",
]

RECONCILE_PRIORITY = 10
"""Timer priority of a reconcile (lower runs first among timers due at the same time)."""

_Key = tuple[str, str, str]  # (kind, namespace, name)


class WorkloadControllers:
    """The ReplicaSet and Deployment controllers, fed by store events and driven by clock timers."""

    def __init__(
        self,
        store: Store,
        clock: Clock,
        rs_events: Recorder | None = None,
        deployment_events: Recorder | None = None,
        *,
        priority: int = RECONCILE_PRIORITY,
    ) -> None:
        """Create both controllers over `store`; events go through the given recorders (default: unbuffered
        recorders for "replicaset-controller" and "deployment-controller"). Objects already in the store
        are indexed and queued once."""
        self.store = store
        self.clock = clock
        self.priority = priority
        epoch = parse_time(store.timestamp(0.0)) or 0.0
        self._epoch = epoch
        self.pods = PodIndex()
        self.replicasets = ReplicaSetController(
            store,
            self.pods,
            rs_events or EventRecorder(store, component="replicaset-controller"),
            self._now,
            lambda ns, name, delay: self._enqueue_after(("ReplicaSet", ns, name), delay),
        )
        self.deployments = DeploymentController(
            store,
            self.pods,
            deployment_events or EventRecorder(store, component="deployment-controller"),
            self._now,
            lambda ns, name, delay: self._enqueue_after(("Deployment", ns, name), delay),
        )
        self._timers = ReconcileTimers(clock, self._run, priority)
        self._selectors: dict[str, tuple[object, Selector | None]] = {}
        # namespace -> names of its ReplicaSets (an orphan pod elsewhere has none to be adopted by)
        self._rs_names: dict[str, set[str]] = {}
        for pod in store.list(POD_KEY)[0]:
            self.pods.upsert(pod)
        for key, kind in ((RS_KEY, "ReplicaSet"), (DEPLOYMENT_KEY, "Deployment")):
            for obj in store.list(key)[0]:
                meta = obj["metadata"]
                self._enqueue((kind, meta.get("namespace", ""), meta["name"]))
                if kind == "ReplicaSet":
                    self._rs_names.setdefault(meta.get("namespace", ""), set()).add(meta["name"])

    def _now(self) -> float:
        return self._epoch + self.clock.now()

    # ----- queueing ---------------------------------------------------------------------------
    def _enqueue(self, key: _Key) -> None:
        self._timers.enqueue(key)

    def _enqueue_after(self, key: _Key, delay: float) -> None:
        self._timers.enqueue_after(key, delay)

    def _run(self, key: _Key) -> None:
        kind, ns, name = key
        if kind == "ReplicaSet":
            self.replicasets.sync(ns, name)
        else:
            self.deployments.sync(ns, name)

    def pending(self) -> int:
        """Number of reconciles waiting to run now."""
        return self._timers.pending()

    # ----- events -----------------------------------------------------------------------------
    def handle_event(self, type_: str, obj: Mapping[str, Any]) -> None:
        """React to an ADDED/MODIFIED/DELETED event of a Pod, ReplicaSet or Deployment (others are ignored)."""
        kind = obj.get("kind")
        if kind == "Pod":
            self.handle_pod(type_, obj)
        elif kind == "ReplicaSet":
            self._on_replica_set(type_, obj)
        elif kind == "Deployment":
            self._on_deployment(type_, obj)

    def handle_pod(self, type_: str, pod: Mapping[str, Any]) -> None:
        """React to an ADDED/MODIFIED/DELETED event of a Pod: index it and queue the ReplicaSets it concerns."""
        meta = pod["metadata"]
        ns = meta.get("namespace", "")
        ref = controller_of(pod) if meta.get("ownerReferences") else None
        if type_ == "DELETED":
            self.pods.remove(pod)
            if ref is not None and ref.get("kind") == "ReplicaSet":
                self._enqueue(("ReplicaSet", ns, ref["name"]))
                self._enqueue_owner_of_rs(ns, ref["name"])
            return
        previous = self.pods.upsert(pod)
        if previous is not None:
            self._enqueue_rs_by_uid(ns, previous)
        if ref is not None:
            if ref.get("kind") == "ReplicaSet":
                self._enqueue(("ReplicaSet", ns, ref["name"]))
            return
        if not self._rs_names.get(ns) or not is_pod_active(pod):
            return
        labels = meta.get("labels") or {}
        for rs in self.store.list(RS_KEY, ns)[0]:
            sel = self._selector(rs)
            if sel is not None and not sel.is_everything() and sel.matches(labels):
                self._enqueue(("ReplicaSet", ns, rs["metadata"]["name"]))

    def _on_replica_set(self, type_: str, rs: Mapping[str, Any]) -> None:
        meta = rs["metadata"]
        ns, name = meta.get("namespace", ""), meta["name"]
        ref = controller_of(rs)
        if type_ == "DELETED":
            self._selectors.pop(meta.get("uid", ""), None)
            names = self._rs_names.get(ns)
            if names is not None:
                names.discard(name)
        else:
            self._rs_names.setdefault(ns, set()).add(name)
            self._enqueue(("ReplicaSet", ns, name))
        if ref is not None:
            if ref.get("kind") == "Deployment":
                self._enqueue(("Deployment", ns, ref["name"]))
            return
        labels = meta.get("labels") or {}
        for d in self.store.list(DEPLOYMENT_KEY, ns)[0]:
            sel = self._selector(d)
            if sel is not None and not sel.is_everything() and sel.matches(labels):
                self._enqueue(("Deployment", ns, d["metadata"]["name"]))

    def _on_deployment(self, type_: str, d: Mapping[str, Any]) -> None:
        meta = d["metadata"]
        ns, name = meta.get("namespace", ""), meta["name"]
        if type_ != "DELETED":
            self._enqueue(("Deployment", ns, name))
            return
        self._selectors.pop(meta.get("uid", ""), None)

    # ----- helpers ----------------------------------------------------------------------------
    def _selector(self, obj: Mapping[str, Any]) -> Selector | None:
        """The compiled spec.selector of a ReplicaSet/Deployment (cached per uid and selector value)."""
        meta = obj["metadata"]
        raw = (obj.get("spec") or {}).get("selector")
        cached = self._selectors.get(meta.get("uid", ""))
        if cached is not None and cached[0] == raw:
            return cached[1]
        try:
            sel: Selector | None = compile_label_selector(raw)
        except LabelSelectorError:
            sel = None
        self._selectors[meta.get("uid", "")] = (raw, sel)
        return sel

    def _enqueue_rs_by_uid(self, ns: str, uid: str) -> None:
        for rs in self.store.list(RS_KEY, ns)[0]:
            if rs["metadata"].get("uid") == uid:
                self._enqueue(("ReplicaSet", ns, rs["metadata"]["name"]))
                return

    def _enqueue_owner_of_rs(self, ns: str, name: str) -> None:
        try:
            rs = self.store.get(RS_KEY, ns, name)
        except NotFound:
            return
        ref = controller_of(rs)
        if ref is not None and ref.get("kind") == "Deployment":
            self._enqueue(("Deployment", ns, ref["name"]))
