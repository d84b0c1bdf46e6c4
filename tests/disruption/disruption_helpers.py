"""Builders for the disruption-controller tests: a MemoryStore on a SimClock, ReplicaSets, Deployments and PDBs."""

from __future__ import annotations

from typing import Any

from berth.clock import SimClock
from berth.controllers.disruption import DisruptionController
from berth.store import MemoryStore
from berth.store.events import EventRecorder

POD = ("", "Pod")
PDB = ("policy", "PodDisruptionBudget")
RS = ("apps", "ReplicaSet")
DEPLOY = ("apps", "Deployment")
NODE = ("", "Node")
LABELS = {"app": "web"}


class Cluster:
    """A store, its clock and a disruption controller subscribed to it."""

    def __init__(self) -> None:
        self.clock = SimClock()
        self.store = MemoryStore(clock=self.clock)
        self.recorder = EventRecorder(self.store, component="controllermanager")
        self.controller = DisruptionController(self.store, self.clock, recorder=self.recorder)
        self.store.subscribe(lambda ev: self.controller.handle_event(ev.type, ev.object))

    def settle(self, until: float | None = None) -> None:
        """Run the timers due by `until` (default: now) and move the clock there."""
        self.clock.run(until=self.clock.now() if until is None else until)

    def status(self, name: str = "web-pdb") -> dict[str, Any]:
        """The PDB's status."""
        return dict(self.store.get(PDB, "default", name).get("status") or {})

    def events(self, reason: str) -> list[str]:
        """Messages of the Events with `reason`."""
        return [e["message"] for e in self.store.list(("", "Event"))[0] if e["reason"] == reason]


def owner(obj: dict[str, Any]) -> dict[str, Any]:
    """A controller ownerReference to a stored object."""
    return {
        "apiVersion": obj["apiVersion"],
        "kind": obj["kind"],
        "name": obj["metadata"]["name"],
        "uid": obj["metadata"]["uid"],
        "controller": True,
    }


def template() -> dict[str, Any]:
    """A pod template labelled app=web."""
    return {"metadata": {"labels": dict(LABELS)}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}}


def replica_set(
    store: MemoryStore, name: str = "web", replicas: int = 3, parent: dict[str, Any] | None = None
) -> dict[str, Any]:
    """Create a ReplicaSet (optionally controlled by `parent`)."""
    meta: dict[str, Any] = {"name": name}
    if parent is not None:
        meta["ownerReferences"] = [owner(parent)]
    return store.create(
        {
            "apiVersion": "apps/v1",
            "kind": "ReplicaSet",
            "metadata": meta,
            "spec": {"replicas": replicas, "selector": {"matchLabels": dict(LABELS)}, "template": template()},
        }
    )


def deployment(store: MemoryStore, name: str = "web", replicas: int = 3) -> dict[str, Any]:
    """Create a Deployment."""
    return store.create(
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": name},
            "spec": {"replicas": replicas, "selector": {"matchLabels": dict(LABELS)}, "template": template()},
        }
    )


def pdb(
    store: MemoryStore,
    name: str = "web-pdb",
    *,
    min_available: int | str | None = None,
    max_unavailable: int | str | None = None,
    selector: dict[str, Any] | None = None,
    policy: str | None = None,
    annotations: dict[str, str] | None = None,
) -> dict[str, Any]:
    """Create a PodDisruptionBudget selecting app=web by default."""
    spec: dict[str, Any] = {"selector": {"matchLabels": dict(LABELS)} if selector is None else selector}
    if min_available is not None:
        spec["minAvailable"] = min_available
    if max_unavailable is not None:
        spec["maxUnavailable"] = max_unavailable
    if policy is not None:
        spec["unhealthyPodEvictionPolicy"] = policy
    meta: dict[str, Any] = {"name": name}
    if annotations:
        meta["annotations"] = annotations
    return store.create(
        {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": meta, "spec": spec}
    )
