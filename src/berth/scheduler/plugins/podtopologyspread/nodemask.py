"""Node inclusion policies: which nodes count for a constraint (kube's matchNodeInclusionPolicies).

``nodeAffinityPolicy: Honor`` keeps the nodes matching the pod's nodeSelector and required node affinity;
``nodeTaintsPolicy: Honor`` keeps the nodes without a NoSchedule/NoExecute taint the pod does not
tolerate. Both in a per-node form and over every row of a NodeTable.
"""

from __future__ import annotations

import numpy as np

from berth.api.nodeselector import RequiredNodeAffinity
from berth.api.taints import Taint, Toleration, find_untolerated
from berth.scheduler.framework import NodeInfo, NodeTable, PodInfo
from berth.scheduler.framework.nodetable import BoolArray
from berth.scheduler.plugins.nodeaffinity.vector import labels_mask, selector_mask

DO_NOT_SCHEDULE_EFFECTS = frozenset({"NoSchedule", "NoExecute"})


def has_required_affinity(req: RequiredNodeAffinity) -> bool:
    """Whether the pod constrains nodes at all (nodeSelector or required node affinity)."""
    return bool(req.node_selector_labels) or req.required is not None


def node_matches_affinity(pod: PodInfo, node: NodeInfo) -> bool:
    """Per-node form of the node affinity policy."""
    return pod.required_node_affinity.matches(node.labels, node.name)


def node_tolerated(pod: PodInfo, node: NodeInfo) -> bool:
    """Per-node form of the taints policy: no untolerated NoSchedule/NoExecute taint."""
    taints = node.taints
    return not taints or find_untolerated(taints, pod.tolerations, DO_NOT_SCHEDULE_EFFECTS) is None


def affinity_mask(req: RequiredNodeAffinity, table: NodeTable) -> BoolArray:
    """Rows matching the pod's nodeSelector and required node affinity (NodeAffinity's batched form)."""
    out = labels_mask(req.node_selector_labels or {}, table)
    if req.required is not None:
        out &= selector_mask(req.required, table)
    return out


def tolerated_mask(tolerations: tuple[Toleration, ...], table: NodeTable) -> BoolArray:
    """Rows without an untolerated NoSchedule/NoExecute taint (each distinct taint list checked once)."""
    n = table.size
    out = np.ones(n, dtype=np.bool_)
    tainted = np.flatnonzero(table.has_taints[:n])
    seen: dict[tuple[Taint, ...], bool] = {}
    all_taints = table.taints
    for r in tainted.tolist():
        taints = all_taints[r]
        ok = seen.get(taints)
        if ok is None:
            ok = seen[taints] = find_untolerated(taints, tolerations, DO_NOT_SCHEDULE_EFFECTS) is None
        out[r] = ok
    return out


class InclusionMasks:
    """The two policy masks of one pod over one table, computed on first use."""

    __slots__ = ("_affinity", "_pod", "_table", "_tolerated")

    def __init__(self, pod: PodInfo, table: NodeTable) -> None:
        self._pod = pod
        self._table = table
        self._affinity: BoolArray | None = None
        self._tolerated: BoolArray | None = None

    def affinity(self) -> BoolArray | None:
        """Rows the node affinity policy keeps (None: every row)."""
        req = self._pod.required_node_affinity
        if not has_required_affinity(req):
            return None
        if self._affinity is None:
            self._affinity = affinity_mask(req, self._table)
        return self._affinity

    def tolerated(self) -> BoolArray | None:
        """Rows the taints policy keeps (None: every row)."""
        table = self._table
        if not table.has_taints[: table.size].any():
            return None
        if self._tolerated is None:
            self._tolerated = tolerated_mask(self._pod.tolerations, table)
        return self._tolerated
