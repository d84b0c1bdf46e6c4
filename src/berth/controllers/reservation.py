"""The Reservation controller: status bookkeeping, expiry and garbage collection (Koordinator's
``pkg/scheduler/plugins/reservation/controller``).

For each Reservation that is neither Failed nor Succeeded it keeps ``status.currentOwners`` (the running pods
on its node whose ``reservation-allocated`` annotation names its uid, sorted by uid) and ``status.allocated``
(the sum of their requests, masked to the resources in ``status.allocatable``) true. A change with
``allocateOnce`` (the default) makes it Succeeded. It expires a reservation (phase Failed, condition
Ready=False/Expired) when its ``ttl``/``expires`` passes or its node is gone, and deletes Expired or
Succeeded reservations ``gc_seconds`` after that (at once when their node is gone). Owner pods keep running.
Pods being deleted (``deletionTimestamp``) or finished (Succeeded/Failed) no longer count as owners.
Every wait is a clock timer; every change is a status write or a delete.
"""

from __future__ import annotations

import contextlib
import functools
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from berth.api.conditions import probe_condition
from berth.api.contracts import Store
from berth.api.errors import InvalidObjectError, NotFound
from berth.api.quantity import format_resource, resource_amount
from berth.api.reservation import (
    ANNOTATION_RESERVATION_ALLOCATED,
    CONDITION_READY,
    PHASE_AVAILABLE,
    PHASE_FAILED,
    PHASE_SUCCEEDED,
    PHASE_WAITING,
    REASON_AVAILABLE,
    REASON_EXPIRED,
    REASON_SUCCEEDED,
    RESERVATION_GROUP,
    RESERVATION_KEY,
    expiry,
    is_allocate_once,
    parse_allocated,
    parse_rfc3339,
)
from berth.api.resources import pod_requests
from berth.clock import Clock, Timer
from berth.store.handover import update_status_handed_over

__all__ = ["DEFAULT_GC_SECONDS", "ReservationController"]

DEFAULT_GC_SECONDS = 86400.0
NODE_KEY = ("", "Node")
_TERMINAL_POD_PHASES = ("Succeeded", "Failed")
_parse_stamp = functools.lru_cache(maxsize=4096)(parse_rfc3339)
"""parse_rfc3339 remembered: a sync reads the same few creation timestamps and the store's current time again and
again (a datetime is immutable, so sharing it is safe)."""
_format = functools.lru_cache(maxsize=4096)(format_resource)
"""format_resource remembered (a pure function of few distinct amounts)."""
_amount = functools.lru_cache(maxsize=4096)(resource_amount)
"""resource_amount of a string, remembered (a bad one raises each time: errors are not remembered)."""


@dataclass(frozen=True, slots=True)
class _Owner:
    """A running pod allocated to a reservation."""

    namespace: str
    name: str
    uid: str
    node: str
    requests: Mapping[str, int]
    spec: object = field(default=None, compare=False)
    """The pod spec `requests` were read from (all they depend on)."""


