"""Node inclusion policies: which nodes count for a constraint (kube's matchNodeInclusionPolicies).

``nodeAffinityPolicy: Honor`` keeps the nodes matching the pod's nodeSelector and required node affinity;
``nodeTaintsPolicy: Honor`` keeps the nodes without a NoSchedule/NoExecute taint the pod does not
tolerate. Both in a per-node form and over every row of a NodeTable.
"""

from __future__ import annotations

import numpy as np

from berth.api.nodeselector import NodeSelectorRequirement, NodeSelectorTerm, RequiredNodeAffinity
from berth.api.taints import Taint, Toleration, find_untolerated
from berth.scheduler.framework import NodeInfo, NodeTable, PodInfo
from berth.scheduler.framework.nodetable import BoolArray

DO_NOT_SCHEDULE_EFFECTS = frozenset({"NoSchedule", "NoExecute"})
FIELD_METADATA_NAME = "metadata.name"


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


def _requirement_mask(req: NodeSelectorRequirement, table: NodeTable) -> BoolArray:
    col = table.label_column(req.key)
    op = req.operator
    if op == "In":
        return col.mask_in(req.values)
    if op == "NotIn":
        return np.logical_not(col.mask_in(req.values))
    if op == "Exists":
        return col.mask_exists()
    if op == "DoesNotExist":
        return np.logical_not(col.mask_exists())
    # Gt / Lt: decided once per distinct value; the extra last slot answers for nodes without the key
    lut = np.fromiter(
        (req.matches_labels({req.key: v}) for v in col.vocab), dtype=np.bool_, count=len(col.vocab)
    )
    lut = np.append(lut, req.matches_labels({}))
    out: BoolArray = lut[col.codes]
    return out


def _field_mask(req: NodeSelectorRequirement, table: NodeTable) -> BoolArray:
    n = table.size
    if req.key != FIELD_METADATA_NAME:
        return np.full(n, req.matches_field(""), dtype=np.bool_)
    want_in = req.operator == "In"
    out = np.full(n, not want_in, dtype=np.bool_)
    i = table.index.get(req.values[0])
    if i is not None:
        out[i] = want_in
    return out


def _term_mask(term: NodeSelectorTerm, table: NodeTable) -> BoolArray:
    n = table.size
    usable = (
        bool(term.match_expressions or term.match_fields)
        and all(r.label_parse_ok for r in term.match_expressions)
        and all(r.field_parse_ok for r in term.match_fields)
    )
    mask = np.full(n, usable, dtype=np.bool_)
    if not usable:
        return mask
    for r in term.match_expressions:
        mask &= _requirement_mask(r, table)
    for r in term.match_fields:
        mask &= _field_mask(r, table)
    return mask


def affinity_mask(req: RequiredNodeAffinity, table: NodeTable) -> BoolArray:
    """Rows matching the pod's nodeSelector and required node affinity."""
    n = table.size
    out = np.ones(n, dtype=np.bool_)
    for k, v in (req.node_selector_labels or {}).items():
        out &= table.label_column(k).mask_in((v,))
    if req.required is not None:
        any_term = np.zeros(n, dtype=np.bool_)
        for t in req.required.terms:
            any_term |= _term_mask(t, table)
        out &= any_term
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
