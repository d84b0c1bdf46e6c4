"""`berth run`: the control plane attached to a real cluster, through a replica of it kept by informers.

The driver knows nothing of HTTP: it takes a `Replica` (``berth.remote.mirror.ClusterMirror`` in practice), a
`PlaneStore` that also follows the cluster on background threads. One thread — the caller's — does everything
else, in a loop: apply what the informers enqueued (every change reaches the components as a watch event), let
the scheduler and the controllers work in slices of `SLICE_CYCLES` scheduling cycles, run the clock's due
timers, and sleep until the informers bring something or the next timer is due.

As kube-scheduler: the informers start and sync first, then the replica competes for the leadership (a
``coordination.k8s.io/v1`` Lease, kube-scheduler's timings) unless told not to, and only the leader builds the
control plane and acts. A leader that loses its Lease stops at once and `run` returns `EXIT_LEADERSHIP_LOST`
(kube-scheduler exits then, for its restart to start afresh); SIGINT/SIGTERM (`stopping`) end the loop, and a
leader then releases its Lease so that a standby takes over at its next try.
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable, Collection
from concurrent.futures import Future
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from prometheus_client import CollectorRegistry, ProcessCollector

from berth.api.errors import StatusError
from berth.api.kinds import all_kinds
from berth.api.watch import ResourceKey
from berth.clock import RealClock
from berth.controlplane.leaderelection import (
    DEFAULT_LEASE_DURATION,
    DEFAULT_NAME,
    DEFAULT_NAMESPACE,
    DEFAULT_RENEW_DEADLINE,
    DEFAULT_RETRY_PERIOD,
    LeaderElector,
    default_identity,
)
from berth.controlplane.metrics import metrics_registry, render_metrics
from berth.controlplane.plane import (
    BERTH_CONTROLLERS,
    DEFAULT_DESCHEDULING_INTERVAL,
    ControlPlane,
    PlaneStore,
)
from berth.descheduler.migration.args import MigrationControllerArgs
from berth.descheduler.policy import Policy
from berth.scheduler.framework.config import SchedulerConfig, parse_config
from berth.store.events import EventRecorder

__all__ = [
    "DEFAULT_PROFILE",
    "EXIT_LEADERSHIP_LOST",
    "OPTIONAL_KINDS",
    "REQUIRED_KINDS",
    "SLICE_CYCLES",
    "Replica",
    "RunError",
    "RunOptions",
    "Runner",
    "default_run_config",
    "followed_kinds",
]

log = logging.getLogger(__name__)

SLICE_CYCLES = 200
"""Scheduling cycles between two looks at the informers' queue and the clock's timers."""
PUMP_LIMIT = 5000
"""Informer items applied per turn of the loop at most (a relist of a big cluster is applied in turns)."""
IDLE_WAIT = 1.0
"""The longest sleep of an idle loop (it also wakes when the informers bring something)."""
HEALTHZ_TOLERANCE = 20.0
"""Seconds a leader may go without renewing past its lease before `/healthz` fails (kube-scheduler's
leader-election healthz adaptor timeout)."""
CALL_TIMEOUT = 10.0
"""How long another thread waits for the loop to answer a `call`."""
EXIT_LEADERSHIP_LOST = 1
"""kube-scheduler's exit code when its leadership is lost (``klog.FlushAndExit(..., 1)``)."""

DEFAULT_PROFILE = "berth-scheduler"
"""The one profile `berth run` serves without ``--scheduler-config``. Not ``default-scheduler`` (kube-scheduler's,
which runs in every cluster) nor ``koord-scheduler`` (Koordinator's, which runs where Koordinator is installed):
a secondary scheduler must own a name no other scheduler serves, or two schedulers race for the same pods. It is
the name of the example Deployment's profile, its Lease and its RBAC objects."""

