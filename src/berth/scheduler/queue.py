"""The scheduling queue: activeQ (priority order), backoffQ and the unschedulable pods.

Mirrors kube-scheduler's PriorityQueue: a pod that failed waits in the unschedulable pool until a
cluster event one of its rejecting plugins cares about (or 5 minutes pass), then goes to backoffQ
until its backoff expires, then back to activeQ. The backoff is 1 s doubling to 10 s per unschedulable
attempt (per consecutive error after an error). With kube's SchedulerPopFromBackoffQ (on by default since
kube 1.33) backoff expirations are aligned to whole-second windows, the backoffQ is ordered by window and
then as activeQ, and an idle scheduler (empty activeQ) takes its next pod from the backoffQ, errors
excepted.
"""

from __future__ import annotations

import heapq
import itertools
import math
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from berth.clock import Clock
from berth.scheduler.activeq import KeyedFifoQueue
from berth.scheduler.framework.podinfo import PodInfo
from berth.scheduler.framework.status import Status

UNSCHEDULABLE_FLUSH_PERIOD = 30.0
MAX_IN_UNSCHEDULABLE = 300.0
BACKOFF_WINDOW = 1.0  # kube's backoffQOrderingWindowDuration


@dataclass(slots=True)
class QueuedPod:
    """A pod in the queue with its bookkeeping."""

    pod: PodInfo
    timestamp: float  # when it (re)entered activeQ; the PrioritySort tie-breaker
    initial_attempt: float
    attempts: int = 0
    unschedulable_count: int = 0  # attempts that ended Unschedulable
    consecutive_errors: int = 0  # attempts in a row that ended in an error
    error: bool = False  # its last attempt ended in an error (it backs off in the error backoffQ)
    popped_early: bool = False  # its current attempt took it from backoffQ before its backoff completed
    unschedulable_plugins: set[str] = field(default_factory=set)
    gated: Status | None = None
    in_unschedulable_since: float = 0.0
    sort_key: tuple[Any, ...] = ()
    where: str = ""  # "active", "backoff", "unschedulable", "gated", "" (in flight or gone)


