"""NodeAffinity: required node selector/affinity as a filter, preferred terms as a score."""

from __future__ import annotations

import numpy as np

from berth.api.nodeselector import PreferredTerm, RequiredNodeAffinity, preferred_score
from berth.scheduler.framework import (
    CycleState,
    NodeInfo,
    NodeTable,
    PodInfo,
    PreFilterResult,
    Registry,
    Verdicts,
)
from berth.scheduler.framework.nodetable import IntArray
from berth.scheduler.framework.status import SKIP, SUCCESS, Status, unresolvable
from berth.scheduler.plugins.common import DefaultNormalizeScore, NodeObjectFilter
from berth.scheduler.plugins.factories import args_only
from berth.scheduler.plugins.nodeaffinity.args import NodeAffinityArgs, parse_args
from berth.scheduler.plugins.nodeaffinity.vector import (
    FIELD_METADATA_NAME,
    labels_mask,
    preferred_scores,
    selector_mask,
)

NAME = "NodeAffinity"
ERR_REASON_POD = "node(s) didn't match Pod's node affinity/selector"
ERR_REASON_ENFORCED = "node(s) didn't match scheduler-enforced node affinity"
ERR_REASON_CONFLICT = "pod affinity terms conflict"
_REJECT_POD = unresolvable(ERR_REASON_POD)
_REJECT_ENFORCED = unresolvable(ERR_REASON_ENFORCED)
_REJECT_CONFLICT = unresolvable(ERR_REASON_CONFLICT)


def pre_filter_node_names(required: RequiredNodeAffinity) -> frozenset[str] | None:
    """kube's node-name narrowing: the union over terms of their ``metadata.name In`` sets.

    None when some term names no node (every node is eligible); an empty set when the terms conflict.
    """
    selector = required.required
    if selector is None or not selector.terms:
        return None
    names: set[str] = set()
    for term in selector.terms:
        term_names: set[str] | None = None
        for r in term.match_fields:
            if r.key == FIELD_METADATA_NAME and r.operator == "In":
                s = set(r.values)
                term_names = s if term_names is None else term_names & s
        if term_names is None:
            return None
        names |= term_names
    return frozenset(names)


def _has_required(required: RequiredNodeAffinity) -> bool:
    return required.required is not None or bool(required.node_selector_labels)


class NodeAffinity(NodeObjectFilter, DefaultNormalizeScore):
    """Filter on nodeSelector + required node affinity (+ addedAffinity), which a new node or a label change
    may satisfy; score preferred terms (DefaultNormalizeScore, higher is better)."""

    name = NAME

    def __init__(self, args: NodeAffinityArgs) -> None:
        self.args = args

    # ----- filter --------------------------------------------------------------------------
    def pre_filter(
        self, state: CycleState, pod: PodInfo, table: NodeTable
    ) -> tuple[PreFilterResult | None, Status]:
        """Skip pods without node constraints; narrow to node names named by ``metadata.name In``."""
        required = pod.required_node_affinity
        if not _has_required(required) and self.args.added_required is None:
            return None, SKIP
        names = pre_filter_node_names(required)
        if names is None:
            return None, SUCCESS
        if not names:
            return None, _REJECT_CONFLICT
        return PreFilterResult(names), SUCCESS

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status:
        """Per-node form: scheduler-enforced affinity first, then the pod's own."""
        labels, name = node.labels, node.name
        added = self.args.added_required
        if added is not None and not added.matches(labels, name):
            return _REJECT_ENFORCED
        if not pod.required_node_affinity.matches(labels, name):
            return _REJECT_POD
        return SUCCESS

    def filter_nodes(self, state: CycleState, pod: PodInfo, table: NodeTable) -> Verdicts:
        """Batched form over every row."""
        n = table.size
        required = pod.required_node_affinity
        added = self.args.added_required
        if added is None and not _has_required(required):
            return Verdicts.all_pass(n)
        pod_ok = np.ones(n, dtype=np.bool_)
        if required.node_selector_labels:
            pod_ok &= labels_mask(required.node_selector_labels, table)
        if required.required is not None:
            pod_ok &= selector_mask(required.required, table)
        if added is None:
            return Verdicts.single(pod_ok, _REJECT_POD)
        added_ok = selector_mask(added, table)
        codes = np.where(added_ok, 1, 0).astype(np.int64)
        return Verdicts(added_ok & pod_ok, (_REJECT_ENFORCED, _REJECT_POD), codes)

    # ----- score ---------------------------------------------------------------------------
    def _terms(self, pod: PodInfo) -> tuple[PreferredTerm, ...]:
        added = self.args.added_preferred
        return pod.preferred_node_terms + added if added else pod.preferred_node_terms

    def pre_score(self, state: CycleState, pod: PodInfo, table: NodeTable, feasible: IntArray) -> Status:
        """Skip pods without preferred terms (and no added preferred terms)."""
        if not pod.preferred_node_terms and not self.args.added_preferred:
            return SKIP
        return SUCCESS

    def score(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> int:
        """Per-node form: the sum of the weights of matched preferred terms."""
        return preferred_score(self._terms(pod), node.labels, node.name)

    def score_nodes(self, state: CycleState, pod: PodInfo, table: NodeTable, idx: IntArray) -> IntArray:
        """Batched form over rows ``idx``."""
        return preferred_scores(self._terms(pod), table, idx)


# the factory: parses NodeAffinityArgs (raises ConfigError on bad args)
new = args_only(parse_args, NodeAffinity)


def register(registry: Registry) -> None:
    """Add NodeAffinity to ``registry``."""
    registry.register(NAME, new)


__all__ = [
    "ERR_REASON_CONFLICT",
    "ERR_REASON_ENFORCED",
    "ERR_REASON_POD",
    "NAME",
    "NodeAffinity",
    "NodeAffinityArgs",
    "new",
    "parse_args",
    "pre_filter_node_names",
    "register",
]
