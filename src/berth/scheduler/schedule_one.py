"""The scheduling cycle of one pod (kube's schedulingCycle): find a node, then assume the pod there.

PreFilter narrows the candidate nodes; the pods nominated to nodes are added to their load; Filter runs
over the whole node table at once; kube's adaptive sampling picks the feasible nodes to score, walking
the node tree from a round-robin start; Score picks the best, ties broken by the seeded RNG. A pod that
fits nowhere gets its PostFilter (preemption) run. A pod that fits is assumed in the cache and goes
through Reserve and Permit; the binding cycle (``binding.py``) takes it from there, and ends failed
attempts too. Attempts chosen for ``berth explain`` or recorded as annotations are traced.
"""

from __future__ import annotations

import contextlib
import random
from collections import Counter
from collections.abc import Mapping
from typing import Any

import numpy as np

from berth.api.contracts import Store
from berth.api.errors import NotFound
from berth.clock import Clock
from berth.scheduler.binding import BindingCycle
from berth.scheduler.cache import SchedulerCache
from berth.scheduler.extender import EXTENDER_NAME, Extenders, HTTPExtender
from berth.scheduler.framework.cycle_state import BINDING_ANNOTATIONS_KEY, CycleState
from berth.scheduler.framework.nodetable import IntArray, NodeTable
from berth.scheduler.framework.plugin import NodeStatusMap, RowStatuses
from berth.scheduler.framework.podinfo import PodInfo
from berth.scheduler.framework.runtime import FilterOutcome, Framework
from berth.scheduler.framework.status import Code, PluginError, Status
from berth.scheduler.messages import fit_error_message
from berth.scheduler.nominator import OVERLAY_APPLIED_KEY, Nominator, add_nominated, withdraw_nominated
from berth.scheduler.queue import QueuedPod, SchedulingQueue
from berth.scheduler.stats import SchedulerStats
from berth.scheduler.trace import (
    PASSED,
    RESULTS_PLUGIN,
    CycleTrace,
    Tracer,
    record_filters,
    record_pre_filter,
    record_scores,
)
from berth.scheduler.twins import TwinFailures

POD_KEY = ("", "Pod")
# PostFilter plugins whose run is a preemption attempt (kube's scheduler_preemption_attempts_total)
PREEMPTION_PLUGINS = frozenset(("DefaultPreemption", "CapacityScheduling"))
NOMINATED_NODE_KEY = "berth/nominated-node"
TRACE_KEY = "berth/trace"  # the CycleTrace of an attempt being explained or recorded
EXTENDERS_KEY = "berth/extenders"  # the extenders interested in the pod of this attempt (when any)
EXTENDER_REJECTED_KEY = "berth/extender-rejected"  # {"Extender"} when extenders filtered nodes out
MIN_FEASIBLE_NODES_TO_FIND = 100
MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND = 5


