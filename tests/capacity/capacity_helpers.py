"""Builders for the CapacityScheduling tests: quotas, GPU nodes and pods in wire form, a fake handle."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from berth.scheduler.framework.config import parse_config
from berth.scheduler.framework.podinfo import PodInfo
from berth.sim.engine import Simulation
from berth.sim.scenario import Plan, Step

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


def node(name: str, gpu: int = 0, cpu: str = "32", memory: str = "64Gi") -> Obj:
    """A Node with ``gpu`` GPUs."""
    res: Obj = {"cpu": cpu, "memory": memory, "pods": "110"}
    if gpu:
        res[GPU] = str(gpu)
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
        "status": {"capacity": dict(res), "allocatable": dict(res)},
    }


def pod(
    name: str,
    ns: str,
    requests: Mapping[str, Any],
    *,
    prio: int = 0,
    uid: str | None = None,
    on: str | None = None,
    phase: str | None = None,
    nominated: str | None = None,
    labels: Mapping[str, str] | None = None,
    start: str | None = None,
) -> Obj:
    """A Pod in ``ns`` with the given container requests and spec.priority."""
    spec: Obj = {
        "containers": [{"name": "c", "image": "busybox", "resources": {"requests": dict(requests)}}],
        "priority": prio,
    }
    if on:
        spec["nodeName"] = on
    meta: Obj = {"name": name, "namespace": ns, "uid": uid or f"uid-{ns}-{name}"}
    if labels:
        meta["labels"] = dict(labels)
    obj: Obj = {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}
    status: Obj = {}
    if phase:
        status["phase"] = phase
    if nominated:
        status["nominatedNodeName"] = nominated
    if start:
        status["startTime"] = start
    if status:
        obj["status"] = status
    return obj


def info(obj: Obj) -> PodInfo:
    """The PodInfo of a wire-form pod."""
    return PodInfo(obj)


def capacity_config() -> Any:
    """A KubeSchedulerConfiguration enabling CapacityScheduling (PreFilter, Reserve, PostFilter in place of
    DefaultPreemption), as the scheduler-plugins docs show."""
    return parse_config(
        {
            "apiVersion": "kubescheduler.config.k8s.io/v1",
            "kind": "KubeSchedulerConfiguration",
            "profiles": [
                {
                    "schedulerName": "default-scheduler",
                    "plugins": {
                        "preFilter": {"enabled": [{"name": "CapacityScheduling"}]},
                        "postFilter": {
                            "enabled": [{"name": "CapacityScheduling"}],
                            "disabled": [{"name": "*"}],
                        },
                        "reserve": {"enabled": [{"name": "CapacityScheduling"}]},
                    },
                }
            ],
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


def gpu_pods(ns: str, prefix: str, count: int, *, prio: int = 0) -> list[Obj]:
    """``count`` one-GPU pods (no uid: the API assigns it)."""
    out = []
    for i in range(count):
        p = pod(f"{prefix}{i}", ns, {GPU: "1", "cpu": "100m"}, prio=prio)
        del p["metadata"]["uid"]
        out.append(p)
    return out


def priority_class(value: int) -> Obj:
    """The PriorityClass ``p<value>``."""
    return {
        "apiVersion": "scheduling.k8s.io/v1",
        "kind": "PriorityClass",
        "metadata": {"name": f"p{value}"},
        "value": value,
    }


def api_pod(name: str, ns: str, requests: Mapping[str, Any], prio: int = 0) -> Obj:
    """A pod to create through the API: no uid, priority through PriorityClass ``p<prio>`` when non-zero."""
    p = pod(name, ns, requests)
    del p["metadata"]["uid"]
    del p["spec"]["priority"]
    if prio:
        p["spec"]["priorityClassName"] = f"p{prio}"
    return p
