"""TaintToleration: filter on NoSchedule/NoExecute taints, score by untolerated PreferNoSchedule taints."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from berth.api.taints import Taint, Toleration, find_untolerated, tolerates_all
from berth.scheduler.framework import CycleState, NodeInfo, NodeTable, PodInfo, Registry, Verdicts
from berth.scheduler.framework.nodetable import IntArray
from berth.scheduler.framework.status import SUCCESS, Status, unresolvable
from berth.scheduler.plugins.common import DefaultNormalizeScore, NodeObjectFilter
from berth.scheduler.plugins.factories import no_args
from berth.scheduler.plugins.tainttoleration.groups import TaintGroupCache

NAME = "TaintToleration"
PRE_SCORE_KEY = "PreScore" + NAME
DO_NOT_SCHEDULE = frozenset({"NoSchedule", "NoExecute"})
PREFER_NO_SCHEDULE = "PreferNoSchedule"


def untolerated_status(taint: Taint) -> Status:
    """The Filter rejection for ``taint``."""
    return unresolvable(f"node(s) had untolerated taint {{{taint.key}: {taint.value}}}")


def prefer_no_schedule_tolerations(tolerations: Sequence[Toleration]) -> tuple[Toleration, ...]:
    """Tolerations with effect PreferNoSchedule or empty (kube's getAllTolerationPreferNoSchedule)."""
    return tuple(t for t in tolerations if not t.effect or t.effect == PREFER_NO_SCHEDULE)


def count_intolerable_prefer_no_schedule(taints: Sequence[Taint], tolerations: Sequence[Toleration]) -> int:
    """Number of PreferNoSchedule taints none of ``tolerations`` tolerates."""
    return sum(1 for t in taints if t.effect == PREFER_NO_SCHEDULE and not tolerates_all(tolerations, t))


class TaintToleration(NodeObjectFilter, DefaultNormalizeScore):
    """Filter: the first untolerated NoSchedule/NoExecute taint rejects the node (UnschedulableAndUnresolvable);
    a new node or a taint change may admit the pod.

    Score: the count of untolerated PreferNoSchedule taints, normalised reversed (fewer is better).
    """

    name = NAME
    reverse_scores = True

    def __init__(self) -> None:
        self._groups = TaintGroupCache()
        # the last pod tolerations read and their PreferNoSchedule ones (pods of one shape share the tuple)
        self._last_prefer: tuple[tuple[Toleration, ...], tuple[Toleration, ...]] = ((), ())

    # ----- filter --------------------------------------------------------------------------
    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status:
        """Per-node form."""
        taints = node.taints
        if not taints:
            return SUCCESS
        taint = find_untolerated(taints, pod.tolerations, DO_NOT_SCHEDULE)
        return SUCCESS if taint is None else untolerated_status(taint)

    def filter_nodes(self, state: CycleState, pod: PodInfo, table: NodeTable) -> Verdicts:
        """Batched form: evaluated once per distinct taint list."""
        n = table.size
        if not np.count_nonzero(table.has_taints[:n]):
            return Verdicts.all_pass(n)
        groups = self._groups.get(table)
        ok = np.ones(len(groups.taints), dtype=np.bool_)
        code = np.zeros(len(groups.taints), dtype=np.int64)
        statuses: list[Status] = []
        seen: dict[Taint, int] = {}
        for g, taints in enumerate(groups.taints):
            if not taints:
                continue
            taint = find_untolerated(taints, pod.tolerations, DO_NOT_SCHEDULE)
            if taint is None:
                continue
            ok[g] = False
            c = seen.get(taint)
            if c is None:
                c = seen[taint] = len(statuses)
                statuses.append(untolerated_status(taint))
            code[g] = c
        if not statuses:
            return Verdicts.all_pass(n)
        return Verdicts(ok[groups.group], statuses, code[groups.group])

    # ----- score ---------------------------------------------------------------------------
    def pre_score(self, state: CycleState, pod: PodInfo, table: NodeTable, feasible: IntArray) -> Status:
        """Keep the tolerations that matter for PreferNoSchedule taints (kube never skips here)."""
        state.write(PRE_SCORE_KEY, self._prefer_no_schedule(pod.tolerations))
        return SUCCESS

    def _tolerations(self, state: CycleState, pod: PodInfo) -> tuple[Toleration, ...]:
        tol: tuple[Toleration, ...] | None = state.get(PRE_SCORE_KEY)
        return self._prefer_no_schedule(pod.tolerations) if tol is None else tol

    def _prefer_no_schedule(self, tolerations: tuple[Toleration, ...]) -> tuple[Toleration, ...]:
        """:func:`prefer_no_schedule_tolerations`, read again only for another tuple than the last one."""
        last, prefer = self._last_prefer
        if tolerations is not last:
            prefer = prefer_no_schedule_tolerations(tolerations)
            self._last_prefer = (tolerations, prefer)
        return prefer

    def score(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> int:
        """Per-node form: the count of intolerable PreferNoSchedule taints."""
        taints = node.taints
        if not taints:
            return 0
        return count_intolerable_prefer_no_schedule(taints, self._tolerations(state, pod))

    def score_nodes(self, state: CycleState, pod: PodInfo, table: NodeTable, idx: IntArray) -> IntArray:
        """Batched form over rows ``idx``."""
        if not np.count_nonzero(table.has_taints[: table.size]):
            return np.zeros(len(idx), dtype=np.int64)
        groups = self._groups.get(table)
        tolerations = self._tolerations(state, pod)
        counts = np.fromiter(
            (count_intolerable_prefer_no_schedule(t, tolerations) for t in groups.taints),
            dtype=np.int64,
            count=len(groups.taints),
        )
        out: IntArray = counts[groups.group[idx]]
        return out

    def uniform_score(self, state: CycleState, pod: PodInfo, table: NodeTable) -> bool:
        """No node has a taint: every node scores 0 raw, 100 normalised."""
        return not np.count_nonzero(table.has_taints[: table.size])


new = no_args(TaintToleration)


def register(registry: Registry) -> None:
    """Add TaintToleration to ``registry``."""
    registry.register(NAME, new)


__all__ = [
    "NAME",
    "TaintToleration",
    "count_intolerable_prefer_no_schedule",
    "new",
    "prefer_no_schedule_tolerations",
    "register",
    "untolerated_status",
]
