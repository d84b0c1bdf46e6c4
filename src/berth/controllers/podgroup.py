"""The PodGroup status controller (scheduler-plugins' PodGroupReconciler).

Each PodGroup is reconciled when it or one of its pods (label ``scheduling.x-k8s.io/pod-group``, same
namespace) changes: phase "" -> Pending; Pending -> Scheduling once minMember pods exist (with
scheduleStartTime and occupiedBy); afterwards running/succeeded/failed are counted and the phase follows
(Pending, Scheduling, Running, Failed, Finished; Finished and Failed are final). A Pending or Scheduling
group with no running member whose scheduleStartTime came more than 48 hours after its creation is no
longer reconciled (its pods may have been garbage-collected): each reconcile only records a Warning
``Timeout`` Event, "schedule time longer than 48 hours", as scheduler-plugins' PodGroupReconciler does.
Like a work queue, a group touched several times in one instant is reconciled once (a zero-delay clock
timer).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from berth.api.contracts import Recorder, Store
from berth.api.errors import NotFound
from berth.api.podgroup import (
    PHASE_FAILED,
    PHASE_FINISHED,
    PHASE_PENDING,
    PHASE_RUNNING,
    PHASE_SCHEDULING,
    POD_GROUP_KIND,
    POD_GROUP_LABEL,
)
from berth.api.timestamps import unix_seconds
from berth.clock import Clock
from berth.store.events import EventRecorder

__all__ = ["PodGroupController", "pod_group_status", "schedule_timed_out"]

_EMPTY: Mapping[str, Any] = {}
RECONCILE_PRIORITY = 3
COMPONENT = "PodGroupController"  # the reconciler's event recorder name
SCHEDULE_TIMEOUT_SECONDS = 48 * 3600
TIMEOUT_REASON = "Timeout"
TIMEOUT_MESSAGE = "schedule time longer than 48 hours"

Key = tuple[str, str]  # (namespace, name)


def schedule_timed_out(pg: Mapping[str, Any]) -> bool:
    """Whether a PodGroup is past scheduler-plugins' 48-hour check: Pending or Scheduling, no running
    member, and scheduleStartTime more than 48 hours after creationTimestamp (never without both)."""
    status = pg.get("status") or _EMPTY
    if status.get("phase") not in (PHASE_PENDING, PHASE_SCHEDULING) or status.get("running"):
        return False
    start = unix_seconds(status.get("scheduleStartTime"))
    created = unix_seconds((pg.get("metadata") or _EMPTY).get("creationTimestamp"))
    return start is not None and created is not None and start - created > SCHEDULE_TIMEOUT_SECONDS


class _Member:
    __slots__ = ("name", "owners", "phase")

    def __init__(self, name: str, phase: str, owners: tuple[str, ...]) -> None:
        self.name = name
        self.phase = phase
        self.owners = owners


def pod_group_status(
    status: Mapping[str, Any], min_member: int, members: list[_Member], namespace: str, now: str
) -> dict[str, Any]:
    """The next status of a PodGroup from its current status and its member pods (one reconcile)."""
    out = dict(status)
    phase = out.get("phase") or ""
    if phase == "":
        out["phase"] = PHASE_PENDING
    elif phase == PHASE_PENDING:
        if len(members) >= min_member:
            out["phase"] = PHASE_SCHEDULING
            if not out.get("scheduleStartTime"):
                out["scheduleStartTime"] = now
            first = min(members, key=lambda m: m.name) if members else None
            if first is not None and first.owners:
                out["occupiedBy"] = ",".join(sorted(f"{namespace}/{o}" for o in first.owners))
    else:
        running = sum(1 for m in members if m.phase == "Running")
        succeeded = sum(1 for m in members if m.phase == "Succeeded")
        failed = sum(1 for m in members if m.phase == "Failed")
        for key, value in (("running", running), ("succeeded", succeeded), ("failed", failed)):
            if value:
                out[key] = value
            else:
                out.pop(key, None)  # omitempty
        if len(members) < min_member:
            out["phase"] = PHASE_PENDING
        else:
            out["phase"] = PHASE_RUNNING if succeeded + running >= min_member else PHASE_SCHEDULING
            if failed and failed + running + succeeded >= min_member:
                out["phase"] = PHASE_FAILED
            if succeeded >= min_member:
                out["phase"] = PHASE_FINISHED
    return out


class PodGroupController:
    """Keeps PodGroup status (phase, counts, scheduleStartTime, occupiedBy) in step with member pods."""

    def __init__(self, store: Store, clock: Clock, recorder: Recorder | None = None) -> None:
        """Create the controller; pod groups and pods already in the store are indexed and reconciled.
        Events go to ``recorder`` (default: one recording straight into ``store`` as PodGroupController)."""
        self.store = store
        self.clock = clock
        self.recorder: Recorder = recorder or EventRecorder(store, component=COMPONENT)
        self._groups: dict[Key, tuple[str, str]] = {}  # (ns, name) -> store key of the PodGroup
        self._members: dict[Key, dict[str, _Member]] = {}  # (ns, group) -> uid -> member
        self._group_of: dict[str, Key] = {}  # pod uid -> (ns, group)
        self._dirty: set[Key] = set()
        self._armed = False

    def handle_event(self, type_: str, obj: Mapping[str, Any]) -> None:
        """React to a Pod or PodGroup event (other kinds are ignored)."""
        kind = obj.get("kind")
        if kind == "Pod":
            self.handle_pod(type_, obj)
            return
        meta = obj.get("metadata") or _EMPTY
        ns = meta.get("namespace") or "default"
        if kind == POD_GROUP_KIND:
            key = (ns, meta.get("name") or "")
            if type_ == "DELETED":
                self._groups.pop(key, None)
                return
            group = str(obj.get("apiVersion") or "").rpartition("/")[0]
            self._groups[key] = (group, POD_GROUP_KIND)
            self._mark(key)

    def handle_pod(self, type_: str, pod: Mapping[str, Any]) -> None:
        """React to a Pod event: its pod group, now or before, is reconciled when its membership or phase
        changed."""
        meta = pod.get("metadata") or _EMPTY
        name = (meta.get("labels") or _EMPTY).get(POD_GROUP_LABEL) or ""
        if not name and not self._group_of:
            return  # in no pod group, now or before (the common case)
        uid = meta.get("uid") or ""
        key = (meta.get("namespace") or "default", name) if name else None
        old = self._group_of.get(uid)
        if old is not None and (type_ == "DELETED" or old != key):
            bucket = self._members.get(old)
            if bucket is not None:
                bucket.pop(uid, None)
                if not bucket:
                    del self._members[old]
            del self._group_of[uid]
            self._mark(old)
        if type_ == "DELETED" or key is None:
            return
        phase = (pod.get("status") or _EMPTY).get("phase") or ""
        owners = tuple(o.get("name", "") for o in meta.get("ownerReferences") or ())
        bucket = self._members.setdefault(key, {})
        prev = bucket.get(uid)
        bucket[uid] = _Member(meta.get("name") or "", phase, owners)
        self._group_of[uid] = key
        if prev is None or prev.phase != phase:
            self._mark(key)

    def _mark(self, key: Key) -> None:
        if key not in self._groups:
            return
        self._dirty.add(key)
        if not self._armed:
            self._armed = True
            self.clock.call_later(0.0, self._flush, RECONCILE_PRIORITY)

    def _flush(self) -> None:
        self._armed = False
        dirty, self._dirty = self._dirty, set()
        for key in sorted(dirty):
            self.reconcile(*key)

    def reconcile(self, namespace: str, name: str) -> None:
        """Bring one PodGroup's status up to date (one step of the phase machine)."""
        store_key = self._groups.get((namespace, name))
        if store_key is None:
            return
        try:
            pg = self.store.get(store_key, namespace, name)
        except NotFound:
            return
        status = pg.get("status") or _EMPTY
        if status.get("phase") in (PHASE_FINISHED, PHASE_FAILED):
            return
        if schedule_timed_out(pg):
            self.recorder.event(pg, "Warning", TIMEOUT_REASON, TIMEOUT_MESSAGE)
            return
        min_member = int((pg.get("spec") or _EMPTY).get("minMember") or 0)
        members = list(self._members.get((namespace, name), {}).values())
        new = pod_group_status(status, min_member, members, namespace, self.store.timestamp())
        if new != dict(status):
            patch = {k: v for k, v in new.items() if status.get(k) != v}
            patch.update({k: None for k in status if k not in new})
            self.store.patch(store_key, namespace, name, {"status": patch}, subresource="status")
