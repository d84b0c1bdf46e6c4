"""Koordinator ``PodMigrationJob`` (``scheduling.koordinator.sh/v1alpha1``, cluster-scoped, short name ``pmj``):
its names (modes, phases, condition types, reasons, annotation keys), accessors and validation.

Mirrors Koordinator's ``apis/scheduling/v1alpha1/pod_migration_job_types.go``: ``spec.podRef`` names the pod
to move; ``spec.mode`` is ``ReservationFirst`` (the default: reserve the new place, then evict) or
``EvictDirectly``; ``spec.ttl`` (a Go duration) bounds the whole job; ``spec.paused`` holds it;
``spec.reservationOptions`` may name an existing Reservation (``reservationRef``) or give the ``template`` of
the one to create; ``spec.deleteOptions`` are passed to the eviction. ``status.phase`` goes Pending → Running →
Succeeded / Failed (or Aborted), ``status.status`` names the last condition changed and
``status.reason``/``status.message`` say why.

Validation follows the CRD's schema (field types, ``podRef`` required) and is a little stricter where a
wrong value could only fail later: ``mode`` must be one of the two modes, ``ttl`` a non-negative Go
duration, ``deleteOptions.gracePeriodSeconds`` non-negative, ``status.phase`` one of the phases.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from berth.api.checks import Context, is_schema_type, schema_type_message
from berth.api.wellknown import parse_duration, parse_go_duration

__all__ = [
    "ANNOTATION_EVICT_REASON",
    "ANNOTATION_EVICT_TRIGGER",
    "ANNOTATION_JOB_CREATED_BY",
    "ANNOTATION_PASSED_ARBITRATION",
    "CONDITION_BOUND_POD_READY",
    "CONDITION_EVICTION",
    "CONDITION_POD_BOUND_RESERVATION",
    "CONDITION_POD_SCHEDULED",
    "CONDITION_PREEMPTION",
    "CONDITION_RESERVATION_BOUND",
    "CONDITION_RESERVATION_CREATED",
    "CONDITION_RESERVATION_SCHEDULED",
    "CONDITION_STATUS_FALSE",
    "CONDITION_STATUS_TRUE",
    "CONDITION_STATUS_UNKNOWN",
    "CONDITION_TYPES",
    "EVICT_POD_ANNOTATION",
    "LABEL_CREATED_BY",
    "MODES",
    "MODE_EVICT_DIRECTLY",
    "MODE_RESERVATION_FIRST",
    "PHASES",
    "PHASE_ABORTED",
    "PHASE_FAILED",
    "PHASE_PENDING",
    "PHASE_RUNNING",
    "PHASE_SUCCEEDED",
    "PMJ_API_VERSION",
    "PMJ_GROUP",
    "PMJ_KEY",
    "PMJ_KIND",
    "REASON_EVICTING",
    "REASON_EVICT_COMPLETE",
    "REASON_FAILED_CREATE_RESERVATION",
    "REASON_FAILED_EVICT",
    "REASON_FORBIDDEN_MIGRATE_POD",
    "REASON_INVALID_POD_REF",
    "REASON_MISSING_POD",
    "REASON_MISSING_RESERVATION",
    "REASON_PREEMPTING",
    "REASON_PREEMPT_COMPLETE",
    "REASON_RESERVATION_EXPIRED",
    "REASON_TIMEOUT",
    "REASON_UNSCHEDULABLE",
    "REASON_WAIT_FOR_BOUND_POD_READY",
    "REASON_WAIT_FOR_POD_BIND_RESERVATION",
    "RESERVATION_CREATOR",
    "STATUS_COMPLETE",
    "is_active_job",
    "job_condition",
    "job_phase",
    "job_pod_ref",
    "job_reservation_name",
    "job_ttl",
    "validate_pod_migration_job",
]

PMJ_GROUP = "scheduling.koordinator.sh"
PMJ_API_VERSION = "scheduling.koordinator.sh/v1alpha1"
PMJ_KIND = "PodMigrationJob"
PMJ_KEY = (PMJ_GROUP, PMJ_KIND)

MODE_RESERVATION_FIRST = "ReservationFirst"
MODE_EVICT_DIRECTLY = "EvictDirectly"
MODES = (MODE_RESERVATION_FIRST, MODE_EVICT_DIRECTLY)

PHASE_PENDING = "Pending"
PHASE_RUNNING = "Running"
PHASE_SUCCEEDED = "Succeeded"
PHASE_FAILED = "Failed"
PHASE_ABORTED = "Aborted"
PHASES = (PHASE_PENDING, PHASE_RUNNING, PHASE_SUCCEEDED, PHASE_FAILED, PHASE_ABORTED)

CONDITION_RESERVATION_CREATED = "ReservationCreated"
CONDITION_RESERVATION_SCHEDULED = "ReservationScheduled"
CONDITION_PREEMPTION = "Preemption"
CONDITION_EVICTION = "Eviction"
CONDITION_POD_SCHEDULED = "PodScheduled"
CONDITION_POD_BOUND_RESERVATION = "PodBoundReservation"
CONDITION_BOUND_POD_READY = "BoundPodReady"
CONDITION_RESERVATION_BOUND = "ReservationBound"
CONDITION_TYPES = (
    CONDITION_RESERVATION_CREATED,
    CONDITION_RESERVATION_SCHEDULED,
    CONDITION_PREEMPTION,
    CONDITION_EVICTION,
    CONDITION_POD_SCHEDULED,
    CONDITION_POD_BOUND_RESERVATION,
    CONDITION_BOUND_POD_READY,
    CONDITION_RESERVATION_BOUND,
)

CONDITION_STATUS_TRUE = "True"
CONDITION_STATUS_FALSE = "False"
CONDITION_STATUS_UNKNOWN = "Unknown"

REASON_TIMEOUT = "Timeout"
REASON_FAILED_CREATE_RESERVATION = "FailedCreateReservation"
REASON_RESERVATION_EXPIRED = "ReservationExpired"
REASON_UNSCHEDULABLE = "Unschedulable"
REASON_FORBIDDEN_MIGRATE_POD = "ForbiddenMigratePod"
REASON_MISSING_POD = "MissingPod"
REASON_MISSING_RESERVATION = "MissingReservation"
REASON_PREEMPTING = "Preempting"
REASON_PREEMPT_COMPLETE = "PreemptComplete"
REASON_EVICTING = "Evicting"
REASON_FAILED_EVICT = "FailedEvict"
REASON_EVICT_COMPLETE = "EvictComplete"
REASON_WAIT_FOR_POD_BIND_RESERVATION = "WaitForPodBindReservation"
REASON_WAIT_FOR_BOUND_POD_READY = "WaitForBoundPodReady"
REASON_INVALID_POD_REF = "InvalidPodRef"
"""Not one of the API's reason constants, but the reason Koordinator's controller writes for a bad podRef."""

STATUS_COMPLETE = "Complete"
"""``status.status`` of a job that succeeded."""

ANNOTATION_EVICT_REASON = "koordinator.sh/evict-reason"
ANNOTATION_EVICT_TRIGGER = "koordinator.sh/evict-trigger"
ANNOTATION_JOB_CREATED_BY = "koordinator.sh/job-created-by"
ANNOTATION_PASSED_ARBITRATION = "descheduler.koordinator.sh/passed-arbitration"
EVICT_POD_ANNOTATION = "descheduler.alpha.kubernetes.io/evict"
"""On a pod (or a job): skip the migration filters, as the descheduler's evict annotation does."""

