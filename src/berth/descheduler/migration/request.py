"""Asking for a migration: what the descheduler's evictor calls to move a pod through a PodMigrationJob
instead of evicting it (Koordinator's ``CreatePodMigrationJob`` and its migration filter)."""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Mapping
from typing import Any

from berth.api.contracts import Store
from berth.api.duration import go_duration
from berth.api.errors import AlreadyExists
from berth.api.podmigrationjob import (
    ANNOTATION_EVICT_REASON,
    ANNOTATION_EVICT_TRIGGER,
    PHASE_PENDING,
    PMJ_API_VERSION,
    PMJ_KEY,
    PMJ_KIND,
    is_active_job,
    job_pod_ref,
)
from berth.api.reservation import parse_rfc3339
from berth.descheduler.migration.args import MigrationControllerArgs
from berth.descheduler.migration.filters import (
    non_retryable_failure,
    retryable_failure,
    scheduler_name_failure,
)

__all__ = ["migration_blocker", "migration_in_flight", "new_job_name", "request_migration"]

_EMPTY: Mapping[str, Any] = {}
_UUID_EPOCH_OFFSET = 0x01B21DD213814000
"""100-ns intervals between the UUID epoch (1582-10-15) and the Unix epoch."""


def _meta(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    md = obj.get("metadata")
    return md if isinstance(md, Mapping) else _EMPTY


def new_job_name(now: str, nanos: int, salt: str) -> str:
    """A time-based (version 1) UUID, as Koordinator names its jobs: the time `now` (RFC 3339), a clock sequence
    from `nanos` (a strictly increasing counter such as ``Store.now_nanos()``) and a node id from `salt`."""
    ticks = int(parse_rfc3339(now).timestamp()) * 10_000_000 + (nanos // 100) % 10_000_000
    ticks += _UUID_EPOCH_OFFSET
    # a node id from the salt, with the multicast bit set as RFC 4122 asks of node ids that are not MAC addresses
    node = int.from_bytes(hashlib.sha256(salt.encode()).digest()[:6], "big") | (1 << 40)
    seq = nanos & 0x3FFF
    fields = (
        ticks & 0xFFFFFFFF,
        (ticks >> 32) & 0xFFFF,
        ((ticks >> 48) & 0x0FFF) | 0x1000,
        ((seq >> 8) & 0x3F) | 0x80,
        seq & 0xFF,
        node,
    )
    return str(uuid.UUID(fields=fields))


def migration_in_flight(store: Store, pod: Mapping[str, Any]) -> bool:
    """Whether a Pending or Running PodMigrationJob already names the pod (by uid, or namespace and name)."""
    md = _meta(pod)
    uid, ns, name = md.get("uid") or "", md.get("namespace") or "default", md.get("name") or ""
    jobs, _ = store.list(PMJ_KEY)
    for job in jobs:
        if not is_active_job(job):
            continue
        job_ns, job_name, job_uid = job_pod_ref(job)
        if (job_uid and job_uid == uid) or (job_ns == ns and job_name == name):
            return True
    return False


def migration_blocker(store: Store, pod: Mapping[str, Any], args: MigrationControllerArgs) -> str | None:
    """Why the migration controller would not take the pod now (its ``Filter``: a job already in flight, a
    scheduler that cannot place Reservations, a pod that may never move, a limit reached); None when it would.
    The controller's object limiters are checked by `MigrationController.object_limited`."""
    if migration_in_flight(store, pod):
        return "the pod already has a PodMigrationJob"
    why = scheduler_name_failure(pod, args)
    if why is not None:
        return why
    why = non_retryable_failure(store, pod, args)
    if why is not None:
        return why
    return retryable_failure(store, pod, args, arbitrating=False)


def request_migration(
    store: Store,
    pod: Mapping[str, Any],
    *,
    args: MigrationControllerArgs,
    reason: str,
    now: str,
    trigger: str = "",
) -> dict[str, Any]:
    """Create the PodMigrationJob that moves `pod` (CreatePodMigrationJob): a time-based UUID name, the evict
    `reason` and `trigger` (the plugin asking) as annotations, ``podRef`` with the pod's namespace, name and uid,
    ``args``' default mode, TTL and delete options, phase Pending. Returns the stored job; with ``args.dry_run``
    the job that would have been created, without creating it. Raises the store's errors."""
    md = _meta(pod)
    annotations = {ANNOTATION_EVICT_REASON: reason}
    if trigger:
        annotations[ANNOTATION_EVICT_TRIGGER] = trigger
    spec: dict[str, Any] = {
        "podRef": {
            "namespace": md.get("namespace") or "default",
            "name": md.get("name") or "",
            "uid": md.get("uid") or "",
        },
        "mode": args.default_job_mode,
        "ttl": go_duration(args.default_job_ttl),
    }
    if args.default_delete_options:
        spec["deleteOptions"] = dict(args.default_delete_options)
    salt = str(md.get("uid") or f"{md.get('namespace')}/{md.get('name')}")
    for _attempt in range(8):
        job: dict[str, Any] = {
            "apiVersion": PMJ_API_VERSION,
            "kind": PMJ_KIND,
            "metadata": {
                "name": new_job_name(now, store.now_nanos(), salt),
                "annotations": dict(annotations),
            },
            "spec": spec,
            "status": {"phase": PHASE_PENDING},
        }
        if args.dry_run:
            return job
        try:
            return store.create(job)
        except AlreadyExists:
            continue
    return store.create(job)
