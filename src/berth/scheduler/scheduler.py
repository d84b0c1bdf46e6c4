"""The scheduler: kube-scheduler's core loop over Berth's framework, cache and queue.

Single-threaded and event-driven: ``handle_event`` feeds store changes into the cache and the
queue; ``schedule_one`` pops one pod and runs its whole scheduling cycle and (unless a Permit
plugin holds it) its binding cycle. Waiting is done with clock timers.

This module wires the parts and handles the informer events; each part has its own module:

* ``schedule_one.py``  the scheduling cycle: find a node (filter, sample, score, PostFilter), assume,
  Reserve, Permit;
* ``binding.py``       the binding cycle (Permit wait, PreBind, Bind, PostBind) and failed attempts;
* ``waiting.py``       pods held at Permit;
* ``nominator.py``     pods nominated to nodes by preemption;
* ``whatif.py``        what-if filters for PostFilter plugins (preemption dry runs);
* ``handle.py``        the framework handle given to plugins;
* ``twins.py``         failures of pods that schedule alike, for the queue's early popping;
* ``stats.py``         counters and histograms;
* ``cache.py`` and ``queue.py``  the scheduler cache and the scheduling queue.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import Any

from berth.api.contracts import Recorder, Store
from berth.api.errors import NotFound
from berth.api.podaffinity import AffinityTerm, compile_pod_affinity
from berth.clock import Clock
from berth.scheduler.binding import BindingCycle
from berth.scheduler.cache import SchedulerCache, is_terminal
from berth.scheduler.extender import Extenders
from berth.scheduler.framework.config import SchedulerConfig, parse_config
from berth.scheduler.framework.cycle_state import CycleState
from berth.scheduler.framework.plugin import ObjectEventPlugin, PseudoPodSource
from berth.scheduler.framework.podinfo import PodInfo
from berth.scheduler.framework.registry import Registry
from berth.scheduler.framework.runtime import Framework
from berth.scheduler.framework.status import SUCCESS, Status
from berth.scheduler.handle import SchedulerHandle
from berth.scheduler.nominator import Nominator
from berth.scheduler.queue import QueuedPod, SchedulingQueue
from berth.scheduler.schedule_one import SchedulingCycle, num_feasible_nodes_to_find
from berth.scheduler.stats import ATTEMPT_DURATION_BUCKETS, Histogram, SchedulerStats
from berth.scheduler.trace import Tracer, without_result_annotations
from berth.scheduler.twins import TwinFailures, twin_key
from berth.scheduler.unserved import UnservedPods
from berth.scheduler.waiting import Waiting
from berth.scheduler.whatif import WhatIf

__all__ = [
    "ATTEMPT_DURATION_BUCKETS",
    "Histogram",
    "Nominator",
    "Scheduler",
    "SchedulerStats",
    "affinity_terms",
    "num_feasible_nodes_to_find",
    "twin_key",
]

POD_KEY = ("", "Pod")
NAMESPACE_KEY = ("", "Namespace")
AFFINITY_TERMS_KEY = "berth/required-affinity-terms"
_ACTIONS = {"ADDED": "Add", "MODIFIED": "Update", "DELETED": "Delete"}


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
        self.nominator = Nominator()
        self.waiting: dict[str, Waiting] = {}
        self.pseudo_sources: dict[tuple[str, str], PseudoPodSource] = {}
        self.stats = SchedulerStats()
        self.extenders = Extenders(self.config.extenders)  # kube's HTTP extenders (none by default)
        # one framework per profile; its plugins reach the scheduler through their handle
        self.frameworks: dict[str, Framework] = {
            p.scheduler_name: Framework(
                p,
                registry,
                SchedulerHandle(self, p.scheduler_name),
                default_percentage=self.config.percentage_of_nodes_to_score,
            )
            for p in self.config.profiles
        }
        self.whatif = WhatIf(self.frameworks, self.cache, self.nominator)
        # simulate and serve warn about pending pods no profile serves (None: silent, as kube-scheduler)
        self.unserved: UnservedPods | None = None
        self._object_plugins: dict[str, list[ObjectEventPlugin]] = {}
        for fw in self.frameworks.values():
            for plugin in fw.plugins.values():
                if isinstance(plugin, ObjectEventPlugin):
                    for kind in plugin.watched_kinds():
                        self._object_plugins.setdefault(kind, []).append(plugin)
        # a twin's clean failure at the current virtual instant keeps its twins from early popping
        self._twins = TwinFailures(clock, self.nominator)
        first = next(iter(self.frameworks.values()))
        self.queue = SchedulingQueue(
            clock,
            first.queue_sort.sort_key,
            self._pre_enqueue,
            initial_backoff=self.config.pod_initial_backoff_seconds,
            max_backoff=self.config.pod_max_backoff_seconds,
            interested=self._interested,
            skip_early=self._twins.failed_now,
            early_version=self._early_version,
        )
        self._twins.queue = self.queue
        self.binding = BindingCycle(
            store=store,
            events=events,
            clock=clock,
            cache=self.cache,
            queue=self.queue,
            nominator=self.nominator,
            stats=self.stats,
            waiting=self.waiting,
            pseudo_sources=self.pseudo_sources,
            extenders=self.extenders,
        )
        self.scheduling = SchedulingCycle(
            frameworks=self.frameworks,
            store=store,
            clock=clock,
            rng=self.rng,
            cache=self.cache,
            queue=self.queue,
            nominator=self.nominator,
            twins=self._twins,
            stats=self.stats,
            binding=self.binding,
            extenders=self.extenders,
        )

    @property
    def tracer(self) -> Tracer | None:
        """Traces chosen pods' attempts (berth explain); None by default."""
        return self.scheduling.tracer

    @tracer.setter
    def tracer(self, tracer: Tracer | None) -> None:
        self.scheduling.tracer = tracer

    @property
    def on_decision(self) -> Callable[[PodInfo, str, Status], None] | None:
        """Told of every decision: (pod, node or "" when it failed, status); None by default."""
        return self.binding.on_decision

    @on_decision.setter
    def on_decision(self, callback: Callable[[PodInfo, str, Status], None] | None) -> None:
        self.binding.on_decision = callback

    # ----- the loop ------------------------------------------------------------------------
    def schedule_one(self) -> bool:
        """Schedule the next pod in activeQ; False when there is none."""
        qp = self.queue.pop()
        if qp is None:
            return False
        t0 = time.perf_counter()
        try:
            self.scheduling.schedule(qp, t0)
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

    # ----- queue hooks ---------------------------------------------------------------------
    def _pre_enqueue(self, pod: PodInfo) -> Status:
        fw = self.frameworks.get(pod.scheduler_name)
        return SUCCESS if fw is None else fw.run_pre_enqueue(pod)

    def _interested(self, qp: QueuedPod, resource: str, action: str) -> bool:
        fw = self.frameworks.get(qp.pod.scheduler_name)
        return fw is None or fw.interested(qp.unschedulable_plugins, resource, action)

    def _early_version(self) -> tuple[float, int]:
        """Changes whenever a pod set aside from early popping may now be schedulable: with the virtual time
        and with every cluster event (move request) the queue records."""
        return (self.clock.now(), self.queue.move_count)

    # ----- informers -----------------------------------------------------------------------
    def responsible_for(self, pod: Mapping[str, Any]) -> bool:
        """Whether one of the profiles schedules this pod."""
        name = (pod.get("spec") or {}).get("schedulerName") or "default-scheduler"
        return name in self.frameworks

    def warn_unserved(self) -> None:
        """From now on, record a Warning Event for each pending pod whose schedulerName no profile serves
        (Berth's addition for simulate and serve, where no other scheduler runs)."""
        self.unserved = UnservedPods(self.store, self.events, self.frameworks)

    def handle_event(self, type_: str, obj: Mapping[str, Any]) -> None:
        """Feed one store change (ADDED / MODIFIED / DELETED) of a Pod, a Node or a kind plugins follow."""
        kind = obj.get("kind")
        if kind == "Pod":
            self.handle_pod(type_, obj)
            return
        if kind == "Node":
            self._on_node(type_, obj)
        plugins = self._object_plugins.get(str(kind), ())
        for plugin in plugins:
            plugin.on_object_event(type_, obj)
        if plugins and kind not in ("Pod", "Node"):
            # e.g. an ElasticQuota or PodGroup change: retry the pods rejected by plugins that care about it
            self.queue.move_all(str(kind), _ACTIONS.get(type_, "Update"))

    def handle_pod(self, type_: str, pod: Mapping[str, Any]) -> None:
        """Feed one store change of a Pod (`handle_event` of a Pod)."""
        self._on_pod(type_, pod)
        for plugin in self._object_plugins.get("Pod", ()):
            plugin.on_object_event(type_, pod)

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
        if self.unserved is not None and (type_ == "DELETED" or node):
            self.unserved.forget(uid)
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
            counted = self.cache.refresh_counted(uid, node, pod)
            if counted is not None:
                self._assigned_pod_added(counted)
                return
            known = self.cache.set_pod(PodInfo(pod), node)
            self.queue.move_all("Pod", "Update" if known else "Add")
            return
        if not self.responsible_for(pod):
            if self.unserved is not None:
                self.unserved.pending(pod)
            return
        if meta.get("deletionTimestamp"):
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

    def filter_with_changes(
        self,
        profile: str,
        state: CycleState,
        pod: PodInfo,
        node_name: str,
        removed: Sequence[PodInfo] = (),
    ) -> Status:
        """Filters of ``profile`` for ``pod`` on one node with ``removed`` gone and nominated pods counted
        (see ``WhatIf.filter_with_changes``)."""
        return self.whatif.filter_with_changes(profile, state, pod, node_name, removed)

    def dry_run_key(self, profile: str, state: CycleState, pod: PodInfo, node_name: str) -> Hashable | None:
        """See Handle.dry_run_key."""
        return self.whatif.dry_run_key(profile, state, pod, node_name)

    def dry_run_keys(
        self, profile: str, state: CycleState, pod: PodInfo, rows: Sequence[int]
    ) -> list[Hashable | None]:
        """See Handle.dry_run_keys."""
        return self.whatif.dry_run_keys(profile, state, pod, rows)


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