LABEL_CREATED_BY = "app.kubernetes.io/created-by"
RESERVATION_CREATOR = "koord-descheduler"
"""The ``app.kubernetes.io/created-by`` label value of the Reservations the migration controller creates."""

_EMPTY: Mapping[str, Any] = {}
_OBJECT_REFERENCE_FIELDS = ("apiVersion", "fieldPath", "kind", "name", "namespace", "resourceVersion", "uid")


# --- accessors --------------------------------------------------------------------------------------------


def _spec(job: Mapping[str, Any]) -> Mapping[str, Any]:
    spec = job.get("spec")
    return spec if isinstance(spec, Mapping) else _EMPTY


def job_phase(job: Mapping[str, Any]) -> str:
    """``status.phase``, with an absent or empty phase read as ``Pending`` (as Koordinator's arbitration does)."""
    status = job.get("status")
    phase = status.get("phase") if isinstance(status, Mapping) else None
    return phase if isinstance(phase, str) and phase else PHASE_PENDING


def is_active_job(job: Mapping[str, Any]) -> bool:
    """Pending or Running: the job may still evict its pod."""
    return job_phase(job) in (PHASE_PENDING, PHASE_RUNNING)


def job_pod_ref(job: Mapping[str, Any]) -> tuple[str, str, str]:
    """``spec.podRef`` as ``(namespace, name, uid)`` (empty strings for absent fields)."""
    ref = _spec(job).get("podRef")
    if not isinstance(ref, Mapping):
        return ("", "", "")
    return tuple(str(ref.get(k) or "") for k in ("namespace", "name", "uid"))  # type: ignore[return-value]


def job_reservation_name(job: Mapping[str, Any]) -> str:
    """``spec.reservationOptions.reservationRef.name`` (``""`` when the job has no reservation yet)."""
    options = _spec(job).get("reservationOptions")
    ref = options.get("reservationRef") if isinstance(options, Mapping) else None
    return str(ref.get("name") or "") if isinstance(ref, Mapping) else ""


def job_ttl(job: Mapping[str, Any], default: float) -> float:
    """The job's TTL in seconds: ``spec.ttl`` when given, else `default`; 0 means no timeout.

    Raises ValueError for an unparseable duration (validation refuses one on write).
    """
    ttl = _spec(job).get("ttl")
    if ttl is None:
        return max(default, 0.0)
    return max(parse_duration(str(ttl)), 0.0)


def job_condition(job: Mapping[str, Any], type_: str) -> Mapping[str, Any] | None:
    """The job's condition of type `type_` (``status.conditions``), or None."""
    status = job.get("status")
    conditions = status.get("conditions") if isinstance(status, Mapping) else None
    for c in conditions or ():
        if isinstance(c, Mapping) and c.get("type") == type_:
            return c
    return None