class ReservationController:
    """Reconciles Reservation status from Reservation, Pod and Node events (see the module docstring)."""

    def __init__(
        self,
        store: Store,
        clock: Clock,
        *,
        gc_seconds: float = DEFAULT_GC_SECONDS,
    ) -> None:
        """Create a controller writing to *store*; Expired/Succeeded reservations are deleted after *gc_seconds*."""
        self.store = store
        self.clock = clock
        self.gc_seconds = float(gc_seconds)
        self._reservations: dict[str, Mapping[str, Any]] = {}  # name -> last seen object
        self._names: dict[str, str] = {}  # reservation uid -> name
        self._owners: dict[str, dict[str, _Owner]] = {}  # reservation uid -> pod uid -> owner
        self._pod_reservation: dict[str, str] = {}  # pod uid -> reservation uid it is indexed under
        self._nodes: set[str] = set()
        self._expiry_timers: dict[str, tuple[float, Timer]] = {}
        self._gc_timers: dict[str, tuple[float, Timer]] = {}
        # reservation uid -> (creationTimestamp, ttl, expires) and the deadline they give
        self._deadlines: dict[str, tuple[tuple[object, ...], float | None]] = {}

    # ----- events -------------------------------------------------------------------------------
    def handle_event(self, type_: str, obj: Mapping[str, Any]) -> None:
        """React to a Reservation, Pod or Node change (other kinds are ignored)."""
        kind = obj.get("kind")
        if kind == "Pod":
            self.handle_pod(type_, obj)
        elif kind == "Node":
            self._on_node(type_, obj)
        elif kind == "Reservation" and str(obj.get("apiVersion") or "").startswith(RESERVATION_GROUP + "/"):
            self._on_reservation(type_, obj)

    def _on_reservation(self, type_: str, r: Mapping[str, Any]) -> None:
        name = r["metadata"]["name"]
        if type_ == "DELETED":
            self._reservations.pop(name, None)
            uid = r["metadata"].get("uid", "")
            self._names.pop(uid, None)
            self._deadlines.pop(uid, None)
            owners = self._owners.pop(uid, None)
            if owners:
                for pod_uid in owners:
                    self._pod_reservation.pop(pod_uid, None)
            self._cancel(self._expiry_timers, name)
            self._cancel(self._gc_timers, name)
            return
        old = self._reservations.get(name)
        self._reservations[name] = r
        self._names[r["metadata"].get("uid", "")] = name
        if old is None or _sync_worthy(old, r):
            self._sync(name)

    def _on_node(self, type_: str, node: Mapping[str, Any]) -> None:
        name = node["metadata"]["name"]
        if type_ != "DELETED":
            self._nodes.add(name)
            return
        self._nodes.discard(name)
        on_node = [
            n for n, r in self._reservations.items() if (r.get("status") or {}).get("nodeName") == name
        ]
        for rname in on_node:
            self._sync(rname)

    def handle_pod(self, type_: str, pod: Mapping[str, Any]) -> None:
        """React to a Pod change: the reservations it is allocated to, now or before, are synced."""
        meta = pod["metadata"]
        pod_uid = meta.get("uid", "")
        annotations = meta.get("annotations")
        if (not annotations or ANNOTATION_RESERVATION_ALLOCATED not in annotations) and (
            pod_uid not in self._pod_reservation
        ):
            return  # allocated to no reservation, now or before (the common case)
        affected: list[str] = []
        old_r = self._pod_reservation.pop(pod_uid, None)
        previous: _Owner | None = None
        if old_r is not None:
            owners = self._owners.get(old_r)
            if owners is not None:
                previous = owners.pop(pod_uid, None)
                if not owners:
                    del self._owners[old_r]
            old_name = self._names.get(old_r)
            if old_name and previous is not None:
                affected.append(old_name)
        spec = pod.get("spec") or {}
        node = spec.get("nodeName")
        if node:
            allocated = parse_allocated(pod)
            if allocated is not None and allocated[0]:
                r_name, r_uid = allocated
                waiting = ((self._reservations.get(r_name) or {}).get("status") or {}).get(
                    "phase"
                ) == PHASE_WAITING
                # a pre-allocated pod holds its resources until it is gone, even while terminating
                holding = _running(pod) or (waiting and _not_finished(pod))
                if type_ != "DELETED" and holding and r_uid:
                    pod_spec = pod.get("spec")
                    if previous is not None and previous.spec is pod_spec:
                        requests = previous.requests  # the very spec they were read from: the same requests
                    else:
                        requests = pod_requests(pod)
                    owner = _Owner(
                        meta.get("namespace") or "default", meta["name"], pod_uid, node, requests, pod_spec
                    )
                    self._owners.setdefault(r_uid, {})[pod_uid] = owner
                    self._pod_reservation[pod_uid] = r_uid
                    if old_r == r_uid and owner == previous:
                        return  # the same owner as before: nothing of its reservation's status changes
                if r_name not in affected:
                    affected.append(r_name)
        for r_name in affected:
            self._sync(r_name)

    # ----- reconcile ----------------------------------------------------------------------------
    def _get(self, name: str) -> dict[str, Any] | None:
        try:
            return self.store.get(RESERVATION_KEY, "", name)
        except NotFound:
            return None

    def _sync(self, name: str) -> None:
        """Koordinator's sync/syncStatus for one reservation, plus arming its expiry or GC timer."""
        r = self._get(name)
        if r is None:
            return
        status = r.get("status") or {}
        if status.get("phase") in (PHASE_FAILED, PHASE_SUCCEEDED):
            self._cancel(self._expiry_timers, name)
            self._collect(r)
            return
        deadline = self._deadline(r)
        node = status.get("nodeName") or ""
        if (deadline is not None and self.clock.now() >= deadline) or (node and not self._node_exists(node)):
            self._expire(r)
            return
        if deadline is not None:
            self._arm(self._expiry_timers, name, deadline, 2)
        else:
            self._cancel(self._expiry_timers, name)
        if not node:
            return
        owners = sorted(
            (o for o in (self._owners.get(r["metadata"].get("uid", "")) or {}).values() if o.node == node),
            key=lambda o: o.uid,
        )
        names = set((status.get("allocatable") or {}).keys())
        allocated: dict[str, int] = {}
        for o in owners:
            for k, v in o.requests.items():
                if k in names:
                    allocated[k] = allocated.get(k, 0) + v
        current = sorted(
            (
                (str(ref.get("uid") or ""), str(ref.get("namespace") or ""), str(ref.get("name") or ""))
                for ref in status.get("currentOwners") or []
            ),
        )
        actual = [(o.uid, o.namespace, o.name) for o in owners]
        freed = status.get("phase") == PHASE_WAITING and not owners
        if current == actual and _amounts(status.get("allocated")) == allocated and not freed:
            return
        new_status = dict(status)
        if allocated:
            new_status["allocated"] = {k: _format(k, v) for k, v in sorted(allocated.items())}
        else:
            new_status.pop("allocated", None)
        if owners:
            new_status["currentOwners"] = [
                {"namespace": o.namespace, "name": o.name, "uid": o.uid} for o in owners
            ]
        else:
            new_status.pop("currentOwners", None)
        if status.get("phase") == PHASE_WAITING:
            # pre-allocation: the owners so far are the running pods it took over; once they are all gone
            # the freed resources are the reservation's and it becomes Available
            if not owners:
                self._set_available(new_status)
        elif is_allocate_once(r):
            self._set_succeeded(new_status)
        self._write(r, new_status)

    def _set_available(self, status: dict[str, Any]) -> None:
        """Waiting → Available with condition Ready=True/Available."""
        now = self.store.timestamp()
        status["phase"] = PHASE_AVAILABLE
        conditions = [dict(c) for c in status.get("conditions") or [] if c.get("type") != CONDITION_READY]
        conditions.append(probe_condition(CONDITION_READY, "True", REASON_AVAILABLE, now))
        status["conditions"] = conditions

    def _deadline(self, r: Mapping[str, Any]) -> float | None:
        meta = r.get("metadata") or {}
        created = meta.get("creationTimestamp")
        if not isinstance(created, str):
            return None
        spec = r.get("spec") or {}
        # all the deadline depends on: a sync of an unchanged reservation reads it back
        fields = (created, spec.get("ttl"), spec.get("expires"))
        uid = meta.get("uid", "")
        known = self._deadlines.get(uid)
        if known is not None and known[0] == fields:
            return known[1]
        try:
            deadline = expiry(r, self._clock_time(created))
        except (InvalidObjectError, ValueError):
            deadline = None
        self._deadlines[uid] = (fields, deadline)
        return deadline

    def _node_exists(self, node: str) -> bool:
        if node in self._nodes:
            return True
        try:
            self.store.get(NODE_KEY, "", node)
        except NotFound:
            return False
        self._nodes.add(node)
        return True

    def _expire(self, r: dict[str, Any]) -> None:
        """SetReservationExpired: phase Failed and the Ready condition False/Expired."""
        status = dict(r.get("status") or {})
        now = self.store.timestamp()
        status["phase"] = PHASE_FAILED
        conditions = [dict(c) for c in status.get("conditions") or []]
        idx = _last_ready(conditions)
        fresh = probe_condition(CONDITION_READY, "False", REASON_EXPIRED, now)
        if idx < 0:
            conditions.append(fresh)
        elif conditions[idx].get("status") == "True":
            conditions[idx] = fresh
        else:
            conditions[idx]["reason"] = REASON_EXPIRED
            conditions[idx]["lastProbeTime"] = now
        status["conditions"] = conditions
        self._cancel(self._expiry_timers, r["metadata"]["name"])
        self._write(r, status)

    def _set_succeeded(self, status: dict[str, Any]) -> None:
        """SetReservationSucceeded on a status being built."""
        now = self.store.timestamp()
        status["phase"] = PHASE_SUCCEEDED
        conditions = [dict(c) for c in status.get("conditions") or []]
        idx = _last_ready(conditions)
        if idx < 0:
            conditions.append(probe_condition(CONDITION_READY, "False", REASON_SUCCEEDED, now))
        else:
            conditions[idx]["status"] = "False"
            conditions[idx]["reason"] = REASON_SUCCEEDED
            conditions[idx]["lastProbeTime"] = now
        status["conditions"] = conditions

    def _write(self, r: dict[str, Any], status: dict[str, Any]) -> None:
        try:
            # the status is new dicts and lists and parts of the stored one, built for this write
            stored = update_status_handed_over(self.store, {**r, "status": status})
        except NotFound:
            return
        name = stored["metadata"]["name"]
        if name in self._reservations:
            self._reservations[name] = stored
        if (stored.get("status") or {}).get("phase") in (PHASE_FAILED, PHASE_SUCCEEDED):
            self._collect(stored)

    # ----- garbage collection -------------------------------------------------------------------
    def _collect(self, r: Mapping[str, Any]) -> None:
        """Delete an Expired/Succeeded reservation whose node is gone, or arm a timer for gc_seconds after it ended."""
        name = r["metadata"]["name"]
        status = r.get("status") or {}
        phase = status.get("phase")
        conditions = status.get("conditions") or []
        if phase == PHASE_SUCCEEDED:
            reason, stamp_field = REASON_SUCCEEDED, "lastProbeTime"
        elif phase == PHASE_FAILED and _is_expired(conditions):
            reason, stamp_field = REASON_EXPIRED, "lastTransitionTime"
        else:
            return
        node = status.get("nodeName") or ""
        if node and not self._node_exists(node):
            self._delete(name)
            return
        since = None
        for c in conditions:
            if c.get("reason") == reason:
                stamp = c.get(stamp_field)
                since = self._clock_time(stamp) if isinstance(stamp, str) and stamp else None
                break
        if since is None:
            return
        deadline = since + self.gc_seconds
        if self.clock.now() >= deadline:
            self._delete(name)
        else:
            self._arm(self._gc_timers, name, deadline, 6)

    def _delete(self, name: str) -> None:
        self._cancel(self._gc_timers, name)
        with contextlib.suppress(NotFound):
            self.store.delete(RESERVATION_KEY, "", name)

    # ----- timers -------------------------------------------------------------------------------
    def _arm(self, timers: dict[str, tuple[float, Timer]], name: str, when: float, priority: int) -> None:
        current = timers.get(name)
        if current is not None:
            if current[0] == when:
                return
            current[1].cancel()
        gc = timers is self._gc_timers
        timer = self.clock.call_at(when, lambda: self._fire(name, gc), priority)
        timers[name] = (when, timer)

    def _fire(self, name: str, gc: bool) -> None:
        (self._gc_timers if gc else self._expiry_timers).pop(name, None)
        if gc:
            r = self._get(name)
            if r is not None:
                self._collect(r)
        else:
            self._sync(name)

    @staticmethod
    def _cancel(timers: dict[str, tuple[float, Timer]], name: str) -> None:
        current = timers.pop(name, None)
        if current is not None:
            current[1].cancel()

    def _clock_time(self, stamp: str) -> float:
        """The clock reading of an RFC 3339 timestamp written by the store (whole seconds)."""
        now_floor = math.floor(self.clock.now())
        reference: datetime = _parse_stamp(self.store.timestamp())
        return now_floor + (_parse_stamp(stamp) - reference).total_seconds()


