"""The scheduler: informer handlers, the scheduling cycle and the binding cycle.

Single-threaded and event-driven: ``handle_event`` feeds store changes into the cache and the
queue; ``schedule_one`` pops one pod and runs its whole scheduling cycle and (unless a Permit
plugin holds it) its binding cycle. Waiting is done with clock timers.
"""

from __future__ import annotations

import bisect
import contextlib
import json
import random
import time
from collections import Counter
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from berth.api.contracts import Recorder, Store
from berth.api.duration import go_duration
from berth.api.errors import NotFound
from berth.api.podaffinity import AffinityTerm, compile_pod_affinity
from berth.clock import Clock
from berth.scheduler.cache import SchedulerCache, is_terminal
from berth.scheduler.framework.config import SchedulerConfig, parse_config
from berth.scheduler.framework.cycle_state import BINDING_ANNOTATIONS_KEY, CycleState, Overlay
from berth.scheduler.framework.nodetable import AdjustedNodeInfo, IntArray, NodeInfo, NodeTable
from berth.scheduler.framework.plugin import (
    NodeStatusMap,
    ObjectEventPlugin,
    PseudoPodSource,
    RowStatuses,
    filter_ignores_node_pods,
)
from berth.scheduler.framework.podinfo import PodInfo
from berth.scheduler.framework.registry import Registry
from berth.scheduler.framework.runtime import DryRunPlan, Framework
from berth.scheduler.framework.status import SUCCESS, Code, PluginError, Status
from berth.scheduler.messages import fit_error_message, scheduled_message
from berth.scheduler.queue import QueuedPod, SchedulingQueue
from berth.scheduler.trace import (
    RESULTS_PLUGIN,
    CycleTrace,
    Tracer,
    record_filters,
    record_pre_filter,
    record_scores,
    without_result_annotations,
)

POD_KEY = ("", "Pod")
NAMESPACE_KEY = ("", "Namespace")
AFFINITY_TERMS_KEY = "berth/required-affinity-terms"
# PostFilter plugins whose run is a preemption attempt (kube's scheduler_preemption_attempts_total)
PREEMPTION_PLUGINS = frozenset(("DefaultPreemption", "CapacityScheduling"))
# kube-scheduler's histogram buckets (upper bounds): attempt durations (ExponentialBuckets(0.001, 2, 15)),
# victims per preemption (ExponentialBuckets(1, 2, 7)), attempts per scheduled pod (ExponentialBuckets(1, 2, 5))
ATTEMPT_DURATION_BUCKETS = tuple(0.001 * 2**i for i in range(15))
PREEMPTION_VICTIMS_BUCKETS = tuple(float(2**i) for i in range(7))
POD_ATTEMPTS_BUCKETS = tuple(float(2**i) for i in range(5))


def affinity_terms(pod: PodInfo) -> tuple[AffinityTerm, ...]:
    """The pod's required pod affinity terms, compiled once (kept in ``pod.extra``)."""
    terms: tuple[AffinityTerm, ...] | None = pod.extra.get(AFFINITY_TERMS_KEY)
    if terms is None:
        terms = (
            compile_pod_affinity(pod.affinity, pod.namespace, pod.labels).required_affinity
            if pod.affinity
            else ()
        )
        pod.extra[AFFINITY_TERMS_KEY] = terms
    return terms


_ACTIONS = {"ADDED": "Add", "MODIFIED": "Update", "DELETED": "Delete"}
NOMINATED_NODE_KEY = "berth/nominated-node"
OVERLAY_APPLIED_KEY = "berth/overlay-applied"
STATIC_FILTER_KEY = "berth/pod-independent-filters"  # node -> None (passed) or the Status that rejected it
TRACE_KEY = "berth/trace"  # the CycleTrace of an attempt being explained or recorded
DRY_RUN_PLAN_KEY = "berth/dry-run-plan"  # (the cycle's DryRunPlan or None,)
PREPARED_KEY = "berth/dry-run-nodes"  # node -> (DryRunPlan, NodeInfo, nominated pods counted there)
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


@dataclass(slots=True)
class Histogram:
    """A Prometheus-style histogram kept as plain counts: ``counts[i]`` observations fell in bucket ``i``
    (``bounds[i-1] < v <= bounds[i]``; the last one is ``+Inf``), not cumulative."""

    bounds: tuple[float, ...]
    counts: list[int] = field(default_factory=list)
    total: float = 0.0

    def __post_init__(self) -> None:
        if not self.counts:
            self.counts = [0] * (len(self.bounds) + 1)

    def observe(self, value: float) -> None:
        """Count one observation."""
        self.counts[bisect.bisect_left(self.bounds, value)] += 1
        self.total += value

    @property
    def count(self) -> int:
        """Observations so far."""
        return sum(self.counts)


