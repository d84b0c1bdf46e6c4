"""NodeResourcesBalancedAllocation: favors nodes whose resource utilisation fractions stay close together."""

from __future__ import annotations

import numpy as np

from berth.scheduler.framework import CycleState, NodeInfo, NodeTable, PodInfo, Status
from berth.scheduler.framework.columncache import ColumnCache
from berth.scheduler.framework.nodetable import IntArray
from berth.scheduler.framework.status import Code
from berth.scheduler.plugins.noderesources.allocation import (
    node_pairs,
    pod_request_list,
    row_pairs,
    table_pairs,
)
from berth.scheduler.plugins.noderesources.args import BALANCED, NodeResourcesBalancedAllocationArgs
from berth.scheduler.plugins.noderesources.scorers import balanced_score, balanced_score_vec

PRE_SCORE_KEY = "PreScore" + BALANCED
_SUCCESS = Status()
_SKIP = Status(Code.SKIP)


class BalancedAllocation:
    """Score: (1 - std of requested/allocatable fractions) * 100, on the pods' actual requests.

    Best-effort pods (no request on any scored resource) are skipped at PreScore, as upstream.
    """

    name = BALANCED

    def __init__(self, args: NodeResourcesBalancedAllocationArgs) -> None:
        self.args = args
        self.resources = args.resources
        self._score_columns = ColumnCache()

    def _pod_requests(self, state: CycleState, pod: PodInfo) -> tuple[int, ...]:
        reqs: tuple[int, ...] | None = state.get(PRE_SCORE_KEY)
        if reqs is None:
            reqs = pod_request_list(pod, self.resources, use_requested=True)
        return reqs

    def pre_score(self, state: CycleState, pod: PodInfo, table: NodeTable, feasible: IntArray) -> Status:
        """Record the pod's requests; Skip best-effort pods."""
        reqs = pod_request_list(pod, self.resources, use_requested=True)
        if not any(reqs):
            return _SKIP
        state.write(PRE_SCORE_KEY, reqs)
        return _SUCCESS

    def score(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> int:
        """Per-node form (0 for a best-effort pod, as kube's Score without PreScore state)."""
        reqs = self._pod_requests(state, pod)
        if not any(reqs):
            return 0
        req, alloc = node_pairs(node, self.resources, reqs, use_requested=True)
        return balanced_score(req, alloc)

    def score_nodes(self, state: CycleState, pod: PodInfo, table: NodeTable, idx: IntArray) -> IntArray:
        """Batched form over rows ``idx``: read from the scores of every row, kept per pod shape (see
        ColumnCache)."""
        reqs = self._pod_requests(state, pod)
        if not any(reqs):
            return np.zeros(len(idx), dtype=np.int64)
        return self._score_columns.values_at(
            table,
            reqs,
            idx,
            lambda t, rows: self._score_rows(t, rows, reqs),
            lambda t, row: self._score_row(t, row, reqs),
        )

    def _score_row(self, table: NodeTable, row: int, reqs: tuple[int, ...]) -> int:
        """The score of one row for a pod requesting ``reqs``."""
        req, alloc = row_pairs(table, row, self.resources, reqs, use_requested=True)
        return balanced_score(req, alloc)

    def _score_rows(self, table: NodeTable, rows: IntArray | None, reqs: tuple[int, ...]) -> IntArray:
        """Scores of ``rows`` (None: every row) for a pod requesting ``reqs``."""
        idx = np.arange(table.size) if rows is None else rows
        req, alloc, _ = table_pairs(table, idx, self.resources, reqs, use_requested=True)
        return balanced_score_vec(req, alloc, len(idx))
