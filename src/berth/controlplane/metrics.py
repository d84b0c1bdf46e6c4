"""Prometheus metrics of a control plane: kube-scheduler's metric names, and Berth's reservation and quota
gauges.

Nothing is updated on the scheduling path for them: a `ControlPlaneCollector` reads, at scrape time, the
scheduler's counters and histograms (`SchedulerStats`), the scheduling queue, and the Reservations and
ElasticQuotas in the store. Names, help texts, labels and histogram buckets follow kube-scheduler's
``pkg/scheduler/metrics``:

* ``scheduler_schedule_attempts_total{result, profile}`` (result ``scheduled``, ``unschedulable``, ``error``)
* ``scheduler_scheduling_attempt_duration_seconds{result, profile}`` (histogram, wall-clock seconds of the
  scheduling and binding cycles; a pod held at Permit counts from its attempt's start to its outcome)
* ``scheduler_pending_pods{queue}`` (``active``, ``backoff``, ``unschedulable``, ``gated``)
* ``scheduler_preemption_attempts_total``, ``scheduler_preemption_victims`` (histogram)
* ``scheduler_pod_scheduling_attempts`` (histogram of attempts per scheduled pod)

and Berth's own gauges (amounts in base units: cpu in cores, memory in bytes):

* ``berth_reservations{phase}`` (``Pending``, ``Available``, ``Waiting``, ``Succeeded``, ``Failed``)
* ``berth_reservation_allocatable{name, node, resource}``, ``berth_reservation_allocated{name, node,
  resource}`` (status.allocatable / status.allocated of each reservation that has them)
* ``berth_elasticquota_min{namespace, name, resource}``, ``berth_elasticquota_max{...}``,
  ``berth_elasticquota_used{...}`` (spec.min, spec.max, status.used of each ElasticQuota, both API groups)

Serve them with `render_metrics(plane)` (body and content type for ``/metrics``), or register a
`ControlPlaneCollector` in a registry of one's own.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily, Metric
from prometheus_client.registry import Collector

from berth.api.elasticquota import ELASTIC_QUOTA_GROUPS
from berth.api.errors import QuantityError
from berth.api.quantity import parse_quantity
from berth.api.reservation import (
    PHASE_AVAILABLE,
    PHASE_FAILED,
    PHASE_PENDING,
    PHASE_SUCCEEDED,
    PHASE_WAITING,
    RESERVATION_KEY,
)
from berth.controlplane.plane import ControlPlane
from berth.scheduler.scheduler import (
    ATTEMPT_DURATION_BUCKETS,
    Histogram,
    Scheduler,
)

__all__ = ["ControlPlaneCollector", "metrics_registry", "render_metrics"]

RESULTS = ("scheduled", "unschedulable", "error")
QUEUES = ("active", "backoff", "unschedulable", "gated")
RESERVATION_PHASES = (PHASE_PENDING, PHASE_AVAILABLE, PHASE_WAITING, PHASE_SUCCEEDED, PHASE_FAILED)

_ATTEMPTS_HELP = (
    "Number of attempts to schedule pods, by the result. 'unschedulable' means a pod could not be scheduled, "
    "while 'error' means an internal scheduler problem."
)
_DURATION_HELP = "Scheduling attempt latency in seconds (scheduling algorithm + binding)"
_PENDING_HELP = (
    "Number of pending pods, by the queue type. 'active' means number of pods in activeQ; 'backoff' means "
    "number of pods in backoffQ; 'unschedulable' means number of pods in unschedulablePods that the scheduler "
    "attempted to schedule and failed; 'gated' is the number of unschedulable pods that the scheduler never "
    "attempted to schedule because they are gated."
)
_PREEMPTION_ATTEMPTS_HELP = "Total preemption attempts in the cluster till now"
_VICTIMS_HELP = "Number of selected preemption victims"
_POD_ATTEMPTS_HELP = "Number of attempts to successfully schedule a pod."


class ControlPlaneCollector(Collector):
    """Collects the scheduler's and Berth's metrics from `plane` whenever the registry is scraped."""

    def __init__(self, plane: ControlPlane[Any]) -> None:
        """Read from `plane` (its scheduler and store) at every collection."""
        self.plane = plane

    def collect(self) -> Iterator[Metric]:
        """The current metric families."""
        sched = self.plane.scheduler
        yield from _scheduler_metrics(sched)
        objects = self.plane.store
        yield from _reservation_metrics(objects.list(RESERVATION_KEY)[0])
        quotas: list[Mapping[str, Any]] = []
        for group in ELASTIC_QUOTA_GROUPS:
            quotas.extend(objects.list((group, "ElasticQuota"))[0])
        yield from _quota_metrics(quotas)


def metrics_registry(plane: ControlPlane[Any], *, process: bool = True) -> CollectorRegistry:
    """A registry with a `ControlPlaneCollector` of `plane` and, when `process` is true, the standard
    ``process_*`` metrics of this process (as every Kubernetes component exposes them)."""
    registry = CollectorRegistry(auto_describe=False)
    registry.register(ControlPlaneCollector(plane))
    if process:
        from prometheus_client import ProcessCollector

        ProcessCollector(registry=registry)
    return registry


def render_metrics(plane: ControlPlane[Any] | CollectorRegistry) -> tuple[bytes, str]:
    """The ``/metrics`` answer: the Prometheus text exposition of `plane`'s metrics (or of a registry made
    by `metrics_registry`) and its content type."""
    registry = plane if isinstance(plane, CollectorRegistry) else metrics_registry(plane)
    return generate_latest(registry), CONTENT_TYPE_LATEST


# ----- the scheduler ----------------------------------------------------------------------------------
def _scheduler_metrics(sched: Scheduler) -> Iterator[Metric]:
    stats = sched.stats
    profiles = sorted(set(sched.frameworks) | {p for _, p in stats.attempt_durations})
    attempts = CounterMetricFamily(
        "scheduler_schedule_attempts", _ATTEMPTS_HELP, labels=("result", "profile")
    )
    durations = HistogramMetricFamily(
        "scheduler_scheduling_attempt_duration_seconds", _DURATION_HELP, labels=("result", "profile")
    )
    for profile in profiles:
        for result in RESULTS:
            h = stats.attempt_durations.get((result, profile))
            if h is None:
                h = Histogram(ATTEMPT_DURATION_BUCKETS)
            labels = [result, profile]
            attempts.add_metric(labels, h.count)
            durations.add_metric(labels, _buckets(h), h.total)
    yield attempts
    yield durations

    where = Counter(qp.where for qp in sched.queue.pending())
    pending = GaugeMetricFamily("scheduler_pending_pods", _PENDING_HELP, labels=("queue",))
    for queue in QUEUES:
        pending.add_metric([queue], where.get(queue, 0))
    yield pending

    yield CounterMetricFamily(
        "scheduler_preemption_attempts", _PREEMPTION_ATTEMPTS_HELP, value=stats.preemption_attempts
    )
    victims = HistogramMetricFamily("scheduler_preemption_victims", _VICTIMS_HELP)
    victims.add_metric([], _buckets(stats.preemption_victims), stats.preemption_victims.total)
    yield victims
    pod_attempts = HistogramMetricFamily("scheduler_pod_scheduling_attempts", _POD_ATTEMPTS_HELP)
    pod_attempts.add_metric([], _buckets(stats.pod_attempts), stats.pod_attempts.total)
    yield pod_attempts


def _buckets(h: Histogram) -> list[tuple[str, float]]:
    """Cumulative (le, count) pairs ending with +Inf, the bounds written as Go writes them."""
    out: list[tuple[str, float]] = []
    running = 0
    for bound, c in zip((*h.bounds, float("inf")), h.counts, strict=True):
        running += c
        out.append((_go_float(bound), running))
    return out


def _go_float(value: float) -> str:
    """A bucket bound as Go's ``strconv.FormatFloat(v, 'g', -1, 64)`` writes it (``1``, ``0.001``, ``+Inf``),
    as kube-scheduler's ``le`` labels read."""
    if value == float("inf"):
        return "+Inf"
    if value.is_integer() and abs(value) < 1e21:
        return str(int(value))
    return repr(value)


