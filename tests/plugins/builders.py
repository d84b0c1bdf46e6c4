"""Small builders of wire-form nodes/pods and NodeTables for the plugin tests (kube's MakePod/MakeNode)."""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from berth.scheduler.framework import CycleState, NodeTable, PodInfo

_uid = itertools.count()


def make_node(
    name: str,
    cpu: str | int | None = "4",
    memory: str | int | None = "8Gi",
    pods: int | None = 110,
    labels: Mapping[str, str] | None = None,
    taints: Sequence[Mapping[str, str]] | None = None,
    unschedulable: bool = False,
    extra: Mapping[str, str | int] | None = None,
) -> dict[str, Any]:
    """A Node dict with status.allocatable built from the given amounts (None leaves a resource out)."""
    alloc: dict[str, Any] = {}
    for k, v in (("cpu", cpu), ("memory", memory), ("pods", pods)):
        if v is not None:
            alloc[k] = v
    alloc.update(extra or {})
    spec: dict[str, Any] = {}
    if taints:
        spec["taints"] = [dict(t) for t in taints]
    if unschedulable:
        spec["unschedulable"] = True
    meta: dict[str, Any] = {"name": name}
    if labels:
        meta["labels"] = dict(labels)
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": meta,
        "spec": spec,
        "status": {"allocatable": alloc},
    }


def pod_dict(
    name: str,
    cpu: str | int | None = None,
    memory: str | int | None = None,
    extra: Mapping[str, str | int] | None = None,
    tolerations: Sequence[Mapping[str, Any]] | None = None,
    node_selector: Mapping[str, str] | None = None,
    affinity: Mapping[str, Any] | None = None,
    ports: Sequence[Mapping[str, Any]] | None = None,
    priority: int | None = None,
    node_name: str | None = None,
    gates: Sequence[str] | None = None,
    containers: Sequence[Mapping[str, Any]] | None = None,
) -> dict[str, Any]:
    """A Pod dict with one container carrying the given requests and ports."""
    requests: dict[str, Any] = {}
    if cpu is not None:
        requests["cpu"] = cpu
    if memory is not None:
        requests["memory"] = memory
    requests.update(extra or {})
    container: dict[str, Any] = {"name": "c", "image": "busybox"}
    if requests:
        container["resources"] = {"requests": requests}
    if ports:
        container["ports"] = [dict(p) for p in ports]
    spec: dict[str, Any] = {"containers": [dict(c) for c in containers] if containers else [container]}
    if tolerations:
        spec["tolerations"] = [dict(t) for t in tolerations]
    if node_selector:
        spec["nodeSelector"] = dict(node_selector)
    if affinity:
        spec["affinity"] = dict(affinity)
    if priority is not None:
        spec["priority"] = priority
    if node_name:
        spec["nodeName"] = node_name
    if gates:
        spec["schedulingGates"] = [{"name": g} for g in gates]
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}-{next(_uid)}"},
        "spec": spec,
    }


def make_pod(name: str = "p", **kw: Any) -> PodInfo:
    """A compiled PodInfo (keyword arguments as :func:`pod_dict`)."""
    return PodInfo(pod_dict(name, **kw))


def host_port(port: int, ip: str = "", protocol: str = "") -> dict[str, Any]:
    """A container port with a host port."""
    d: dict[str, Any] = {"containerPort": port, "hostPort": port}
    if ip:
        d["hostIP"] = ip
    if protocol:
        d["protocol"] = protocol
    return d


def taint(key: str, value: str = "", effect: str = "NoSchedule") -> dict[str, str]:
    """A taint dict."""
    return {"key": key, "value": value, "effect": effect}


def toleration(key: str = "", operator: str = "", value: str = "", effect: str = "") -> dict[str, str]:
    """A toleration dict (empty fields left out)."""
    d = {"key": key, "operator": operator, "value": value, "effect": effect}
    return {k: v for k, v in d.items() if v}


def make_table(
    nodes: Iterable[Mapping[str, Any]], pods: Mapping[str, Sequence[PodInfo]] | None = None
) -> NodeTable:
    """A NodeTable with ``nodes`` and, per node name, the pods already counted on it."""
    table = NodeTable(capacity=4)
    for node in nodes:
        table.set_node(node)
    for node_name, infos in (pods or {}).items():
        i = table.index[node_name]
        for info in infos:
            table.add_pod(i, info)
    return table


def affinity_required(*terms: Mapping[str, Any]) -> dict[str, Any]:
    """An affinity with required node selector ``terms``."""
    return {
        "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": list(terms)}}
    }


def affinity_preferred(*weighted: tuple[int, Mapping[str, Any]]) -> dict[str, Any]:
    """An affinity with preferred ``(weight, term)`` pairs."""
    return {
        "nodeAffinity": {
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": w, "preference": dict(t)} for w, t in weighted
            ]
        }
    }


def expr(key: str, operator: str, *values: str) -> dict[str, Any]:
    """A match expression."""
    d: dict[str, Any] = {"key": key, "operator": operator}
    if values:
        d["values"] = list(values)
    return d


class FakeHandle:
    """A Handle stand-in recording bindings (raises ``fail`` when set)."""

    def __init__(self, fail: Exception | None = None) -> None:
        self.bound: list[tuple[str, str]] = []
        self.fail = fail

    def bind_pod(self, pod: PodInfo, node_name: str, annotations: dict[str, str] | None = None) -> None:
        """Record the binding or raise."""
        if self.fail is not None:
            raise self.fail
        self.bound.append((pod.key, node_name))
        self.annotations = annotations

    def register_pseudo_kind(self, kind: str, source: object) -> None:
        """Accept pseudo-pod sources (the Reservation plugin registers one)."""
        self.pseudo = (kind, source)


def new_state() -> CycleState:
    """A fresh CycleState."""
    return CycleState()
