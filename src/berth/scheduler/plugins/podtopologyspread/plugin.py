"""The PodTopologySpread plugin: PreFilter/Filter for DoNotSchedule constraints, PreScore/Score for
ScheduleAnyway ones, PreFilterExtensions for preemption dry runs (kube's plugin.go)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from berth.api.kinds import UnknownKindError, lookup_kind
from berth.scheduler.framework import (
    ClusterEvent,
    CycleState,
    Handle,
    NodeInfo,
    NodeTable,
    PluginError,
    PodInfo,
    PreFilterResult,
    Verdicts,
)
from berth.scheduler.framework.nodetable import IntArray
from berth.scheduler.framework.plugin import nominated_counted, rows_with_added_pods
from berth.scheduler.framework.status import SKIP, SUCCESS, Status, error
from berth.scheduler.plugins.podtopologyspread.args import PodTopologySpreadArgs
from berth.scheduler.plugins.podtopologyspread.columns import TopologyColumns
from berth.scheduler.plugins.podtopologyspread.constraints import (
    NO_CONSTRAINTS,
    ConstraintError,
    PodConstraints,
    controller_ref,
    pod_constraints,
)
from berth.scheduler.plugins.podtopologyspread.counts import CountIndex
from berth.scheduler.plugins.podtopologyspread.filtering import (
    REJECT_LABEL,
    REJECT_SKEW,
    PreFilterState,
    build_pre_filter_state,
    filter_node,
    filter_rows,
    update_with_pod,
)
from berth.scheduler.plugins.podtopologyspread.nodemask import InclusionMasks
from berth.scheduler.plugins.podtopologyspread.scoring import (
    PreScoreState,
    build_pre_score_state,
    normalize,
    score_node,
    score_rows,
)

NAME = "PodTopologySpread"
PRE_FILTER_KEY = "PreFilter" + NAME
PRE_SCORE_KEY = "PreScore" + NAME
_NO_PRE_FILTER_STATE = error(f'reading "{PRE_FILTER_KEY}" from cycleState: not found')
_STATUS_INDEX = {REJECT_SKEW: 0, REJECT_LABEL: 1}


def _serves(api_version: str, kind: str) -> bool:
    try:
        lookup_kind(api_version, kind)
    except UnknownKindError:
        return False
    return True


class PodTopologySpread:
    """Spread pods evenly over topology domains (zones, nodes, ...) as their constraints ask."""

    name = NAME

    def __init__(self, args: PodTopologySpreadArgs, handle: Handle | None) -> None:
        self.args = args
        self.handle = handle
        self.index = CountIndex()
        self.columns = TopologyColumns()
        self.pre_filter_extensions = self
        # kube's DefaultSelector also merges the selectors of the Services that select the pod
        self._services = _serves("v1", "Service")

    # ----- constraints ---------------------------------------------------------------------
    def constraints(self, pod: PodInfo) -> PodConstraints:
        """The pod's constraints (own or defaulted), cached on the PodInfo; raises ConstraintError."""
        cached = pod.extra.get(NAME)
        if cached is not None and cached[0] is self:
            pc: PodConstraints = cached[1]
            return pc
        client = self.handle.client if self.handle is not None else None
        pc = pod_constraints(pod, self.args.default_constraints, client, services=self._services)
        if pc.own or pc is not NO_CONSTRAINTS or controller_ref(pod) is None:
            # an owner not found yet is looked up again on the next attempt
            pod.extra[NAME] = (self, pc)
        return pc

    # ----- filter --------------------------------------------------------------------------
    def pre_filter(
        self, state: CycleState, pod: PodInfo, table: NodeTable
    ) -> tuple[PreFilterResult | None, Status]:
        """Count matching pods per domain for the DoNotSchedule constraints; Skip pods without any."""
        try:
            hard = self.constraints(pod).hard
        except ConstraintError as e:
            return None, error(f"get constraints from pod: {e}")
        if not hard:
            return None, SKIP
        st = build_pre_filter_state(pod, hard, table, self.index, self.columns, InclusionMasks(pod, table))
        state.write(PRE_FILTER_KEY, st)
        return None, SUCCESS

    def _state(self, state: CycleState) -> PreFilterState | None:
        st: PreFilterState | None = state.get(PRE_FILTER_KEY)
        return st

    def _with_nominated(self, st: PreFilterState, pod: PodInfo, node: NodeInfo, base: Status) -> Status:
        """kube's RunFilterPluginsWithNominatedPods for this plugin: with the nominated pods, then without."""
        nominated = nominated_counted(self.handle, pod, node.name)
        if not nominated:
            return base
        added = st
        for p in nominated:
            added = update_with_pod(added, pod, p, node, 1)
        first = filter_node(added, node)
        return first if not first.is_success() else base

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status:
        """Per-node form."""
        st = self._state(state)
        if st is None:
            return _NO_PRE_FILTER_STATE
        return self._with_nominated(st, pod, node, filter_node(st, node))

    def filter_nodes(self, state: CycleState, pod: PodInfo, table: NodeTable) -> Verdicts:
        """Batched form over every row."""
        n = table.size
        st = self._state(state)
        if st is None:
            return Verdicts.single(np.zeros(n, dtype=np.bool_), _NO_PRE_FILTER_STATE)
        v = filter_rows(st, n)
        rows = rows_with_added_pods(state, n)
        if not rows:
            return v
        passed = v.passed.copy()
        codes = np.zeros(n, dtype=np.int64) if v.codes is None else v.codes.copy()
        for r in rows:
            info = table.info(r)
            s = self._with_nominated(st, pod, info, v.status_of(r))
            if not s.is_success():
                passed[r] = False
                codes[r] = _STATUS_INDEX[s]
        return Verdicts(passed, (REJECT_SKEW, REJECT_LABEL), codes)

    # ----- PreFilterExtensions -------------------------------------------------------------
    def add_pod(self, state: CycleState, pod: PodInfo, pod_to_add: PodInfo, node: NodeInfo) -> Status:
        """Count ``pod_to_add`` on ``node`` in this cycle's state."""
        return self._update(state, pod, pod_to_add, node, 1)

    def remove_pod(self, state: CycleState, pod: PodInfo, pod_to_remove: PodInfo, node: NodeInfo) -> Status:
        """Stop counting ``pod_to_remove`` on ``node`` in this cycle's state."""
        return self._update(state, pod, pod_to_remove, node, -1)

    def _update(self, state: CycleState, pod: PodInfo, other: PodInfo, node: NodeInfo, delta: int) -> Status:
        st = self._state(state)
        if st is None:
            return _NO_PRE_FILTER_STATE
        new = update_with_pod(st, pod, other, node, delta)
        if new is not st:
            state.write(PRE_FILTER_KEY, new)  # a copy: clones of the state keep the old one
        return SUCCESS

    # ----- score ---------------------------------------------------------------------------
    def pre_score(self, state: CycleState, pod: PodInfo, table: NodeTable, feasible: IntArray) -> Status:
        """Count matching pods per domain for the ScheduleAnyway constraints; Skip pods without any."""
        if table.size == 0:
            return SKIP
        try:
            pc = self.constraints(pod)
        except ConstraintError as e:
            return error(f"obtaining pod's soft topology spread constraints: {e}")
        if not pc.soft:
            return SKIP
        # only the system defaults let nodes without every topology key be scored
        require_all = pc.own or not self.args.system_defaulted
        masks = InclusionMasks(pod, table)
        st = build_pre_score_state(
            pod, pc.soft, require_all, table, feasible, self.index, self.columns, masks
        )
        state.write(PRE_SCORE_KEY, st)
        return SUCCESS

    def _score_state(self, state: CycleState) -> PreScoreState:
        st: PreScoreState | None = state.get(PRE_SCORE_KEY)
        if st is None:
            msg = f'reading "{PRE_SCORE_KEY}" from cycleState: not found'
            raise PluginError(error(msg, plugin=NAME))
        return st

    def score(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> int:
        """Per-node form: the weighted matching counts of the node's domains."""
        return score_node(self._score_state(state), pod, node)

    def score_nodes(self, state: CycleState, pod: PodInfo, table: NodeTable, idx: IntArray) -> IntArray:
        """Batched form over rows ``idx``."""
        return score_rows(self._score_state(state), idx)

    def normalize_scores(self, state: CycleState, pod: PodInfo, scores: IntArray) -> IntArray:
        """Fewer matching pods is better: min-max reversed, nodes missing a topology key 0."""
        st: PreScoreState | None = state.get(PRE_SCORE_KEY)
        if st is None:
            return scores
        return normalize(st, scores)

    # ----- events --------------------------------------------------------------------------
    def events_to_register(self) -> list[ClusterEvent]:
        """Any assigned-pod change, and nodes added, deleted or relabelled."""
        return [
            ClusterEvent("Pod"),
            ClusterEvent("Node", frozenset({"Add", "Delete", "Update"})),
        ]

    def watched_kinds(self) -> tuple[str, ...]:
        """Pods: to notice bound pods that start terminating (they stop counting)."""
        return ("Pod",)

    def on_object_event(self, type_: str, obj: Mapping[str, Any]) -> None:
        """Mark the node of a pod that got a deletionTimestamp for recounting."""
        if type_ != "MODIFIED":
            return
        meta = obj.get("metadata") or {}
        if not meta.get("deletionTimestamp"):
            return
        node = (obj.get("spec") or {}).get("nodeName")
        if node:
            self.index.log.add(str(node))
