"""The eviction tests' cluster: a MemoryStore on a SimClock with a ReplicaSet and PDBs whose status is written
by hand (so every rule can be set up exactly)."""

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