def _sync_worthy(old: Mapping[str, Any], new: Mapping[str, Any]) -> bool:
    """Koordinator enqueues a reservation update on a generation, phase or nodeName change."""
    if (old.get("metadata") or {}).get("generation") != (new.get("metadata") or {}).get("generation"):
        return True
    os, ns = old.get("status") or {}, new.get("status") or {}
    return bool(os.get("phase") != ns.get("phase") or os.get("nodeName") != ns.get("nodeName"))


def _running(pod: Mapping[str, Any]) -> bool:
    """A pod counts as an owner while it is not being deleted and has not finished."""
    if pod["metadata"].get("deletionTimestamp"):
        return False
    return (pod.get("status") or {}).get("phase") not in _TERMINAL_POD_PHASES


def _not_finished(pod: Mapping[str, Any]) -> bool:
    """The pod has not reached Succeeded or Failed."""
    return (pod.get("status") or {}).get("phase") not in _TERMINAL_POD_PHASES


def _amounts(resource_list: object) -> dict[str, int]:
    if not isinstance(resource_list, Mapping):
        return {}
    out = {}
    for k, v in resource_list.items():
        try:
            out[k] = _amount(k, v) if type(v) is str else resource_amount(k, v)
        except (ValueError, TypeError):
            out[k] = -1
    return out


def _last_ready(conditions: list[dict[str, Any]]) -> int:
    idx = -1
    for i, c in enumerate(conditions):
        if c.get("type") == CONDITION_READY:
            idx = i
    return idx


def _is_expired(conditions: list[Any]) -> bool:
    """IsReservationExpired (phase already Failed): the first Ready condition is False with reason Expired."""
    for c in conditions:
        if c.get("type") == CONDITION_READY:
            return bool(c.get("status") == "False" and c.get("reason") == REASON_EXPIRED)
    return False