# ----- reservations and quotas ------------------------------------------------------------------------
def _reservation_metrics(reservations: Iterable[Mapping[str, Any]]) -> Iterator[Metric]:
    phases: Counter[str] = Counter()
    allocatable = GaugeMetricFamily(
        "berth_reservation_allocatable",
        "Resources a reservation holds (status.allocatable; cpu in cores, memory in bytes).",
        labels=("name", "node", "resource"),
    )
    allocated = GaugeMetricFamily(
        "berth_reservation_allocated",
        "Resources of a reservation its owner pods use (status.allocated; cpu in cores, memory in bytes).",
        labels=("name", "node", "resource"),
    )
    for r in reservations:
        status = r.get("status") or {}
        phases[str(status.get("phase") or PHASE_PENDING)] += 1
        name = str((r.get("metadata") or {}).get("name") or "")
        node = str(status.get("nodeName") or "")
        for family, field in ((allocatable, "allocatable"), (allocated, "allocated")):
            for resource, value in _amounts(status.get(field)):
                family.add_metric([name, node, resource], value)
    by_phase = GaugeMetricFamily("berth_reservations", "Number of reservations, by phase.", labels=("phase",))
    for phase in (*RESERVATION_PHASES, *sorted(set(phases) - set(RESERVATION_PHASES))):
        by_phase.add_metric([phase], phases.get(phase, 0))
    yield by_phase
    yield allocatable
    yield allocated