@dataclass(slots=True)
class SchedulerStats:
    """Counters of the scheduling loop."""

    attempts: int = 0
    scheduled: int = 0
    unschedulable: int = 0
    errors: int = 0
    loop_seconds: float = 0.0
    # attempts of pods an idle scheduler took from backoffQ early (SchedulerPopFromBackoffQ), and their time
    early_attempts: int = 0
    early_seconds: float = 0.0
    # for /metrics: attempt durations by (result, profile), result being scheduled, unschedulable or error
    attempt_durations: dict[tuple[str, str], Histogram] = field(default_factory=dict)
    preemption_attempts: int = 0  # runs of a preemption PostFilter
    preemption_victims: Histogram = field(default_factory=lambda: Histogram(PREEMPTION_VICTIMS_BUCKETS))
    pod_attempts: Histogram = field(default_factory=lambda: Histogram(POD_ATTEMPTS_BUCKETS))

    def observe_attempt(self, result: str, profile: str, seconds: float) -> None:
        """Count one finished attempt of ``profile`` ending in ``result`` that took ``seconds``."""
        h = self.attempt_durations.get((result, profile))
        if h is None:
            h = self.attempt_durations[(result, profile)] = Histogram(ATTEMPT_DURATION_BUCKETS)
        h.observe(seconds)


@dataclass(slots=True)
class _Waiting:
    """A pod held at Permit by one or more plugins."""

    sched: Scheduler
    fw: Framework
    state: CycleState
    pod: PodInfo
    node_name: str
    qp: QueuedPod
    cycle: int
    pending: dict[str, Any] = field(default_factory=dict)  # plugin → timer
    done: bool = False
    started: float = 0.0  # perf_counter() at the start of its attempt

    def pending_plugins(self) -> list[str]:
        return sorted(self.pending)

    def allow(self, plugin: str) -> None:
        timer = self.pending.pop(plugin, None)
        if timer is not None:
            timer.cancel()
        if not self.pending and not self.done:
            self.done = True
            self.sched._finish_wait(self, SUCCESS)

    def reject(self, plugin: str, message: str) -> None:
        if self.done:
            return
        self.done = True
        for t in self.pending.values():
            t.cancel()
        self.pending.clear()
        self.sched._finish_wait(self, Status(Code.UNSCHEDULABLE, (message,), plugin))


TWIN_KEY = "berth/twin-key"


class _TwinFailure:
    """A clean failure of a pod: the framework, its rejecting plugins, and the queue's move count when its
    attempt began (events since then are checked, incrementally, for one those plugins care about)."""

    __slots__ = ("checked", "fw", "plugins")

    def __init__(self, fw: Framework, plugins: frozenset[str], since: int) -> None:
        self.fw = fw
        self.plugins = plugins
        self.checked = since

    def stale(self, queue: SchedulingQueue) -> bool:
        """Whether an event the rejecting plugins care about happened since the failure."""
        plugins = set(self.plugins)
        moves = queue.moves_since(self.checked)
        if moves is None:
            return True
        for resource, action in moves:
            if self.fw.interested(plugins, resource, action):
                return True
        self.checked = queue.move_count
        return False


