"""The cluster as one descheduling cycle sees it: nodes, the pods assigned to each, and the objects the
evictor's rules consult (namespaces, PodDisruptionBudgets, PriorityClasses), read once per cycle.

Like the descheduler's informer caches, the view does not change while a cycle runs: an evicted pod stays
assigned to its node (it is terminating) until the next cycle reads the cluster again. `nodes` are the
cycle's nodes: Ready (a node whose Ready condition is not True is skipped, as upstream's ``IsReady``) and
matching the policy's ``nodeSelector``; `pods_on` answers for any node, in or out of the cycle.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from berth.api.contracts import Store
from berth.api.labels import Selector
from berth.api.resources import pod_requests
from berth.api.timestamps import parse_time

__all__ = ["ClusterView", "is_node_ready", "owner_refs", "pod_phase", "read_view"]

Obj = dict[str, Any]

_POD = ("", "Pod")
_NODE = ("", "Node")
_NAMESPACE = ("", "Namespace")
_PDB = ("policy", "PodDisruptionBudget")
_PRIORITY_CLASS = ("scheduling.k8s.io", "PriorityClass")
_FINISHED = ("Succeeded", "Failed")


def is_node_ready(node: Mapping[str, Any]) -> bool:
    """Upstream's ``IsReady``: false only when a Ready condition exists with a status other than True."""
    for cond in (node.get("status") or {}).get("conditions") or ():
        if cond.get("type") == "Ready" and cond.get("status") != "True":
            return False
    return True


def pod_phase(pod: Mapping[str, Any]) -> str:
    """``status.phase`` ("" when unset)."""
    return str((pod.get("status") or {}).get("phase") or "")


def owner_refs(pod: Mapping[str, Any]) -> list[dict[str, Any]]:
    """``metadata.ownerReferences`` (empty when unset)."""
    return list((pod.get("metadata") or {}).get("ownerReferences") or ())


class ClusterView:
    """Nodes, pods and the evictor's reference objects at the start of a descheduling cycle."""

    def __init__(
        self,
        *,
        nodes: Sequence[Obj],
        pods: Sequence[Obj],
        now: float,
        namespaces: Iterable[Obj] = (),
        pdbs: Iterable[Obj] = (),
        priority_classes: Iterable[Obj] = (),
        node_selector: Selector | None = None,
    ) -> None:
        """`now` is Unix seconds (what PodLifeTime and restart rules compare with); `node_selector` is the
        policy's ``nodeSelector`` (None: every node)."""
        self.now = now
        self.all_nodes: list[Obj] = sorted(nodes, key=lambda n: str(n["metadata"]["name"]))
        self.node_by_name: dict[str, Obj] = {str(n["metadata"]["name"]): n for n in self.all_nodes}
        self.nodes: list[Obj] = [
            n
            for n in self.all_nodes
            if is_node_ready(n)
            and (node_selector is None or node_selector.matches(n["metadata"].get("labels") or {}))
        ]
        self.pods: list[Obj] = list(pods)
        by_node: dict[str, list[Obj]] = {}
        for p in self.pods:
            name = (p.get("spec") or {}).get("nodeName")
            if name:
                by_node.setdefault(str(name), []).append(p)
        self._by_node = by_node
        self.namespaces: dict[str, Obj] = {str(n["metadata"]["name"]): n for n in namespaces}
        pdbs_by_ns: dict[str, list[Obj]] = {}
        for pdb in pdbs:
            pdbs_by_ns.setdefault(str(pdb["metadata"].get("namespace") or ""), []).append(pdb)
        self._pdbs = pdbs_by_ns
        self.priority_classes: dict[str, Obj] = {str(pc["metadata"]["name"]): pc for pc in priority_classes}
        self._requests: dict[int, Mapping[str, int]] = {}
        self._occupying: dict[str, list[Obj]] = {}

    def pods_on(self, node_name: str) -> list[Obj]:
        """Every pod assigned to the node (``spec.nodeName``), whatever its phase, as upstream's index."""
        return self._by_node.get(node_name, [])

    def occupying(self, node_name: str) -> list[Obj]:
        """The pods assigned to the node that hold resources: not Succeeded or Failed (upstream's
        ``ListPodsOnANode``)."""
        got = self._occupying.get(node_name)
        if got is None:
            got = [p for p in self.pods_on(node_name) if pod_phase(p) not in _FINISHED]
            self._occupying[node_name] = got
        return got

    def requests(self, pod: Mapping[str, Any]) -> Mapping[str, int]:
        """The pod's effective requests (cpu in milli-units), computed once per pod object."""
        key = id(pod)
        got = self._requests.get(key)
        if got is None:
            got = pod_requests(pod)
            self._requests[key] = got
        return got

    def namespace_labels(self, namespace: str) -> Mapping[str, str]:
        """The labels of a namespace (empty when the namespace object is unknown)."""
        ns = self.namespaces.get(namespace)
        return (ns or {}).get("metadata", {}).get("labels") or {}

    def pdbs_in(self, namespace: str) -> list[Obj]:
        """The PodDisruptionBudgets of a namespace."""
        return self._pdbs.get(namespace, [])

    def priority_class_value(self, name: str) -> int | None:
        """The value of a PriorityClass, None when it does not exist."""
        pc = self.priority_classes.get(name)
        return None if pc is None else int(pc.get("value") or 0)

    def declared_priority(self, pod: Mapping[str, Any]) -> int | None:
        """``spec.priority`` (what admission sets from the priority class), else the value of its
        ``priorityClassName`` when that class exists, else None."""
        spec = pod.get("spec") or {}
        value = spec.get("priority")
        if value is not None:
            return int(value)
        name = spec.get("priorityClassName")
        return self.priority_class_value(str(name)) if name else None

    def priority(self, pod: Mapping[str, Any]) -> int:
        """The pod's priority: ``spec.priority``, else its class's value, else 0."""
        got = self.declared_priority(pod)
        return 0 if got is None else got

    def age_seconds(self, obj: Mapping[str, Any]) -> float:
        """Seconds since the object's ``metadata.creationTimestamp`` (0 when unset)."""
        when = parse_time((obj.get("metadata") or {}).get("creationTimestamp"))
        return 0.0 if when is None else self.now - when.timestamp()


def read_view(store: Store, now: float, node_selector: Selector | None = None) -> ClusterView:
    """Read the cluster from `store` into a view (one list per kind)."""
    nodes, _ = store.list(_NODE)
    pods, _ = store.list(_POD)
    namespaces, _ = store.list(_NAMESPACE)
    pdbs, _ = store.list(_PDB)
    classes, _ = store.list(_PRIORITY_CLASS)
    return ClusterView(
        nodes=nodes,
        pods=pods,
        now=now,
        namespaces=namespaces,
        pdbs=pdbs,
        priority_classes=classes,
        node_selector=node_selector,
    )