POD = ("", "Pod")
NODE = ("", "Node")
NAMESPACE = ("", "Namespace")
PRIORITY_CLASS = ("scheduling.k8s.io", "PriorityClass")
PDB = ("policy", "PodDisruptionBudget")
RESERVATION = ("scheduling.koordinator.sh", "Reservation")
POD_MIGRATION_JOB = ("scheduling.koordinator.sh", "PodMigrationJob")
ELASTIC_QUOTA = ("scheduling.x-k8s.io", "ElasticQuota")
POD_GROUP = ("scheduling.x-k8s.io", "PodGroup")
REPLICA_SET = ("apps", "ReplicaSet")
DEPLOYMENT = ("apps", "Deployment")
SERVICE = ("", "Service")
REPLICATION_CONTROLLER = ("", "ReplicationController")
STATEFUL_SET = ("apps", "StatefulSet")

REQUIRED_KINDS: tuple[ResourceKey, ...] = (
    POD,
    NODE,
    NAMESPACE,
    PRIORITY_CLASS,
    PDB,
    RESERVATION,
    ELASTIC_QUOTA,
    POD_GROUP,
)
"""The kinds the scheduler follows whatever runs beside it (its Reservation, CapacityScheduling, Coscheduling
and preemption plugins read the last four)."""
OPTIONAL_KINDS: tuple[ResourceKey, ...] = (
    ("scheduling.sigs.k8s.io", "ElasticQuota"),
    ("scheduling.sigs.k8s.io", "PodGroup"),
)
"""The older group of scheduler-plugins' kinds: followed where the server serves it, read as empty elsewhere."""


def default_run_config() -> SchedulerConfig:
    """The configuration `berth run` uses without ``--scheduler-config``: Berth's default plugins in one profile,
    `DEFAULT_PROFILE`."""
    doc = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [{"schedulerName": DEFAULT_PROFILE}],
    }
    return parse_config(doc, source="berth run's default scheduler configuration")


_KNOWN = frozenset((k.group, k.kind) for k in all_kinds())
SPREAD_KINDS: tuple[ResourceKey, ...] = tuple(
    k for k in (SERVICE, REPLICATION_CONTROLLER, REPLICA_SET, STATEFUL_SET) if k in _KNOWN
)
"""The Services and workloads whose selectors PodTopologySpread's default constraints read for a pod
(kube's DefaultSelector; kube-scheduler's informers follow them too), so that reading them costs no request."""


def followed_kinds(controllers: Collection[str], descheduler: bool) -> tuple[ResourceKey, ...]:
    """The kinds to replicate for the scheduler, the `controllers` chosen and (with `descheduler`) the
    descheduler, whose migrations look up pods' workloads."""
    kinds = [*REQUIRED_KINDS, *SPREAD_KINDS]
    if "podmigrationjob" in controllers or descheduler:
        kinds += [k for k in (POD_MIGRATION_JOB, REPLICA_SET, DEPLOYMENT) if k not in kinds]
    return tuple(kinds)


class Replica(PlaneStore, Protocol):
    """A store that follows a cluster on background threads; its changes are applied by `pump()`. A binding
    it sends in the background and that fails is reported, from `pump()`, to `on_bind_failed(namespace, name,
    uid, message)`; one the server accepted to `on_bound(namespace, name, uid, node)`."""

    on_bind_failed: Callable[[str, str, str | None, str], None] | None
    on_bound: Callable[[str, str, str | None, str], None] | None

    @property
    def binds_in_background(self) -> bool:
        """Whether `bind` returns before the server has answered (the outcome comes from `pump()`)."""
        ...

    def start(self) -> None:
        """Start following the cluster."""
        ...

    def stop(self) -> None:
        """Stop following it."""
        ...

    def finish_bindings(self, timeout: float = 10.0) -> None:
        """Let the bindings sent in the background end and report their outcomes at once."""
        ...

    def pump(self, limit: int | None = None) -> int:
        """Apply what was enqueued (at most `limit` items); how many were applied."""
        ...

    def pending(self) -> bool:
        """Whether items wait to be applied."""
        ...

    def wait(self, timeout: float | None) -> bool:
        """Block until something is enqueued or `timeout` seconds pass."""
        ...

    def wake(self) -> None:
        """End a `wait` now (from any thread)."""
        ...

    def wait_for_sync(self, timeout: float, stopping: threading.Event | None = None) -> bool:
        """Apply until every followed kind is listed, at most `timeout` seconds."""
        ...


