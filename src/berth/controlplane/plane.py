"""`ControlPlane`: every Berth component wired to one embedded store and one clock.

Single-threaded and event-driven: each committed store write is buffered as a watch event; `run_until_idle`
hands the buffered events to the components that follow their kinds and lets the scheduler work while it has
pods to place. Whoever owns the clock decides when timers run: the simulator jumps virtual time, `berth
serve` waits on real time, `berth run` too.

The store is any `PlaneStore`: the embedded `MemoryStore` (simulate, serve) or a replica of a real cluster
(``berth.remote.mirror.ClusterMirror``, run). Which controllers run is a choice (`controllers`): in a real
cluster kube-controller-manager runs its own (`KUBE_CONTROLLERS`) and the kubelets run the pods, so `berth run`
runs only Berth's (`BERTH_CONTROLLERS`).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Collection
from typing import Any, Generic, Protocol

from typing_extensions import TypeVar

from berth.api.contracts import Store
from berth.api.watch import WatchEvent
from berth.clock import Clock
from berth.controllers.disruption import DisruptionController
from berth.controllers.elasticquota import ElasticQuotaController
from berth.controllers.garbagecollector import GarbageCollector
from berth.controllers.kubelet import SimKubelet
from berth.controllers.podgc import PodGCController
from berth.controllers.podgroup import PodGroupController
from berth.controllers.reservation import ReservationController
from berth.controllers.workloads import WorkloadControllers
from berth.controllers.workloads.batch import BATCH_KINDS, BatchControllers
from berth.controllers.workloads.sets import DAEMONSET_KINDS, STATEFULSET_KINDS, DaemonSets, StatefulSets
from berth.descheduler.cycle import Descheduler
from berth.descheduler.evictor import COMPONENT as DESCHEDULER
from berth.descheduler.evictor import Eviction
from berth.descheduler.migration import MigrationController, MigrationControllerArgs
from berth.descheduler.policy import Policy
from berth.descheduler.setup import migration_args, migration_factory
from berth.scheduler.builtin import builtin_registry
from berth.scheduler.framework.config import SchedulerConfig
from berth.scheduler.framework.registry import Registry
from berth.scheduler.scheduler import Scheduler
from berth.store import MemoryStore
from berth.store.admission import create_system_priority_classes, namespace_autoprovision, pod_admission
from berth.store.apps_defaults import apps_admission
from berth.store.batch_defaults import batch_admission
from berth.store.events import EventRecorder
from berth.store.reservation_defaults import reservation_admission

__all__ = [
    "ALL_CONTROLLERS",
    "BERTH_CONTROLLERS",
    "KUBE_CONTROLLERS",
    "ControlPlane",
    "PlaneStore",
    "install_admission",
    "select_controllers",
]

BERTH_CONTROLLERS = ("reservation", "elasticquota", "podgroup", "podmigrationjob")
"""Berth's own controllers (Koordinator's and scheduler-plugins' controllers in a cluster)."""
KUBE_CONTROLLERS = (
    "workloads",
    "disruption",
    "podgc",
    "garbagecollector",
    "statefulset",
    "daemonset",
    "job",
    "cronjob",
)
"""The controllers kube-controller-manager runs in a real cluster (ReplicaSet/Deployment, PodDisruptionBudget
status, pod garbage collection, the garbage collector of dependents)."""
ALL_CONTROLLERS = (*BERTH_CONTROLLERS, *KUBE_CONTROLLERS)
"""Every controller Berth has; simulate and serve run them all."""


class PlaneStore(Store, Protocol):
    """What the control plane needs of its store: the `Store` contract, plus synchronous notification of every
    change, the store's wall time, and every object it holds."""

    def subscribe(
        self, callback: Callable[[WatchEvent], None], key: tuple[str, str] | None = None
    ) -> Callable[[], None]:
        """Call `callback(event)` after every change (of `key`, or of every kind); returns an unsubscriber."""
        ...

    def unix_time(self) -> float:
        """Seconds since the Unix epoch now, in store time."""
        ...

    def all_objects(self) -> list[dict[str, Any]]:
        """Every object held, sorted by kind, namespace and name."""
        ...


Handler = Callable[[str, Any], None]
"""A component's ``handle_event(type, object)``."""