def num_feasible_nodes_to_find(percentage: int | None, num_all: int) -> int:
    """kube's adaptive number of feasible nodes to look for before scoring."""
    if num_all < MIN_FEASIBLE_NODES_TO_FIND:
        return num_all
    pct = percentage or 0
    if pct == 0:
        pct = max(50 - num_all // 125, MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND)
    n = num_all * pct // 100
    return max(n, MIN_FEASIBLE_NODES_TO_FIND)


def nominated_in(state: CycleState) -> bool:
    """Whether the failed attempt nominated a node (its PostFilter preempted)."""
    return bool(state.get(NOMINATED_NODE_KEY, ""))


class SchedulingCycle:
    """Finds a node for each popped pod with its profile's framework, and assumes the pod there."""

    def __init__(
        self,
        *,
        frameworks: Mapping[str, Framework],
        store: Store,
        clock: Clock,
        rng: random.Random,
        cache: SchedulerCache,
        queue: SchedulingQueue,
        nominator: Nominator,
        twins: TwinFailures,
        stats: SchedulerStats,
        binding: BindingCycle,
        extenders: Extenders | None = None,
    ) -> None:
        self.frameworks = frameworks
        self.extenders = extenders if extenders is not None else Extenders()
        self.store = store
        self.clock = clock
        self.rng = rng
        self.cache = cache
        self.queue = queue
        self.nominator = nominator
        self.stats = stats
        self._twins = twins
        self._binding = binding
        self.next_start = 0  # kube's nextStartNodeIndex: where the next search for feasible nodes begins
        self._every_row: np.ndarray[Any, Any] = _read_only(np.ones(0, dtype=np.bool_))
        # traces of chosen pods' attempts (berth explain); profiles with the SchedulingResults marker
        # plugin get every attempt written on the pod as kube-scheduler-simulator annotations
        self.tracer: Tracer | None = None
        self._recording_profiles = frozenset(
            name for name, fw in frameworks.items() if RESULTS_PLUGIN in fw.plugins
        )
        self._preempting_profiles = frozenset(
            name
            for name, fw in frameworks.items()
            if any(p.name in PREEMPTION_PLUGINS for p in fw.post_filter_plugins)
        )

    def schedule(self, qp: QueuedPod, started: float) -> None:
        """One attempt of the popped pod ``qp`` that began at ``started`` (perf_counter()): find a node;
        then assume, reserve and permit the pod there and hand it to the binding cycle, or end the attempt
        as a failure."""
        pod = qp.pod
        fw = self.frameworks[pod.scheduler_name]
        cycle = self.queue.scheduling_cycle
        self.stats.attempts += 1
        moves_at_start = self.queue.move_count
        state = CycleState()
        table = self.cache.table
        trace = self._start_trace(fw, pod)
        if trace is not None:
            state.write(TRACE_KEY, trace)
        try:
            node, failure = self._find_node(fw, state, pod, table)
        except PluginError as e:
            self._binding.fail(fw, qp, e.status, cycle, started, error=True)
            return
        if trace is not None:
            self._finish_trace(fw, state, trace, pod, node, failure)
        if node is None:
            assert failure is not None
            # an extender's answers may change without a cluster event: its pods' twins are not held back
            if not nominated_in(state) and not state.get(EXTENDERS_KEY):
                rejecting: set[str] = state.get("berth/unschedulable-plugins", set())
                self._twins.remember(fw, pod, {failure.plugin} | rejecting, moves_at_start)
            self._binding.fail(
                fw,
                qp,
                failure,
                cycle,
                started,
                rejecting=state.get("berth/unschedulable-plugins", set()),
                nominated=state.get(NOMINATED_NODE_KEY, ""),
            )
            return
        self._assume_and_bind(fw, qp, state, pod, node, cycle, started)

    def _start_trace(self, fw: Framework, pod: PodInfo) -> CycleTrace | None:
        """A new trace when this attempt is explained or recorded, else None."""
        tracer = self.tracer
        wanted = tracer is not None and tracer.wants(pod)
        if not wanted and (fw.profile_name not in self._recording_profiles or pod.kind != "Pod"):
            return None
        trace = CycleTrace(pod.key, pod.uid, fw.profile_name, self.clock.now(), self.stats.attempts)
        trace.explained = wanted
        return trace

    def _finish_trace(
        self,
        fw: Framework,
        state: CycleState,
        trace: CycleTrace,
        pod: PodInfo,
        node: str | None,
        failure: Status | None,
    ) -> None:
        """Complete ``trace`` with the outcome, hand it to the tracer, and stage its annotations."""
        if node is not None:
            trace.selected = node
        elif failure is not None:
            trace.failure = failure.message
        if trace.explained and self.tracer is not None:
            for (
                plugin
            ) in fw.plugins.values():  # berth explain: the reservations the pod used or was refused by
                explain = getattr(plugin, "explain_reservations", None)
                if explain is not None:
                    trace.reservations.extend(explain(state, pod, node or ""))
            self.tracer.record(trace)
        if fw.profile_name not in self._recording_profiles:
            return
        annotations = trace.annotations()
        if node is not None:
            merged = dict(state.get(BINDING_ANNOTATIONS_KEY) or {})
            merged.update(annotations)
            state.write(BINDING_ANNOTATIONS_KEY, merged)
            return
        ns, name = trace.pod.split("/", 1)
        with contextlib.suppress(NotFound):
            self.store.patch(POD_KEY, ns, name, {"metadata": {"annotations": annotations}})

    def _find_node(
        self, fw: Framework, state: CycleState, pod: PodInfo, table: NodeTable
    ) -> tuple[str | None, Status | None]:
        n = table.size
        if n == 0:
            return None, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ("no nodes available to schedule pods",))
        pre, s, narrowed_by = fw.run_pre_filter(state, pod, table)
        trace: CycleTrace | None = state.get(TRACE_KEY)
        if trace is not None:
            record_pre_filter(trace, fw, None if s.is_success() else s)
        if not s.is_success():
            msg = fit_error_message(n, prefilter_msg=s.message)
            state.write("berth/unschedulable-plugins", {s.plugin} | narrowed_by)
            return None, self._post_filter(
                fw, state, pod, n, Status(s.code, (msg,), s.plugin), NodeStatusMap(absent=s)
            )
        if pre.node_names is not None:
            candidates = np.zeros(n, dtype=np.bool_)
            for name in pre.node_names:
                i = table.index.get(name)
                if i is not None:
                    candidates[i] = True
        else:
            candidates = self._every_row
            if candidates.size != n:
                candidates = self._every_row = _read_only(np.ones(n, dtype=np.bool_))
        if self.nominator:
            add_nominated(state, self.nominator.overlay_for(pod, table))
        overlay = state.overlay
        if overlay:
            table.apply_overlay(overlay)
            state.write(OVERLAY_APPLIED_KEY, True)
        try:
            return self._filter_and_score(fw, state, pod, table, pre.node_names, narrowed_by, candidates)
        finally:
            if overlay:
                table.apply_overlay(overlay, -1)
                state.write(OVERLAY_APPLIED_KEY, False)

    def _filter_and_score(
        self,
        fw: Framework,
        state: CycleState,
        pod: PodInfo,
        table: NodeTable,
        narrowed_to: frozenset[str] | None,
        narrowed_by: set[str],
        candidates: np.ndarray[Any, Any],
    ) -> tuple[str | None, Status | None]:
        n = table.size
        outcome = fw.run_filters(state, pod, table, candidates)
        trace: CycleTrace | None = state.get(TRACE_KEY)
        if trace is not None:
            narrowed_msg = "node(s) didn't satisfy plugin(s) [" + " ".join(sorted(narrowed_by)) + "]"
            record_filters(trace, fw, state.skip_filter, table, candidates, outcome, narrowed_msg)
        extenders = self.extenders.for_pod(pod) if self.extenders.all else ()
        if extenders:
            state.write(EXTENDERS_KEY, extenders)
        nominated = self.nominator.node_of(pod.uid) if self.nominator else ""
        if nominated:
            row = table.index.get(nominated)
            if (
                row is not None
                and outcome.passed[row]
                and (not extenders or self.extenders.filter(extenders, pod, table, np.array([row]))[0].size)
            ):
                if trace is not None:
                    trace.note = f"nominated node {nominated} passed the filters: taken without scoring"
                return nominated, None  # kube tries the nominated node first and takes it if it fits
        feasible = self._sample(fw, outcome.passed, narrowed_to is not None)
        if extenders and feasible.size:
            feasible, outcome = self._extender_filter(extenders, state, pod, table, feasible, outcome)
        if feasible.size == 0:
            reasons: Counter[str] = Counter()
            plugins: set[str] = set(narrowed_by) | state.get(EXTENDER_REJECTED_KEY, set())
            statuses = NodeStatusMap()
            codes = outcome.status_codes
            if outcome.statuses:
                # rows per status (code -1, a passed row, counts at index 0 and is dropped)
                per_status = np.bincount(codes + 1, minlength=len(outcome.statuses) + 1)[1:].tolist()
                for st, c in zip(outcome.statuses, per_status, strict=True):
                    if c:
                        for r in st.reasons:
                            reasons[r] += c
                        plugins.add(st.plugin)
                statuses.rows = RowStatuses(table.index, codes, outcome.statuses)
            if narrowed_to is not None:
                statuses.absent = Status(
                    Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
                    ("node(s) didn't satisfy plugin(s) [" + " ".join(sorted(narrowed_by)) + "]",),
                )
            state.write("berth/unschedulable-plugins", plugins)
            msg = fit_error_message(n, reasons)
            return None, self._post_filter(fw, state, pod, n, Status(Code.UNSCHEDULABLE, (msg,)), statuses)
        if feasible.size == 1:
            if trace is not None:
                trace.note = "only one feasible node: scoring skipped"
            return table.names[int(feasible[0])], None
        withdraw_nominated(state, table)  # kube scores the nodes as they are, without nominated pods
        scores = fw.run_scores(state, pod, table, feasible, keep_parts=trace is not None)
        if trace is not None:
            record_scores(trace, fw, table, scores)
        total = scores.total
        if extenders:
            extra = self.extenders.scores(extenders, pod, table, feasible)
            if extra is not None:
                total = total + extra
                if trace is not None:
                    trace.note = "extender scores added: " + ", ".join(
                        f"{table.names[int(r)]}={int(v)}" for r, v in zip(feasible, extra, strict=True)
                    )
        return table.names[int(feasible[self._select(total)])], None

    def _extender_filter(
        self,
        extenders: tuple[HTTPExtender, ...],
        state: CycleState,
        pod: PodInfo,
        table: NodeTable,
        feasible: IntArray,
        outcome: FilterOutcome,
    ) -> tuple[IntArray, FilterOutcome]:
        """Run the interested extenders' filters over the feasible rows (after the Filter plugins, as
        kube's findNodesThatPassExtenders): the rows they kept, and ``outcome`` with the rows they failed
        given their statuses. When they dropped rows, "Extender" joins the pod's unschedulable plugins."""
        kept, failed = self.extenders.filter(extenders, pod, table, feasible)
        trace: CycleTrace | None = state.get(TRACE_KEY)
        if trace is not None:  # berth explain shows the extenders' verdicts as those of an "Extender" filter
            trace.filter_plugins.append(EXTENDER_NAME)
            passed_rows = set(kept.tolist())
            for r in feasible.tolist():
                st = failed.get(r)
                verdict = PASSED if r in passed_rows else (st.message if st is not None else "filtered out")
                trace.filter.setdefault(table.names[r], {})[EXTENDER_NAME] = verdict
        if kept.size != feasible.size:
            state.write(EXTENDER_REJECTED_KEY, {EXTENDER_NAME})
        if not failed:
            return kept, outcome
        codes = outcome.status_codes.copy()
        statuses = list(outcome.statuses)
        passed = outcome.passed.copy()
        known: dict[Status, int] = {}
        for row, st in failed.items():
            k = known.get(st)
            if k is None:
                k = known[st] = len(statuses)
                statuses.append(st)
            codes[row] = k
            passed[row] = False
        return kept, FilterOutcome(passed, codes, statuses)

    def _post_filter(
        self, fw: Framework, state: CycleState, pod: PodInfo, n: int, fit: Status, statuses: NodeStatusMap
    ) -> Status:
        if not fw.post_filter_plugins:
            return fit
        stats = self.stats
        preempting = fw.profile_name in self._preempting_profiles
        if preempting:
            stats.preemption_attempts += 1
        result, s = fw.run_post_filter(state, pod, statuses)
        if preempting and s.is_success() and result is not None and result.nominated_node_name:
            stats.preemption_victims.observe(result.victims)
        if s.is_success() and result is not None and result.nominated_node_name:
            state.write(NOMINATED_NODE_KEY, result.nominated_node_name)
        if s.message:
            return Status(fit.code, (fit.message + " " + s.message.rstrip(".") + ".",), fit.plugin)
        return fit

    def _sample(self, fw: Framework, passed: np.ndarray[Any, Any], narrowed: bool) -> IntArray:
        """The feasible rows kube would have found, walking the node tree from the round-robin start."""
        n = len(passed)
        all_feasible = passed.nonzero()[0]
        to_find = num_feasible_nodes_to_find(fw.percentage_of_nodes_to_score, n)
        if narrowed or all_feasible.size <= to_find:
            # every candidate node is evaluated; kube still advances its start by all processed nodes
            self.next_start = (self.next_start + n) % n if n else 0
            return all_feasible
        start = self.next_start % n
        order = self.cache.table.zone_order()
        if order is None:  # rows are already in node-tree order
            split = int(all_feasible.searchsorted(start))
            chosen = all_feasible[split : split + to_find]
            if chosen.size < to_find:  # the walk wraps around to the first rows
                wrapped = all_feasible[: to_find - chosen.size]
                last = int(wrapped[-1])
                chosen = np.concatenate((wrapped, chosen))
            else:
                last = int(chosen[-1])
            self.next_start = (start + (last - start) % n + 1) % n
            return chosen
        walk = np.concatenate((order[start:], order[:start])) if start else order
        positions = passed[walk].nonzero()[0][:to_find]
        self.next_start = (start + int(positions[-1]) + 1) % n
        return np.sort(walk[positions])

    def _select(self, total: IntArray) -> int:
        """Index of the highest total; ties broken uniformly with the seeded RNG."""
        best = total[total.argmax()]  # as total.max(), without numpy's Python-level reduction wrapper
        ties = (total == best).nonzero()[0]
        if ties.size == 1:
            return int(ties[0])
        return int(ties[self.rng.randrange(ties.size)])

    # ----- assume / reserve / permit ---------------------------------------------------------
    def _assume_and_bind(
        self,
        fw: Framework,
        qp: QueuedPod,
        state: CycleState,
        pod: PodInfo,
        node: str,
        cycle: int,
        started: float,
    ) -> None:
        """Assume ``pod`` on ``node`` and run Reserve and Permit (the end of kube's schedulingCycle), then
        start its binding cycle: at once, or when the Permit plugins that hold it let it go."""
        self.cache.assume(pod, node)
        s = fw.run_reserve(state, pod, node)
        if not s.is_success():
            fw.run_unreserve(state, pod, node)
            self.cache.forget(pod)
            self._binding.fail(fw, qp, s, cycle, started, error=s.code == Code.ERROR)
            return
        s, waits = fw.run_permit(state, pod, node)
        if s.code == Code.WAIT:
            self._binding.wait_on_permit(fw, qp, state, pod, node, cycle, waits, started)
            return
        if not s.is_success():
            fw.run_unreserve(state, pod, node)
            self.cache.forget(pod)
            self._binding.fail(fw, qp, s, cycle, started, error=s.code == Code.ERROR)
            return
        self.queue.done(pod.uid)
        self._binding.bind(fw, qp, state, pod, node, cycle, started)


def _read_only(a: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    """``a``, made read-only (shared from cycle to cycle)."""
    a.flags.writeable = False
    return a