class RunError(Exception):
    """`berth run` cannot go on (its message is one line for the user)."""


@dataclass(frozen=True, slots=True)
class RunOptions:
    """What `berth run` runs and how it competes for the leadership."""

    config: SchedulerConfig | None = None
    """The scheduler's profiles; None: `default_run_config()` (the one profile `DEFAULT_PROFILE`)."""
    controllers: frozenset[str] = frozenset(BERTH_CONTROLLERS)
    descheduler: Policy | None = None
    descheduling_interval: float = DEFAULT_DESCHEDULING_INTERVAL
    leader_elect: bool = True
    lease_namespace: str = DEFAULT_NAMESPACE
    lease_name: str = DEFAULT_NAME
    lease_duration: float = DEFAULT_LEASE_DURATION
    renew_deadline: float = DEFAULT_RENEW_DEADLINE
    retry_period: float = DEFAULT_RETRY_PERIOD
    identity: str = field(default_factory=default_identity)
    sync_timeout: float = 120.0


class Runner:
    """One `berth run` process's core: the replica, the election and, while leading, the control plane."""

    def __init__(
        self,
        replica: Replica,
        options: RunOptions,
        *,
        clock: RealClock | None = None,
        stopping: threading.Event | None = None,
        on_leading: Callable[[ControlPlane[Replica]], None] | None = None,
    ) -> None:
        """Drive `replica` as `options` say; `stopping` set (from any thread, then `replica.wake()`) ends
        `run`; `on_leading` is told of the control plane once it is built."""
        self.replica = replica
        self.options = options
        self.clock = clock if clock is not None else RealClock()
        self.stopping = stopping if stopping is not None else threading.Event()
        self.on_leading = on_leading
        self.plane: ControlPlane[Replica] | None = None
        self.elector: LeaderElector | None = None
        self.lost = False
        self.errors = 0
        """API errors that escaped a component (logged; the loop goes on, as kube's controllers retry)."""
        self._calls: queue.SimpleQueue[tuple[Callable[[], Any], Future[Any]]] = queue.SimpleQueue()
        self._registry: CollectorRegistry | None = None

    # ----- for other threads (the status server) ---------------------------------------------------------
    def call(self, fn: Callable[[], Any], timeout: float = CALL_TIMEOUT) -> Any:
        """Run `fn` on the loop's thread (between two slices of work) and return its result; raises
        TimeoutError when the loop does not get to it within `timeout` seconds."""
        future: Future[Any] = Future()
        self._calls.put((fn, future))
        self.replica.wake()
        return future.result(timeout)

    def _answer_calls(self) -> None:
        while True:
            try:
                fn, future = self._calls.get_nowait()
            except queue.Empty:
                return
            try:
                future.set_result(fn())
            except Exception as e:
                future.set_exception(e)

    def metrics(self) -> tuple[bytes, str]:
        """The Prometheus exposition: the scheduler's and controllers' metrics while leading, and the
        process's always (safe from any thread)."""
        if self.plane is None:
            registry = CollectorRegistry(auto_describe=False)
            ProcessCollector(registry=registry)
            return render_metrics(registry)

        def render() -> tuple[bytes, str]:
            assert self.plane is not None
            if self._registry is None:
                self._registry = metrics_registry(self.plane)
            return render_metrics(self._registry)

        result: tuple[bytes, str] = self.call(render)
        return result

    def healthz(self) -> str | None:
        """None when healthy, else why not: a leader that has not renewed its Lease for too long (safe from
        any thread)."""
        if self.elector is None:
            return None
        return self.elector.check(HEALTHZ_TOLERANCE)

    def stop(self) -> None:
        """Ask `run` to end (from any thread, a signal handler too)."""
        self.stopping.set()
        self.replica.wake()

    def run(self) -> int:
        """Sync, compete, act until stopped or the leadership is lost; the exit code (0, or
        `EXIT_LEADERSHIP_LOST`). Raises RunError when the informers do not sync in time."""
        replica, options = self.replica, self.options
        replica.start()
        try:
            if not replica.wait_for_sync(options.sync_timeout, self.stopping):
                if self.stopping.is_set():
                    return 0
                raise RunError(f"timed out waiting for caches to sync after {options.sync_timeout:g}s")
            log.info("caches synced")
            if options.leader_elect:
                self.elector = LeaderElector(
                    replica,
                    self.clock,
                    identity=options.identity,
                    on_started_leading=self._start_plane,
                    on_stopped_leading=self._lose,
                    namespace=options.lease_namespace,
                    name=options.lease_name,
                    lease_duration=options.lease_duration,
                    renew_deadline=options.renew_deadline,
                    retry_period=options.retry_period,
                    recorder=EventRecorder(replica, component="berth-scheduler"),
                )
                self.elector.start()
            else:
                self._start_plane()
            self._loop()
        finally:
            if self.plane is not None:
                replica.finish_bindings()  # their Scheduled events are said before the events are flushed
                self.replica.on_bind_failed = None
                self.replica.on_bound = None
                self.plane.events.flush()
                self.plane.close()
            replica.stop()  # the bindings in flight finish first: a standby must not race them
            if self.elector is not None:
                self.elector.stop()  # a leader stops leading and releases its Lease
        if self.lost:
            log.error("leaderelection lost")
            return EXIT_LEADERSHIP_LOST
        return 0

    def _start_plane(self) -> None:
        options = self.options
        config = options.config if options.config is not None else default_run_config()
        profiles = tuple(p.scheduler_name for p in config.profiles)
        log.info(
            "starting the scheduler (profiles: %s) and the controllers: %s",
            ", ".join(profiles),
            ", ".join(sorted(options.controllers)),
        )
        plane: ControlPlane[Replica] = ControlPlane(
            self.replica,
            self.clock,
            config=config,
            kubelet=False,
            garbage_collection=False,
            controllers=options.controllers,
            # ReservationFirst migrations are for the pods of the profiles served here (Berth's default names
            # simulate's and serve's two profiles)
            migration=replace(MigrationControllerArgs(), scheduler_names=profiles),
        )
        plane.replay()
        if self.replica.binds_in_background:  # a binding cycle ends when the server has answered its binding
            plane.scheduler.binding.deferred = True
            self.replica.on_bind_failed = plane.binding_failed
            self.replica.on_bound = plane.binding_succeeded
        if options.descheduler is not None:
            plane.enable_descheduler(options.descheduler, options.descheduling_interval)
        self.plane = plane
        if self.on_leading is not None:
            self.on_leading(plane)

    def _lose(self) -> None:
        """The leadership ended: lost, unless it ends because `run` is stopping."""
        if not self.stopping.is_set():
            self.lost = True
        self.replica.wake()

    def _leading(self) -> bool:
        return self.plane is not None and (self.elector is None or self.elector.is_leader)

    def _loop(self) -> None:
        replica, clock = self.replica, self.clock
        while not self.stopping.is_set() and not self.lost:
            self._answer_calls()
            replica.pump(PUMP_LIMIT)
            busy = False
            if self._leading():
                assert self.plane is not None
                try:
                    busy = self.plane.work(SLICE_CYCLES)
                except StatusError as e:
                    # an API refusal no component handled (a 5xx, an unreachable server): kube's controllers
                    # log it and retry on their next event; so does this loop
                    self.errors += 1
                    log.error("API error: %s", e)
            due = clock.peek()
            now = clock.now()
            if due is not None and due <= now:
                try:
                    clock.step()
                except StatusError as e:
                    self.errors += 1
                    log.error("API error: %s", e)
                continue
            if busy or replica.pending() or not self._calls.empty():
                continue
            wait = IDLE_WAIT if due is None else min(IDLE_WAIT, due - now)
            replica.wait(wait)
