"""Deployments, PDBs, a virtual-time driver, a bare store and readers for the drain, podgc and disruption-property
tests."""

from __future__ import annotations

from typing import Any

import pytest

from berth.clock import SimClock
from berth.controlplane.plane import install_admission
from berth.descheduler import DrainError, DrainResult, drain
from berth.sim.engine import Simulation
from berth.store import MemoryStore
from builders import make_node

POD = ("", "Pod")
NODE = ("", "Node")
PDB = ("policy", "PodDisruptionBudget")


def deployment(
    name: str = "web", replicas: int = 3, app: str | None = None, cpu: str = "100m"
) -> dict[str, Any]:
    """A Deployment of pods labelled app=<app or name>."""
    labels = {"app": app or name}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {
                    "containers": [{"name": "c", "image": "nginx", "resources": {"requests": {"cpu": cpu}}}]
                },
            },
        },
    }


def daemonset(name: str) -> dict[str, Any]:
    """A DaemonSet whose pods fit no node (its nodeSelector matches none), so the drain tests place its pods
    by hand."""
    labels = {"app": name}
    return {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": name},
        "spec": {
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {
                    "nodeSelector": {"berth.test/none": "none"},
                    "containers": [{"name": "c", "image": "agent"}],
                },
            },
        },
    }


def web_on_two_nodes(replicas: int = 3) -> list[dict[str, Any]]:
    """node-a and node-b, the Deployment web of ``replicas`` and its PDB web-pdb (minAvailable 2)."""
    nodes = [make_node(name).obj() for name in ("node-a", "node-b")]
    return [*nodes, deployment("web", replicas), budget("web-pdb", "web", minAvailable=2)]


def budget(name: str, app: str, **bounds: Any) -> dict[str, Any]:
    """A PDB over app=<app> with minAvailable / maxUnavailable given as keyword arguments."""
    return {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": name},
        "spec": {"selector": {"matchLabels": {"app": app}}, **bounds},
    }


def advance(sim: Simulation, until: float) -> None:
    """Run the simulation to virtual time `until` (every timer due by then, and its consequences)."""
    sim.advance(until)


def start(*objects: dict[str, Any], seed: int = 0, until: float = 5.0) -> Simulation:
    """A simulation holding `objects`, run to `until`."""
    sim = Simulation(seed=seed)
    for o in objects:
        sim.store.create(o)
    advance(sim, until)
    return sim


def pods_on(sim: Simulation, node_name: str) -> list[str]:
    """Names of the pods bound to `node_name` (sorted)."""
    return [p["metadata"]["name"] for p in sim.store.list(POD)[0] if p["spec"].get("nodeName") == node_name]


def is_ready(pod: dict[str, Any]) -> bool:
    """Ready=True and not being deleted."""
    if pod["metadata"].get("deletionTimestamp"):
        return False
    return any(
        c.get("type") == "Ready" and c.get("status") == "True"
        for c in (pod.get("status") or {}).get("conditions") or []
    )


def healthy(sim: Simulation, app: str) -> int:
    """Ready pods of app=<app> not being deleted."""
    return sum(
        1 for p in sim.store.list(POD)[0] if p["metadata"].get("labels", {}).get("app") == app and is_ready(p)
    )


class Bare:
    """A store with the API server's admission and a virtual clock, and no controllers: the pods given stay as
    they are (no DaemonSet controller or garbage collector acts on them) unless the drain evicts them."""

    def __init__(self, *objects: dict[str, Any]) -> None:
        self.clock = SimClock()
        self.store = MemoryStore(clock=self.clock)
        install_admission(self.store)
        for o in objects:
            self.store.create(o)

    def drain(self, **kw: Any) -> DrainResult:
        """Drain n1 and run the clock until it ends."""
        done: list[DrainResult] = []
        drain(self.store, self.clock, "n1", on_done=done.append, **kw)
        self.clock.run(until=self.clock.now() + 120.0)
        (result,) = done
        return result

    def refusal(self, **kw: Any) -> str:
        """The DrainError of draining n1."""
        with pytest.raises(DrainError) as info:
            drain(self.store, self.clock, "n1", **kw)
        return str(info.value)
