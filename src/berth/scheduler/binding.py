"""The binding cycle, and how an attempt ends.

After the scheduling cycle has assumed a pod on a node and its Reserve and Permit plugins have run, the
binding cycle (kube's bindingCycle) waits while a Permit plugin holds the pod, then runs PreBind, Bind and
PostBind, and reports the decision. A failure at any point — in either cycle — ends here too (kube's
handleSchedulingFailure): the reservation is undone, a FailedScheduling event and the PodScheduled=False
condition are written, and the pod goes back to the queue.

Every outcome is timed from ``started``, the perf_counter() at the start of the pod's attempt, which the
scheduling cycle passes on (a pod held at Permit keeps it in its ``Waiting`` entry).

Where the store binds in the background (`deferred`: ``berth run``'s binder sends the ``pods/binding`` request
later, off the scheduling thread), a Bind plugin's success only means the binding was queued: the cycle stays
open (`in_flight`) until the store reports how the binding ended through `binding_done` — then it ends as an
inline Bind would have: counted, ``Scheduled`` and PostBind on success; on a refusal Unreserve, the assumed pod
forgotten, FailedScheduling and PodScheduled=False, and the pod queued again with backoff.

Where the scheduling thread also serves the API (``berth serve``: `off_thread` set), an extender's bind request
runs on another thread, so that an extender binding through that same API server is answered; the cycle stays
open until the extender's answer comes back on the scheduling thread.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import partial
from typing import Any

from berth.api.contracts import Recorder, Store
from berth.api.errors import NotFound
from berth.clock import Clock
from berth.scheduler.cache import SchedulerCache
from berth.scheduler.extender import Extenders
from berth.scheduler.framework.cycle_state import CycleState
from berth.scheduler.framework.plugin import PseudoPodSource
from berth.scheduler.framework.podinfo import PodInfo
from berth.scheduler.framework.runtime import Framework
from berth.scheduler.framework.status import Code, Status
from berth.scheduler.messages import scheduled_message
from berth.scheduler.nominator import Nominator
from berth.scheduler.queue import QueuedPod, SchedulingQueue
from berth.scheduler.stats import SchedulerStats
from berth.scheduler.waiting import Waiting

POD_KEY = ("", "Pod")


@dataclass(frozen=True, slots=True)
class InFlight:
    """A binding cycle waiting for the store's answer to its background binding."""

    fw: Framework
    qp: QueuedPod
    state: CycleState
    pod: PodInfo
    node: str
    cycle: int
    started: float


OffThread = Callable[[Callable[[], "Status | None"], Callable[["Status | None"], None]], None]
"""Runs a blocking call on another thread and hands its result to a callback on the scheduling thread."""


def _run_bind(fw: Framework, state: CycleState, pod: PodInfo, node: str) -> Status:
    """The Bind plugins' status; an error when every one of them skipped the pod."""
    s = fw.run_bind(state, pod, node)
    return Status(Code.ERROR, ("no bind plugin bound the pod",)) if s.is_skip() else s


