"""Builders shared by the gang-scheduling tests: nodes, pods, PodGroups and a Coscheduling profile."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from berth.scheduler.framework.config import SchedulerConfig, parse_config
from berth.sim.engine import Simulation
from berth.sim.scenario import Plan, Step

Obj = dict[str, Any]
PG_API = "scheduling.x-k8s.io/v1alpha1"
LABEL = "scheduling.x-k8s.io/pod-group"


def node(name: str, cpu: str = "4", pods: str = "110") -> Obj:
    """A Node with ``cpu`` allocatable and 8Gi memory."""
    res = {"cpu": cpu, "memory": "8Gi", "pods": pods}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
        "status": {"capacity": dict(res), "allocatable": dict(res)},
    }


def pod(name: str, group: str = "", cpu: str = "1", *, gated: bool = False, priority: int = 0) -> Obj:
    """A pod requesting ``cpu``, member of ``group`` when given."""
    meta: Obj = {"name": name, "namespace": "default"}
    if group:
        meta["labels"] = {LABEL: group}
    spec: Obj = {
        "containers": [{"name": "c", "image": "busybox", "resources": {"requests": {"cpu": cpu}}}],
        "priority": priority,
    }
    if gated:
        spec["schedulingGates"] = [{"name": "wait"}]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}


def pod_group(
    name: str, min_member: int, *, timeout: int | None = None, min_resources: Mapping[str, str] | None = None
) -> Obj:
    """A PodGroup."""
    spec: Obj = {"minMember": min_member}
    if timeout is not None:
        spec["scheduleTimeoutSeconds"] = timeout
    if min_resources is not None:
        spec["minResources"] = dict(min_resources)
    return {
        "apiVersion": PG_API,
        "kind": "PodGroup",
        "metadata": {"name": name, "namespace": "default"},
        "spec": spec,
    }


def gang(name: str, size: int, cpu: str = "1", **kw: Any) -> list[Obj]:
    """A PodGroup of ``size`` (minMember) and its ``size`` pods ``<name>-<i>``."""
    return [pod_group(name, size, **kw), *(pod(f"{name}-{i}", name, cpu) for i in range(size))]


def cosched_config(args: Mapping[str, Any] | None = None, *, preemption: bool = True) -> SchedulerConfig:
    """A profile with Coscheduling replacing PrioritySort and enabled at every other point."""
    plugins: Obj = {
        "queueSort": {"enabled": [{"name": "Coscheduling"}], "disabled": [{"name": "PrioritySort"}]},
        "multiPoint": {"enabled": [{"name": "Coscheduling"}]},
    }
    if not preemption:
        plugins["postFilter"] = {"disabled": [{"name": "DefaultPreemption"}]}
    profile: Obj = {"schedulerName": "default-scheduler", "plugins": plugins}
    if args is not None:
        profile["pluginConfig"] = [{"name": "Coscheduling", "args": dict(args)}]
    return parse_config(
        {
            "apiVersion": "kubescheduler.config.k8s.io/v1",
            "kind": "KubeSchedulerConfiguration",
            "profiles": [profile],
        }
    )


def simulate(
    timeline: Sequence[tuple[float, Sequence[Obj]]], *, until: float, config: SchedulerConfig | None = None
) -> Simulation:
    """Create each batch of objects at its time and run to ``until``."""
    sim = Simulation(config=config or cosched_config())
    steps = [Step(t, [dict(o) for o in objs]) for t, objs in timeline]
    sim.run(Plan(steps, until), until=until)
    return sim


def bound(sim: Simulation, prefix: str = "") -> dict[str, str]:
    """Pod name -> node of the bound pods (names starting with ``prefix``)."""
    pods = sim.store.list(("", "Pod"))[0]
    return {
        p["metadata"]["name"]: p["spec"]["nodeName"]
        for p in pods
        if p["metadata"]["name"].startswith(prefix) and (p.get("spec") or {}).get("nodeName")
    }


def pod_obj(sim: Simulation, name: str) -> Obj:
    """The stored pod."""
    return sim.store.get(("", "Pod"), "default", name)


def pg_obj(sim: Simulation, name: str) -> Obj:
    """The stored PodGroup."""
    return sim.store.get(("scheduling.x-k8s.io", "PodGroup"), "default", name)
