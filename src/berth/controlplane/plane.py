"""`ControlPlane`: every Berth component wired to one embedded store and one clock.

Single-threaded and event-driven: each committed store write is buffered as a watch event; `run_until_idle`
hands the buffered events to the components that follow their kinds and lets the scheduler work while it has
pods to place. Whoever owns the clock decides when timers run: the simulator jumps virtual time, `berth
serve` waits on real time.
"""

from __future__ import annotations

from collections import deque

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
from berth.store.events import EventRecorder
from berth.store.reservation_defaults import reservation_admission

__all__ = ["ControlPlane", "install_admission"]


def install_admission(store: MemoryStore) -> None:
    """The API server's built-in admission on `store` (namespace auto-provisioning, pod priority and defaults,
    reservation defaults), and the built-in PriorityClasses that are missing."""
    store.add_admission(namespace_autoprovision(store))
    store.add_admission(pod_admission(store))
    store.add_admission(reservation_admission())
    create_system_priority_classes(store)


DEFAULT_DESCHEDULING_INTERVAL = 300.0
"""Seconds between descheduling cycles unless told otherwise (the descheduler's own default runs one cycle)."""
DESCHEDULE_PRIORITY = 5
"""Timers due at the same instant run first (lower priority values): scenario steps, then the descheduler."""


class ControlPlane:
    """The scheduler (every profile), the controllers and, unless `kubelet` is False, the simulated kubelet,
    all following `store` on `clock`."""

    def __init__(
        self,
        store: MemoryStore,
        clock: Clock,
        *,
        config: SchedulerConfig | None = None,
        seed: int = 0,
        registry: Registry | None = None,
        kubelet: bool = True,
        migration: MigrationControllerArgs | None = None,
        garbage_collection: bool = True,
    ) -> None:
        """Wire the components to `store` (whose admission the caller installs) and `clock`; `migration`
        configures the PodMigrationJob controller (Koordinator's defaults when None). `garbage_collection`
        False leaves out the garbage collector (a what-if over a partial snapshot, whose owners may simply not
        have been copied, must not collect their dependents)."""
        self.clock = clock
        self.store = store
        self.events = EventRecorder(store, buffered=True)
        self.scheduler = Scheduler(
            store, clock, self.events, registry or builtin_registry(), config, seed=seed
        )
        self.kubelet: SimKubelet | None = SimKubelet(store, clock) if kubelet else None
        self.reservations = ReservationController(store, clock)
        self.workloads = WorkloadControllers(store, clock)
        self.disruption = DisruptionController(
            store, clock, recorder=EventRecorder(store, component="controllermanager")
        )
        self.podgc = PodGCController(store, clock)
        self.garbagecollector = GarbageCollector(store, clock) if garbage_collection else None
        self.podgroups = PodGroupController(store, clock)
        self.elasticquotas = ElasticQuotaController(store, clock)
        self.migration = MigrationController(
            store, clock, migration, recorder=EventRecorder(store, component="koord-descheduler")
        )
        self.descheduler: Descheduler | None = None
        self.descheduling_interval = DEFAULT_DESCHEDULING_INTERVAL
        self.descheduled: list[tuple[float, Eviction]] = []
        self.descheduling_errors: list[str] = []
        self._pending: deque[WatchEvent] = deque()
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
        if args is not None:
            self.migration = MigrationController(
                self.store,
                self.clock,
                args,
                recorder=EventRecorder(self.store, component="koord-descheduler"),
            )
        self.descheduling_interval = interval
        self.clock.call_at(self.clock.now() + interval, self._deschedule, DESCHEDULE_PRIORITY)

    def _deschedule(self) -> None:
        """One descheduling cycle now, then the next one `descheduling_interval` later."""
        assert self.descheduler is not None
        self.run_until_idle()
        now = self.clock.now()
        result = self.descheduler.run_cycle(self.store.unix_time())
        self.descheduled.extend((now, e) for e in result.evictions)
        self.descheduling_errors.extend(f"at {now:g}s: {e}" for e in result.errors)
        self.clock.call_at(now + self.descheduling_interval, self._deschedule, DESCHEDULE_PRIORITY)

    def replay(self) -> None:
        """Tell every component about the objects already in the store (a store recovered from disk)."""
        for obj in self.store.all_objects():
            self._pending.append(WatchEvent("ADDED", obj, _key(obj), self.store.revision))

    def _dispatch(self) -> bool:
        if not self._pending:
            return False
        sched, kubelet, reservations = self.scheduler, self.kubelet, self.reservations
        gc = self.garbagecollector
        sched_kinds = sched.watched_kinds()
        while self._pending:
            ev = self._pending.popleft()
            obj = ev.object
            kind = obj.get("kind")
            if kind in sched_kinds:
                sched.handle_event(ev.type, obj)
            if kind == "Pod" and kubelet is not None:
                kubelet.handle_event(ev.type, obj)
            if kind in ("Pod", "Node", "Reservation"):
                reservations.handle_event(ev.type, obj)
            if kind in ("Pod", "ReplicaSet", "Deployment"):
                self.workloads.handle_event(ev.type, obj)
            if kind in ("Pod", "PodDisruptionBudget", "ReplicaSet", "Deployment"):
                self.disruption.handle_event(ev.type, obj)
            if kind in ("Pod", "Node"):
                self.podgc.handle_event(ev.type, obj)
            if gc is not None and kind != "Event":
                gc.handle_event(ev.type, obj)
            if kind in ("Pod", "PodGroup"):
                self.podgroups.handle_event(ev.type, obj)
            if kind in ("Pod", "ElasticQuota"):
                self.elasticquotas.handle_event(ev.type, obj)
            if kind in ("Pod", "Reservation", "PodMigrationJob"):
                self.migration.handle_event(ev.type, obj)
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
