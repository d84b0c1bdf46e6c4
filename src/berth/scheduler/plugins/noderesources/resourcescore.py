"""The Score extension NodeResourcesFit and NodeResourcesBalancedAllocation share (kube's
resourceAllocationScorer): a scorer over each node's per-resource (requested, allocatable) pairs."""

from __future__ import annotations

import numpy as np

from berth.scheduler.framework import CycleState, NodeInfo, NodeTable, PodInfo
from berth.scheduler.framework.columncache import ColumnCache
from berth.scheduler.framework.nodetable import IntArray
from berth.scheduler.plugins.noderesources.allocation import (
    RowPlan,
    node_pairs,
    plan_pairs,
    pod_request_list,
    row_plan,
    table_pairs,
)
from berth.scheduler.plugins.noderesources.args import ResourceSpec
from berth.scheduler.plugins.noderesources.scorers import Scorer


class ResourceAllocationScore:
    """Scores a node by ``scorer`` over the (requested, allocatable) pairs of ``resources``, the pod's requests
    being read once per cycle (kept in the cycle state under ``pre_score_key`` by the plugin's PreScore).

    With ``use_requested`` cpu and memory count the pods' actual requests, else kube's non-zero defaults.
    With ``best_effort_zero`` a pod requesting none of the resources scores 0 everywhere.
    """

    def __init__(
        self,
        resources: tuple[ResourceSpec, ...],
        scorer: Scorer,
        *,
        use_requested: bool,
        pre_score_key: str,
        best_effort_zero: bool = False,
    ) -> None:
        self.resources = resources
        self.scorer = scorer
        self._use_requested = use_requested
        self._best_effort_zero = best_effort_zero
        self._pre_score_key = pre_score_key
        self._weights = [r.weight for r in resources]
        self._score_columns = ColumnCache()
        self._row_plans: dict[tuple[int, ...], RowPlan] = {}

    def pod_requests(self, pod: PodInfo) -> tuple[int, ...]:
        """The pod's request per scored resource (what PreScore keeps)."""
        return pod_request_list(pod, self.resources, use_requested=self._use_requested)

    def _pod_requests(self, state: CycleState, pod: PodInfo) -> tuple[int, ...]:
        reqs: tuple[int, ...] | None = state.get(self._pre_score_key)
        if reqs is None:
            reqs = self.pod_requests(pod)
        return reqs

    def score(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> int:
        """Per-node form."""
        reqs = self._pod_requests(state, pod)
        if self._best_effort_zero and not any(reqs):
            return 0
        req, alloc = node_pairs(node, self.resources, reqs, use_requested=self._use_requested)
        return self.scorer.score(req, alloc, self._weights)

    def score_nodes(self, state: CycleState, pod: PodInfo, table: NodeTable, idx: IntArray) -> IntArray:
        """Batched form over rows ``idx``: read from the scores of every row, kept per pod shape (see
        ColumnCache)."""
        reqs = self._pod_requests(state, pod)
        if self._best_effort_zero and not any(reqs):
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
        plan = self._row_plans.get(reqs)
        if plan is None:
            if len(self._row_plans) >= 256:
                self._row_plans.clear()
            plan = self._row_plans[reqs] = row_plan(self.resources, reqs, self._use_requested)
        return self.scorer.score(*plan_pairs(table, row, plan))

    def _score_rows(self, table: NodeTable, rows: IntArray | None, reqs: tuple[int, ...]) -> IntArray:
        """Scores of ``rows`` (None: every row) for a pod requesting ``reqs``."""
        idx = np.arange(table.size) if rows is None else rows
        req, alloc, weights = table_pairs(table, idx, self.resources, reqs, use_requested=self._use_requested)
        return self.scorer.score_vec(req, alloc, weights, len(idx))
