"""Builders and readers shared by the Reservation scheduling acceptance tests."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from berth.api.manifest import Manifest
from berth.sim.engine import Simulation

RESERVATION_API = "scheduling.koordinator.sh/v1alpha1"
ALLOCATED = "scheduling.koordinator.sh/reservation-allocated"
AFFINITY = "scheduling.koordinator.sh/reservation-affinity"
IGNORED = "scheduling.koordinator.sh/reservation-ignored"
EXACT = "scheduling.koordinator.sh/exact-match-reservation"
ORDER = "scheduling.koordinator.sh/reservation-order"
RESTRICTED_OPTIONS = "scheduling.koordinator.sh/reservation-restricted-options"
KOORD = "koord-scheduler"

Obj = dict[str, Any]


def container(cpu: str, memory: str, ports: Sequence[int] = ()) -> Obj:
    """One container requesting cpu/memory (and host ports)."""
    c: Obj = {"name": "c", "image": "busybox", "resources": {"requests": {"cpu": cpu, "memory": memory}}}
    if ports:
        c["ports"] = [{"containerPort": p, "hostPort": p, "protocol": "TCP"} for p in ports]
    return c


def reservation(
    name: str,
    cpu: str = "2",
    memory: str = "2Gi",
    *,
    owners: list[Obj] | None = None,
    node_name: str | None = None,
    allocate_once: bool | None = None,
    policy: str | None = None,
    labels: dict[str, str] | None = None,
    annotations: dict[str, str] | None = None,
    taints: list[Obj] | None = None,
    unschedulable: bool | None = None,
    ports: Sequence[int] = (),
    scheduler: str = KOORD,
) -> Obj:
    """A Reservation whose template requests cpu/memory; owners default to pods labelled ``app: a``."""
    tspec: Obj = {"schedulerName": scheduler, "containers": [container(cpu, memory, ports)]}
    if node_name:
        tspec["nodeName"] = node_name
    spec: Obj = {
        "template": {"metadata": {"namespace": "default"}, "spec": tspec},
        "owners": owners if owners is not None else [{"labelSelector": {"matchLabels": {"app": "a"}}}],
        "ttl": "1h",
    }
    if allocate_once is not None:
        spec["allocateOnce"] = allocate_once
    if policy is not None:
        spec["allocatePolicy"] = policy
    if taints is not None:
        spec["taints"] = taints
    if unschedulable is not None:
        spec["unschedulable"] = unschedulable
    meta: Obj = {"name": name}
    if labels:
        meta["labels"] = dict(labels)
    if annotations:
        meta["annotations"] = dict(annotations)
    return {"apiVersion": RESERVATION_API, "kind": "Reservation", "metadata": meta, "spec": spec}


def ref(kind: str, name: str, namespace: str = "") -> Obj:
    """An object reference for a Scenario delete/patch."""
    api = RESERVATION_API if kind == "Reservation" else "v1"
    out: Obj = {"apiVersion": api, "kind": kind, "name": name}
    if namespace:
        out["namespace"] = namespace
    return out


def scenario(steps: list[Obj]) -> Obj:
    """A Berth Scenario with the given steps."""
    return {
        "apiVersion": "berth.dev/v1alpha1",
        "kind": "Scenario",
        "metadata": {"name": "reservation-test"},
        "spec": {"steps": steps},
    }


def simulate(
    *phases: Sequence[Obj], seed: int = 0, steps: Sequence[Obj] = (), until: float = 60.0
) -> Simulation:
    """Run a simulation: phase k's objects are created at k seconds; extra Scenario ``steps`` are added."""
    manifests = [Manifest(o, "test") for o in phases[0]] if phases else []
    all_steps = [{"at": f"{k}s", "create": list(objs)} for k, objs in enumerate(phases) if k > 0 and objs]
    all_steps.extend(steps)
    if all_steps:
        manifests.append(Manifest(scenario(all_steps), "test"))
    sim = Simulation(seed=seed)
    sim.run_manifests(manifests, until=until)
    return sim


def get(sim: Simulation, kind: str, name: str) -> Obj:
    """The stored object of ``kind`` named ``name`` (any namespace)."""
    for o in sim.objects():
        if o["kind"] == kind and o["metadata"]["name"] == name:
            return o
    raise KeyError(f"{kind} {name} not found")


def find(sim: Simulation, kind: str, name: str) -> Obj | None:
    """Like get, but None when absent."""
    try:
        return get(sim, kind, name)
    except KeyError:
        return None


def node_of(sim: Simulation, name: str) -> str | None:
    """The node a pod is bound to (None when Pending)."""
    return get(sim, "Pod", name)["spec"].get("nodeName")


def allocated_to(sim: Simulation, pod_name: str) -> str | None:
    """The reservation name in the pod's reservation-allocated annotation (None without it)."""
    raw = (get(sim, "Pod", pod_name)["metadata"].get("annotations") or {}).get(ALLOCATED)
    return None if raw is None else str(json.loads(raw)["name"])


PREEMPTION_PART = " preemption: "


def pod_message(sim: Simulation, name: str) -> str | None:
    """A pending pod's PodScheduled=False message up to DefaultPreemption's part (None when there is none):
    the filters' reasons and the Reservation PostFilter's "Reservation(s) ..." reasons, ended by a period.

    DefaultPreemption appends its own "preemption: ..." text after the Reservation reasons (tested in
    tests/preemption); these tests are about what the filters and reservations say, so that part is checked
    only for being kube's no-victims wording.
    """
    for c in get(sim, "Pod", name).get("status", {}).get("conditions") or []:
        if c["type"] == "PodScheduled" and c["status"] == "False":
            message = str(c["message"])
            fit, _, preemption = message.partition(PREEMPTION_PART)
            if preemption:
                assert preemption.startswith("0/"), message
                assert "No preemption victims found for incoming pod" in preemption or (
                    "Preemption is not helpful for scheduling" in preemption
                ), message
            if fit.endswith(","):  # the Reservation reasons and preemption's are one PostFilter message
                fit = fit[:-1] + "."
            return fit
    return None


def rsv_status(sim: Simulation, name: str) -> Obj:
    """A reservation's status."""
    return dict(get(sim, "Reservation", name).get("status") or {})


def placement(sim: Simulation, name: str) -> tuple[str | None, str | None]:
    """(node, reservation allocated) of a pod."""
    return node_of(sim, name), allocated_to(sim, name)


def events(sim: Simulation, involved: str) -> list[tuple[str, str, str]]:
    """(type, reason, message) of the events about an object, in store order."""
    return [
        (e["type"], e["reason"], e["message"])
        for e in sim.objects()
        if e["kind"] == "Event" and e["involvedObject"]["name"] == involved
    ]
