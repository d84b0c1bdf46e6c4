"""NodeResourcesBalancedAllocation: favors nodes whose resource utilisation fractions stay close together."""

from __future__ import annotations

from berth.scheduler.framework import CycleState, NodeTable, PodInfo
from berth.scheduler.framework.nodetable import IntArray
from berth.scheduler.framework.status import SKIP, SUCCESS, Status
from berth.scheduler.plugins.noderesources.args import BALANCED, NodeResourcesBalancedAllocationArgs
from berth.scheduler.plugins.noderesources.resourcescore import ResourceAllocationScore
from berth.scheduler.plugins.noderesources.scorers import BalancedScorer

PRE_SCORE_KEY = "PreScore" + BALANCED


class BalancedAllocation(ResourceAllocationScore):
    """Score: (1 - std of requested/allocatable fractions) * 100, on the pods' actual requests.

    Best-effort pods (no request on any scored resource) are skipped at PreScore, as upstream.
    """

    name = BALANCED

    def __init__(self, args: NodeResourcesBalancedAllocationArgs) -> None:
        super().__init__(
            args.resources,
            BalancedScorer(),
            use_requested=True,
            pre_score_key=PRE_SCORE_KEY,
            best_effort_zero=True,  # as kube's Score without PreScore state
        )
        self.args = args

    def pre_score(self, state: CycleState, pod: PodInfo, table: NodeTable, feasible: IntArray) -> Status:
        """Record the pod's requests; Skip best-effort pods."""
        reqs = self.pod_requests(pod)
        if not any(reqs):
            return SKIP
        state.write(PRE_SCORE_KEY, reqs)
        return SUCCESS
