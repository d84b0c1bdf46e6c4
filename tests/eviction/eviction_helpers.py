"""Builders for the eviction tests: a MemoryStore on a SimClock with pods, a ReplicaSet and PDBs whose status
is written by hand (so every rule can be set up exactly)."""

from __future__ import annotations

from typing import Any

from berth.clock import SimClock
from berth.store import MemoryStore

POD = ("", "Pod")
PDB = ("policy", "PodDisruptionBudget")
NODE = ("", "Node")
LABELS = {"app": "web"}


def new_store() -> tuple[MemoryStore, SimClock]:
    """An empty store on a virtual clock at 0 (2024-01-01T00:00:00Z)."""
    clock = SimClock()
    return MemoryStore(clock=clock), clock


def node(store: MemoryStore, name: str = "n1") -> dict[str, Any]:
    """Create a node."""
    res = {"cpu": "4", "memory": "8Gi", "pods": "110"}
    return store.create(
        {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": name},
            "spec": {},
            "status": {"allocatable": res},
        }
    )


def replica_set(store: MemoryStore, name: str = "web", kind: str = "ReplicaSet") -> dict[str, Any]:
    """A controller reference target (a stored ReplicaSet)."""
    return store.create(
        {
            "apiVersion": "apps/v1",
            "kind": "ReplicaSet",
            "metadata": {"name": name},
            "spec": {
                "replicas": 3,
                "selector": {"matchLabels": dict(LABELS)},
                "template": {
                    "metadata": {"labels": dict(LABELS)},
                    "spec": {"containers": [{"name": "c", "image": "x"}]},
                },
            },
        }
    )


def controller_ref(obj: dict[str, Any], kind: str | None = None) -> dict[str, Any]:
    """A controller ownerReference to `obj` (optionally claiming another kind)."""
    return {
        "apiVersion": obj["apiVersion"],
        "kind": kind or obj["kind"],
        "name": obj["metadata"]["name"],
        "uid": obj["metadata"]["uid"],
        "controller": True,
    }


def pod(
    store: MemoryStore,
    name: str,
    *,
    ready: bool = True,
    phase: str | None = "Running",
    node_name: str | None = "n1",
    labels: dict[str, str] | None = None,
    owner: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Create a pod (bound to `node_name`, with `phase` and Ready=`ready`)."""
    meta: dict[str, Any] = {"name": name, "labels": dict(LABELS if labels is None else labels)}
    if owner is not None:
        meta["ownerReferences"] = [owner]
    spec: dict[str, Any] = {"containers": [{"name": "c", "image": "nginx"}]}
    if node_name:
        spec["nodeName"] = node_name
    created = store.create({"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec})
    if phase is None:
        return created
    cond = {
        "type": "Ready",
        "status": "True" if ready else "False",
        "lastProbeTime": None,
        "lastTransitionTime": "2024-01-01T00:00:00Z",
    }
    return store.update_status({**created, "status": {"phase": phase, "conditions": [cond]}})


def pdb(
    store: MemoryStore,
    name: str = "web-pdb",
    *,
    allowed: int = 1,
    current: int = 3,
    desired: int = 2,
    observed: int = 1,
    selector: dict[str, Any] | None = None,
    policy: str | None = None,
    annotations: dict[str, str] | None = None,
) -> dict[str, Any]:
    """Create a PDB (minAvailable 2) and write the given status by hand."""
    spec: dict[str, Any] = {
        "minAvailable": 2,
        "selector": {"matchLabels": dict(LABELS)} if selector is None else selector,
    }
    if policy is not None:
        spec["unhealthyPodEvictionPolicy"] = policy
    meta: dict[str, Any] = {"name": name}
    if annotations:
        meta["annotations"] = annotations
    created = store.create(
        {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": meta, "spec": spec}
    )
    status = {
        "observedGeneration": observed,
        "disruptionsAllowed": allowed,
        "currentHealthy": current,
        "desiredHealthy": desired,
        "expectedPods": 3,
    }
    return store.update_status({**created, "status": status})


def get_pdb(store: MemoryStore, name: str = "web-pdb") -> dict[str, Any]:
    """The stored PDB."""
    return store.get(PDB, "default", name)


def advance(sim: Any, until: float) -> None:
    """Run a Simulation to virtual time `until`, letting every component react after each timer."""
    sim.run_until_idle()
    while True:
        nxt = sim.clock.peek()
        if nxt is None or nxt > until:
            break
        sim.clock.step()
        sim.run_until_idle()
    sim.clock.run(until=until)
    sim.run_until_idle()
