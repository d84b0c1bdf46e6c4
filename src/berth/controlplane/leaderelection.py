"""Leader election on a ``coordination.k8s.io/v1`` Lease, as client-go's ``tools/leaderelection`` does it.

Several replicas of a component (``berth run``) are candidates for one Lease; the one whose identity is the
Lease's ``spec.holderIdentity`` leads, the others stand by. The rules are client-go's (``LeaderElector`` with a
``LeaseLock``), on Berth's `Store` and `Clock` instead of goroutines: every wait is a timer, every step runs to
completion on the clock's thread.

* **Acquiring.** A candidate tries at once, then every `retry_period` plus a jitter of up to
  ``JITTER_FACTOR * retry_period`` (``wait.JitterUntil``). It takes the Lease when the Lease is absent
  (create), held by nobody (``holderIdentity`` empty), held by itself, or expired. Expiry is judged on the
  *local* clock: the Lease counts as held for its ``leaseDurationSeconds`` after the moment this candidate last
  saw its record change; ``renewTime`` is written but never trusted, so clock skew between replicas does not
  matter. Taking over from someone else increments ``leaseTransitions`` and sets ``acquireTime``.
* **Leading.** On success `on_started_leading` runs and the renew loop starts at once: every `retry_period`
  the leader rewrites ``renewTime`` (first optimistically with the Lease it last wrote; on any failure, for
  example a Conflict, it reads the Lease and tries again). A round of renewal that has not succeeded within
  `renew_deadline` ends the leadership: `is_leader` turns false and `on_stopped_leading` runs. The component
  must stop acting then; the elector is finished (client-go's ``Run`` returns; kube-scheduler exits) until
  `start()` is called again.
* **Optimistic concurrency.** Every write carries the ``resourceVersion`` it read: of two candidates racing
  for an expired Lease one wins, the other gets Conflict (or AlreadyExists on creation) and, at its next
  try, sees the winner's fresh record.
* **Release.** With `release_on_cancel` (client-go's ``ReleaseOnCancel``), `stop()` of a leader, and the end
  of a lost leadership, write the Lease with an empty ``holderIdentity`` and ``leaseDurationSeconds`` 1 (the
  transitions kept), so a standby takes over at its next try instead of waiting out the lease.

Times in the Lease are metav1.MicroTime (``2006-01-02T15:04:05.000000Z``) of the store's wall clock
(`Store.now_nanos`), as client-go writes them.

Three deliberate differences from client-go, all on the safe side and invisible to the other replicas:

* `is_leader` is true only from `on_started_leading` to `on_stopped_leading`, and it also turns false by
  itself once the current round's renew deadline has passed on the clock (even if the loop is late because
  the process was busy), so code that checks it before acting never acts on a Lease it may have lost.
  client-go's ``IsLeader`` only compares the last observed holder.
* A leader that reads the Lease and finds it validly held by another identity steps down at once; client-go
  keeps retrying until the renew deadline, although its ``IsLeader`` is already false.
* `on_stopped_leading` runs only after a leadership (once per `on_started_leading`), and before the Lease is
  released, so nothing guarded by the Lease still runs when a standby can take it; client-go calls it
  whenever ``Run`` returns, after the release.

Safety needs ``renew_deadline + retry_period <= lease_duration`` (kube-scheduler's 10 s + 2 s < 15 s): a leader
that cannot renew stops acting at the latest `renew_deadline + retry_period` after it sent its last successful
renewal, and no standby takes over sooner than `lease_duration` after the server applied it.
"""

from __future__ import annotations

import logging
import random
import socket
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from berth.api.contracts import Recorder, Store
from berth.api.errors import NotFound, StatusError
from berth.clock import Clock, Timer

__all__ = [
    "DEFAULT_LEASE_DURATION",
    "DEFAULT_NAME",
    "DEFAULT_NAMESPACE",
    "DEFAULT_RENEW_DEADLINE",
    "DEFAULT_RETRY_PERIOD",
    "JITTER_FACTOR",
    "LEASE_KEY",
    "LeaderElector",
    "default_identity",
    "micro_time",
]

log = logging.getLogger(__name__)