# --- validation -------------------------------------------------------------------------------------------


def _typed(ctx: Context, path: str, value: object, expected: str) -> None:
    """The CRD schema's type check (null passes: the field is unset)."""
    if value is not None and not is_schema_type(value, expected):
        ctx.fail(path, value, schema_type_message(path, value, expected))


def _object_reference(ctx: Context, path: str, ref: object) -> None:
    _typed(ctx, path, ref, "object")
    if isinstance(ref, Mapping):
        for k in _OBJECT_REFERENCE_FIELDS:
            _typed(ctx, f"{path}.{k}", ref.get(k), "string")


def _duration(ctx: Context, path: str, value: object) -> None:
    _typed(ctx, path, value, "string")
    if value is None:
        return
    try:
        seconds = parse_go_duration(str(value))
    except ValueError as e:
        ctx.invalid(path, value, str(e))
    if seconds < 0:
        ctx.invalid(path, value, "must be greater than or equal to 0")


def _delete_options(ctx: Context, path: str, options: object) -> None:
    _typed(ctx, path, options, "object")
    if not isinstance(options, Mapping):
        return
    grace = options.get("gracePeriodSeconds")
    _typed(ctx, f"{path}.gracePeriodSeconds", grace, "integer")
    if isinstance(grace, int) and grace < 0:
        ctx.invalid(f"{path}.gracePeriodSeconds", grace, "must be greater than or equal to 0")
    for k in ("apiVersion", "kind", "propagationPolicy"):
        _typed(ctx, f"{path}.{k}", options.get(k), "string")
    for k in ("orphanDependents", "ignoreStoreReadErrorWithClusterBreakingPotential"):
        _typed(ctx, f"{path}.{k}", options.get(k), "boolean")
    dry_run = options.get("dryRun")
    _typed(ctx, f"{path}.dryRun", dry_run, "array")
    for i, item in enumerate(dry_run or ()):
        _typed(ctx, f"{path}.dryRun[{i}]", item, "string")
    pre = options.get("preconditions")
    _typed(ctx, f"{path}.preconditions", pre, "object")
    if isinstance(pre, Mapping):
        for k in ("resourceVersion", "uid"):
            _typed(ctx, f"{path}.preconditions.{k}", pre.get(k), "string")


def _reservation_options(ctx: Context, path: str, options: object) -> None:
    _typed(ctx, path, options, "object")
    if not isinstance(options, Mapping):
        return
    _object_reference(ctx, f"{path}.reservationRef", options.get("reservationRef"))
    _typed(ctx, f"{path}.template", options.get("template"), "object")
    _typed(ctx, f"{path}.preemptionOptions", options.get("preemptionOptions"), "object")


def _status(ctx: Context, status: object) -> None:
    _typed(ctx, "status", status, "object")
    if not isinstance(status, Mapping):
        return
    for k in ("phase", "status", "reason", "message", "nodeName"):
        _typed(ctx, f"status.{k}", status.get(k), "string")
    phase = status.get("phase")
    if phase and phase not in PHASES:
        ctx.not_supported("status.phase", phase, PHASES)
    conditions = status.get("conditions")
    _typed(ctx, "status.conditions", conditions, "array")
    for i, c in enumerate(conditions or ()):
        cpath = f"status.conditions[{i}]"
        _typed(ctx, cpath, c, "object")
        for k in ("type", "status"):
            if c.get(k) is None:
                ctx.required(f"{cpath}.{k}")
        for k in ("type", "status", "reason", "message", "lastProbeTime", "lastTransitionTime"):
            _typed(ctx, f"{cpath}.{k}", c.get(k), "string")
    _object_reference(ctx, "status.podRef", status.get("podRef"))
    refs = status.get("preemptedPodsRef")
    _typed(ctx, "status.preemptedPodsRef", refs, "array")
    for i, ref in enumerate(refs or ()):
        _object_reference(ctx, f"status.preemptedPodsRef[{i}]", ref)


def validate_pod_migration_job(obj: Mapping[str, Any], ctx: Context) -> None:
    """Validate a PodMigrationJob (the CRD schema, plus mode, ttl and phase values); raises through *ctx*."""
    spec = obj.get("spec")
    if spec is None:
        ctx.required("spec.podRef")
    _typed(ctx, "spec", spec, "object")
    assert isinstance(spec, Mapping)
    if spec.get("podRef") is None:
        ctx.required("spec.podRef")
    _object_reference(ctx, "spec.podRef", spec.get("podRef"))
    _typed(ctx, "spec.paused", spec.get("paused"), "boolean")
    _duration(ctx, "spec.ttl", spec.get("ttl"))
    mode = spec.get("mode")
    _typed(ctx, "spec.mode", mode, "string")
    if mode and mode not in MODES:
        ctx.not_supported("spec.mode", mode, MODES)
    _reservation_options(ctx, "spec.reservationOptions", spec.get("reservationOptions"))
    _delete_options(ctx, "spec.deleteOptions", spec.get("deleteOptions"))
    if obj.get("status") is not None:
        _status(ctx, obj.get("status"))