class Nominator:
    """Pods nominated to nodes (status.nominatedNodeName) and not bound yet, as kube's nominator keeps them."""

    def __init__(self) -> None:
        self._by_node: dict[str, dict[str, PodInfo]] = {}
        self._node_of: dict[str, str] = {}
        self._version = 0
        self._cached: dict[tuple[int, int, int], Overlay | None] = {}

    @property
    def version(self) -> int:
        """Changes with every nomination change."""
        return self._version

    def set(self, pod: PodInfo, node: str) -> None:
        """Record (or with ``node`` "" forget) the nomination of ``pod``."""
        if node and self._node_of.get(pod.uid) == node:
            known = self._by_node[node][pod.uid]
            if (known.priority, known.requests, known.host_ports, known.labels) == (
                pod.priority,
                pod.requests,
                pod.host_ports,
                pod.labels,
            ):
                self._by_node[node][pod.uid] = pod  # the same nomination: nothing nominated changes
                return
        self._version += 1
        self._cached.clear()
        old = self._node_of.pop(pod.uid, None)
        if old is not None:
            pods = self._by_node.get(old)
            if pods is not None:
                pods.pop(pod.uid, None)
                if not pods:
                    del self._by_node[old]
        if node:
            self._node_of[pod.uid] = node
            self._by_node.setdefault(node, {})[pod.uid] = pod

    def node_of(self, uid: str) -> str:
        """The node ``uid`` is nominated to ("" if none)."""
        return self._node_of.get(uid, "")

    def on_node(self, node: str) -> Iterable[PodInfo]:
        """Pods nominated to ``node``."""
        return self._by_node.get(node, {}).values()

    def __bool__(self) -> bool:
        return bool(self._node_of)

    def overlay_for(
        self, pod: PodInfo, table: NodeTable, skip: Iterable[str] = (), node: str | None = None
    ) -> list[Overlay]:
        """Requests of pods nominated with equal or higher priority than ``pod`` (not ``pod`` itself), as
        extra load on their nodes (only ``node``'s when given): the overlays to apply, in order."""
        if node is not None or skip:
            out = self._build_overlay(pod, table, skip, node)
            return [] if out is None else [out]
        key = (self._version, pod.priority, table.layout)
        if key in self._cached:
            shared = self._cached[key]
        else:
            shared = self._cached[key] = self._build_overlay(pod, table, (), None, exclude_self=False)
        if shared is None:
            return []
        own = self._node_of.get(pod.uid, "")
        row = table.index.get(own) if own else None
        if not own or row is None:
            return [shared]
        # the shared overlay counts the pod's own nomination: take it back on its row
        known = self._by_node[own][pod.uid]
        correction = Overlay(
            np.asarray([row], dtype=np.int64),
            {r: np.asarray([-v], dtype=np.int64) for r, v in known.requests.items()},
            np.asarray([-known.nonzero_cpu], dtype=np.int64),
            np.asarray([-known.nonzero_memory], dtype=np.int64),
            np.asarray([-1], dtype=np.int64),
            [(row, tuple(known.host_ports))] if known.host_ports else [],
            ports_sign=1,
        )
        return [shared, correction]

    def _build_overlay(
        self,
        pod: PodInfo,
        table: NodeTable,
        skip: Iterable[str],
        node: str | None,
        *,
        exclude_self: bool = True,
    ) -> Overlay | None:
        rows: list[int] = []
        deltas: dict[str, list[int]] = {}
        nz_cpu: list[int] = []
        nz_mem: list[int] = []
        counts: list[int] = []
        ports: list[tuple[int, tuple[tuple[str, str, int], ...]]] = []
        skipped = set(skip)
        if node is not None:
            items: Iterable[tuple[str, dict[str, PodInfo]]] = (
                [(node, self._by_node[node])] if node in self._by_node else []
            )
        else:
            items = self._by_node.items()
        for name, pods in items:
            row = table.index.get(name)
            if row is None:
                continue
            chosen = [
                p
                for p in pods.values()
                if (p.uid != pod.uid or not exclude_self)
                and p.uid not in skipped
                and p.priority >= pod.priority
            ]
            if not chosen:
                continue
            rows.append(row)
            j = len(rows) - 1
            for p in chosen:
                for r, v in p.requests.items():
                    col = deltas.setdefault(r, [0] * j)
                    col.extend([0] * (j + 1 - len(col)))
                    col[j] += v
                if p.host_ports:
                    ports.append((row, tuple(p.host_ports)))
            for col in deltas.values():
                col.extend([0] * (j + 1 - len(col)))
            nz_cpu.append(sum(p.nonzero_cpu for p in chosen))
            nz_mem.append(sum(p.nonzero_memory for p in chosen))
            counts.append(len(chosen))
        if not rows:
            return None
        # ports are added, not freed: a negative use count in Overlay.ports means "in use"
        return Overlay(
            np.asarray(rows, dtype=np.int64),
            {r: np.asarray(v, dtype=np.int64) for r, v in deltas.items()},
            np.asarray(nz_cpu, dtype=np.int64),
            np.asarray(nz_mem, dtype=np.int64),
            np.asarray(counts, dtype=np.int64),
            ports,
            ports_sign=-1,
        )


class _Handle:
    """The framework Handle the scheduler gives the plugins of one profile."""

    def __init__(self, sched: Scheduler, profile: str) -> None:
        self._s = sched
        self.profile_name = profile

    @property
    def clock(self) -> Clock:
        return self._s.clock

    @property
    def client(self) -> Store:
        return self._s.store

    @property
    def rng(self) -> random.Random:
        return self._s.rng

    def node_table(self) -> NodeTable:
        return self._s.cache.table

    def get_waiting_pod(self, uid: str) -> _Waiting | None:
        return self._s.waiting.get(uid)

    def iterate_waiting_pods(self) -> Iterable[_Waiting]:
        return list(self._s.waiting.values())

    def record_event(
        self, obj: Mapping[str, Any], type_: str, reason: str, message: str, action: str = ""
    ) -> None:
        self._s.events.event(obj, type_, reason, message, action=action, component=self.profile_name)

    def call_later(self, delay: float, fn: Callable[[], None]) -> None:
        self._s.clock.call_later(delay, fn)

    def bind_pod(self, pod: PodInfo, node_name: str, annotations: Mapping[str, str] | None = None) -> None:
        self._s.store.bind(pod.namespace, pod.name, node_name, uid=pod.uid, annotations=annotations)

    def register_pseudo_kind(self, kind: str, source: PseudoPodSource) -> None:
        self._s.pseudo_sources[(self.profile_name, kind)] = source

    def enqueue(self, pod: PodInfo) -> None:
        s = self._s
        if s.cache.is_assumed(pod.uid) or pod.uid in s.waiting:
            return
        if pod.uid in s.queue:
            s.queue.update(pod)
        else:
            s.queue.add(pod)

    def dequeue(self, uid: str) -> None:
        self._s.queue.delete(uid)

    def set_virtual_pod(self, pod: PodInfo, node_name: str) -> None:
        s = self._s
        known = s.cache.pod(pod.uid) is not None
        s.cache.set_pod(pod, node_name)
        s.queue.move_all("Pod", "Update" if known else "Add")

    def remove_virtual_pod(self, uid: str) -> None:
        s = self._s
        if s.cache.remove_pod(uid) is not None:
            s.queue.move_all("Pod", "Delete")

    def nominated_pods(self, node_name: str) -> list[PodInfo]:
        return list(self._s.nominator.on_node(node_name))

    def filter_with_changes(
        self,
        state: CycleState,
        pod: PodInfo,
        node_name: str,
        removed: Sequence[PodInfo] = (),
    ) -> Status:
        return self._s.filter_with_changes(self.profile_name, state, pod, node_name, removed)

    def clear_nomination(self, pod: PodInfo) -> None:
        self._s.set_nomination(pod, "")

    def dry_run_key(self, state: CycleState, pod: PodInfo, node_name: str) -> Hashable | None:
        return self._s.dry_run_key(self.profile_name, state, pod, node_name)

    def dry_run_keys(self, state: CycleState, pod: PodInfo, rows: Sequence[int]) -> list[Hashable | None]:
        return self._s.dry_run_keys(self.profile_name, state, pod, rows)

    def activate_pods(self, uids: Iterable[str]) -> None:
        self._s.queue.activate(uids)