S = TypeVar("S", bound=PlaneStore, default=MemoryStore)
"""The control plane's store type (the embedded store unless told otherwise)."""


def select_controllers(spec: str, known: Collection[str] = BERTH_CONTROLLERS) -> frozenset[str]:
    """The controllers a ``--controllers`` value names, as kube-controller-manager reads it: a comma-separated
    list of names, ``*`` for every one of `known`, ``-name`` to leave one out (``*,-podgroup``). ValueError
    naming an unknown controller."""
    chosen: set[str] = set()
    for raw in spec.split(","):
        item = raw.strip()
        if not item:
            continue
        name = item.removeprefix("-")
        if name != "*" and name not in known:
            raise ValueError(
                f'--controllers: unknown controller "{name}" (known: {", ".join(known)}, or "*" for all)'
            )
        if item == "*":
            chosen |= set(known)
        elif item.startswith("-"):
            chosen.discard(name)
        else:
            chosen.add(name)
    return frozenset(chosen)


def install_admission(store: MemoryStore) -> None:
    """The API server's built-in admission on `store` (namespace auto-provisioning, pod priority and defaults,
    reservation defaults, Job and CronJob defaults), and the built-in PriorityClasses that are missing."""
    store.add_admission(namespace_autoprovision(store))
    store.add_admission(pod_admission(store))
    store.add_admission(reservation_admission())
    store.add_admission(apps_admission())
    store.add_admission(batch_admission())
    create_system_priority_classes(store)


DEFAULT_DESCHEDULING_INTERVAL = 300.0
"""Seconds between descheduling cycles unless told otherwise (the descheduler's own default runs one cycle)."""
DESCHEDULE_PRIORITY = 5
"""Timers due at the same instant run first (lower priority values): scenario steps, then the descheduler."""


