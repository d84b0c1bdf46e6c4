"""The migration controller: runs PodMigrationJobs as Koordinator's koord-descheduler MigrationController does
(``pkg/descheduler/controllers/migration/controller.go``), on watch events and clock timers.

A new job first waits for the **arbitration** (`berth.descheduler.migration.filters`): a pod that may never be
moved fails the job (ForbiddenMigratePod); a job over a limit stays Pending (with a ``Requeue`` event) until
the limits allow it, then gets the ``descheduler.koordinator.sh/passed-arbitration`` annotation. The job then
becomes Running and, in ``ReservationFirst`` mode:

1. creates a Reservation for the pod (named after the job's uid; the pod's template; the pod's controller as
   owner; ``allocateOnce``; a required node affinity ``metadata.name NotIn [its node]``; the job's TTL) and
   records it in ``spec.reservationOptions.reservationRef`` (condition ReservationCreated);
2. waits while the Reservation is Pending (copying an Unschedulable message into the ReservationScheduled
   condition), fails the job if it expired (ReservationExpired), cannot be scheduled (Unschedulable) or landed
   on the pod's own node (ForbiddenMigratePod), else records its node (ReservationScheduled);
3. evicts the pod through the eviction API (PodDisruptionBudgets hold: a refusal is retried 3 s later, as is
   the evict rate limit, ``evictQPS``/``evictBurst``) and waits until it is gone (Eviction);
4. waits until a pod binds the Reservation (PodBoundReservation, ReservationBound, ``status.podRef``) and is
   Ready (BoundPodReady), then succeeds (``status.status: Complete``).

``EvictDirectly`` only evicts. A paused job waits. A job past its TTL (``spec.ttl``, else ``defaultJobTTL``;
``0s`` disables it) fails with Timeout and its Reservation is deleted; so is the Reservation of a deleted job.
The pod never leaves before its Reservation is Available elsewhere. Object limiters (``objectLimiters``,
default one per workload over 5 minutes) hold a Running job back while its workload has recently been evicted
from too often.

Berth's differences from Koordinator: jobs are arbitrated in the order they arrive (Koordinator sorts the batch
newest first) and a job waiting for the arbitration also times out (Koordinator's waits until its scavenger
deletes it); a failed job also deletes the Reservation it created (Koordinator: only on timeout or deletion),
so a failed migration holds nothing; waits are driven by watch events and exact timers rather than a 3 s
requeue; the scavenger that deletes old jobs and the ``job-created-by`` ownership check are not implemented
(one controller serves every job, including jobs written by hand).
"""

from __future__ import annotations

import contextlib
import copy
import math
from collections.abc import Mapping
from typing import Any

from berth.api.conditions import is_pod_ready, pod_condition
from berth.api.contracts import Recorder, Store
from berth.api.duration import go_duration
from berth.api.errors import AlreadyExists, NotFound, StatusError, TooManyRequests
from berth.api.podmigrationjob import (
    ANNOTATION_EVICT_REASON,
    ANNOTATION_EVICT_TRIGGER,
    ANNOTATION_PASSED_ARBITRATION,
    CONDITION_BOUND_POD_READY,
    CONDITION_EVICTION,
    CONDITION_POD_BOUND_RESERVATION,
    CONDITION_POD_SCHEDULED,
    CONDITION_RESERVATION_BOUND,
    CONDITION_RESERVATION_CREATED,
    CONDITION_RESERVATION_SCHEDULED,
    CONDITION_STATUS_FALSE,
    CONDITION_STATUS_TRUE,
    LABEL_CREATED_BY,
    MODE_EVICT_DIRECTLY,
    PHASE_FAILED,
    PHASE_PENDING,
    PHASE_RUNNING,
    PHASE_SUCCEEDED,
    PMJ_GROUP,
    PMJ_KEY,
    PMJ_KIND,
    REASON_EVICT_COMPLETE,
    REASON_EVICTING,
    REASON_FAILED_CREATE_RESERVATION,
    REASON_FORBIDDEN_MIGRATE_POD,
    REASON_INVALID_POD_REF,
    REASON_MISSING_POD,
    REASON_MISSING_RESERVATION,
    REASON_RESERVATION_EXPIRED,
    REASON_TIMEOUT,
    REASON_UNSCHEDULABLE,
    REASON_WAIT_FOR_BOUND_POD_READY,
    REASON_WAIT_FOR_POD_BIND_RESERVATION,
    RESERVATION_CREATOR,
    STATUS_COMPLETE,
    is_active_job,
    job_condition,
    job_phase,
    job_pod_ref,
    job_reservation_name,
    job_ttl,
)
from berth.api.reservation import (
    ANNOTATION_RESERVATION_ALLOCATED,
    CONDITION_READY,
    CONDITION_SCHEDULED,
    LABEL_RESERVATION_ORDER,
    REASON_EXPIRED,
    REASON_SCHEDULED,
    RESERVATION_API_VERSION,
    RESERVATION_KEY,
    parse_rfc3339,
)
from berth.api.reservation import PHASE_PENDING as RESERVATION_PENDING
from berth.api.reservation import PHASE_SUCCEEDED as RESERVATION_SUCCEEDED
from berth.clock import Clock, Timer
from berth.descheduler.migration.args import (
    EVICTION_POLICY_DELETE,
    LIMITER_NAMESPACE,
    LIMITER_WORKLOAD,
    MigrationControllerArgs,
    max_unavailable,
)
from berth.descheduler.migration.filters import (
    POD_KEY,
    controller_of,
    expected_replicas,
    has_evict_annotation,
    non_retryable_failure,
    retryable_failure,
)
from berth.store.events import EventRecorder

__all__ = ["DEFAULT_REQUEUE_SECONDS", "MigrationController", "TokenBucket"]

DEFAULT_REQUEUE_SECONDS = 3.0
"""Koordinator's defaultRequeueAfter: how long a refused eviction waits before the next try."""

