"""What-if filtering for PostFilter plugins (preemption): would the pod fit on a node if these pods left?

kube's preemption re-runs a node's filters with victims removed and nominated pods added
(``RunFilterPluginsWithNominatedPods``). ``WhatIf`` answers that question for a cycle's pod, node by node,
with the per-cycle memos that make it cheap: the pod-independent filters run once per node, and when every
filter that looks at a node's pods is resource arithmetic (a DryRunPlan) no filter runs at all. Plugins
reach it through the framework handle (``filter_with_changes``, ``dry_run_key``, ``dry_run_keys``).
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence

from berth.scheduler.cache import SchedulerCache
from berth.scheduler.framework.cycle_state import CycleState
from berth.scheduler.framework.nodetable import AdjustedNodeInfo, NodeInfo
from berth.scheduler.framework.plugin import filter_ignores_node_pods
from berth.scheduler.framework.podinfo import PodInfo
from berth.scheduler.framework.runtime import DryRunPlan, Framework
from berth.scheduler.framework.status import Code, Status
from berth.scheduler.nominator import OVERLAY_APPLIED_KEY, Nominator

STATIC_FILTER_KEY = "berth/pod-independent-filters"  # node -> None (passed) or the Status that rejected it
DRY_RUN_PLAN_KEY = "berth/dry-run-plan"  # (the cycle's DryRunPlan or None,)
PREPARED_KEY = "berth/dry-run-nodes"  # node -> (DryRunPlan, NodeInfo, nominated pods counted there)


class WhatIf:
    """The what-if filters of every profile over the scheduler's node table and nominated pods."""

    def __init__(
        self, frameworks: Mapping[str, Framework], cache: SchedulerCache, nominator: Nominator
    ) -> None:
        self._frameworks = frameworks
        self._cache = cache
        self._nominator = nominator

    def _nominated_counted(self, state: CycleState, pod: PodInfo, node_name: str) -> list[PodInfo]:
        """The nominated pods a dry run counts on ``node_name`` for ``pod`` (none when the cycle's overlay
        already holds them)."""
        if not self._nominator or state.get(OVERLAY_APPLIED_KEY):
            return []
        return [
            p for p in self._nominator.on_node(node_name) if p.uid != pod.uid and p.priority >= pod.priority
        ]

    def _dry_run_node(
        self, profile: str, state: CycleState, pod: PodInfo, node_name: str
    ) -> tuple[DryRunPlan, NodeInfo, list[PodInfo]] | None:
        """The arithmetic plan of this cycle with the node's view and counted nominated pods, remembered per
        node; None when the cycle has no plan (or the node is unknown)."""
        prepared: dict[str, tuple[DryRunPlan, NodeInfo, list[PodInfo]]] | None = state.get(PREPARED_KEY)
        if prepared is not None:
            entry = prepared.get(node_name)
            if entry is not None:
                return entry
        cached: tuple[DryRunPlan | None] | None = state.get(DRY_RUN_PLAN_KEY)
        if cached is None:
            cached = (self._frameworks[profile].dry_run_plan(state, pod),)
            state.write(DRY_RUN_PLAN_KEY, cached)
        plan = cached[0]
        row = self._cache.table.index.get(node_name)
        if plan is None or row is None:
            return None
        if prepared is None:
            prepared = {}
            state.write(PREPARED_KEY, prepared)
        # nominated pods are never bound, so never among a dry run's removals: the list holds for the cycle
        entry = prepared[node_name] = (
            plan,
            self._cache.table.info(row),
            self._nominated_counted(state, pod, node_name),
        )
        return entry

    def dry_run_key(self, profile: str, state: CycleState, pod: PodInfo, node_name: str) -> Hashable | None:
        """See Handle.dry_run_key."""
        entry = self._dry_run_node(profile, state, pod, node_name)
        if entry is None:
            return None
        plan, info, nominated = entry
        return plan.key(state, pod, info, nominated)

    def dry_run_keys(
        self, profile: str, state: CycleState, pod: PodInfo, rows: Sequence[int]
    ) -> list[Hashable | None]:
        """See Handle.dry_run_keys: batched where no nominated pods are counted node by node."""
        cached: tuple[DryRunPlan | None] | None = state.get(DRY_RUN_PLAN_KEY)
        if cached is None:
            cached = (self._frameworks[profile].dry_run_plan(state, pod),)
            state.write(DRY_RUN_PLAN_KEY, cached)
        plan = cached[0]
        if plan is None:
            return [None] * len(rows)
        table = self._cache.table
        if self._nominator and not state.get(OVERLAY_APPLIED_KEY):
            names = table.names
            return [self.dry_run_key(profile, state, pod, names[r]) for r in rows]
        return list(plan.keys(state, pod, table, rows))

    def filter_with_changes(
        self,
        profile: str,
        state: CycleState,
        pod: PodInfo,
        node_name: str,
        removed: Sequence[PodInfo] = (),
    ) -> Status:
        """Filters of ``profile`` for ``pod`` on one node with ``removed`` gone and nominated pods counted.

        The filters see a what-if view of the node (AdjustedNodeInfo, per-node plugin forms); within one
        cycle, plugins whose verdict ignores the node's pods run only on the first call for a node. When
        every filter that looks at the node's pods is a ResourceFitFilter, the statuses come from arithmetic
        (a DryRunPlan) instead.
        """
        entry = self._dry_run_node(profile, state, pod, node_name)
        if entry is not None:
            plan, info, nominated = entry
            return plan.evaluate(state, pod, info, removed, nominated)
        fw = self._frameworks[profile]
        table = self._cache.table
        row = table.index.get(node_name)
        if row is None:
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ("node not found",))
        static: dict[str, Status | None] = state.get(STATIC_FILTER_KEY) or {}
        known = static.get(node_name, False)
        if isinstance(known, Status):
            return known  # a filter that ignores the node's pods already rejected this node
        changes: list[PodInfo] = list(removed)
        gone = {p.uid for p in removed}
        added = [p for p in self._nominated_counted(state, pod, node_name) if p.uid not in gone]
        if removed and fw.has_pre_filter_extensions:
            state = state.clone()
            info = table.info(row)
            for p in removed:
                s = fw.run_pre_filter_remove_pod(state, pod, p, info)
                if not s.is_success():
                    return s
        view = AdjustedNodeInfo(table, row, changes, added)
        s = fw.run_filter_node(state, pod, view, pod_dependent_only=known is None)
        if known is False:
            # remember whether the pod-independent filters passed here (a failure from one of them is final)
            static[node_name] = s if s.plugin and filter_ignores_node_pods(fw.plugins.get(s.plugin)) else None
            state.write(STATIC_FILTER_KEY, static)
        return s