class SchedulingQueue:
    """Three-part queue with kube's backoff and requeue rules."""

    def __init__(
        self,
        clock: Clock,
        sort_key: Callable[[PodInfo, float], tuple[Any, ...]],
        pre_enqueue: Callable[[PodInfo], Status],
        *,
        initial_backoff: float = 1.0,
        max_backoff: float = 10.0,
        interested: Callable[[QueuedPod, str, str], bool] | None = None,
        pop_from_backoff: bool = True,
        skip_early: Callable[[QueuedPod], bool] | None = None,
        early_version: Callable[[], Any] | None = None,
    ) -> None:
        self.clock = clock
        self._sort_key = sort_key
        self._pre_enqueue = pre_enqueue
        self.initial_backoff = initial_backoff
        self.max_backoff = max_backoff
        self.pop_from_backoff = pop_from_backoff
        self._skip_early = skip_early
        self._early_version = early_version
        # backoffQ entries set aside from early popping while the cluster state is _parked_version
        self._parked: list[tuple[float, tuple[Any, ...], int, QueuedPod]] = []
        self._parked_version: Any = None
        self._parked_first = math.inf  # the earliest backoff expiry among the parked entries
        self._interested = interested or (lambda qp, r, a: True)
        self._seq = itertools.count()
        self._active: KeyedFifoQueue[QueuedPod] = KeyedFifoQueue()
        # backoffQ (failed Unschedulable) and the error backoffQ: (expiry, order key, seq, pod)
        self._backoff: list[tuple[float, tuple[Any, ...], int, QueuedPod]] = []
        self._error_backoff: list[tuple[float, tuple[Any, ...], int, QueuedPod]] = []
        self._pods: dict[str, QueuedPod] = {}  # every pod the queue knows, by uid (incl. in-flight)
        self.unschedulable: dict[str, QueuedPod] = {}
        self.scheduling_cycle = 0
        self._move_request_cycle = -1
        self._moves: list[tuple[int, str, str]] = []  # (scheduling cycle, resource, action) of move requests
        self._moves_kept_from = 0
        self.move_count = 0  # move requests recorded so far
        self._backoff_timer_at: float | None = None
        self._flush_timer = False
        self.on_active: Callable[[], None] | None = None
        self._activated: set[str] = set()  # pods moved by activate() at virtual time _activated_at
        self._activated_at = -1.0
        self._early: set[str] = set()  # pods popped early from backoffQ at virtual time _early_at
        self._early_at = -1.0

    # ----- adding --------------------------------------------------------------------------
    def add(self, pod: PodInfo) -> None:
        """A new pending pod."""
        now = self.clock.now()
        qp = QueuedPod(pod, now, now)
        self._pods[pod.uid] = qp
        self._to_active_or_gated(qp)

    def _to_active_or_gated(self, qp: QueuedPod) -> None:
        s = self._pre_enqueue(qp.pod)
        if not s.is_success():
            qp.gated = s
            qp.where = "gated"
            qp.unschedulable_plugins = {s.plugin} if s.plugin else set()
            qp.in_unschedulable_since = self.clock.now()
            self.unschedulable[qp.pod.uid] = qp
            return
        qp.gated = None
        qp.where = "active"
        self.unschedulable.pop(qp.pod.uid, None)
        qp.sort_key = self._sort_key(qp.pod, qp.timestamp)
        self._active.push(qp.sort_key, qp)
        if self.on_active is not None:
            self.on_active()

    def update(self, pod: PodInfo) -> None:
        """The pending pod changed: refresh it, and retry it if it was waiting as unschedulable."""
        qp = self._pods.get(pod.uid)
        if qp is None:
            self.add(pod)
            return
        qp.pod = pod
        if qp.where in ("unschedulable", "gated"):
            self.unschedulable.pop(pod.uid, None)
            if qp.where == "unschedulable" and self._backoff_expiry(qp) > self.clock.now():
                self._to_backoff(qp)
            else:
                self._to_active_or_gated(qp)
        elif qp.where == "active":
            # re-key lazily: push a fresh entry; the stale one is skipped on pop
            qp.sort_key = self._sort_key(pod, qp.timestamp)
            self._active.push(qp.sort_key, qp)

    def delete(self, uid: str) -> None:
        """The pod is gone or no longer pending."""
        qp = self._pods.pop(uid, None)
        if qp is not None:
            qp.where = ""
            self.unschedulable.pop(uid, None)

    def __contains__(self, uid: object) -> bool:
        return uid in self._pods

    # ----- popping -------------------------------------------------------------------------
    def pop(self) -> QueuedPod | None:
        """The next pod to schedule: the head of activeQ; when activeQ is empty and SchedulerPopFromBackoffQ
        is on, the head of the backoffQ (not the error backoffQ); None when there is none.

        A pod is popped early from the backoffQ at most once per virtual instant: scheduling cycles take no
        virtual time, so a pod whose every attempt ends back in the backoffQ would otherwise never let the
        clock advance; in kube real time passes between such rounds."""
        while self._active:
            key, qp = self._active.pop()
            if qp.where != "active" or key != qp.sort_key or self._pods.get(qp.pod.uid) is not qp:
                continue
            return self._popped(qp)
        if not self.pop_from_backoff or not (self._backoff or self._parked):
            return None
        version = self._early_version() if self._early_version is not None else self.clock.now()
        if version != self._parked_version:
            # the cluster changed: pods set aside for an earlier state may be schedulable again
            self._parked_version = version
            self._unpark()
        now = self.clock.now()
        if now != self._early_at:
            self._early_at = now
            self._early.clear()
        skip = self._skip_early
        while self._backoff:
            entry = heapq.heappop(self._backoff)
            qp = entry[3]
            if qp.where != "backoff" or self._pods.get(qp.pod.uid) is not qp:
                continue
            if qp.pod.uid in self._early or (skip is not None and skip(qp)):
                self._parked.append(entry)
                self._parked_first = min(self._parked_first, entry[0])
                continue
            self._early.add(qp.pod.uid)
            popped = self._popped(qp)
            popped.popped_early = True
            return popped
        return None

    def _unpark(self) -> None:
        """Put the backoffQ entries set aside from early popping back into the backoffQ."""
        if self._parked:
            self._backoff.extend(self._parked)
            self._parked.clear()
            heapq.heapify(self._backoff)
        self._parked_first = math.inf

    def _popped(self, qp: QueuedPod) -> QueuedPod:
        qp.where = ""
        qp.popped_early = False
        qp.attempts += 1
        self.scheduling_cycle += 1
        return qp

    def active_len(self) -> int:
        """Pods waiting in activeQ (upper bound: stale heap entries are counted until popped)."""
        return len(self._active)

    def done(self, uid: str) -> None:
        """The pod was scheduled (assumed); forget it."""
        self.delete(uid)

    # ----- failures ------------------------------------------------------------------------
    def _backoff_duration(self, qp: QueuedPod) -> float:
        count = qp.consecutive_errors or qp.unschedulable_count
        if count == 0 or self.max_backoff <= 0:
            return 0.0
        d = self.initial_backoff
        for _ in range(1, count):
            d *= 2
            if d >= self.max_backoff:
                return self.max_backoff
        return min(d, self.max_backoff)

    def _backoff_expiry(self, qp: QueuedPod) -> float:
        """When the pod's backoff completes: kube's expiration, and with SchedulerPopFromBackoffQ the start
        of the window after the one its expiration falls in (a window is flushed when it ends)."""
        d = self._backoff_duration(qp)
        if d <= 0:
            return -math.inf
        expiry = qp.timestamp + d
        if not self.pop_from_backoff:
            return expiry
        return (math.floor(expiry / BACKOFF_WINDOW) + 1) * BACKOFF_WINDOW

    def add_unschedulable(self, qp: QueuedPod, plugins: set[str], cycle: int, *, error: bool = False) -> None:
        """Put back a pod whose attempt in ``cycle`` failed (rejected by ``plugins``, or an error)."""
        if self._pods.get(qp.pod.uid) is not qp:
            return  # deleted meanwhile
        now = self.clock.now()
        qp.timestamp = now
        qp.unschedulable_plugins = set(plugins)
        qp.error = error
        if error:
            qp.consecutive_errors += 1
        else:
            qp.consecutive_errors = 0
            qp.unschedulable_count += 1
        if error or self._moved_while_in_flight(qp, cycle):
            self._to_backoff(qp)
            return
        qp.where = "unschedulable"
        qp.in_unschedulable_since = now
        self.unschedulable[qp.pod.uid] = qp
        self._arm_flush()

    def _moved_while_in_flight(self, qp: QueuedPod, cycle: int) -> bool:
        """Whether a cluster event the pod's rejecting plugins care about happened since its attempt in
        ``cycle`` began (kube's in-flight events): then it retries after its backoff instead of waiting in
        the unschedulable pool for the next such event."""
        if self._move_request_cycle < cycle:
            return False
        if cycle < self._moves_kept_from:
            return True  # the events of that time are no longer kept: assume one was of interest
        for event_cycle, resource, action in reversed(self._moves):
            if event_cycle < cycle:
                break
            if self._interested(qp, resource, action):
                return True
        return False

    def _record_move(self, resource: str, action: str) -> None:
        self._move_request_cycle = self.scheduling_cycle
        moves = self._moves
        if moves and moves[-1] == (self.scheduling_cycle, resource, action):
            return
        moves.append((self.scheduling_cycle, resource, action))
        self.move_count += 1
        if len(moves) > 4096:
            del moves[:2048]
            self._moves_kept_from = moves[0][0]

    def moves_since(self, count: int) -> list[tuple[str, str]] | None:
        """The (resource, action) of the move requests recorded after the first ``count``; None when some
        of them are no longer kept."""
        skip = len(self._moves) - (self.move_count - count)
        if skip < 0:
            return None
        return [(r, a) for _, r, a in self._moves[skip:]]

    def _to_backoff(self, qp: QueuedPod) -> None:
        expiry = self._backoff_expiry(qp)
        if expiry <= self.clock.now():
            self._to_active_or_gated(qp)
            return
        qp.where = "backoff"
        qp.sort_key = self._sort_key(qp.pod, qp.timestamp)
        heap = self._error_backoff if qp.error else self._backoff
        heapq.heappush(heap, (expiry, qp.sort_key, next(self._seq), qp))
        self._arm_backoff_timer()

    def _arm_backoff_timer(self) -> None:
        first = self._parked_first
        for heap in (self._backoff, self._error_backoff):
            while heap and heap[0][3].where != "backoff":
                heapq.heappop(heap)
            if heap:
                first = min(first, heap[0][0])
        if first == math.inf:
            return
        if self._backoff_timer_at is not None and self._backoff_timer_at <= first:
            return
        self._backoff_timer_at = first
        self.clock.call_at(first, self._flush_backoff, 1)

    def _flush_backoff(self) -> None:
        self._backoff_timer_at = None
        self._unpark()
        now = self.clock.now()
        for heap in (self._backoff, self._error_backoff):
            while heap and heap[0][0] <= now:
                qp = heapq.heappop(heap)[3]
                if qp.where == "backoff" and self._pods.get(qp.pod.uid) is qp:
                    self._to_active_or_gated(qp)
        self._arm_backoff_timer()

    def _arm_flush(self) -> None:
        if self._flush_timer:
            return
        self._flush_timer = True
        self.clock.call_at(self.clock.now() + UNSCHEDULABLE_FLUSH_PERIOD, self._flush_unschedulable, 2)

    def _flush_unschedulable(self) -> None:
        self._flush_timer = False
        now = self.clock.now()
        stale = [
            qp
            for qp in self.unschedulable.values()
            if qp.where == "unschedulable" and now - qp.in_unschedulable_since >= MAX_IN_UNSCHEDULABLE
        ]
        for qp in stale:
            self.unschedulable.pop(qp.pod.uid, None)
            self._move(qp)
        if any(qp.where == "unschedulable" for qp in self.unschedulable.values()):
            self._arm_flush()

    def _move(self, qp: QueuedPod) -> None:
        if self._backoff_expiry(qp) > self.clock.now():
            self._to_backoff(qp)
        else:
            self._to_active_or_gated(qp)

    def move_all(self, resource: str, action: str, *, exclude: str = "") -> None:
        """A cluster event happened: retry the unschedulable pods whose rejecting plugins care about it (all
        but ``exclude``)."""
        self._record_move(resource, action)
        if not self.unschedulable:
            return
        movable = [
            qp
            for qp in self.unschedulable.values()
            if qp.where == "unschedulable"
            and qp.pod.uid != exclude
            and self._interested(qp, resource, action)
        ]
        for qp in movable:
            self.unschedulable.pop(qp.pod.uid, None)
            self._move(qp)

    def move_matching(self, wanted: Callable[[QueuedPod], bool]) -> None:
        """Retry the unschedulable pods ``wanted`` selects (kube's AssignedPodAdded: the pods whose
        required pod affinity terms match a newly assigned pod)."""
        self._record_move("Pod", "Add")
        movable = [qp for qp in self.unschedulable.values() if qp.where == "unschedulable" and wanted(qp)]
        for qp in movable:
            self.unschedulable.pop(qp.pod.uid, None)
            self._move(qp)

    def activate(self, uids: Iterable[str]) -> None:
        """Move the pods ``uids`` from the unschedulable pool or backoffQ to activeQ at once, backoff or
        not (kube's Activate); pods anywhere else are left where they are.

        A pod is moved at most once per virtual instant: scheduling cycles take no virtual time, so pods
        that keep activating each other (a gang whose members fail and re-activate their siblings) would
        otherwise never let the clock advance; in kube real time passes between such rounds."""
        now = self.clock.now()
        if now != self._activated_at:
            self._activated_at = now
            self._activated.clear()
        from_backoff = False
        for uid in uids:
            qp = self._pods.get(uid)
            if qp is None or qp.where not in ("unschedulable", "backoff") or uid in self._activated:
                continue
            self._activated.add(uid)
            from_backoff = from_backoff or qp.where == "backoff"
            self.unschedulable.pop(uid, None)
            self._to_active_or_gated(qp)
        if from_backoff:
            self._unpark()
            # drop the moved pods' backoffQ entries so that a later backoff of theirs is not cut short
            self._backoff = [e for e in self._backoff if e[3].where == "backoff"]
            heapq.heapify(self._backoff)
            self._error_backoff = [e for e in self._error_backoff if e[3].where == "backoff"]
            heapq.heapify(self._error_backoff)

    def pending(self) -> Iterator[QueuedPod]:
        """Every pod the queue holds (not in flight)."""
        return (qp for qp in self._pods.values() if qp.where)

    def __len__(self) -> int:
        return sum(1 for _ in self.pending())