ACTION = "Migrating"
COMPONENT = "koord-descheduler"

_EMPTY: Mapping[str, Any] = {}
_DROPPED_TEMPLATE_META = ("annotations", "labels", "name", "namespace", "ownerReferences")


class TokenBucket:
    """golang.org/x/time/rate's token bucket on a clock: `rate` tokens per second, at most `burst`, full at first."""

    __slots__ = ("_last", "_tokens", "burst", "rate")

    EPSILON = 1e-9
    """Slack for float arithmetic: a token earned over exactly its period counts as earned."""

    def __init__(self, rate: float, burst: int, now: float) -> None:
        """A full bucket at time `now`."""
        self.rate = rate
        self.burst = max(burst, 1)
        self._tokens = float(self.burst)
        self._last = now

    def _advance(self, now: float) -> None:
        if now > self._last:
            self._tokens = min(float(self.burst), self._tokens + (now - self._last) * self.rate)
            self._last = now

    def tokens(self, now: float) -> float:
        """The tokens available at `now`."""
        self._advance(now)
        return self._tokens

    def has_token(self, now: float) -> bool:
        """Whether a whole token is available at `now`."""
        return self.tokens(now) >= 1.0 - self.EPSILON

    def allow(self, now: float) -> bool:
        """Take one token if there is one (AllowN(now, 1))."""
        if not self.has_token(now):
            return False
        self._tokens = max(self._tokens - 1.0, 0.0)
        return True

    def set_rate(self, rate: float, now: float) -> None:
        """Change the rate from `now` on (tokens earned so far are kept)."""
        self._advance(now)
        self.rate = rate

    def ready_at(self, now: float) -> float:
        """When one token will be available (`now` when it already is; infinity at rate 0)."""
        if self.has_token(now):
            return now
        missing = 1.0 - self._tokens
        return math.inf if self.rate <= 0 else now + missing / self.rate