class Scheduler:
    """kube-scheduler's core loop over Berth's framework, cache and queue."""

    def __init__(
        self,
        store: Store,
        clock: Clock,
        events: Recorder,
        registry: Registry,
        config: SchedulerConfig | None = None,
        *,
        seed: int = 0,
    ) -> None:
        self.store = store
        self.clock = clock
        self.events = events
        self.rng = random.Random(seed)
        self.config = config or parse_config(None)
        self.cache = SchedulerCache()
        self.pseudo_sources: dict[tuple[str, str], PseudoPodSource] = {}
        self.frameworks: dict[str, Framework] = {
            p.scheduler_name: Framework(
                p,
                registry,
                _Handle(self, p.scheduler_name),
                default_percentage=self.config.percentage_of_nodes_to_score,
            )
            for p in self.config.profiles
        }
        self._object_plugins: dict[str, list[ObjectEventPlugin]] = {}
        for fw in self.frameworks.values():
            for plugin in fw.plugins.values():
                if isinstance(plugin, ObjectEventPlugin):
                    for kind in plugin.watched_kinds():
                        self._object_plugins.setdefault(kind, []).append(plugin)
        first = next(iter(self.frameworks.values()))
        self.queue = SchedulingQueue(
            clock,
            first.queue_sort.sort_key,
            self._pre_enqueue,
            initial_backoff=self.config.pod_initial_backoff_seconds,
            max_backoff=self.config.pod_max_backoff_seconds,
            interested=self._interested,
            skip_early=self._twin_failed_now,
            early_version=self._early_version,
        )
        # "twins": pods that schedule alike (same profile, namespace, spec, labels, annotations, owners and
        # nominated node); a twin's clean failure at the current virtual instant is remembered here
        self._twin_at = -1.0
        self._twins_failed: dict[tuple[str, str], _TwinFailure] = {}
        self.waiting: dict[str, _Waiting] = {}
        self.nominator = Nominator()
        self.next_start = 0
        self.stats = SchedulerStats()
        self.on_decision: Callable[[PodInfo, str, Status], None] | None = None
        # traces of chosen pods' attempts (berth explain); profiles with the SchedulingResults marker
        # plugin get every attempt written on the pod as kube-scheduler-simulator annotations
        self.tracer: Tracer | None = None
        self._recording_profiles = frozenset(
            name for name, fw in self.frameworks.items() if RESULTS_PLUGIN in fw.plugins
        )
        self._preempting_profiles = frozenset(
            name
            for name, fw in self.frameworks.items()
            if any(p.name in PREEMPTION_PLUGINS for p in fw.post_filter_plugins)
        )
        self._attempt_t0 = 0.0  # perf_counter() at the start of the attempt whose outcome is being handled

    # ----- informers -----------------------------------------------------------------------
    def _pre_enqueue(self, pod: PodInfo) -> Status:
        fw = self.frameworks.get(pod.scheduler_name)
        return SUCCESS if fw is None else fw.run_pre_enqueue(pod)

    def _interested(self, qp: QueuedPod, resource: str, action: str) -> bool:
        fw = self.frameworks.get(qp.pod.scheduler_name)
        return fw is None or fw.interested(qp.unschedulable_plugins, resource, action)

    def responsible_for(self, pod: Mapping[str, Any]) -> bool:
        """Whether one of the profiles schedules this pod."""
        name = (pod.get("spec") or {}).get("schedulerName") or "default-scheduler"
        return name in self.frameworks

    def handle_event(self, type_: str, obj: Mapping[str, Any]) -> None:
        """Feed one store change (ADDED / MODIFIED / DELETED) of a Pod, a Node or a kind plugins follow."""
        kind = obj.get("kind")
        if kind == "Pod":
            self._on_pod(type_, obj)
        elif kind == "Node":
            self._on_node(type_, obj)
        plugins = self._object_plugins.get(str(kind), ())
        for plugin in plugins:
            plugin.on_object_event(type_, obj)
        if plugins and kind not in ("Pod", "Node"):
            # e.g. an ElasticQuota or PodGroup change: retry the pods rejected by plugins that care about it
            self.queue.move_all(str(kind), _ACTIONS.get(type_, "Update"))

    def watched_kinds(self) -> set[str]:
        """Every kind whose events the scheduler wants."""
        return {"Pod", "Node", *self._object_plugins}

    def _on_node(self, type_: str, node: Mapping[str, Any]) -> None:
        if type_ == "DELETED":
            self.cache.remove_node(node["metadata"]["name"])
            return
        self.cache.set_node(node)
        self.queue.move_all("Node", "Add" if type_ == "ADDED" else "Update")

    def _on_pod(self, type_: str, pod: Mapping[str, Any]) -> None:
        meta = pod["metadata"]
        uid = meta.get("uid", "")
        node = (pod.get("spec") or {}).get("nodeName")
        was_nominated = False
        if self.nominator and (type_ == "DELETED" or node) and self.nominator.node_of(uid):
            self.nominator.set(PodInfo(pod), "")
            was_nominated = True
        if type_ == "DELETED" or (node and is_terminal(pod)):
            w = self.waiting.get(uid)
            if w is not None:
                w.reject("", "pod deleted while waiting")
            self.queue.delete(uid)
            # kube's NodeResourcesFit hint: deleting a bound pod, or a nominated one, may free room
            if self.cache.remove_pod(uid) is not None or was_nominated:
                self.queue.move_all("Pod", "Delete")
            return
        if node:
            self.queue.delete(uid)
            old = self.cache.pod(uid)
            if (
                old is not None
                and self.cache.node_of(uid) == node
                and (
                    self.cache.is_assumed(uid)  # our own binding confirmed: only nodeName/status changed
                    or (
                        old.obj.get("spec") == pod.get("spec")
                        and (old.obj.get("metadata") or {}).get("labels") == meta.get("labels")
                    )
                )
            ):
                old.obj = pod
                self.cache.confirm(uid)
                self._assigned_pod_added(old)
                return
            self.cache.set_pod(PodInfo(pod), node)
            self.queue.move_all("Pod", "Add" if old is None else "Update")
            return
        if not self.responsible_for(pod) or meta.get("deletionTimestamp"):
            return
        if self.cache.is_assumed(uid) or uid in self.waiting:
            return
        nominated = (pod.get("status") or {}).get("nominatedNodeName") or ""
        if nominated or self.nominator.node_of(uid):
            self.nominator.set(PodInfo(pod), nominated)
        if type_ == "ADDED" or uid not in self.queue:
            self.queue.add(PodInfo(pod))
            return
        qp = self.queue._pods.get(uid)
        if qp is not None and not _pod_spec_changed(qp.pod.obj, pod):
            qp.pod.obj = pod
            return
        self.queue.update(PodInfo(pod))

    def _assigned_pod_added(self, pod: PodInfo) -> None:
        """kube's AssignedPodAdded: a pod newly bound (by this scheduler too) may satisfy the required pod
        affinity of unschedulable pods; those whose terms match it are retried."""
        if not self.queue.unschedulable:
            return
        ns_labels: dict[str, Mapping[str, str]] = {}

        def namespace_labels(ns: str) -> Mapping[str, str]:
            labels = ns_labels.get(ns)
            if labels is None:
                try:
                    obj = self.store.get(NAMESPACE_KEY, "", ns)
                except NotFound:
                    obj = {}
                labels = ns_labels[ns] = (obj.get("metadata") or {}).get("labels") or {}
            return labels

        def matches(qp: QueuedPod) -> bool:
            terms = affinity_terms(qp.pod)
            return any(t.matches(pod.namespace, pod.labels, namespace_labels(pod.namespace)) for t in terms)

        self.queue.move_matching(matches)

    # ----- nominations and preemption support ----------------------------------------------------
    def set_nomination(self, pod: PodInfo, node: str) -> None:
        """Write (or clear, with "") ``pod``'s status.nominatedNodeName and track it."""
        self.nominator.set(pod, node)
        try:
            self.store.patch(
                POD_KEY,
                pod.namespace,
                pod.name,
                {"status": {"nominatedNodeName": node or None}},
                subresource="status",
            )
        except NotFound:
            return

    def _nominated_counted(self, state: CycleState, pod: PodInfo, node_name: str) -> list[PodInfo]:
        """The nominated pods a dry run counts on ``node_name`` for ``pod`` (none when the cycle's overlay
        already holds them)."""
        if not self.nominator or state.get(OVERLAY_APPLIED_KEY):
            return []
        return [
            p for p in self.nominator.on_node(node_name) if p.uid != pod.uid and p.priority >= pod.priority
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
            cached = (self.frameworks[profile].dry_run_plan(state, pod),)
            state.write(DRY_RUN_PLAN_KEY, cached)
        plan = cached[0]
        row = self.cache.table.index.get(node_name)
        if plan is None or row is None:
            return None
        if prepared is None:
            prepared = {}
            state.write(PREPARED_KEY, prepared)
        # nominated pods are never bound, so never among a dry run's removals: the list holds for the cycle
        entry = prepared[node_name] = (
            plan,
            self.cache.table.info(row),
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
            cached = (self.frameworks[profile].dry_run_plan(state, pod),)
            state.write(DRY_RUN_PLAN_KEY, cached)
        plan = cached[0]
        if plan is None:
            return [None] * len(rows)
        table = self.cache.table
        if self.nominator and not state.get(OVERLAY_APPLIED_KEY):
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
        fw = self.frameworks[profile]
        table = self.cache.table
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

    # ----- the scheduling cycle ------------------------------------------------------------
    def schedule_one(self) -> bool:
        """Schedule the next pod in activeQ; False when there is none."""
        qp = self.queue.pop()
        if qp is None:
            return False
        t0 = self._attempt_t0 = time.perf_counter()
        try:
            self._schedule(qp)
        finally:
            spent = time.perf_counter() - t0
            self.stats.loop_seconds += spent
            if qp.popped_early:
                self.stats.early_attempts += 1
                self.stats.early_seconds += spent
        return True

    def run_until_idle(self) -> int:
        """Schedule until activeQ is empty; returns the number of attempts."""
        n = 0
        while self.schedule_one():
            n += 1
        return n

    def _schedule(self, qp: QueuedPod) -> None:
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
            self._fail(fw, qp, e.status, cycle, error=True)
            return
        if trace is not None:
            self._finish_trace(fw, state, trace, node, failure)
        if node is None:
            assert failure is not None
            if not nominated_in(state):
                rejecting: set[str] = state.get("berth/unschedulable-plugins", set())
                self._remember_twin_failure(fw, pod, {failure.plugin} | rejecting, moves_at_start)
            self._fail(
                fw,
                qp,
                failure,
                cycle,
                rejecting=state.get("berth/unschedulable-plugins", set()),
                nominated=state.get(NOMINATED_NODE_KEY, ""),
            )
            return
        self._assume_and_bind(fw, qp, state, pod, node, cycle)

    def _early_version(self) -> tuple[float, int]:
        """Changes whenever a pod set aside from early popping may now schedulable: with the virtual time
        and with every cluster event (move request) the queue records."""
        return (self.clock.now(), self.queue.move_count)

    def _remember_twin_failure(self, fw: Framework, pod: PodInfo, plugins: set[str], since: int) -> None:
        """Remember that ``pod`` failed, rejected by ``plugins``, without changing anything: its twins need
        not try again at this instant until an event those plugins care about happens (after ``since``)."""
        key = twin_key(pod)
        if key is None:
            return
        now = self.clock.now()
        if now != self._twin_at:
            self._twin_at = now
            self._twins_failed.clear()
        plugins.discard("")
        self._twins_failed[(key, self.nominator.node_of(pod.uid))] = _TwinFailure(
            fw, frozenset(plugins), since
        )

    def _twin_failed_now(self, qp: QueuedPod) -> bool:
        """Whether a twin of the pod failed at this instant and no event its rejecting plugins care about
        happened since (the queue then leaves the pod in backoffQ instead of popping it early: its attempt
        would fail alike)."""
        if not self._twins_failed or self._twin_at != self.clock.now():
            return False
        key = twin_key(qp.pod)
        if key is None:
            return False
        failure = self._twins_failed.get((key, self.nominator.node_of(qp.pod.uid)))
        if failure is None:
            return False
        if failure.stale(self.queue):
            del self._twins_failed[(key, self.nominator.node_of(qp.pod.uid))]
            return False
        return True

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
        self, fw: Framework, state: CycleState, trace: CycleTrace, node: str | None, failure: Status | None
    ) -> None:
        """Complete ``trace`` with the outcome, hand it to the tracer, and stage its annotations."""
        if node is not None:
            trace.selected = node
        elif failure is not None:
            trace.failure = failure.message
        if trace.explained and self.tracer is not None:
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
            candidates = np.ones(n, dtype=np.bool_)
        if self.nominator:
            state.overlay.extend(self.nominator.overlay_for(pod, table))
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
        nominated = self.nominator.node_of(pod.uid) if self.nominator else ""
        if nominated:
            row = table.index.get(nominated)
            if row is not None and outcome.passed[row]:
                if trace is not None:
                    trace.note = f"nominated node {nominated} passed the filters: taken without scoring"
                return nominated, None  # kube tries the nominated node first and takes it if it fits
        feasible = self._sample(fw, outcome.passed, narrowed_to is not None)
        if feasible.size == 0:
            reasons: Counter[str] = Counter()
            plugins: set[str] = set(narrowed_by)
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
        scores = fw.run_scores(state, pod, table, feasible, keep_parts=trace is not None)
        if trace is not None:
            record_scores(trace, fw, table, scores)
        return table.names[int(feasible[self._select(scores.total)])], None

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
        best = int(total.max())
        ties = (total == best).nonzero()[0]
        if ties.size == 1:
            return int(ties[0])
        return int(ties[self.rng.randrange(ties.size)])

    # ----- assume / reserve / permit / bind ------------------------------------------------
    def _assume_and_bind(
        self, fw: Framework, qp: QueuedPod, state: CycleState, pod: PodInfo, node: str, cycle: int
    ) -> None:
        self.cache.assume(pod, node)
        s = fw.run_reserve(state, pod, node)
        if not s.is_success():
            fw.run_unreserve(state, pod, node)
            self.cache.forget(pod)
            self._fail(fw, qp, s, cycle, error=s.code == Code.ERROR)
            return
        s, waits = fw.run_permit(state, pod, node)
        if s.code == Code.WAIT:
            w = _Waiting(self, fw, state, pod, node, qp, cycle, started=self._attempt_t0)
            for plugin, timeout in waits.items():
                w.pending[plugin] = self.clock.call_later(timeout, _timeout_cb(w, plugin, timeout))
            self.waiting[pod.uid] = w
            self.queue.done(pod.uid)
            return
        if not s.is_success():
            fw.run_unreserve(state, pod, node)
            self.cache.forget(pod)
            self._fail(fw, qp, s, cycle, error=s.code == Code.ERROR)
            return
        self.queue.done(pod.uid)
        self._bind(fw, qp, state, pod, node, cycle)

    def _finish_wait(self, w: _Waiting, s: Status) -> None:
        self.waiting.pop(w.pod.uid, None)
        qp, cycle = w.qp, w.cycle
        outer_t0, self._attempt_t0 = self._attempt_t0, w.started  # the outcome of w's own attempt
        try:
            if s.is_success():
                self._bind(w.fw, qp, w.state, w.pod, w.node_name, cycle)
                return
            w.fw.run_unreserve(w.state, w.pod, w.node_name)
            self.cache.forget(w.pod)
            self._requeue(qp)
            self._fail(w.fw, qp, s, cycle)
        finally:
            self._attempt_t0 = outer_t0
        # kube's handleBindingCycleError for a rejected pod: its room is retried by the others only after
        # its own failure is handled, so it waits for the next event instead of retrying at once
        self.queue.move_all("Pod", "Delete", exclude=qp.pod.uid)

    def _requeue(self, qp: QueuedPod) -> None:
        """Make a pod that left the queue (waiting/binding) known to it again."""
        if qp.pod.uid not in self.queue:
            self.queue._pods[qp.pod.uid] = qp

    def _bind(
        self, fw: Framework, qp: QueuedPod, state: CycleState, pod: PodInfo, node: str, cycle: int
    ) -> None:
        source = self._pseudo_source(fw, pod)
        if source is not None:
            s = source.bind_pseudo(state, pod, node)
        else:
            s = fw.run_pre_bind(state, pod, node)
            if s.is_success():
                s = fw.run_bind(state, pod, node)
                if s.is_skip():
                    s = Status(Code.ERROR, ("no bind plugin bound the pod",))
        if not s.is_success():
            fw.run_unreserve(state, pod, node)
            self.cache.forget(pod)
            self.queue.move_all("Pod", "Delete")
            self._requeue(qp)
            self._fail(fw, qp, s, cycle, error=s.code == Code.ERROR)
            return
        stats = self.stats
        stats.scheduled += 1
        stats.observe_attempt("scheduled", fw.profile_name, time.perf_counter() - self._attempt_t0)
        stats.pod_attempts.observe(qp.attempts)
        if source is None:
            self.events.event(
                pod.obj,
                "Normal",
                "Scheduled",
                scheduled_message(pod.namespace, pod.name, node),
                action="Binding",
                component=fw.profile_name,
            )
            fw.run_post_bind(state, pod, node)
        if self.on_decision is not None:
            self.on_decision(pod, node, s)

    def _pseudo_source(self, fw: Framework, pod: PodInfo) -> PseudoPodSource | None:
        if pod.kind == "Pod":
            return None
        source = self.pseudo_sources.get((fw.profile_name, pod.kind))
        if source is None:
            raise RuntimeError(
                f"no plugin of profile {fw.profile_name!r} schedules pods of kind {pod.kind!r}"
            )
        return source

    # ----- failures ------------------------------------------------------------------------
    def _fail(
        self,
        fw: Framework,
        qp: QueuedPod,
        s: Status,
        cycle: int,
        *,
        error: bool = False,
        rejecting: set[str] | frozenset[str] = frozenset(),
        nominated: str = "",
    ) -> None:
        pod = qp.pod
        stats = self.stats
        if error:
            stats.errors += 1
        else:
            stats.unschedulable += 1
        stats.observe_attempt(
            "error" if error else "unschedulable", fw.profile_name, time.perf_counter() - self._attempt_t0
        )
        plugins: set[str] = {s.plugin} if s.plugin else set()
        msg = s.message
        reason = "SchedulerError" if error else "Unschedulable"
        source = self._pseudo_source(fw, pod)
        if source is not None:
            source.pseudo_failed(pod, reason, msg)
            self.queue.add_unschedulable(qp, plugins | rejecting, cycle, error=error)
            if self.on_decision is not None:
                self.on_decision(pod, "", s)
            return
        try:
            current = self.store.get(POD_KEY, pod.namespace, pod.name)
        except NotFound:
            self.queue.delete(pod.uid)
            return
        if (current.get("metadata") or {}).get("uid") != pod.uid:
            self.queue.delete(pod.uid)
            return
        self.events.event(
            current, "Warning", "FailedScheduling", msg, action="Scheduling", component=fw.profile_name
        )
        self._set_condition(current, reason, msg, nominated)
        if nominated:
            self.nominator.set(pod, nominated)
        self.queue.add_unschedulable(qp, plugins | rejecting, cycle, error=error)
        if self.on_decision is not None:
            self.on_decision(pod, "", s)

    def _set_condition(self, pod: Mapping[str, Any], reason: str, message: str, nominated: str = "") -> None:
        """PodScheduled=False with the reason and message (and status.nominatedNodeName when a PostFilter
        nominated a node); nothing is written when nothing changes, as kube's updatePod."""
        status = pod.get("status") or {}
        conditions = list(status.get("conditions") or [])
        nominate = bool(nominated) and status.get("nominatedNodeName") != nominated
        for c in conditions:
            if c.get("type") == "PodScheduled":
                same = (
                    c.get("status") == "False" and c.get("reason") == reason and c.get("message") == message
                )
                if same and not nominate:
                    return
                break
        now = self.store.timestamp()
        new = {
            "type": "PodScheduled",
            "status": "False",
            "lastProbeTime": None,
            "lastTransitionTime": now,
            "reason": reason,
            "message": message,
        }
        out = []
        replaced = False
        for c in conditions:
            if c.get("type") == "PodScheduled":
                if c.get("status") == "False":
                    new["lastTransitionTime"] = c.get("lastTransitionTime", now)
                out.append(new)
                replaced = True
            else:
                out.append(c)
        if not replaced:
            out.append(new)
        patch: dict[str, Any] = {"status": {"conditions": out}}
        if not status.get("phase"):
            patch["status"]["phase"] = "Pending"
        if nominate:
            patch["status"]["nominatedNodeName"] = nominated
        self.store.patch(
            POD_KEY, pod["metadata"]["namespace"], pod["metadata"]["name"], patch, subresource="status"
        )


def _timeout_cb(w: _Waiting, plugin: str, timeout: float) -> Callable[[], None]:
    def fire() -> None:
        w.pending.pop(plugin, None)
        w.reject(plugin, f"rejected due to timeout after waiting {go_duration(timeout)} at plugin {plugin}")

    return fire


def nominated_in(state: CycleState) -> bool:
    """Whether the failed attempt nominated a node (its PostFilter preempted)."""
    return bool(state.get(NOMINATED_NODE_KEY, ""))


def twin_key(pod: PodInfo) -> str | None:
    """What makes pods schedule alike, besides their nominated node: profile, namespace, spec, labels,
    annotations and owners (None for pseudo pods); cached on the PodInfo."""
    if pod.kind != "Pod":
        return None
    key = pod.extra.get(TWIN_KEY)
    if key is None:
        obj = pod.obj
        meta = obj.get("metadata") or {}
        key = json.dumps(
            [
                pod.scheduler_name,
                pod.namespace,
                obj.get("spec"),
                meta.get("labels"),
                without_result_annotations(meta.get("annotations")),
                meta.get("ownerReferences"),
            ],
            sort_keys=True,
            default=str,
        )
        pod.extra[TWIN_KEY] = key
    return str(key)


def _pod_spec_changed(old: Mapping[str, Any], new: Mapping[str, Any]) -> bool:
    """Whether an update changed more than status/resourceVersion (kube's isPodUpdated)."""
    if old.get("spec") != new.get("spec"):
        return True
    om, nm = old.get("metadata") or {}, new.get("metadata") or {}
    if om.get("labels") != nm.get("labels"):
        return True
    old_ann, new_ann = om.get("annotations"), nm.get("annotations")
    if old_ann == new_ann:
        return False
    return without_result_annotations(old_ann) != without_result_annotations(new_ann)