def _quota_metrics(quotas: Iterable[Mapping[str, Any]]) -> Iterator[Metric]:
    labels = ("namespace", "name", "resource")
    families = {
        "min": GaugeMetricFamily(
            "berth_elasticquota_min",
            "Guaranteed resources of an ElasticQuota (spec.min; cpu in cores, memory in bytes).",
            labels=labels,
        ),
        "max": GaugeMetricFamily(
            "berth_elasticquota_max",
            "Resource limit of an ElasticQuota (spec.max; cpu in cores, memory in bytes; absent: unbounded).",
            labels=labels,
        ),
        "used": GaugeMetricFamily(
            "berth_elasticquota_used",
            "Resources the running pods of an ElasticQuota's namespace request (status.used; cpu in cores, "
            "memory in bytes).",
            labels=labels,
        ),
    }
    for q in sorted(quotas, key=_ns_name):
        ns, name = _ns_name(q)
        spec = q.get("spec") or {}
        sources = {
            "min": spec.get("min"),
            "max": spec.get("max"),
            "used": (q.get("status") or {}).get("used"),
        }
        for what, family in families.items():
            for resource, value in _amounts(sources[what]):
                family.add_metric([ns, name, resource], value)
    yield from families.values()


def _ns_name(obj: Mapping[str, Any]) -> tuple[str, str]:
    meta = obj.get("metadata") or {}
    return str(meta.get("namespace") or ""), str(meta.get("name") or "")


def _amounts(resources: object) -> list[tuple[str, float]]:
    """A ResourceList's (resource, value in base units) sorted by resource; malformed entries skipped."""
    if not isinstance(resources, Mapping):
        return []
    out: list[tuple[str, float]] = []
    for resource in sorted(k for k in resources if isinstance(k, str)):
        value = resources[resource]
        if isinstance(value, bool) or not isinstance(value, str | int | float):
            continue
        try:
            out.append((resource, float(parse_quantity(value))))
        except (QuantityError, ValueError):
            continue
    return out