class ControlPlane(Generic[S]):
    """The scheduler (every profile), the controllers and, unless `kubelet` is False, the simulated kubelet,
    all following `store` on `clock`."""

    def __init__(
        self,
        store: S,
        clock: Clock,
        *,
        config: SchedulerConfig | None = None,
        seed: int = 0,
        registry: Registry | None = None,
        kubelet: bool = True,
        migration: MigrationControllerArgs | None = None,
        garbage_collection: bool = True,
        controllers: Collection[str] | None = None,
    ) -> None:
        """Wire the components to `store` (whose admission the caller installs) and `clock`; `migration`
        configures the PodMigrationJob controller (Koordinator's defaults when None). `garbage_collection`
        False leaves out the garbage collector (a what-if over a partial snapshot, whose owners may simply not
        have been copied, must not collect their dependents). `controllers` names the controllers to run (of
        `ALL_CONTROLLERS`; None: every one); a controller left out is None here."""
        on = frozenset(ALL_CONTROLLERS if controllers is None else controllers)
        unknown = sorted(on - set(ALL_CONTROLLERS))
        if unknown:
            raise ValueError(f"unknown controllers {unknown} (known: {', '.join(ALL_CONTROLLERS)})")
        self.controllers = on
        self.clock = clock
        self.store = store
        self.events = EventRecorder(store, buffered=True)
        self.scheduler = Scheduler(
            store, clock, self.events, registry or builtin_registry(), config, seed=seed
        )
        self.kubelet: SimKubelet | None = SimKubelet(store, clock) if kubelet else None
        self.reservations = ReservationController(store, clock) if "reservation" in on else None
        self.workloads = WorkloadControllers(store, clock) if "workloads" in on else None
        self.disruption = (
            DisruptionController(store, clock, recorder=EventRecorder(store, component="controllermanager"))
            if "disruption" in on
            else None
        )
        self.podgc = PodGCController(store, clock) if "podgc" in on else None
        self.statefulsets = StatefulSets(store, clock) if "statefulset" in on else None
        self.daemonsets = DaemonSets(store, clock) if "daemonset" in on else None
        batch_on = {"job", "cronjob"} & on
        self.batch = (
            BatchControllers(store, clock, jobs="job" in on, cronjobs="cronjob" in on) if batch_on else None
        )
        collect = garbage_collection and "garbagecollector" in on
        self.garbagecollector = GarbageCollector(store, clock) if collect else None
        self.podgroups = PodGroupController(store, clock) if "podgroup" in on else None
        self.elasticquotas = ElasticQuotaController(store, clock) if "elasticquota" in on else None
        self.migration = (
            MigrationController(
                store, clock, migration, recorder=EventRecorder(store, component="koord-descheduler")
            )
            if "podmigrationjob" in on
            else None
        )
        self.descheduler: Descheduler | None = None
        self.descheduling_interval = DEFAULT_DESCHEDULING_INTERVAL
        self.descheduled: list[tuple[float, Eviction]] = []
        self.descheduling_errors: list[str] = []
        self._pending: deque[WatchEvent] = deque()
        self._handler_parts: tuple[object, ...] = ()
        self._handler_kinds: set[str] = set()
        self._handler_table: tuple[dict[str, tuple[Handler, ...]], tuple[Handler, ...]] = ({}, ())
        self._unsubscribe = store.subscribe(self._pending.append)

    def enable_descheduler(self, policy: Policy, interval: float = 300.0) -> None:
        """Run a descheduling cycle of `policy` every `interval` seconds of the clock (first at now +
        interval), as the descheduler's ``--descheduling-interval``; a profile that migrates gets the
        migration controller configured with its MigrationControllerArgs. Evictions land in `descheduled`;
        a profile that cannot be built in a cycle is skipped there, its error in `descheduling_errors`."""
        if interval <= 0:
            raise ValueError(f"descheduling interval must be positive, not {interval:g}s")
        self.descheduler = Descheduler(
            self.store,
            policy,
            recorder=EventRecorder(self.store, component=DESCHEDULER),
            migrate=migration_factory(self.store),
            skip_unbuildable=True,
        )
        args = migration_args(policy)
        if args is not None and "podmigrationjob" in self.controllers:
            self.migration = MigrationController(
                self.store,
                self.clock,
                args,
                recorder=EventRecorder(self.store, component="koord-descheduler"),
            )
        self.descheduling_interval = interval
        self.clock.call_at(self.clock.now() + interval, self._deschedule, DESCHEDULE_PRIORITY)

    def warn_unserved(self) -> None:
        """Say what nothing here will do (simulate and serve, where no other scheduler runs): a Warning Event
        for each pending pod whose schedulerName no profile serves, and one for each ElasticQuota when no
        profile enables CapacityScheduling. Call it before objects are replayed or created."""
        self.scheduler.warn_unserved()
        frameworks = self.scheduler.frameworks
        if self.elasticquotas is not None and not any(
            "CapacityScheduling" in fw.plugins for fw in frameworks.values()
        ):
            self.elasticquotas.warn_unenforced(self.events, list(frameworks))

    def _deschedule(self) -> None:
        """One descheduling cycle now, then the next one `descheduling_interval` later."""
        assert self.descheduler is not None
        self.run_until_idle()
        now = self.clock.now()
        result = self.descheduler.run_cycle(self.store.unix_time())
        self.descheduled.extend((now, e) for e in result.evictions)
        self.descheduling_errors.extend(f"at {now:g}s: {e}" for e in result.errors)
        self.clock.call_at(now + self.descheduling_interval, self._deschedule, DESCHEDULE_PRIORITY)

    def binding_failed(self, namespace: str, name: str, uid: str | None, message: str) -> None:
        """A binding sent in the background failed: the scheduler's binding cycle ends it as a failed Bind
        (kube's handleBindingCycleError: Unreserve, the assumed pod forgotten, a ``Binding rejected``
        FailedScheduling event and PodScheduled=False, the pod queued again with backoff). A pod gone or bound
        meanwhile is not queued again."""
        self.scheduler.binding.binding_done(uid or "", message)

    def binding_succeeded(self, namespace: str, name: str, uid: str | None, node: str) -> None:
        """A binding sent in the background was accepted: the binding cycle ends (counted, ``Scheduled``,
        PostBind)."""
        self.scheduler.binding.binding_done(uid or "", None)

    def replay(self) -> None:
        """Tell every component about the objects already in the store (a store recovered from disk)."""
        for obj in self.store.all_objects():
            self._pending.append(WatchEvent("ADDED", obj, _key(obj), self.store.revision))

    def _handlers(self) -> tuple[dict[str, tuple[Handler, ...]], tuple[Handler, ...]]:
        """The components' event handlers per kind, each kind's in the order they always run (the scheduler,
        the kubelet, then the controllers), and those of any other kind; built again only when a component
        changes (a controller left out has no handler). A component's ``handle_pod``, when it has one, takes
        its Pod events (the bulk of them) without its ``handle_event`` asking the kind again."""
        sched = self.scheduler
        parts = (
            sched,
            self.kubelet,
            self.reservations,
            self.workloads,
            self.disruption,
            self.podgc,
            self.garbagecollector,
            self.podgroups,
            self.elasticquotas,
            self.migration,
            self.statefulsets,
            self.daemonsets,
            self.batch,
        )
        sched_kinds = sched.watched_kinds()
        if parts == self._handler_parts and sched_kinds == self._handler_kinds:
            return self._handler_table
        (
            _,
            kubelet,
            reservations,
            workloads,
            disruption,
            podgc,
            gc,
            podgroups,
            quotas,
            migration,
            sts,
            ds,
            batch,
        ) = parts
        followers: tuple[tuple[Any, Collection[str] | None], ...] = (
            (kubelet, ("Pod", "Node")),
            (reservations, ("Pod", "Node", "Reservation")),
            (workloads, ("Pod", "ReplicaSet", "Deployment")),
            (
                disruption,
                (
                    "Pod",
                    "PodDisruptionBudget",
                    "ReplicaSet",
                    "Deployment",
                    "StatefulSet",
                    "ReplicationController",
                ),
            ),
            (podgc, ("Pod", "Node")),
            (gc, None),  # every kind but Event
            (podgroups, ("Pod", "PodGroup")),
            (quotas, ("Pod", "ElasticQuota")),
            (migration, ("Pod", "Reservation", "PodMigrationJob")),
            (sts, STATEFULSET_KINDS),
            (ds, DAEMONSET_KINDS),
            (batch, BATCH_KINDS),
        )

        def handlers_of(kind: str | None) -> tuple[Handler, ...]:
            out: list[Handler] = []
            if kind in sched_kinds:
                handle = getattr(sched, "handle_pod", None) if kind == "Pod" else None
                out.append(handle or sched.handle_event)
            for component, kinds in followers:
                if component is None:
                    continue
                if kind in kinds if kinds is not None else kind != "Event":
                    # a Pod event goes straight to a component's Pod handler, if it has one
                    handle = getattr(component, "handle_pod", None) if kind == "Pod" else None
                    out.append(handle or component.handle_event)
            return tuple(out)

        named = set(sched_kinds).union(*(kinds for _, kinds in followers if kinds is not None), ("Event",))
        table = {kind: handlers_of(kind) for kind in named}
        self._handler_parts, self._handler_kinds = parts, sched_kinds
        self._handler_table = (table, handlers_of(None))
        return self._handler_table

    def _dispatch(self) -> bool:
        if not self._pending:
            return False
        table, others = self._handlers()
        pending = self._pending
        while pending:
            ev = pending.popleft()
            obj = ev.object
            type_ = ev.type
            for handle in table.get(obj.get("kind"), others):  # type: ignore[arg-type]
                handle(type_, obj)
        return True

    def run_until_idle(self) -> None:
        """Process events and schedule until nothing is ready now."""
        self.work()

    def work(self, budget: int | None = None) -> bool:
        """Process events and schedule until nothing is ready, or for at most `budget` scheduling cycles;
        True when work is left (a server yields to its requests between slices)."""
        cycles = 0
        while True:
            self._dispatch()
            if self.scheduler.schedule_one():
                cycles += 1
                if budget is not None and cycles >= budget:
                    self.events.flush()
                    return True
                continue
            self.events.flush()
            if not self._pending:
                return False

    @property
    def busy(self) -> bool:
        """Whether store events are waiting to be handed to the components."""
        return bool(self._pending)

    def close(self) -> None:
        """Stop following the store."""
        self._unsubscribe()


def _key(obj: dict[str, object]) -> tuple[str, str]:
    api_version = str(obj.get("apiVersion") or "")
    return (api_version.rpartition("/")[0], str(obj.get("kind") or ""))