def _meta(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    md = obj.get("metadata")
    return md if isinstance(md, Mapping) else _EMPTY


def _spec(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    spec = obj.get("spec")
    return spec if isinstance(spec, Mapping) else _EMPTY


def _status(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    status = obj.get("status")
    return status if isinstance(status, Mapping) else _EMPTY


def _quoted(namespace: str, name: str) -> str:
    """Go's ``%q`` of a types.NamespacedName."""
    return f'"{namespace}/{name}"'


def _passed_arbitration(job: Mapping[str, Any]) -> bool:
    return (_meta(job).get("annotations") or _EMPTY).get(ANNOTATION_PASSED_ARBITRATION) == "true"


def _reservation_condition(r: Mapping[str, Any], type_: str, reason: str) -> Mapping[str, Any] | None:
    """GetReservationCondition: the first condition of `type_` (and `reason`, when given)."""
    for c in _status(r).get("conditions") or ():
        if c.get("type") == type_ and (not reason or c.get("reason") == reason):
            return c  # type: ignore[no-any-return]
    return None


def _reservation_pending(r: Mapping[str, Any]) -> bool:
    return (_status(r).get("phase") or "") in ("", RESERVATION_PENDING)


def _reservation_expired(r: Mapping[str, Any]) -> bool:
    if _status(r).get("phase") != PHASE_FAILED:
        return False
    return _reservation_condition(r, CONDITION_READY, REASON_EXPIRED) is not None


def _reservation_scheduled(r: Mapping[str, Any]) -> bool:
    if not _status(r).get("nodeName"):
        return False
    cond = _reservation_condition(r, CONDITION_SCHEDULED, REASON_SCHEDULED)
    return cond is not None and cond.get("status") == "True"


def _bound_pod(r: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """GetBoundPod: the first of ``status.currentOwners``."""
    owners = _status(r).get("currentOwners") or ()
    first = owners[0] if owners else None
    return first if isinstance(first, Mapping) else None


def _migrates_pending_pod(r: Mapping[str, Any]) -> bool:
    """IsMigratePendingPod: some owner names an object only (the pending pod itself)."""
    for owner in _spec(r).get("owners") or ():
        if (
            owner.get("object") is not None
            and owner.get("controller") is None
            and owner.get("labelSelector") is None
        ):
            return True
    return False


def _reserve_owners(pod: Mapping[str, Any]) -> list[dict[str, Any]]:
    """GenerateReserveResourceOwners: an unschedulable pending pod owns it itself, else the pod's controller."""
    md = _meta(pod)
    ns = md.get("namespace") or "default"
    if _status(pod).get("phase") == "Pending":
        scheduled = pod_condition(pod, "PodScheduled")
        if scheduled is not None and scheduled.get("status") == "False":
            return [
                {
                    "object": {
                        "uid": md.get("uid", ""),
                        "kind": "Pod",
                        "name": md.get("name", ""),
                        "namespace": ns,
                    }
                }
            ]
    owner = controller_of(pod)
    if owner is None:
        return []
    return [{"controller": {**copy.deepcopy(dict(owner)), "namespace": ns}}]


def _skip_node_affinity(pod_spec: dict[str, Any], node: str) -> None:
    """appendSkipNodeAffinity: every required node-affinity term also demands ``metadata.name NotIn [node]``."""
    requirement = {"key": "metadata.name", "operator": "NotIn", "values": [node]}
    affinity = pod_spec.setdefault("affinity", {})
    node_affinity = affinity.setdefault("nodeAffinity", {})
    required = node_affinity.setdefault("requiredDuringSchedulingIgnoredDuringExecution", {})
    terms = required.get("nodeSelectorTerms") or []
    for term in terms:
        term.setdefault("matchFields", []).append(copy.deepcopy(requirement))
    if not terms:
        terms = [{"matchFields": [requirement]}]
    required["nodeSelectorTerms"] = terms


class MigrationController:
    """Runs every PodMigrationJob of `store` (see the module docstring); follows Pods, Reservations and
    PodMigrationJobs through `handle_event`, waits with `clock` timers."""

    def __init__(
        self,
        store: Store,
        clock: Clock,
        args: MigrationControllerArgs | None = None,
        *,
        recorder: Recorder | None = None,
    ) -> None:
        """Create the controller; events go to `recorder` (default: Events in `store` from koord-descheduler)."""
        self.store = store
        self.clock = clock
        self.args = args or MigrationControllerArgs()
        self.recorder: Recorder = recorder or EventRecorder(store, COMPONENT)
        self._keys: dict[str, tuple[tuple[str, str], tuple[str, str] | None, str]] = {}
        self._by_pod: dict[tuple[str, str], set[str]] = {}
        self._by_reservation: dict[str, set[str]] = {}
        self._waiting: dict[str, str] = {}  # job name -> why it is held ("" until arbitrated), arrival order
        self._arbitration: Timer | None = None
        self._ttl_timers: dict[str, tuple[float, Timer]] = {}
        self._retry_timers: dict[str, tuple[float, Timer]] = {}
        self._evict_bucket = TokenBucket(self.args.evict_qps, self.args.evict_burst, clock.now())
        self._object_buckets: dict[tuple[str, str], TokenBucket] = {}
        self._last_order = 0

    # ----- public ---------------------------------------------------------------------------------------
    def handle_event(self, type_: str, obj: Mapping[str, Any]) -> None:
        """React to a PodMigrationJob, Pod or Reservation change (other kinds are ignored)."""
        kind = obj.get("kind")
        if kind == "Pod":
            self.handle_pod(type_, obj)
        elif kind == PMJ_KIND and str(obj.get("apiVersion") or "").startswith(PMJ_GROUP + "/"):
            self._on_job(type_, obj)
        elif kind == "Reservation":
            for name in sorted(self._by_reservation.get(str(_meta(obj).get("name") or ""), ())):
                self._reconcile(name)

    def waiting(self) -> dict[str, str]:
        """The jobs held by the arbitration, in arrival order, each with the limit that holds it."""
        return dict(self._waiting)

    def object_limited(self, pod: Mapping[str, Any]) -> bool:
        """checkPodExceedObjectLimiter: the pod's workload (or namespace) was evicted from too often lately."""
        now = self.clock.now()
        for kind, limiter in self.args.object_limiters.items():
            if limiter.duration <= 0:
                continue
            key = self._limiter_key(pod, kind)
            bucket = self._object_buckets.get((kind, key)) if key else None
            if bucket is not None and not bucket.has_token(now):
                return True
        return False

    # ----- events ---------------------------------------------------------------------------------------
    def _on_job(self, type_: str, job: Mapping[str, Any]) -> None:
        name = str(_meta(job).get("name") or "")
        if type_ == "DELETED":
            self._forget(name)
            self._delete_reservation(job)
            self._arbitrate_soon()
            return
        if not is_active_job(job):
            self._forget(name)
            self._arbitrate_soon()
            return
        self._index(name, job)
        if (
            self.args.arbitration_enabled
            and job_phase(job) == PHASE_PENDING
            and not _passed_arbitration(job)
            and name not in self._waiting
        ):
            self._waiting[name] = ""
        self._arbitrate_soon()
        self._reconcile(name)

    def handle_pod(self, type_: str, pod: Mapping[str, Any]) -> None:
        """React to a Pod change: the jobs that name it are reconciled, the waiting ones arbitrated."""
        if not self._by_pod and not self._waiting:
            return  # no job names a pod and none waits: nothing to reconcile or arbitrate
        md = _meta(pod)
        names = self._by_pod.get((md.get("namespace") or "default", md.get("name") or ""))
        for name in sorted(names or ()):
            self._reconcile(name)
        self._arbitrate_soon()

    # ----- indexes and timers ---------------------------------------------------------------------------
    def _index(self, name: str, job: Mapping[str, Any]) -> None:
        ns, pod_name, _ = job_pod_ref(job)
        bound = _status(job).get("podRef")
        bound_key = (
            (str(bound.get("namespace") or "default"), str(bound.get("name") or ""))
            if isinstance(bound, Mapping)
            else None
        )
        keys = ((ns or "default", pod_name), bound_key, job_reservation_name(job))
        if self._keys.get(name) == keys:
            return
        self._unindex(name)
        self._keys[name] = keys
        self._by_pod.setdefault(keys[0], set()).add(name)
        if bound_key is not None:
            self._by_pod.setdefault(bound_key, set()).add(name)
        if keys[2]:
            self._by_reservation.setdefault(keys[2], set()).add(name)

    def _unindex(self, name: str) -> None:
        keys = self._keys.pop(name, None)
        if keys is None:
            return
        for pod_key in (keys[0], keys[1]):
            if pod_key is not None:
                names = self._by_pod.get(pod_key)
                if names is not None:
                    names.discard(name)
                    if not names:
                        del self._by_pod[pod_key]
        if keys[2]:
            names = self._by_reservation.get(keys[2])
            if names is not None:
                names.discard(name)
                if not names:
                    del self._by_reservation[keys[2]]

    def _forget(self, name: str) -> None:
        self._unindex(name)
        self._waiting.pop(name, None)
        for timers in (self._ttl_timers, self._retry_timers):
            current = timers.pop(name, None)
            if current is not None:
                current[1].cancel()

    def _arm(
        self, timers: dict[str, tuple[float, Timer]], name: str, when: float, *, keep_earlier: bool
    ) -> None:
        current = timers.get(name)
        if current is not None:
            if current[0] == when or (keep_earlier and current[0] <= when):
                return
            current[1].cancel()

        def fire() -> None:
            timers.pop(name, None)
            self._reconcile(name)

        timers[name] = (when, self.clock.call_at(when, fire, 7))

    def _retry(self, name: str, delay: float = DEFAULT_REQUEUE_SECONDS) -> None:
        self._arm(self._retry_timers, name, self.clock.now() + delay, keep_earlier=True)

    def _arbitrate_soon(self) -> None:
        if not self._waiting or self._arbitration is not None:
            return
        self._arbitration = self.clock.call_later(self.args.arbitration_interval, self._arbitrate, 7)

    def _clock_time(self, stamp: str) -> float:
        """The clock reading of an RFC 3339 timestamp written by the store (whole seconds)."""
        reference = parse_rfc3339(self.store.timestamp())
        return math.floor(self.clock.now()) + (parse_rfc3339(stamp) - reference).total_seconds()

    # ----- arbitration ----------------------------------------------------------------------------------
    def _arbitrate(self) -> None:
        """doOnceArbitrate: fail the jobs whose pod may never move, pass those within the limits, hold the rest."""
        self._arbitration = None
        for name in list(self._waiting):
            job = self._get_job(name)
            if job is None or job_phase(job) != PHASE_PENDING or _passed_arbitration(job):
                self._waiting.pop(name, None)
                continue
            ns, pod_name, _ = job_pod_ref(job)
            pod = self._get_pod(ns, pod_name) if ns and pod_name else None
            if pod is not None and not has_evict_annotation(job):
                if non_retryable_failure(self.store, pod, self.args) is not None:
                    self._waiting.pop(name, None)
                    self._fail(
                        job,
                        REASON_FORBIDDEN_MIGRATE_POD,
                        f"Pod {_quoted(ns, pod_name)} is forbidden to migrate because it does not meet the requirements",
                    )
                    continue
                why = retryable_failure(self.store, pod, self.args, arbitrating=True)
                if why is not None:
                    if self._waiting.get(name) != why:
                        self._waiting[name] = why
                        self.recorder.event(
                            job, "Warning", "Requeue", f"Failed to retriable filter: {why}", action=ACTION
                        )
                    continue
            self._waiting.pop(name, None)
            annotations = dict(_meta(job).get("annotations") or {})
            annotations[ANNOTATION_PASSED_ARBITRATION] = "true"
            try:
                self.store.update({**job, "metadata": {**_meta(job), "annotations": annotations}})
            except StatusError:
                self._waiting[name] = ""

    # ----- reads ----------------------------------------------------------------------------------------
    def _get_job(self, name: str) -> dict[str, Any] | None:
        try:
            return self.store.get(PMJ_KEY, "", name)
        except NotFound:
            return None

    def _get_pod(self, namespace: str, name: str) -> dict[str, Any] | None:
        try:
            return self.store.get(POD_KEY, namespace, name)
        except NotFound:
            return None

    def _get_reservation(self, name: str) -> dict[str, Any] | None:
        try:
            return self.store.get(RESERVATION_KEY, "", name)
        except NotFound:
            return None

    # ----- writes ---------------------------------------------------------------------------------------
    def _write_status(self, job: Mapping[str, Any], status: Mapping[str, Any]) -> dict[str, Any]:
        clean = {
            k: v
            for k, v in status.items()
            if not (k in ("status", "reason", "message", "nodeName") and v == "")
        }
        return self.store.update_status({**job, "status": clean})

    def _update_condition(
        self, status: dict[str, Any], type_: str, cond_status: str, reason: str = "", message: str = ""
    ) -> bool:
        """util.UpdateCondition: add or replace the condition; True when something changed."""
        now = self.store.timestamp()
        cond: dict[str, Any] = {
            "type": type_,
            "status": cond_status,
            "lastProbeTime": None,
            "lastTransitionTime": now,
        }
        if reason:
            cond["reason"] = reason
        if message:
            cond["message"] = message
        conditions = [dict(c) for c in status.get("conditions") or ()]
        for i, old in enumerate(conditions):
            if old.get("type") != type_:
                continue
            if old.get("status") == cond_status:
                cond["lastTransitionTime"] = old.get("lastTransitionTime")
            equal = all(
                (old.get(k) or "") == (cond.get(k) or "")
                for k in ("status", "reason", "message", "lastProbeTime", "lastTransitionTime")
            )
            conditions[i] = cond
            status["conditions"] = conditions
            return not equal
        conditions.append(cond)
        status["conditions"] = conditions
        return True

    def _set_condition(
        self, job: dict[str, Any], type_: str, cond_status: str, reason: str = "", message: str = ""
    ) -> tuple[dict[str, Any], bool]:
        """updateCondition: a changed condition also becomes the job's ``status.status``/``reason``/``message``."""
        status = dict(_status(job))
        if not self._update_condition(status, type_, cond_status, reason, message):
            return job, False
        status["status"] = type_
        status["reason"] = reason
        status["message"] = message
        return self._write_status(job, status), True

    def _fail(self, job: Mapping[str, Any], reason: str, message: str, *, event: bool = True) -> None:
        """Phase Failed with `reason`/`message` (and a Warning event); the Reservation it created is deleted."""
        status = dict(_status(job))
        status.update(phase=PHASE_FAILED, reason=reason, message=message)
        stored = self._write_status(job, status)
        if event:
            self.recorder.event(stored, "Warning", reason, message, action=ACTION)
        self._delete_reservation(stored, only_own=True)
        self._forget(str(_meta(job).get("name") or ""))

    def _delete_reservation(self, job: Mapping[str, Any], *, only_own: bool = False) -> None:
        name = job_reservation_name(job)
        if not name:
            return
        if only_own:
            r = self._get_reservation(name)
            if r is None or (_meta(r).get("labels") or _EMPTY).get(LABEL_CREATED_BY) != RESERVATION_CREATOR:
                return
        with contextlib.suppress(NotFound):
            self.store.delete(RESERVATION_KEY, "", name)

    # ----- the reconcile loop ---------------------------------------------------------------------------
    def _reconcile(self, name: str) -> None:
        job = self._get_job(name)
        if job is None:
            self._forget(name)
            return
        try:
            self._migrate(job)
        except StatusError:
            self._retry(name)

    def _migrate(self, job: dict[str, Any]) -> None:
        """doMigrate: take the job one or more steps further."""
        name = str(_meta(job).get("name") or "")
        if _spec(job).get("paused"):
            return
        if not is_active_job(job):
            self._forget(name)
            return
        if self._abort_if_timeout(job):
            return
        if job_phase(job) == PHASE_PENDING:
            if self.args.arbitration_enabled and not _passed_arbitration(job):
                return
            prepared = self._prepare_pending(job)
            if prepared is None:
                return
            job = prepared
        self._index(name, job)
        if self._requeue_if_object_limited(job):
            return
        mode = _spec(job).get("mode") or self.args.default_job_mode
        if mode == MODE_EVICT_DIRECTLY:
            self._evict_directly(job)
            return
        reservation_name = job_reservation_name(job)
        if not reservation_name:
            self._create_reservation(job)
            return
        job, _ = self._set_condition(job, CONDITION_RESERVATION_CREATED, CONDITION_STATUS_TRUE)
        reservation = self._get_reservation(reservation_name)
        if reservation is None:
            self._fail(
                job,
                REASON_MISSING_RESERVATION,
                f'Abort job caused by missing Reservation "/{reservation_name}"',
            )
            return
        self._set_reservation_order(reservation)
        job = self._sync_schedule_failed(job, reservation)
        if _reservation_pending(reservation):
            return
        if _reservation_expired(reservation):
            self._fail(job, REASON_RESERVATION_EXPIRED, "Reservation expired", event=False)
            return
        if not _reservation_scheduled(reservation):
            cond = _reservation_condition(reservation, CONDITION_SCHEDULED, REASON_UNSCHEDULABLE)
            self._fail(job, REASON_UNSCHEDULABLE, str((cond or _EMPTY).get("message") or ""), event=False)
            return
        scheduled = self._schedule_success(job, reservation)
        if scheduled is None:
            return
        job = scheduled
        if _migrates_pending_pod(reservation):
            self._wait_pending_pod_scheduled(job)
            return
        done, evicted = self._evict(job)
        if not done or evicted is None:
            return
        job = evicted
        bound = _bound_pod(reservation)
        if not self._true(job, CONDITION_POD_BOUND_RESERVATION) and bound is None:
            job, changed = self._set_condition(
                job,
                CONDITION_POD_BOUND_RESERVATION,
                CONDITION_STATUS_FALSE,
                REASON_WAIT_FOR_POD_BIND_RESERVATION,
            )
            if changed:
                self.recorder.event(
                    job,
                    "Normal",
                    REASON_WAIT_FOR_POD_BIND_RESERVATION,
                    "Waiting for Pod bind Reservation",
                    action=ACTION,
                )
            return
        if bound is None:
            return
        bound_ref = {k: bound.get(k) for k in ("namespace", "name", "uid") if bound.get(k)}
        bound_ns, bound_name = str(bound.get("namespace") or "default"), str(bound.get("name") or "")
        job = self._bound_success(job, bound_ref, bound_ns, bound_name)
        self._index(name, job)
        if not self._true(job, CONDITION_BOUND_POD_READY):
            pod = self._get_pod(bound_ns, bound_name)
            if pod is not None and not is_pod_ready(pod):
                job, changed = self._set_condition(
                    job, CONDITION_BOUND_POD_READY, CONDITION_STATUS_FALSE, REASON_WAIT_FOR_BOUND_POD_READY
                )
                if changed:
                    self.recorder.event(
                        job,
                        "Normal",
                        REASON_WAIT_FOR_BOUND_POD_READY,
                        f"Waiting for Bound Pod {bound_ns}/{bound_name} Ready",
                        action=ACTION,
                    )
                return
        self.recorder.event(
            job,
            "Normal",
            "BoundPodReady",
            f"Bind pod {_quoted(bound_ns, bound_name)} is ready",
            action=ACTION,
        )
        job, _ = self._set_condition(job, CONDITION_BOUND_POD_READY, CONDITION_STATUS_TRUE)
        status = dict(_status(job))
        message = f'Bind Pod {_quoted(bound_ns, bound_name)} in Reservation "{reservation_name}"'
        status.update(
            podRef=bound_ref, phase=PHASE_SUCCEEDED, status=STATUS_COMPLETE, reason="", message=message
        )
        self._update_condition(
            status, CONDITION_POD_BOUND_RESERVATION, CONDITION_STATUS_TRUE, message=message
        )
        stored = self._write_status(job, status)
        self.recorder.event(stored, "Normal", "Complete", message, action=ACTION)
        self._forget(name)

    @staticmethod
    def _true(job: Mapping[str, Any], type_: str) -> bool:
        cond = job_condition(job, type_)
        return cond is not None and cond.get("status") == CONDITION_STATUS_TRUE

    # ----- steps ----------------------------------------------------------------------------------------
    def _abort_if_timeout(self, job: dict[str, Any]) -> bool:
        """abortJobIfTimeout (with ``defaultJobTTL`` for a job without ``ttl``); arms the TTL timer otherwise."""
        name = str(_meta(job).get("name") or "")
        try:
            ttl = job_ttl(job, self.args.default_job_ttl)
        except ValueError:
            return False
        created = _meta(job).get("creationTimestamp")
        if ttl <= 0 or not isinstance(created, str):
            return False
        try:
            deadline = self._clock_time(created) + ttl
        except ValueError:
            return False
        if self.clock.now() < deadline:
            self._arm(self._ttl_timers, name, deadline, keep_earlier=False)
            return False
        self._delete_reservation(job)
        status = dict(_status(job))
        status.update(phase=PHASE_FAILED, reason=REASON_TIMEOUT, message="Abort job caused by timeout")
        stored = self._write_status(job, status)
        self.recorder.event(stored, "Warning", REASON_TIMEOUT, "Abort job caused by timeout", action=ACTION)
        self._forget(name)
        return True

    def _prepare_pending(self, job: dict[str, Any]) -> dict[str, Any] | None:
        """preparePendingJob: check the pod, record its uid in ``spec.podRef``, phase Running."""
        ns, pod_name, uid = job_pod_ref(job)
        if not ns or not pod_name:
            self._fail(job, REASON_INVALID_POD_REF, "Abort job caused by invalid PodRef")
            return None
        pod = self._get_pod(ns, pod_name)
        if pod is None:
            self._fail(job, REASON_MISSING_POD, f"Abort job caused by missing Pod {_quoted(ns, pod_name)}")
            return None
        pod_uid = str(_meta(pod).get("uid") or "")
        if uid != pod_uid:
            spec = copy.deepcopy(dict(_spec(job)))
            spec["podRef"] = {**spec.get("podRef", {}), "uid": pod_uid}
            job = self.store.update({**job, "spec": spec})
        status = dict(_status(job))
        status["phase"] = PHASE_RUNNING
        return self._write_status(job, status)

    def _limiter_key(self, pod: Mapping[str, Any], kind: str) -> str:
        if kind == LIMITER_WORKLOAD:
            owner = controller_of(pod)
            return str(owner.get("uid") or "") if owner is not None else ""
        if kind == LIMITER_NAMESPACE:
            return str(_meta(pod).get("namespace") or "default")
        return ""

    def _requeue_if_object_limited(self, job: Mapping[str, Any]) -> bool:
        """requeueJobIfObjectLimiterFailed: wait (for the next token) while the pod's workload is limited."""
        if has_evict_annotation(job):
            return False
        ns, pod_name, _ = job_pod_ref(job)
        pod = self._get_pod(ns, pod_name)
        if pod is None or not self.object_limited(pod):
            return False
        now = self.clock.now()
        ready = now
        for kind in self.args.object_limiters:
            bucket = self._object_buckets.get((kind, self._limiter_key(pod, kind)))
            if bucket is not None:
                ready = max(ready, bucket.ready_at(now))
        if math.isfinite(ready):
            self._arm(self._retry_timers, str(_meta(job).get("name") or ""), ready, keep_earlier=True)
        return True

    def _track_evicted(self, pod: Mapping[str, Any]) -> None:
        """trackEvictedPod: take a token from the pod's object limiters."""
        now = self.clock.now()
        for kind, limiter in self.args.object_limiters.items():
            if limiter.duration <= 0:
                continue
            key = self._limiter_key(pod, kind)
            if not key:
                continue
            if kind == LIMITER_NAMESPACE:
                most = limiter.max_migrating if isinstance(limiter.max_migrating, int) else 0
            else:
                value = limiter.max_migrating or self.args.max_migrating_per_workload
                most = max_unavailable(expected_replicas(self.store, pod), value)
            if most <= 0:
                return
            rate = most / limiter.duration
            bucket = self._object_buckets.get((kind, key))
            if bucket is None:
                bucket = self._object_buckets[(kind, key)] = TokenBucket(rate, limiter.burst or 1, now)
            elif bucket.rate != rate:
                bucket.set_rate(rate, now)
            bucket.allow(now)

    def _create_reservation(self, job: dict[str, Any]) -> None:
        """createReservation: the Reservation for the pod, then ``spec.reservationOptions.reservationRef``."""
        ns, pod_name, _ = job_pod_ref(job)
        pod = self._get_pod(ns, pod_name)
        if pod is None:
            self._fail(job, REASON_MISSING_POD, f"Abort job caused by missing Pod {_quoted(ns, pod_name)}")
            return
        options = self._reservation_options(job, pod)
        template = options["template"]
        r_name = str((template.get("metadata") or {}).get("name") or "")
        obj = {
            "apiVersion": RESERVATION_API_VERSION,
            "kind": "Reservation",
            "metadata": template.get("metadata") or {},
            "spec": template.get("spec") or {},
        }
        try:
            try:
                reservation = self.store.create(obj)
            except AlreadyExists:
                reservation = self.store.get(RESERVATION_KEY, "", r_name)
        except StatusError as e:
            message = f"Failed to create Reservation caused by {e}"
            job, changed = self._set_condition(
                job,
                CONDITION_RESERVATION_CREATED,
                CONDITION_STATUS_FALSE,
                REASON_FAILED_CREATE_RESERVATION,
                message,
            )
            if changed:
                self.recorder.event(job, "Warning", REASON_FAILED_CREATE_RESERVATION, message, action=ACTION)
            self._retry(str(_meta(job).get("name") or ""))
            return
        r_meta = _meta(reservation)
        options["reservationRef"] = {
            "kind": "Reservation",
            "apiVersion": RESERVATION_API_VERSION,
            "name": r_meta.get("name", ""),
            "uid": r_meta.get("uid", ""),
        }
        spec = copy.deepcopy(dict(_spec(job)))
        spec["reservationOptions"] = options
        stored = self.store.update({**job, "spec": spec})
        self.recorder.event(
            stored,
            "Normal",
            CONDITION_RESERVATION_CREATED,
            f'Successfully create Reservation "{r_meta.get("name", "")}"',
            action=ACTION,
        )

    def _reservation_options(self, job: Mapping[str, Any], pod: Mapping[str, Any]) -> dict[str, Any]:
        """CreateOrUpdateReservationOptions: the job's options completed from the pod."""
        options = copy.deepcopy(dict(_spec(job).get("reservationOptions") or {}))
        pod_meta = _meta(pod)
        template_meta = {k: copy.deepcopy(pod_meta[k]) for k in _DROPPED_TEMPLATE_META if pod_meta.get(k)}
        annotations = template_meta.get("annotations")
        if annotations:
            annotations.pop(ANNOTATION_RESERVATION_ALLOCATED, None)
            if not annotations:
                del template_meta["annotations"]
        pod_template = {"metadata": template_meta, "spec": copy.deepcopy(dict(_spec(pod)))}
        job_uid = str(_meta(job).get("uid") or "")
        template = options.get("template")
        if not isinstance(template, dict):
            template = {
                "metadata": {"name": job_uid},
                "spec": {"template": pod_template, "owners": _reserve_owners(pod)},
            }
        else:
            template_md = template.setdefault("metadata", {})
            if not template_md.get("name"):
                template_md["name"] = job_uid
            spec = template.setdefault("spec", {})
            if spec.get("template") is None:
                spec["template"] = pod_template
            if not spec.get("owners"):
                spec["owners"] = _reserve_owners(pod)
        spec = template["spec"]
        if not spec.get("owners"):
            spec.pop("owners", None)
        spec["allocateOnce"] = True
        template_spec = spec["template"].setdefault("spec", {})
        template_spec.pop("nodeName", None)
        labels = template["metadata"].setdefault("labels", {})
        labels[LABEL_CREATED_BY] = RESERVATION_CREATOR
        labels[LABEL_RESERVATION_ORDER] = self._next_order()
        ttl = job_ttl(job, self.args.default_job_ttl)
        if spec.get("ttl") is None and spec.get("expires") is None and ttl > 0:
            spec["ttl"] = go_duration(ttl)
        node = _spec(pod).get("nodeName")
        if node:
            _skip_node_affinity(template_spec, str(node))
        options["template"] = template
        return options

    def _next_order(self) -> str:
        """A ``reservation-order`` label value: Unix milliseconds, strictly increasing, so that of two
        Reservations of one workload the older one is preferred (its replacement pod takes it)."""
        self._last_order = max(self.store.now_nanos() // 1_000_000, self._last_order + 1)
        return str(self._last_order)

    def _set_reservation_order(self, reservation: Mapping[str, Any]) -> None:
        """setReservationOrder: a given Reservation gets the ``reservation-order`` label when it has none."""
        labels = dict(_meta(reservation).get("labels") or {})
        if LABEL_RESERVATION_ORDER in labels:
            return
        labels[LABEL_RESERVATION_ORDER] = self._next_order()
        self.store.update({**reservation, "metadata": {**_meta(reservation), "labels": labels}})

    def _sync_schedule_failed(self, job: dict[str, Any], reservation: Mapping[str, Any]) -> dict[str, Any]:
        """syncReservationScheduleFailed: the Reservation's Unschedulable message on ReservationScheduled."""
        if self._true(job, CONDITION_RESERVATION_SCHEDULED):
            return job
        cond = _reservation_condition(reservation, CONDITION_SCHEDULED, REASON_UNSCHEDULABLE)
        if cond is None:
            return job
        message = str(cond.get("message") or "")
        job, changed = self._set_condition(
            job, CONDITION_RESERVATION_SCHEDULED, CONDITION_STATUS_FALSE, REASON_UNSCHEDULABLE, message
        )
        if changed:
            self.recorder.event(job, "Warning", REASON_UNSCHEDULABLE, message, action=ACTION)
        return job

    def _schedule_success(self, job: dict[str, Any], reservation: Mapping[str, Any]) -> dict[str, Any] | None:
        """prepareJobWithReservationScheduleSuccess: record the node, or fail when it is the pod's own."""
        node = str(_status(reservation).get("nodeName") or "")
        if not node or _status(job).get("nodeName") or self._true(job, CONDITION_RESERVATION_SCHEDULED):
            return job
        ns, pod_name, _ = job_pod_ref(job)
        pod = self._get_pod(ns, pod_name)
        r_name = str(_meta(reservation).get("name") or "")
        if pod is not None and _spec(pod).get("nodeName") == node:
            self._fail(
                job,
                REASON_FORBIDDEN_MIGRATE_POD,
                f'Scheduler assignes the Reservation "{r_name}" on the same node as the Pod',
            )
            return None
        status = dict(_status(job))
        status["nodeName"] = node
        job = {**job, "status": status}
        job, changed = self._set_condition(job, CONDITION_RESERVATION_SCHEDULED, CONDITION_STATUS_TRUE)
        if changed:
            self.recorder.event(
                job,
                "Normal",
                CONDITION_RESERVATION_SCHEDULED,
                f'Assigned Reservation "{r_name}" to node "{node}"',
                action=ACTION,
            )
        return job

    def _wait_pending_pod_scheduled(self, job: dict[str, Any]) -> None:
        """waitForPendingPodScheduled: a pending pod's job succeeds once the pod is scheduled."""
        ns, pod_name, _ = job_pod_ref(job)
        pod = self._get_pod(ns, pod_name)
        if pod is None:
            self._fail(job, REASON_MISSING_POD, f"Abort job caused by missing Pod {_quoted(ns, pod_name)}")
            return
        scheduled = pod_condition(pod, "PodScheduled")
        if scheduled is None or scheduled.get("status") == "False":
            if self._abort_if_bound_by_another(job, pod):
                return
            message = str((scheduled or _EMPTY).get("message") or "")
            self._set_condition(
                job, CONDITION_POD_SCHEDULED, CONDITION_STATUS_FALSE, REASON_UNSCHEDULABLE, message
            )
            return
        status = dict(_status(job))
        message = f'Assign Pod {_quoted(ns, pod_name)} to node "{_spec(pod).get("nodeName") or ""}"'
        status.update(phase=PHASE_SUCCEEDED, status=STATUS_COMPLETE, reason="", message=message)
        self._update_condition(status, CONDITION_POD_SCHEDULED, CONDITION_STATUS_TRUE)
        stored = self._write_status(job, status)
        self.recorder.event(stored, "Normal", "Complete", message, action=ACTION)
        self._forget(str(_meta(job).get("name") or ""))

    def _abort_if_bound_by_another(self, job: dict[str, Any], pod: Mapping[str, Any] | None) -> bool:
        """abortJobIfReservationBoundByAnotherPod."""
        name = job_reservation_name(job)
        if not name:
            return False
        reservation = self._get_reservation(name)
        if reservation is None:
            self._fail(job, REASON_MISSING_RESERVATION, f'Abort job caused by missing Reservation "/{name}"')
            return True
        if _status(reservation).get("phase") != RESERVATION_SUCCEEDED:
            return False
        bound = _bound_pod(reservation)
        if pod is not None and bound is not None and bound.get("uid") == _meta(pod).get("uid"):
            return False
        self._fail(job, REASON_FORBIDDEN_MIGRATE_POD, "Reservation is already bound by another Pod")
        return True

    def _evict_directly(self, job: dict[str, Any]) -> None:
        """evictPodDirectly."""
        done, evicted = self._evict(job)
        if not done or evicted is None:
            return
        ns, pod_name, _ = job_pod_ref(evicted)
        status = dict(_status(evicted))
        status.update(
            phase=PHASE_SUCCEEDED,
            status=STATUS_COMPLETE,
            reason="",
            message=f"Pod {_quoted(ns, pod_name)} has been evicted",
        )
        self._write_status(evicted, status)
        self._forget(str(_meta(job).get("name") or ""))

    def _evict(self, job: dict[str, Any]) -> tuple[bool, dict[str, Any] | None]:
        """evictPod: (done, job); the pod is evicted once, then the job waits until it is gone."""
        cond = job_condition(job, CONDITION_EVICTION)
        if cond is not None and cond.get("status") == CONDITION_STATUS_TRUE:
            return True, job
        ns, pod_name, uid = job_pod_ref(job)
        pod = self._get_pod(ns, pod_name)
        if pod is None or (cond is not None and uid and uid != _meta(pod).get("uid")):
            if _status(job).get("status") != CONDITION_EVICTION:
                self._fail(
                    job, REASON_MISSING_POD, f"Abort job caused by missing Pod {_quoted(ns, pod_name)}"
                )
                return False, None
            job, _ = self._set_condition(
                job, CONDITION_EVICTION, CONDITION_STATUS_TRUE, REASON_EVICT_COMPLETE
            )
            self.recorder.event(
                job,
                "Normal",
                REASON_EVICT_COMPLETE,
                f"Pod {_quoted(ns, pod_name)} has been evicted",
                action=ACTION,
            )
            return True, job
        if cond is not None and cond.get("reason") == REASON_EVICTING:
            return False, job
        if self._abort_if_bound_by_another(job, None):
            return False, None
        name = str(_meta(job).get("name") or "")
        error = self._evict_pod(job, pod)
        if error is not None:
            self.recorder.event(
                job,
                "Warning",
                REASON_EVICTING,
                f"Failed evict Pod {_quoted(ns, pod_name)} caused by {error[0]}",
                action=ACTION,
            )
            self._retry(name, error[1])
            return False, job
        self._track_evicted(pod)
        annotations = _meta(job).get("annotations") or _EMPTY
        reason = (
            annotations.get(ANNOTATION_EVICT_REASON) or annotations.get(ANNOTATION_EVICT_TRIGGER) or "NotSet"
        )
        node = _spec(pod).get("nodeName") or ""
        self.recorder.event(
            pod,
            "Normal",
            "Descheduled",
            f'Pod evicted from node "{node}" by the reason "{reason}"',
            action=ACTION,
        )
        message = f'Pod {_quoted(ns, pod_name)} evicted from node "{node}" by the reason "{reason}"'
        job, changed = self._set_condition(
            job, CONDITION_EVICTION, CONDITION_STATUS_FALSE, REASON_EVICTING, message
        )
        if changed:
            self.recorder.event(job, "Normal", REASON_EVICTING, message, action=ACTION)
        return False, job

    def _evict_pod(self, job: Mapping[str, Any], pod: Mapping[str, Any]) -> tuple[str, float] | None:
        """The evictor: the evict rate limit, then the eviction API (or a delete); (error, retry delay) or None."""
        now = self.clock.now()
        if not self._evict_bucket.allow(now):
            return "TooManyEvictions", max(
                self._evict_bucket.ready_at(now) - now, 0.0
            ) or DEFAULT_REQUEUE_SECONDS
        options = _spec(job).get("deleteOptions") or self.args.default_delete_options or _EMPTY
        grace = options.get("gracePeriodSeconds")
        grace = grace if isinstance(grace, int) and not isinstance(grace, bool) else None
        md = _meta(pod)
        ns, name = str(md.get("namespace") or "default"), str(md.get("name") or "")
        try:
            if self.args.eviction_policy == EVICTION_POLICY_DELETE:
                self.store.delete(POD_KEY, ns, name, grace_period_seconds=grace)
            else:
                self.store.evict(ns, name, grace_period_seconds=grace)
        except TooManyRequests as e:
            delay = max(float(e.retry_after_seconds), DEFAULT_REQUEUE_SECONDS)
            return f'error when evicting pod (ignoring) "{name}": {e}', delay
        except NotFound as e:
            return f'pod not found when evicting "{name}": {e}', DEFAULT_REQUEUE_SECONDS
        except StatusError as e:
            return str(e), DEFAULT_REQUEUE_SECONDS
        return None

    def _bound_success(
        self, job: dict[str, Any], bound_ref: dict[str, Any], ns: str, name: str
    ) -> dict[str, Any]:
        """handleReservationBoundSuccess: condition ReservationBound and ``status.podRef``."""
        status = dict(_status(job))
        updated = self._update_condition(status, CONDITION_RESERVATION_BOUND, CONDITION_STATUS_TRUE)
        if status.get("podRef") is None or updated:
            status["podRef"] = bound_ref
            job = self._write_status(job, status)
            self.recorder.event(
                job,
                "Normal",
                "PodBoundReservation",
                f"Reservation bound by pod {_quoted(ns, name)}",
                action=ACTION,
            )
        return job
