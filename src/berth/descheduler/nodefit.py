"""The descheduler's NodeFit: would a pod fit a node, were it rescheduled now?

Upstream's ``NodeFit`` checks, in order: the node is schedulable; the pod's nodeSelector and required node
affinity match it; the pod tolerates its NoSchedule and NoExecute taints; none of the pod's required
anti-affinity terms matches a pod already on the node (when the node has the term's topology key); and,
unless the pod already runs there, its requests fit what the node's allocatable leaves after the requests
of every pod assigned to it that is not Succeeded or Failed (and one more pod fits). `NodeFit` answers that for all nodes at once: the
resource test is numpy over a nodes-by-resources matrix, the label and taint tests are cached per pod
shape (the same selector, affinity and tolerations give the same answer).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from berth.api.nodeselector import required_node_affinity
from berth.api.podaffinity import AffinityTerm, compile_pod_affinity
from berth.api.resources import node_allocatable
from berth.api.taints import EFFECT_NO_EXECUTE, EFFECT_NO_SCHEDULE, Taint, parse_taints, parse_tolerations
from berth.descheduler.view import ClusterView

__all__ = ["NodeFit"]

Obj = dict[str, Any]
Mask = npt.NDArray[np.bool_]
_HARD = frozenset((EFFECT_NO_SCHEDULE, EFFECT_NO_EXECUTE))


class NodeFit:
    """NodeFit over every node of a `ClusterView` (its state when the cycle began)."""

    def __init__(self, view: ClusterView) -> None:
        """Build the resource matrix and per-node facts of `view`."""
        self.view = view
        nodes = view.all_nodes
        self.names = [str(n["metadata"]["name"]) for n in nodes]
        self.index = {name: i for i, name in enumerate(self.names)}
        allocs = [node_allocatable(n) for n in nodes]
        resources: dict[str, int] = {}
        for a in allocs:
            for r in a:
                resources.setdefault(r, len(resources))
        for p in view.pods:
            for r in view.requests(p):
                resources.setdefault(r, len(resources))
        self.resources = resources
        n, k = len(nodes), len(resources)
        alloc = np.zeros((n, k), dtype=np.int64)
        used = np.zeros((n, k), dtype=np.int64)
        count = np.zeros(n, dtype=np.int64)
        for i, (node_name, a) in enumerate(zip(self.names, allocs, strict=True)):
            for r, v in a.items():
                alloc[i, resources[r]] = v
            on = view.occupying(node_name)
            count[i] = len(on)
            row = used[i]
            for p in on:
                for r, v in view.requests(p).items():
                    row[resources[r]] += v
        pods_col = resources.get("pods")
        free_pods = (alloc[:, pods_col] if pods_col is not None else np.zeros(n, dtype=np.int64)) - count
        self.free = alloc - used
        self.free_pods = free_pods
        self.schedulable: Mask = np.array(
            [not (nd.get("spec") or {}).get("unschedulable") for nd in nodes], bool
        )
        self.labels: list[Mapping[str, str]] = [nd["metadata"].get("labels") or {} for nd in nodes]
        self.taints: list[tuple[Taint, ...]] = [
            parse_taints((nd.get("spec") or {}).get("taints")) for nd in nodes
        ]
        self._shape_masks: dict[str, Mask] = {}
        self._subset: dict[int, tuple[Sequence[Obj], int, npt.NDArray[np.intp]]] = {}

    # ---- per-node tests ------------------------------------------------------------------------------

    def _shape_mask(self, pod: Mapping[str, Any]) -> Mask:
        """Schedulable, selector/affinity and taint tests over all nodes, cached per pod shape."""
        spec = pod.get("spec") or {}
        key = json.dumps(
            [
                spec.get("nodeSelector"),
                (spec.get("affinity") or {}).get("nodeAffinity"),
                spec.get("tolerations"),
            ],
            sort_keys=True,
        )
        got = self._shape_masks.get(key)
        if got is None:
            affinity = required_node_affinity(pod)
            tolerations = parse_tolerations(spec.get("tolerations"))
            got = self.schedulable.copy()
            for i, name in enumerate(self.names):
                if not got[i]:
                    continue
                if not affinity.matches(self.labels[i], name):
                    got[i] = False
                    continue
                for taint in self.taints[i]:
                    if taint.effect in _HARD and not any(t.tolerates(taint) for t in tolerations):
                        got[i] = False
                        break
            self._shape_masks[key] = got
        return got

    def _anti_affinity_mask(self, pod: Mapping[str, Any]) -> Mask | None:
        """Nodes where one of the pod's required anti-affinity terms matches a pod on the node (None: no
        such term)."""
        terms = self._anti_terms(pod)
        if not terms:
            return None
        view = self.view
        blocked = np.zeros(len(self.names), dtype=bool)
        me = (pod.get("metadata") or {}).get("name")
        for i, name in enumerate(self.names):
            labels = self.labels[i]
            for term in terms:
                if term.topology_key not in labels:
                    continue
                for other in view.occupying(name):
                    meta = other["metadata"]
                    if meta.get("name") == me:
                        continue
                    ns = str(meta.get("namespace") or "")
                    if term.matches(ns, meta.get("labels") or {}, view.namespace_labels(ns)):
                        blocked[i] = True
                        break
                if blocked[i]:
                    break
        return blocked

    def _anti_terms(self, pod: Mapping[str, Any]) -> tuple[AffinityTerm, ...]:
        affinity = (pod.get("spec") or {}).get("affinity") or {}
        if not affinity.get("podAntiAffinity"):
            return ()
        meta = pod.get("metadata") or {}
        compiled = compile_pod_affinity(affinity, str(meta.get("namespace") or ""), meta.get("labels") or {})
        return compiled.required_anti_affinity

    def _resource_mask(self, pod: Mapping[str, Any]) -> Mask:
        """Nodes whose free resources hold the pod's requests, with room for one more pod."""
        mask = self.free_pods > 0
        for r, v in self.view.requests(pod).items():
            if r == "pods":
                continue
            col = self.resources.get(r)
            if col is None:
                return np.zeros(len(self.names), dtype=bool)
            mask &= self.free[:, col] >= v
        return mask

    def mask(self, pod: Mapping[str, Any]) -> Mask:
        """NodeFit for every node of the view (the pod's own node is judged without the resource test)."""
        mask = self._shape_mask(pod).copy()
        blocked = self._anti_affinity_mask(pod)
        if blocked is not None:
            mask &= ~blocked
        own = self.index.get(str((pod.get("spec") or {}).get("nodeName") or ""))
        fits_resources = self._resource_mask(pod)
        if own is not None:
            fits_resources[own] = True
        return mask & fits_resources

    def _indices(self, nodes: Sequence[Obj]) -> npt.NDArray[np.intp]:
        """Row numbers of `nodes`, remembered per list object (the cycle passes the same list each time)."""
        got = self._subset.get(id(nodes))
        if got is None or got[0] is not nodes or got[1] != len(nodes):
            idx = np.fromiter(
                (self.index[str(n["metadata"]["name"])] for n in nodes), dtype=np.intp, count=len(nodes)
            )
            got = (nodes, len(nodes), idx)
            self._subset[id(nodes)] = got
        return got[2]

    # ---- the questions -------------------------------------------------------------------------------

    def reason(self, pod: Mapping[str, Any], node: Mapping[str, Any]) -> str | None:
        """Why the pod would not fit the node (upstream's error text), None when it fits."""
        i = self.index[str(node["metadata"]["name"])]
        if not self.schedulable[i]:
            return "node is not schedulable"
        if not required_node_affinity(pod).matches(self.labels[i], self.names[i]):
            return "pod node selector does not match the node label"
        tolerations = parse_tolerations((pod.get("spec") or {}).get("tolerations"))
        for taint in self.taints[i]:
            if taint.effect in _HARD and not any(t.tolerates(taint) for t in tolerations):
                return "pod does not tolerate taints on the node"
        blocked = self._anti_affinity_mask(pod)
        if blocked is not None and blocked[i]:
            return "pod matches inter-pod anti-affinity rule of other pod on node"
        if str((pod.get("spec") or {}).get("nodeName") or "") != self.names[i]:
            for r, v in self.view.requests(pod).items():
                if r == "pods":
                    continue
                col = self.resources.get(r)
                if col is None or self.free[i, col] < v:
                    return f"insufficient {r}"
            if self.free_pods[i] <= 0:
                return "insufficient pods"
        return None

    def fits(self, pod: Mapping[str, Any], node: Mapping[str, Any]) -> bool:
        """Whether the pod fits the node."""
        return bool(self.mask(pod)[self.index[str(node["metadata"]["name"])]])

    def fits_any_node(self, pod: Mapping[str, Any], nodes: Sequence[Obj]) -> bool:
        """Whether the pod fits at least one of `nodes` (upstream's ``PodFitsAnyNode``)."""
        if not nodes:
            return False
        return bool(self.mask(pod)[self._indices(nodes)].any())

    def fits_any_other_node(self, pod: Mapping[str, Any], nodes: Sequence[Obj]) -> bool:
        """Whether the pod fits one of `nodes` other than its own (upstream's ``PodFitsAnyOtherNode``)."""
        if not nodes:
            return False
        mask = self.mask(pod)
        own = self.index.get(str((pod.get("spec") or {}).get("nodeName") or ""))
        if own is not None:
            mask = mask.copy()
            mask[own] = False
        return bool(mask[self._indices(nodes)].any())
