"""PreFilter state and Filter of the DoNotSchedule constraints (kube's filtering.go).

For each constraint: the matching pods per topology domain over the eligible nodes (nodes carrying every
constraint's topology key and kept by the constraint's inclusion policies), and which domains exist.
A node passes a constraint when ``matching in its domain + self match - global minimum <= maxSkew``,
where the global minimum is 0 while fewer than ``minDomains`` domains exist.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np
import numpy.typing as npt

from berth.scheduler.framework import Code, NodeInfo, NodeTable, PodInfo, Status, Verdicts
from berth.scheduler.framework.nodetable import BoolArray, IntArray
from berth.scheduler.plugins.podtopologyspread.columns import IntpArray, TopologyColumns
from berth.scheduler.plugins.podtopologyspread.constraints import Constraint
from berth.scheduler.plugins.podtopologyspread.counts import CountIndex
from berth.scheduler.plugins.podtopologyspread.nodemask import (
    InclusionMasks,
    node_matches_affinity,
    node_tolerated,
)

ERR_REASON_CONSTRAINTS_NOT_MATCH = "node(s) didn't match pod topology spread constraints"
ERR_REASON_NODE_LABEL_NOT_MATCH = ERR_REASON_CONSTRAINTS_NOT_MATCH + " (missing required label)"
REJECT_SKEW = Status(Code.UNSCHEDULABLE, (ERR_REASON_CONSTRAINTS_NOT_MATCH,))
REJECT_LABEL = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (ERR_REASON_NODE_LABEL_NOT_MATCH,))
_SUCCESS = Status()


@dataclass(frozen=True, slots=True)
class DomainCounts:
    """One constraint's matching pods per domain; slot 0 stands for "no topology label", domain id d is
    at slot d + 1 (the label column's code plus one)."""

    constraint: Constraint
    vocab: dict[str, int]  # topology value -> label column code
    shifted: IntpArray  # per table row: its code + 1, 0 without the topology key
    counts: IntArray  # per slot: matching pods on the eligible nodes of that domain
    present: BoolArray  # per slot: the domain has an eligible node (kube's TpValueToMatchNum keys)
    self_match: int  # 1 when the incoming pod matches its own selector

    def min_match(self) -> int:
        """The global minimum (0 while fewer than minDomains domains exist)."""
        present = self.present
        k = int(np.count_nonzero(present))
        if k == 0 or k < self.constraint.min_domains:
            return 0
        return int(self.counts[present].min())

    def match_num(self, value: str) -> int:
        """Matching pods in the domain of topology value ``value`` (0 for an unknown domain)."""
        d = self.vocab.get(value)
        return 0 if d is None else int(self.counts[d + 1])


@dataclass(frozen=True, slots=True)
class PreFilterState:
    """What Filter reads; AddPod/RemovePod replace it with an updated copy (the shared one never changes)."""

    domains: tuple[DomainCounts, ...]

    @property
    def keys(self) -> tuple[str, ...]:
        """The topology keys of every constraint."""
        return tuple(d.constraint.topology_key for d in self.domains)


def policy_mask(c: Constraint, base: BoolArray | None, masks: InclusionMasks) -> BoolArray | None:
    """``base`` (None: every row) narrowed by the constraint's inclusion policies."""
    out = base
    if c.honor_node_affinity:
        aff = masks.affinity()
        if aff is not None:
            out = aff if out is None else out & aff
    if c.honor_node_taints:
        tol = masks.tolerated()
        if tol is not None:
            out = tol if out is None else out & tol
    return out


def domain_slots(shifted: IntpArray, elig: BoolArray | None) -> IntpArray:
    """Per row, the slot it counts in: its domain's slot when eligible, else 0."""
    if elig is None:
        return shifted
    out: IntpArray = np.where(elig, shifted, 0)
    return out


def build_pre_filter_state(
    pod: PodInfo,
    constraints: Sequence[Constraint],
    table: NodeTable,
    index: CountIndex,
    columns: TopologyColumns,
    masks: InclusionMasks,
) -> PreFilterState:
    """Count matching pods per domain over the eligible nodes for each constraint."""
    keys = tuple(c.topology_key for c in constraints)
    # a single constraint's own key presence is already slot 0; several need every key present
    base = columns.has_all(table, keys) if len(set(keys)) > 1 else None
    out: list[DomainCounts] = []
    for c in constraints:
        shifted, vocab = columns.shifted(table, c.topology_key)
        elig = policy_mask(c, base, masks)
        slots = domain_slots(shifted, elig)
        size = len(vocab) + 1
        matching = index.counts(table, pod.namespace, c.selector)
        counts = np.bincount(slots, weights=matching, minlength=size).astype(np.int64)
        counts[0] = 0
        if elig is base:  # no inclusion policy narrowed the nodes: the table-wide presence holds
            present = columns.present(table, c.topology_key, keys)
        else:
            present = np.bincount(slots, minlength=size) > 0
            present[0] = False
        out.append(DomainCounts(c, vocab, shifted, counts, present, int(c.selector.matches(pod.labels))))
    return PreFilterState(tuple(out))


def filter_rows(state: PreFilterState, n: int) -> Verdicts:
    """Filter over every row: the first failing constraint decides a row's status."""
    if not state.domains:
        return Verdicts.all_pass(n)
    result: npt.NDArray[np.int8] | None = None  # per row: 0 pass, 1 skew, 2 missing label
    for d in state.domains:
        limit = d.constraint.max_skew + d.min_match() - d.self_match
        lut = (d.counts > limit).astype(np.int8)
        lut[0] = 2
        r = lut[d.shifted[:n]]
        result = r if result is None else np.where(result == 0, r, result)
    assert result is not None
    passed = result == 0
    if passed.all():
        return Verdicts.all_pass(n)
    return Verdicts(passed, (REJECT_SKEW, REJECT_LABEL), result.astype(np.int64) - 1)


def filter_node(state: PreFilterState, node: NodeInfo) -> Status:
    """Filter on one node."""
    labels = node.labels
    for d in state.domains:
        value = labels.get(d.constraint.topology_key)
        if value is None:
            return REJECT_LABEL
        skew = d.match_num(value) + d.self_match - d.min_match()
        if skew > d.constraint.max_skew:
            return REJECT_SKEW
    return _SUCCESS


def update_with_pod(
    state: PreFilterState, pod: PodInfo, changed: PodInfo, node: NodeInfo, delta: int
) -> PreFilterState:
    """The state with ``changed`` added to (delta 1) or removed from (delta -1) ``node`` (kube's updateWithPod)."""
    if changed.namespace != pod.namespace:
        return state
    labels = node.labels
    if any(k not in labels for k in state.keys):
        return state
    affinity_ok: bool | None = None
    tolerated: bool | None = None
    domains = list(state.domains)
    changed_any = False
    for i, d in enumerate(domains):
        c = d.constraint
        if not c.selector.matches(changed.labels):
            continue
        if c.honor_node_affinity:
            if affinity_ok is None:
                affinity_ok = node_matches_affinity(pod, node)
            if not affinity_ok:
                continue
        if c.honor_node_taints:
            if tolerated is None:
                tolerated = node_tolerated(pod, node)
            if not tolerated:
                continue
        dom = d.vocab.get(labels[c.topology_key])
        if dom is None:
            continue  # a value the table does not know: the node is not in this table
        counts = d.counts.copy()
        present = d.present.copy()
        counts[dom + 1] += delta
        present[dom + 1] = True
        domains[i] = replace(d, counts=counts, present=present)
        changed_any = True
    return PreFilterState(tuple(domains)) if changed_any else state