LEASE_KEY = ("coordination.k8s.io", "Lease")
"""The store key of the Lease kind."""
DEFAULT_NAMESPACE = "kube-system"
"""kube-scheduler's ``--leader-elect-resource-namespace``."""
DEFAULT_NAME = "berth-scheduler"
"""The Lease Berth's replicas compete for (kube-scheduler's is ``kube-scheduler``)."""
DEFAULT_LEASE_DURATION = 15.0
"""kube-scheduler's ``--leader-elect-lease-duration``, seconds."""
DEFAULT_RENEW_DEADLINE = 10.0
"""kube-scheduler's ``--leader-elect-renew-deadline``, seconds."""
DEFAULT_RETRY_PERIOD = 2.0
"""kube-scheduler's ``--leader-elect-retry-period``, seconds."""
JITTER_FACTOR = 1.2
"""client-go's ``leaderelection.JitterFactor``: an acquire retry waits ``retry_period * (1 + JITTER_FACTOR * U[0,1))``."""

_MICRO_TIME_FORMAT = "%Y-%m-%dT%H:%M:%S.%fZ"


def micro_time(nanos: int) -> str:
    """metav1.MicroTime of `nanos` since the Unix epoch: RFC 3339 with six fractional digits, UTC.

    The nanoseconds are rounded to the nearest microsecond (Go truncates), so that a time derived from a float
    clock, as the embedded store's is, does not read one microsecond early."""
    seconds, micros = divmod((nanos + 500) // 1000, 1_000_000)
    return datetime.fromtimestamp(seconds, UTC).replace(microsecond=micros).strftime(_MICRO_TIME_FORMAT)


def default_identity() -> str:
    """A candidate identity unique to this process: ``<hostname>_<uuid>``, as kube-scheduler makes its own."""
    return f"{socket.gethostname()}_{uuid.uuid4()}"


def _int(value: object) -> int:
    """An integer field of the Lease spec (0 when absent or not an integer)."""
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


@dataclass(frozen=True, slots=True)
class _Record:
    """The leader election record a Lease spec carries (client-go's ``LeaderElectionRecord``)."""

    holder: str = ""
    duration: int = 0
    acquire_time: str | None = None
    renew_time: str | None = None
    transitions: int = 0

    @classmethod
    def of(cls, lease: Mapping[str, Any]) -> _Record:
        """The record of a stored Lease (absent or malformed fields read as their zero value)."""
        spec = lease.get("spec")
        if not isinstance(spec, Mapping):
            spec = {}
        holder = spec.get("holderIdentity")
        acquire = spec.get("acquireTime")
        renew = spec.get("renewTime")
        return cls(
            holder=holder if isinstance(holder, str) else "",
            duration=_int(spec.get("leaseDurationSeconds")),
            acquire_time=acquire if isinstance(acquire, str) else None,
            renew_time=renew if isinstance(renew, str) else None,
            transitions=_int(spec.get("leaseTransitions")),
        )

    def spec(self) -> dict[str, Any]:
        """The Lease spec that records this (client-go's ``LeaderElectionRecordToLeaseSpec``)."""
        spec: dict[str, Any] = {"holderIdentity": self.holder, "leaseDurationSeconds": self.duration}
        if self.acquire_time is not None:
            spec["acquireTime"] = self.acquire_time
        if self.renew_time is not None:
            spec["renewTime"] = self.renew_time
        spec["leaseTransitions"] = self.transitions
        return spec


def _validate(
    lease_duration: float,
    renew_deadline: float,
    retry_period: float,
    identity: str,
    namespace: str,
    name: str,
) -> None:
    """client-go's ``NewLeaderElector`` checks (plus whole-second leases and a named Lease); ValueError."""
    if lease_duration <= renew_deadline:
        raise ValueError(
            f"leaseDuration must be greater than renewDeadline (lease_duration={lease_duration:g}s, "
            f"renew_deadline={renew_deadline:g}s)"
        )
    if renew_deadline <= JITTER_FACTOR * retry_period:
        raise ValueError(
            f"renewDeadline must be greater than retryPeriod*JitterFactor (renew_deadline={renew_deadline:g}s, "
            f"retry_period={retry_period:g}s, JitterFactor={JITTER_FACTOR:g})"
        )
    if lease_duration < 1:
        raise ValueError(
            f"leaseDuration must be at least 1s: the Lease records whole seconds (lease_duration={lease_duration:g}s)"
        )
    if renew_deadline <= 0:
        raise ValueError(f"renewDeadline must be greater than zero (renew_deadline={renew_deadline:g}s)")
    if retry_period <= 0:
        raise ValueError(f"retryPeriod must be greater than zero (retry_period={retry_period:g}s)")
    if not identity:
        raise ValueError("Lock identity is empty")
    if not name or not namespace:
        raise ValueError(f"the Lease needs a namespace and a name (namespace={namespace!r}, name={name!r})")


class LeaderElector:
    """One candidate for the leadership recorded in Lease `namespace`/`name` (see the module's documentation).

    `start()` enters the election; the callbacks run on the clock's thread, inside `Clock.step()` (or inside
    `stop()` for `on_stopped_leading`). `on_new_leader(identity)` reports each change of the observed holder
    (including the first, and ``""`` after a release). `rng` draws the retry jitter (seed it for repeatable
    simulations); `recorder` gets client-go's ``LeaderElection`` events (``<identity> became leader``,
    ``<identity> stopped leading``) on the Lease.
    """

    def __init__(
        self,
        store: Store,
        clock: Clock,
        *,
        identity: str,
        on_started_leading: Callable[[], None],
        on_stopped_leading: Callable[[], None],
        on_new_leader: Callable[[str], None] | None = None,
        namespace: str = DEFAULT_NAMESPACE,
        name: str = DEFAULT_NAME,
        lease_duration: float = DEFAULT_LEASE_DURATION,
        renew_deadline: float = DEFAULT_RENEW_DEADLINE,
        retry_period: float = DEFAULT_RETRY_PERIOD,
        release_on_cancel: bool = True,
        rng: random.Random | None = None,
        recorder: Recorder | None = None,
    ) -> None:
        """Validate the timings as client-go does (ValueError naming the rule broken) and wait for `start()`."""
        _validate(lease_duration, renew_deadline, retry_period, identity, namespace, name)
        self.store = store
        self.clock = clock
        self.identity = identity
        self.namespace = namespace
        self.name = name
        self.lease_duration = float(lease_duration)
        self.renew_deadline = float(renew_deadline)
        self.retry_period = float(retry_period)
        self.release_on_cancel = release_on_cancel
        self._on_started = on_started_leading
        self._on_stopped = on_stopped_leading
        self._on_new_leader = on_new_leader
        self._rng = rng if rng is not None else random.Random()
        self._recorder = recorder
        # What this candidate last saw of the Lease, and when (local clock): client-go's observedRecord/Time.
        self._observed = _Record()
        self._observed_time = float("-inf")
        self._lease: dict[str, Any] | None = None  # the Lease as last read or written (its resourceVersion)
        self._reported_leader = ""
        self._running = False
        self._leading = False
        self._deadline = float("-inf")  # when the current (or next) renew round gives up
        self._timer: Timer | None = None  # the next try
        self._deadline_timer: Timer | None = None

    # ----- public surface ------------------------------------------------------------------------------
    @property
    def description(self) -> str:
        """``namespace/name`` of the Lease (client-go's ``Describe``)."""
        return f"{self.namespace}/{self.name}"

    @property
    def running(self) -> bool:
        """True from `start()` until `stop()` or the loss of the leadership."""
        return self._running

    @property
    def is_leader(self) -> bool:
        """True while this candidate leads: after `on_started_leading`, before `on_stopped_leading`, and never
        past the renew deadline of the current round (checked on the clock, so a late loop cannot extend it)."""
        return self._leading and self.clock.now() < self._deadline

    @property
    def leader(self) -> str:
        """The identity of the last observed holder ("" when none was observed or the Lease was released)."""
        return self._observed.holder

    def start(self) -> None:
        """Enter the election: the first try runs at the clock's next step. Restarting after `stop()` or a lost
        leadership is allowed; a running elector is left as it is."""
        if self._running:
            return
        self._running = True
        log.info("attempting to acquire leader lease %s...", self.description)
        self._timer = self.clock.call_later(0.0, self._acquire_tick)

    def stop(self) -> None:
        """Leave the election (client-go's context cancelled): no more tries; a leader stops leading
        (`on_stopped_leading`) and then, with `release_on_cancel`, releases the Lease."""
        if not self._running:
            return
        self._finish("stopped")

    def check(self, max_tolerable_expired_lease: float) -> str | None:
        """client-go's ``HealthzAdaptor`` check: an error message when this candidate leads but has not
        renewed for more than `lease_duration` + `max_tolerable_expired_lease` (a stuck loop); else None."""
        if not self._leading or self._observed.holder != self.identity:
            return None
        if self.clock.now() - self._observed_time > self.lease_duration + max_tolerable_expired_lease:
            return f"failed election to renew leadership on lease {self.description}"
        return None

    # ----- the loops ----------------------------------------------------------------------------------
    def _acquire_tick(self) -> None:
        """One try of the acquire loop (client-go's ``acquire``, one ``JitterUntil`` iteration)."""
        self._timer = None
        began = self.clock.now()
        succeeded = self._try_acquire_or_renew()
        self._maybe_report_transition()
        if not self._running:
            return
        if not succeeded:
            wait = self.retry_period * (1.0 + JITTER_FACTOR * self._rng.random())
            log.debug("failed to acquire lease %s; next try in %.3fs", self.description, wait)
            self._timer = self.clock.call_later(wait, self._acquire_tick)
            return
        log.info("successfully acquired lease %s", self.description)
        self._record_event("became leader")
        self._leading = True
        # The renew loop starts at once (``wait.Until`` runs its first round immediately). Deadlines count from
        # when the successful write was sent: the server may have applied it, and others seen it, before it
        # returned.
        self._deadline = began + self.renew_deadline
        self._timer = self.clock.call_later(0.0, self._renew_round)
        self._on_started()

    def _renew_round(self) -> None:
        """Start a renew round: retries every `retry_period` until success or the round's deadline."""
        self._timer = None
        self._deadline_timer = self.clock.call_at(self._deadline, self._renew_timed_out)
        self._renew_try()

    def _renew_try(self) -> None:
        """One try of the current renew round (client-go's ``PollImmediateUntil`` condition)."""
        self._timer = None
        began = self.clock.now()
        succeeded = self._try_acquire_or_renew()
        self._maybe_report_transition()
        if not self._leading:
            return
        now = self.clock.now()
        if now >= self._deadline:
            self._lose(f"failed to renew lease {self.description}: timed out waiting for the condition")
        elif succeeded:
            log.debug("successfully renewed lease %s", self.description)
            self._cancel_deadline()
            self._deadline = began + self.retry_period + self.renew_deadline
            self._timer = self.clock.call_later(self.retry_period, self._renew_round)
        elif self._observed.holder not in ("", self.identity):  # validly held by another (else it was taken)
            self._lose(f"lease {self.description} is held by {self._observed.holder!r}")
        elif now + self.retry_period < self._deadline:
            self._timer = self.clock.call_later(self.retry_period, self._renew_try)
        # else: the deadline timer ends the round

    def _renew_timed_out(self) -> None:
        """The renew deadline passed without a successful renewal."""
        self._deadline_timer = None
        if self._leading:
            self._lose(f"failed to renew lease {self.description}: timed out waiting for the condition")

    def _lose(self, reason: str) -> None:
        """The leadership is lost (the renew loop ended): stop leading and finish the election."""
        log.info("%s", reason)
        self._finish("lost")

    def _finish(self, why: str) -> None:
        """End the election: cancel the timers; a leader stops leading, then (optionally) releases the Lease."""
        self._running = False
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._cancel_deadline()
        was_leading = self._leading
        self._leading = False
        self._deadline = float("-inf")
        if not was_leading:
            return
        log.info("stopped leading lease %s (%s)", self.description, why)
        self._on_stopped()  # if it raises, the Lease is not released: it expires
        if self.release_on_cancel:
            self._release()
        self._record_event("stopped leading")

    def _cancel_deadline(self) -> None:
        if self._deadline_timer is not None:
            self._deadline_timer.cancel()
            self._deadline_timer = None

    # ----- the Lease ----------------------------------------------------------------------------------
    def _lease_valid(self, now: float) -> bool:
        """Whether the observed record is still within its lease, measured from when it was observed."""
        return self._observed_time + self._observed.duration > now

    def _observe(self, lease: dict[str, Any]) -> None:
        """Take `lease` (just read or written) as the current state; the observed time restarts when its record
        differs from the one observed before."""
        self._lease = lease
        record = _Record.of(lease)
        if record != self._observed:
            self._observed = record
            self._observed_time = self.clock.now()

    def _written(self, lease: dict[str, Any]) -> None:
        """This candidate wrote `lease`: observed now (client-go's ``setObservedRecord``)."""
        self._lease = lease
        self._observed = _Record.of(lease)
        self._observed_time = self.clock.now()

    def _try_acquire_or_renew(self) -> bool:
        """client-go's ``tryAcquireOrRenew``: True when this candidate holds the Lease after the call."""
        now = self.clock.now()
        stamp = micro_time(self.store.now_nanos())
        duration = int(self.lease_duration)
        holds = self._observed.holder == self.identity

        # 1. The leader's fast path: update the Lease it last wrote, assuming nobody else has.
        if holds and self._lease is not None and self._lease_valid(now):
            record = _Record(
                self.identity, duration, self._observed.acquire_time, stamp, self._observed.transitions
            )
            try:
                self._written(self._write(record))
                return True
            except Exception as e:
                self._log_failure("failed to update lock optimistically, falling back to slow path", e)

        # 2. Read the Lease, or create it.
        try:
            current = self.store.get(LEASE_KEY, self.namespace, self.name)
        except NotFound:
            record = _Record(self.identity, duration, stamp, stamp, 0)
            try:
                created = self.store.create(
                    {
                        "apiVersion": "coordination.k8s.io/v1",
                        "kind": "Lease",
                        "metadata": {"name": self.name, "namespace": self.namespace},
                        "spec": record.spec(),
                    }
                )
            except Exception as e:
                self._log_failure("error initially creating leader election record", e)
                return False
            self._written(created)
            return True
        except Exception as e:
            self._log_failure(f"error retrieving resource lock {self.description}", e)
            return False

        # 3. Held by someone else and not expired: stand by.
        self._observe(current)
        observed = self._observed
        holds = observed.holder == self.identity
        if observed.holder and self._lease_valid(now) and not holds:
            log.debug("lock is held by %s and has not yet expired", observed.holder)
            return False

        # 4. Take it (or renew it).
        if holds:
            record = _Record(self.identity, duration, observed.acquire_time, stamp, observed.transitions)
        else:
            record = _Record(self.identity, duration, stamp, stamp, observed.transitions + 1)
        try:
            self._written(self._write(record))
        except Exception as e:
            self._log_failure("failed to update lock", e)
            return False
        return True

    def _write(self, record: _Record) -> dict[str, Any]:
        """Update the Lease last read or written (its resourceVersion: Conflict when stale) to `record`."""
        assert self._lease is not None
        return self.store.update({**self._lease, "spec": record.spec()})

    def _release(self) -> bool:
        """client-go's ``release``: if this candidate holds the Lease, empty its holder, 1 s duration."""
        if self._observed.holder != self.identity or self._lease is None:
            return True
        stamp = micro_time(self.store.now_nanos())
        try:
            self._written(self._write(_Record("", 1, stamp, stamp, self._observed.transitions)))
        except Exception as e:
            self._log_failure("failed to release lock", e)
            return False
        log.info("released lease %s", self.description)
        return True

    def _maybe_report_transition(self) -> None:
        """Report a change of the observed holder to `on_new_leader`."""
        holder = self._observed.holder
        if holder == self._reported_leader:
            return
        self._reported_leader = holder
        if self._on_new_leader is not None:
            self._on_new_leader(holder)

    def _record_event(self, what: str) -> None:
        """client-go's ``LeaseLock.RecordEvent``: a Normal ``LeaderElection`` event on the Lease."""
        if self._recorder is None or self._lease is None:
            return
        try:
            self._recorder.event(self._lease, "Normal", "LeaderElection", f"{self.identity} {what}")
        except Exception as e:
            self._log_failure("failed to record a LeaderElection event", e)

    def _log_failure(self, what: str, error: Exception) -> None:
        """Log a failed step (as client-go's ``klog.Errorf``); the traceback too, at debug level, unless it is
        an API refusal."""
        log.warning("%s: %s", what, error)
        if not isinstance(error, StatusError):
            log.debug("%s", what, exc_info=error)
