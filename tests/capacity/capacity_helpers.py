"""ElasticQuotas, PriorityClasses, GPU pods, a CapacityScheduling profile and a Simulation run for the
CapacityScheduling tests."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from berth.scheduler.framework.config import SchedulerConfig
from berth.sim.engine import Simulation
from berth.sim.scenario import Plan, Step
from builders import PodBuilder, make_pod, scheduler_config

Obj = dict[str, Any]
GPU = "nvidia.com/gpu"
POD = ("", "Pod")
EQ = ("scheduling.x-k8s.io", "ElasticQuota")


def quota(
    ns: str,
    min_: Mapping[str, Any] | None,
    max_: Mapping[str, Any] | None,
    *,
    name: str | None = None,
    group: str = "scheduling.x-k8s.io",
) -> Obj:
    """An ElasticQuota in ``ns``."""
    spec: Obj = {}
    if min_ is not None:
        spec["min"] = dict(min_)
    if max_ is not None:
        spec["max"] = dict(max_)
    return {
        "apiVersion": f"{group}/v1alpha1",
        "kind": "ElasticQuota",
        "metadata": {"name": name or ns, "namespace": ns},
        "spec": spec,
    }


def capacity_config() -> SchedulerConfig:
    """A KubeSchedulerConfiguration enabling CapacityScheduling (PreFilter, Reserve, PostFilter in place of
    DefaultPreemption), as the scheduler-plugins docs show."""
    return scheduler_config(
        {
            "preFilter": {"enabled": [{"name": "CapacityScheduling"}]},
            "postFilter": {"enabled": [{"name": "CapacityScheduling"}], "disabled": [{"name": "*"}]},
            "reserve": {"enabled": [{"name": "CapacityScheduling"}]},
        }
    )


def simulate(timeline: Sequence[tuple[float, Sequence[Obj]]], *, until: float, seed: int = 0) -> Simulation:
    """Create each batch of objects at its time and run to ``until`` with CapacityScheduling enabled."""
    sim = Simulation(config=capacity_config(), seed=seed)
    sim.run(Plan([Step(t, [dict(o) for o in objs]) for t, objs in timeline]), until=until)
    assert not sim.step_errors, sim.step_errors
    return sim


def bound(sim: Simulation, ns: str) -> list[str]:
    """Names of the live (not terminating) pods of ``ns`` bound to a node, sorted."""
    out = []
    for o in sim.store.list(POD, ns)[0]:
        if (o.get("spec") or {}).get("nodeName") and not o["metadata"].get("deletionTimestamp"):
            out.append(o["metadata"]["name"])
    return sorted(out)


def preempted(sim: Simulation) -> int:
    """How many Preempted events the scheduler recorded."""
    sim.events.flush()
    return sum(1 for e in sim.store.list(("", "Event"))[0] if e.get("reason") == "Preempted")


def scheduled_message(sim: Simulation, ns: str, name: str) -> str:
    """The PodScheduled condition message of a pod."""
    p = sim.store.get(POD, ns, name)
    for c in (p.get("status") or {}).get("conditions") or []:
        if c.get("type") == "PodScheduled":
            return str(c.get("message") or "")
    return ""


def quota_pod(ns: str, name: str, gpu: int | None = None, *, prio: int = 0) -> PodBuilder:
    """A PodBuilder for pod ``name`` of namespace ``ns`` with spec.priority ``prio``, asking ``gpu`` GPUs when
    given; its uid is ``uid-<ns>-<name>`` (the plugin tracks pods by uid)."""
    p = make_pod(name).ns(ns).uid(f"uid-{ns}-{name}").priority(prio)
    return p if gpu is None else p.req({GPU: str(gpu)})


def gpu_pods(ns: str, prefix: str, count: int, *, prio: int = 0) -> list[Obj]:
    """``count`` one-GPU pods (no uid: the API assigns it)."""
    return [
        make_pod(f"{prefix}{i}").ns(ns).req({GPU: "1"}, cpu="100m").priority(prio).obj() for i in range(count)
    ]


def priority_class(value: int) -> Obj:
    """The PriorityClass ``p<value>``."""
    return {
        "apiVersion": "scheduling.k8s.io/v1",
        "kind": "PriorityClass",
        "metadata": {"name": f"p{value}"},
        "value": value,
    }