class BindingCycle:
    """Permit waits, PreBind / Bind / PostBind, and the handling of failed attempts."""

    def __init__(
        self,
        *,
        store: Store,
        events: Recorder,
        clock: Clock,
        cache: SchedulerCache,
        queue: SchedulingQueue,
        nominator: Nominator,
        stats: SchedulerStats,
        waiting: dict[str, Waiting],
        pseudo_sources: Mapping[tuple[str, str], PseudoPodSource],
        extenders: Extenders | None = None,
    ) -> None:
        self.store = store
        self.events = events
        self.clock = clock
        self.cache = cache
        self.queue = queue
        self.nominator = nominator
        self.stats = stats
        self.waiting = waiting
        self.pseudo_sources = pseudo_sources
        self.extenders = extenders if extenders is not None else Extenders()
        # told of every decision: (pod, node or "", status)
        self.on_decision: Callable[[PodInfo, str, Status], None] | None = None
        # whether the store's bind only queues the binding (its outcome comes through binding_done)
        self.deferred = False
        self.off_thread: OffThread | None = None
        self.in_flight: dict[str, InFlight] = {}

    # ----- permit -----------------------------------------------------------------------------
    def wait_on_permit(
        self,
        fw: Framework,
        qp: QueuedPod,
        state: CycleState,
        pod: PodInfo,
        node: str,
        cycle: int,
        waits: Mapping[str, float],
        started: float,
    ) -> None:
        """Hold the assumed ``pod`` until every plugin of ``waits`` allows it (or one rejects it or times
        out); it has left the queue meanwhile."""
        w = Waiting(self._finish_wait, fw, state, pod, node, qp, cycle, started=started)
        w.start_timers(self.clock, waits)
        self.waiting[pod.uid] = w
        self.queue.done(pod.uid)

    def _finish_wait(self, w: Waiting, s: Status) -> None:
        self.waiting.pop(w.pod.uid, None)
        qp, cycle = w.qp, w.cycle
        if s.is_success():
            self.bind(w.fw, qp, w.state, w.pod, w.node_name, cycle, w.started)
            return
        w.fw.run_unreserve(w.state, w.pod, w.node_name)
        self.cache.forget(w.pod)
        self._requeue(qp)
        self.fail(w.fw, qp, s, cycle, w.started)
        # kube's handleBindingCycleError for a rejected pod: its room is retried by the others only after
        # its own failure is handled, so it waits for the next event instead of retrying at once
        self.queue.move_all("Pod", "Delete", exclude=qp.pod.uid)

    def _requeue(self, qp: QueuedPod) -> None:
        """Make a pod that left the queue (waiting/binding) known to it again."""
        if qp.pod.uid not in self.queue:
            self.queue._pods[qp.pod.uid] = qp

    # ----- bind -------------------------------------------------------------------------------
    def bind(
        self,
        fw: Framework,
        qp: QueuedPod,
        state: CycleState,
        pod: PodInfo,
        node: str,
        cycle: int,
        started: float,
    ) -> None:
        """PreBind, Bind and PostBind ``pod`` to ``node`` (a pseudo pod's source binds it instead), then
        count and report the decision; a failure undoes the reservation and ends the attempt."""
        source = self._pseudo_source(fw, pod)
        bound: Status | None = None
        if source is not None:
            s = source.bind_pseudo(state, pod, node)
        else:
            s = fw.run_pre_bind(state, pod, node)
            if (
                s.is_success()
                and self.off_thread is not None
                and self.extenders.all
                and self.extenders.binds(pod)
            ):
                self.in_flight[pod.uid] = InFlight(fw, qp, state, pod, node, cycle, started)
                self.off_thread(
                    partial(self.extenders.bind, pod, node), partial(self._extender_answered, pod.uid)
                )
                return
            if s.is_success():
                # an interested extender with a bind verb binds instead of the Bind plugins (kube's
                # extendersBinding)
                bound = self.extenders.bind(pod, node) if self.extenders.all else None
                s = bound if bound is not None else _run_bind(fw, state, pod, node)
        if not s.is_success():
            self._bind_failed(InFlight(fw, qp, state, pod, node, cycle, started), s)
            return
        if source is None and self.deferred and bound is None:  # queued by the store: binding_done ends it
            self.in_flight[pod.uid] = InFlight(fw, qp, state, pod, node, cycle, started)
            return
        self._bound(fw, qp, state, pod, node, started, s, pseudo=source is not None)

    def _bound(
        self,
        fw: Framework,
        qp: QueuedPod,
        state: CycleState,
        pod: PodInfo,
        node: str,
        started: float,
        s: Status,
        *,
        pseudo: bool,
    ) -> None:
        """A decision carried out: count it, record Scheduled and run PostBind (a real pod's)."""
        stats = self.stats
        stats.scheduled += 1
        stats.observe_attempt("scheduled", fw.profile_name, time.perf_counter() - started)
        stats.pod_attempts.observe(qp.attempts)
        if not pseudo:
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

    def _bind_failed(self, b: InFlight, s: Status, *, assumed: bool = True) -> None:
        """kube's handleBindingCycleError: Unreserve, forget the assumed pod, let the room it held retry the
        others, and end the attempt as failed (the pod queued again with backoff). `assumed` False: the pod is
        no longer assumed (its deletion, an event of the store, has released it already)."""
        if assumed:
            b.fw.run_unreserve(b.state, b.pod, b.node)
            self.cache.forget(b.pod)
            self.queue.move_all("Pod", "Delete")
        self._requeue(b.qp)
        self.fail(b.fw, b.qp, s, b.cycle, b.started, error=s.code == Code.ERROR)

    def _extender_answered(self, uid: str, s: Status | None) -> None:
        """An extender's bind, run off the scheduling thread, answered: the cycle ends as an inline one does
        (None: no extender bound the pod after all, so the Bind plugins do now)."""
        b = self.in_flight.pop(uid, None)
        if b is None:
            return
        if s is None:
            s = _run_bind(b.fw, b.state, b.pod, b.node)
            if s.is_success() and self.deferred:  # queued by the store: binding_done ends it
                self.in_flight[uid] = b
                return
        if not s.is_success():
            self._bind_failed(b, s, assumed=self.cache.is_assumed(uid))
            return
        self._bound(b.fw, b.qp, b.state, b.pod, b.node, b.started, s, pseudo=False)

    def binding_done(self, uid: str, error: str | None) -> None:
        """The store's answer to the background binding of pod `uid` (`deferred`): None when the API server
        accepted it, else its refusal's message, which ends the cycle as a failed Bind plugin does
        (``Binding rejected: <message>``). An unknown `uid` (no binding in flight) changes nothing."""
        b = self.in_flight.pop(uid, None)
        if b is None:
            return
        if error is None:
            self._bound(b.fw, b.qp, b.state, b.pod, b.node, b.started, Status(), pseudo=False)
            return
        try:
            current = self.store.get(POD_KEY, b.pod.namespace, b.pod.name)
        except NotFound:
            current = None
        meta = (current or {}).get("metadata") or {}
        if current is not None and meta.get("uid") == uid and (current.get("spec") or {}).get("nodeName"):
            # bound meanwhile after all (kube: "pod has been assigned to node, abort adding it back to queue")
            self.queue.delete(uid)
            return
        rejected = Status(Code.ERROR, (f"Binding rejected: {error}",))
        self._bind_failed(b, rejected, assumed=self.cache.is_assumed(uid))

    def _pseudo_source(self, fw: Framework, pod: PodInfo) -> PseudoPodSource | None:
        if pod.kind == "Pod":
            return None
        source = self.pseudo_sources.get((fw.profile_name, pod.kind))
        if source is None:
            raise RuntimeError(
                f"no plugin of profile {fw.profile_name!r} schedules pods of kind {pod.kind!r}"
            )
        return source

    # ----- failures ---------------------------------------------------------------------------
    def fail(
        self,
        fw: Framework,
        qp: QueuedPod,
        s: Status,
        cycle: int,
        started: float,
        *,
        error: bool = False,
        rejecting: set[str] | frozenset[str] = frozenset(),
        nominated: str = "",
    ) -> None:
        """End a failed attempt (kube's handleSchedulingFailure): count it, write the FailedScheduling
        event and the PodScheduled=False condition (and the nomination a PostFilter made), and put the pod
        back among the unschedulable pods, remembering the plugins that rejected it."""
        pod = qp.pod
        stats = self.stats
        if error:
            stats.errors += 1
        else:
            stats.unschedulable += 1
        stats.observe_attempt(
            "error" if error else "unschedulable", fw.profile_name, time.perf_counter() - started
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
