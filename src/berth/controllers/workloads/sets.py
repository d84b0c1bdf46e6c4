"""The StatefulSet and DaemonSet controllers as control-plane components: store events in, syncs on timers."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from berth.api.contracts import Recorder, Store
from berth.clock import Clock
from berth.controllers.workloads.daemonset import DS_KEY, DaemonSetController
from berth.controllers.workloads.podowner import PodOwnerDriver
from berth.controllers.workloads.statefulset import STS_KEY, StatefulSetController
from berth.store.events import EventRecorder

__all__ = ["DAEMONSET_KINDS", "STATEFULSET_KINDS", "DaemonSets", "StatefulSets"]

STATEFULSET_KINDS = ("Pod", "StatefulSet")
"""The kinds whose events the StatefulSet controller follows."""
DAEMONSET_KINDS = ("Pod", "DaemonSet", "Node")
"""The kinds whose events the DaemonSet controller follows."""


class StatefulSets:
    """kube-controller-manager's "statefulset" controller over `store` on `clock`."""

    def __init__(self, store: Store, clock: Clock, recorder: Recorder | None = None) -> None:
        """Follow StatefulSets and their pods; events go through `recorder` ("statefulset-controller")."""
        self.driver = PodOwnerDriver(store, clock, STS_KEY, adopts=True)
        self.controller = StatefulSetController(
            store,
            self.driver.pods,
            recorder or EventRecorder(store, component="statefulset-controller"),
            self.driver.now,
            self.driver.enqueue_after,
        )
        self.driver.bind(self.controller.sync)
        self.handle_pod: Callable[[str, Mapping[str, Any]], None] = self.driver.on_pod
        """React to a Pod event."""

    def handle_event(self, type_: str, obj: Mapping[str, Any]) -> None:
        """React to a Pod or StatefulSet event (others are ignored)."""
        kind = obj.get("kind")
        if kind == "Pod":
            self.driver.on_pod(type_, obj)
        elif kind == "StatefulSet":
            self.driver.on_owner(type_, obj)


class DaemonSets:
    """kube-controller-manager's "daemonset" controller over `store` on `clock`."""

    def __init__(self, store: Store, clock: Clock, recorder: Recorder | None = None) -> None:
        """Follow DaemonSets, their pods and the nodes; events go through `recorder` ("daemonset-controller")."""
        self.driver = PodOwnerDriver(store, clock, DS_KEY, adopts=True)
        self.controller = DaemonSetController(
            store,
            self.driver.pods,
            recorder or EventRecorder(store, component="daemonset-controller"),
            self.driver.now,
            self.driver.enqueue_after,
        )
        self.driver.bind(self.controller.sync)
        self.handle_pod: Callable[[str, Mapping[str, Any]], None] = self.driver.on_pod
        """React to a Pod event."""
        self._nodes: dict[str, tuple[Any, Any, Any]] = {}

    def handle_event(self, type_: str, obj: Mapping[str, Any]) -> None:
        """React to a Pod, DaemonSet or Node event (a node added, removed, relabelled or retainted resyncs
        every DaemonSet)."""
        kind = obj.get("kind")
        if kind == "Pod":
            self.driver.on_pod(type_, obj)
        elif kind == "DaemonSet":
            self.driver.on_owner(type_, obj)
        elif kind == "Node":
            name = str(obj["metadata"].get("name"))
            if type_ == "DELETED":
                self._nodes.pop(name, None)
                self.driver.enqueue_all()
                return
            spec = obj.get("spec") or {}
            shape = (obj["metadata"].get("labels"), spec.get("taints"), spec.get("unschedulable"))
            if self._nodes.get(name) != shape:
                self._nodes[name] = shape
                self.driver.enqueue_all()
