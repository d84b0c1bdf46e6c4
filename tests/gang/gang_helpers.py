"""PodGroups, gangs, a Coscheduling profile and a Simulation run shared by the gang-scheduling tests."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from berth.scheduler.framework.config import SchedulerConfig
from berth.sim.engine import Simulation
from berth.sim.scenario import Plan, Step
from builders import make_pod, scheduler_config

Obj = dict[str, Any]
PG_API = "scheduling.x-k8s.io/v1alpha1"
LABEL = "scheduling.x-k8s.io/pod-group"


def pod_group(
    name: str,
    min_member: int,
    *,
    namespace: str = "default",
    created: str | None = None,
    timeout: int | None = None,
    min_resources: Mapping[str, str] | None = None,
) -> Obj:
    """A PodGroup (with creationTimestamp ``created`` when given)."""
    spec: Obj = {"minMember": min_member}
    if timeout is not None:
        spec["scheduleTimeoutSeconds"] = timeout
    if min_resources is not None:
        spec["minResources"] = dict(min_resources)
    meta: Obj = {"name": name, "namespace": namespace}
    if created is not None:
        meta["creationTimestamp"] = created
    return {"apiVersion": PG_API, "kind": "PodGroup", "metadata": meta, "spec": spec}


def gang(name: str, size: int, cpu: str = "1", **kw: Any) -> list[Obj]:
    """A PodGroup of ``size`` (minMember) and its ``size`` pods ``<name>-<i>``."""
    pods = [make_pod(f"{name}-{i}").pod_group(name).req(cpu=cpu).obj() for i in range(size)]
    return [pod_group(name, size, **kw), *pods]


def cosched_config(args: Mapping[str, Any] | None = None, *, preemption: bool = True) -> SchedulerConfig:
    """A profile with Coscheduling replacing PrioritySort and enabled at every other point."""
    plugins: Obj = {
        "queueSort": {"enabled": [{"name": "Coscheduling"}], "disabled": [{"name": "PrioritySort"}]},
        "multiPoint": {"enabled": [{"name": "Coscheduling"}]},
    }
    if not preemption:
        plugins["postFilter"] = {"disabled": [{"name": "DefaultPreemption"}]}
    return scheduler_config(plugins, None if args is None else {"Coscheduling": args})


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
