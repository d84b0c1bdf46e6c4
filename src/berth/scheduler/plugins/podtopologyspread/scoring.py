"""PreScore, Score and NormalizeScore of the ScheduleAnyway constraints (kube's scoring.go).

A node's raw score sums, over the constraints whose topology key it carries,
``matching pods in its domain * log(domains + 2) + maxSkew - 1`` (for ``kubernetes.io/hostname`` the
node itself is the domain and the weight uses the number of scored nodes); normalisation reverses it
between the minimum and the maximum, and nodes missing a required topology key score 0.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from berth.scheduler.framework import MAX_NODE_SCORE, NodeInfo, NodeTable, PodInfo
from berth.scheduler.framework.nodetable import BoolArray, IntArray
from berth.scheduler.plugins.podtopologyspread.columns import TopologyColumns
from berth.scheduler.plugins.podtopologyspread.constraints import HOSTNAME_LABEL, Constraint
from berth.scheduler.plugins.podtopologyspread.counts import CountIndex, count_matching
from berth.scheduler.plugins.podtopologyspread.filtering import policy_mask
from berth.scheduler.plugins.podtopologyspread.nodemask import InclusionMasks

FloatArray = npt.NDArray[np.float64]


def topology_normalizing_weight(size: int) -> float:
    """kube's topologyNormalizingWeight: log(size + 2)."""
    return math.log(float(size + 2))


def go_round_vec(x: FloatArray) -> IntArray:
    """Go's math.Round (half away from zero) for non-negative values."""
    t = np.trunc(x)
    out: IntArray = (t + (x - t >= 0.5)).astype(np.int64)
    return out


def go_round(x: float) -> int:
    """Go's math.Round (half away from zero) for a non-negative value."""
    t = math.trunc(x)
    return t + 1 if x - t >= 0.5 else t


@dataclass(frozen=True, slots=True)
class SoftDomains:
    """One soft constraint's data for Score."""

    constraint: Constraint
    weight: float
    vocab: dict[str, int]
    shifted: npt.NDArray[np.intp]  # per row: the label column code + 1, 0 without the key
    counts: IntArray  # per slot (code + 1; last slot: "" for nodes without the key); empty for hostname
    per_node: IntArray | None  # hostname constraints: matching pods per row


@dataclass(frozen=True, slots=True)
class PreScoreState:
    """What Score and NormalizeScore read."""

    namespace: str
    require_all: bool
    domains: tuple[SoftDomains, ...]
    ignored: BoolArray  # aligned with the scored rows: nodes missing a topology key (score 0)

    @property
    def keys(self) -> tuple[str, ...]:
        """The topology keys of every constraint."""
        return tuple(d.constraint.topology_key for d in self.domains)


def build_pre_score_state(
    pod: PodInfo,
    constraints: Sequence[Constraint],
    require_all: bool,
    table: NodeTable,
    idx: IntArray,
    index: CountIndex,
    columns: TopologyColumns,
    masks: InclusionMasks,
) -> PreScoreState:
    """Domain counts over all nodes for the domains of the feasible rows ``idx`` (kube's PreScore)."""
    keys = tuple(c.topology_key for c in constraints)
    has_all = columns.has_all(table, keys) if require_all else None
    ignored = ~has_all[idx] if has_all is not None else np.zeros(len(idx), dtype=np.bool_)
    kept = idx[~ignored] if has_all is not None else idx
    out: list[SoftDomains] = []
    for c in constraints:
        shifted, vocab = columns.shifted(table, c.topology_key)
        matching = index.counts(table, pod.namespace, c.selector)
        if c.topology_key == HOSTNAME_LABEL:
            weight = topology_normalizing_weight(len(kept))
            out.append(SoftDomains(c, weight, vocab, shifted, np.zeros(0, np.int64), matching))
            continue
        size = len(vocab) + 1
        # kube reads node.Labels[key]: without require_all, a node lacking the key is in the "" domain
        if require_all:
            slots = shifted
        else:
            empty_slot = vocab[""] + 1 if "" in vocab else size
            slots = np.where(shifted > 0, shifted, empty_slot)
        present = np.bincount(slots[kept], minlength=size + 1) > 0
        if require_all:
            present[0] = False
        weight = topology_normalizing_weight(int(np.count_nonzero(present)))
        elig = policy_mask(c, has_all, masks)
        counted = slots if elig is None else np.where(elig, slots, 0)
        counts = np.bincount(counted, weights=matching, minlength=size + 1).astype(np.int64)
        counts[~present] = 0
        out.append(SoftDomains(c, weight, vocab, shifted, counts, None))
    return PreScoreState(pod.namespace, require_all, tuple(out), ignored)


def score_rows(state: PreScoreState, idx: IntArray) -> IntArray:
    """Raw scores of rows ``idx``."""
    score = np.zeros(len(idx), dtype=np.float64)
    for d in state.domains:
        sh = d.shifted[idx]
        has = sh > 0
        cnt = d.per_node[idx] if d.per_node is not None else d.counts[sh]
        term = cnt.astype(np.float64) * d.weight + float(d.constraint.max_skew - 1)
        score += np.where(has, term, 0.0)
    out = go_round_vec(score)
    if len(state.ignored) == len(idx):
        out[state.ignored] = 0
    return out


def score_node(state: PreScoreState, pod: PodInfo, node: NodeInfo) -> int:
    """Raw score of one node."""
    labels = node.labels
    if state.require_all and any(k not in labels for k in state.keys):
        return 0
    score = 0.0
    for d in state.domains:
        c = d.constraint
        value = labels.get(c.topology_key)
        if value is None:
            continue
        if d.per_node is not None:
            cnt = count_matching(node.pods, state.namespace, c.selector)
        else:
            dom = d.vocab.get(value)
            cnt = 0 if dom is None else int(d.counts[dom + 1])
        score += float(cnt) * d.weight + float(c.max_skew - 1)
    return go_round(score)


def normalize(state: PreScoreState, scores: IntArray) -> IntArray:
    """kube's NormalizeScore: ``100 * (max + min - s) / max``; ignored nodes 0, all 100 when max is 0."""
    if scores.size == 0:
        return scores
    valid = ~state.ignored if len(state.ignored) == len(scores) else np.ones(len(scores), dtype=np.bool_)
    if not valid.any():
        return np.zeros_like(scores)
    lo = int(scores[valid].min())
    hi = max(int(scores[valid].max()), 0)
    if hi == 0:
        return np.where(valid, MAX_NODE_SCORE, 0).astype(np.int64)
    out: IntArray = np.where(valid, MAX_NODE_SCORE * (hi + lo - scores) // hi, 0).astype(np.int64)
    return out
