"""Builders and a virtual-time driver for the workload controller tests."""

from __future__ import annotations

from typing import Any

from berth.sim.engine import Simulation

DEPLOY = ("apps", "Deployment")
RS = ("apps", "ReplicaSet")
POD = ("", "Pod")


def template(
    image: str = "nginx", cpu: str = "100m", annotations: dict[str, str] | None = None
) -> dict[str, Any]:
    """A pod template labelled app=web."""
    meta: dict[str, Any] = {"labels": {"app": "web"}}
    if annotations:
        meta["annotations"] = annotations
    return {
        "metadata": meta,
        "spec": {"containers": [{"name": "c", "image": image, "resources": {"requests": {"cpu": cpu}}}]},
    }


def deployment(name: str = "web", replicas: int = 3, **spec: Any) -> dict[str, Any]:
    """A Deployment manifest selecting app=web; extra keyword arguments go into spec."""
    body: dict[str, Any] = {
        "replicas": replicas,
        "selector": {"matchLabels": {"app": "web"}},
        "template": spec.pop("template", None) or template(),
        **spec,
    }
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name}, "spec": body}


def replica_set(name: str = "rs", replicas: int = 2, **spec: Any) -> dict[str, Any]:
    """A bare ReplicaSet manifest selecting app=web."""
    body: dict[str, Any] = {
        "replicas": replicas,
        "selector": {"matchLabels": {"app": "web"}},
        "template": spec.pop("template", None) or template(),
        **spec,
    }
    return {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": name}, "spec": body}


def advance(sim: Simulation, until: float) -> None:
    """Run the simulation to virtual time `until` (every timer due by then, and its consequences)."""
    sim.advance(until)


def start(*objects: dict[str, Any], seed: int = 0, until: float = 0.0) -> Simulation:
    """A simulation holding `objects`, run to `until`."""
    sim = Simulation(seed=seed)
    for o in objects:
        sim.store.create(o)
    advance(sim, until)
    return sim


def stored_pods(sim: Simulation, *, active_only: bool = False) -> list[dict[str, Any]]:
    """Pods sorted by name (optionally only those not being deleted)."""
    items = sim.store.list(POD)[0]
    if active_only:
        items = [p for p in items if not p["metadata"].get("deletionTimestamp")]
    return items


def names(objs: list[dict[str, Any]]) -> list[str]:
    """The names of objects."""
    return [o["metadata"]["name"] for o in objs]


def events(sim: Simulation, *reasons: str) -> list[tuple[str, str, str, str]]:
    """(time, object, reason, message) of Events with the given reasons, in recording order."""
    items = [e for e in sim.store.list(("", "Event"))[0] if not reasons or e["reason"] in reasons]
    items.sort(key=lambda e: int(e["metadata"]["resourceVersion"]))
    return [
        (e["firstTimestamp"][11:19], e["involvedObject"]["name"], e["reason"], e["message"]) for e in items
    ]
