"""Which pods the migration controller may move, and when: Koordinator's arbitration filters
(``pkg/descheduler/controllers/migration/arbitrator/filter.go``) over a `Store`.

Non-retryable checks say a pod may never be migrated (DaemonSet, mirror, static or terminating pods, bare pods,
system-critical priority or the ``priorityThreshold``, local storage, PVCs when ``ignorePvcPods``, the
``labelSelector``, the ``namespaces``, an eviction cost of MaxInt32, and a workload too small to lose a pod:
expected replicas 1 or equal to its maxMigrating / maxUnavailable). Retryable checks say it may not be migrated
*now*: the per-node, per-namespace, global and per-workload numbers of migrating pods, and the workload's
unavailable pods. A pod (or job) annotated ``descheduler.alpha.kubernetes.io/evict`` passes both.

"Migrating" counts the jobs that are Running, or Pending and past the arbitration (while arbitrating; outside
of it, every Pending job counts), of pods other than the one asked about.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from berth.api.conditions import is_pod_ready
from berth.api.contracts import Store
from berth.api.errors import NotFound
from berth.api.podmigrationjob import (
    ANNOTATION_PASSED_ARBITRATION,
    EVICT_POD_ANNOTATION,
    MODE_RESERVATION_FIRST,
    PHASE_PENDING,
    PHASE_RUNNING,
    PMJ_KEY,
    job_phase,
    job_pod_ref,
)
from berth.descheduler.migration.args import MigrationControllerArgs, max_unavailable

__all__ = [
    "DEPLOYMENT_KEY",
    "POD_KEY",
    "PRIORITY_CLASS_KEY",
    "RS_KEY",
    "SYSTEM_CRITICAL_PRIORITY",
    "MigratingPod",
    "Workload",
    "controller_of",
    "expected_replicas",
    "find_workload",
    "has_evict_annotation",
    "is_pod_active",
    "migrating_jobs",
    "non_retryable_failure",
    "retryable_failure",
    "scheduler_name_failure",
]

POD_KEY = ("", "Pod")
RS_KEY = ("apps", "ReplicaSet")
DEPLOYMENT_KEY = ("apps", "Deployment")
PRIORITY_CLASS_KEY = ("scheduling.k8s.io", "PriorityClass")

SYSTEM_CRITICAL_PRIORITY = 2_000_000_000
MAX_EVICTION_COST = 2_147_483_647
ANNOTATION_EVICTION_COST = "scheduling.koordinator.sh/eviction-cost"
ANNOTATION_MIRROR_POD = "kubernetes.io/config.mirror"
ANNOTATION_CONFIG_SOURCE = "kubernetes.io/config.source"

_EMPTY: Mapping[str, Any] = {}


# --- pods and workloads -------------------------------------------------------------------------------------


def _meta(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    md = obj.get("metadata")
    return md if isinstance(md, Mapping) else _EMPTY


def has_evict_annotation(obj: Mapping[str, Any]) -> bool:
    """The object carries ``descheduler.alpha.kubernetes.io/evict`` (any value)."""
    return EVICT_POD_ANNOTATION in (_meta(obj).get("annotations") or _EMPTY)


def controller_of(obj: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The ownerReference with ``controller: true`` (metav1.GetControllerOf), or None."""
    for ref in _meta(obj).get("ownerReferences") or ():
        if isinstance(ref, Mapping) and ref.get("controller"):
            return ref
    return None


def is_pod_active(pod: Mapping[str, Any]) -> bool:
    """controller.IsPodActive: not Succeeded/Failed and not being deleted."""
    if _meta(pod).get("deletionTimestamp"):
        return False
    return (pod.get("status") or _EMPTY).get("phase") not in ("Succeeded", "Failed")


@dataclass(frozen=True, slots=True)
class Workload:
    """A pod's workload as Koordinator's controller finder sees it: the expected replicas (the Deployment's
    for a ReplicaSet it owns) and every pod owned by it (by any ReplicaSet of that Deployment)."""

    replicas: int
    pods: tuple[Mapping[str, Any], ...]
    deleting: bool = False


def _get(store: Store, key: tuple[str, str], namespace: str, name: str) -> dict[str, Any] | None:
    try:
        return store.get(key, namespace, name)
    except NotFound:
        return None


def _replicas(obj: Mapping[str, Any]) -> int:
    value = (obj.get("spec") or _EMPTY).get("replicas")
    return value if isinstance(value, int) and not isinstance(value, bool) else 1


def _owned_pods(store: Store, namespace: str, uids: Iterable[str]) -> tuple[Mapping[str, Any], ...]:
    wanted = set(uids)
    pods, _ = store.list(POD_KEY, namespace)
    return tuple(
        p for p in pods if any(ref.get("uid") in wanted for ref in _meta(p).get("ownerReferences") or ())
    )


def find_workload(store: Store, namespace: str, owner: Mapping[str, Any]) -> Workload | None:
    """The workload an ownerReference names (a ReplicaSet, or the Deployment owning it, or a Deployment); None
    for kinds Berth does not model or when it is gone (or is not the object the reference's uid names)."""
    kind, name, uid = owner.get("kind"), str(owner.get("name") or ""), str(owner.get("uid") or "")
    if kind == "ReplicaSet":
        rs = _get(store, RS_KEY, namespace, name)
        if rs is None or (uid and _meta(rs).get("uid") != uid):
            return None
        parent = controller_of(rs)
        if parent is not None and parent.get("kind") == "Deployment":
            deployment = _get(store, DEPLOYMENT_KEY, namespace, str(parent.get("name") or ""))
            if deployment is not None and _meta(deployment).get("uid") == parent.get("uid"):
                return _deployment_workload(store, namespace, deployment)
        return Workload(
            _replicas(rs),
            _owned_pods(store, namespace, [str(_meta(rs).get("uid"))]),
            bool(_meta(rs).get("deletionTimestamp")),
        )
    if kind == "Deployment":
        deployment = _get(store, DEPLOYMENT_KEY, namespace, name)
        if deployment is None or (uid and _meta(deployment).get("uid") != uid):
            return None
        return Workload(
            _replicas(deployment),
            _owned_pods(store, namespace, [str(_meta(deployment).get("uid"))]),
            bool(_meta(deployment).get("deletionTimestamp")),
        )
    return None


def _deployment_workload(store: Store, namespace: str, deployment: Mapping[str, Any]) -> Workload:
    uid = _meta(deployment).get("uid")
    sets, _ = store.list(RS_KEY, namespace)
    owned = [str(_meta(rs).get("uid")) for rs in sets if (controller_of(rs) or _EMPTY).get("uid") == uid]
    return Workload(
        _replicas(deployment),
        _owned_pods(store, namespace, owned or [str(uid)]),
        bool(_meta(deployment).get("deletionTimestamp")),
    )


def expected_replicas(store: Store, pod: Mapping[str, Any]) -> int:
    """GetExpectedScaleForPod: the replicas its workload wants (0 without a known workload, or one being deleted)."""
    owner = controller_of(pod)
    if owner is None:
        return 0
    workload = find_workload(store, _meta(pod).get("namespace") or "default", owner)
    if workload is None or workload.deleting:
        return 0
    return workload.replicas


# --- migrating jobs ------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class MigratingPod:
    """The pod of a job that counts as migrating, as its ``spec.podRef`` names it."""

    uid: str
    namespace: str
    name: str


def migrating_jobs(store: Store, *, arbitrating: bool) -> list[MigratingPod]:
    """The pods of the jobs that count as migrating: Running, or Pending (only those past the arbitration when
    `arbitrating`)."""
    jobs, _ = store.list(PMJ_KEY)
    out = []
    for job in jobs:
        phase = job_phase(job)
        if phase == PHASE_RUNNING:
            pass
        elif phase == PHASE_PENDING:
            passed = (_meta(job).get("annotations") or _EMPTY).get(ANNOTATION_PASSED_ARBITRATION) == "true"
            if arbitrating and not passed:
                continue
        else:
            continue
        ns, name, uid = job_pod_ref(job)
        out.append(MigratingPod(uid, ns, name))
    return out


def _has_job(pod: Mapping[str, Any], migrating: Iterable[MigratingPod]) -> bool:
    """existingPodMigrationJob: some migrating job names the pod by uid, or by namespace and name."""
    md = _meta(pod)
    uid, ns, name = md.get("uid") or "", md.get("namespace") or "default", md.get("name") or ""
    return any((m.uid and m.uid == uid) or (m.namespace == ns and m.name == name) for m in migrating)


# --- the filters ------------------------------------------------------------------------------------------


def _volumes(pod: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    return [v for v in (pod.get("spec") or _EMPTY).get("volumes") or () if isinstance(v, Mapping)]


def _priority(pod: Mapping[str, Any]) -> int | None:
    value = (pod.get("spec") or _EMPTY).get("priority")
    return value if isinstance(value, int) else None


def _evictor_failures(store: Store, pod: Mapping[str, Any], args: MigrationControllerArgs) -> list[str]:
    """evictions.EvictorFilter: why the descheduler's evictor would refuse the pod."""
    md = _meta(pod)
    annotations = md.get("annotations") or _EMPTY
    owners = md.get("ownerReferences") or ()
    out = []
    if any(ref.get("kind") == "DaemonSet" for ref in owners):
        out.append("pod is a DaemonSet pod")
    if ANNOTATION_MIRROR_POD in annotations:
        out.append("pod is a mirror pod")
    source = annotations.get(ANNOTATION_CONFIG_SOURCE)
    if source is not None and source != "api":
        out.append("pod is a static pod")
    if md.get("deletionTimestamp"):
        out.append("pod is terminating")
    evict_all_bare = args.evict_all_bare_pods or args.skips("BarePods")
    evict_failed_bare = args.evict_failed_bare_pods or args.skips("BarePods")
    if not evict_all_bare and not owners:
        if not evict_failed_bare:
            out.append("pod does not have any ownerRefs")
        elif (pod.get("status") or _EMPTY).get("phase") != "Failed":
            out.append("pod does not have any ownerRefs and is not in failed phase")
    if not (args.evict_system_critical_pods or args.skips("SystemCritical")):
        priority = _priority(pod)
        if priority is not None and priority >= SYSTEM_CRITICAL_PRIORITY:
            out.append("pod has system critical priority")
        threshold = None if args.skips("PriorityThreshold") else args.priority_threshold
        if threshold is not None:
            value = threshold.value
            if threshold.name:
                pc = _get(store, PRIORITY_CLASS_KEY, "", threshold.name)
                value = pc.get("value") if pc is not None else None
                if not isinstance(value, int):
                    out.append(f'priority class "{threshold.name}" of the priorityThreshold not found')
                    value = None
            if value is not None and priority is not None and priority >= value:
                out.append("pod has higher priority than specified priority class threshold")
    if not (args.evict_local_storage_pods or args.skips("LocalStorage")) and any(
        v.get("hostPath") is not None or v.get("emptyDir") is not None for v in _volumes(pod)
    ):
        out.append("pod has local storage and descheduler is not configured with evictLocalStoragePods")
    if (
        args.ignore_pvc_pods
        and not args.skips("PVC")
        and any(v.get("persistentVolumeClaim") is not None for v in _volumes(pod))
    ):
        out.append("pod has a PVC and descheduler is configured to ignore PVC pods")
    selector = None if args.skips("LabelSelector") else args.label_selector
    if selector is not None and not selector.matches(md.get("labels") or _EMPTY):
        out.append("pod labels do not match the labelSelector filter in the policy parameter")
    return out


def _expected_replicas_failure(
    store: Store, pod: Mapping[str, Any], args: MigrationControllerArgs
) -> str | None:
    """filterExpectedReplicas: a workload whose every allowed disruption is the whole workload."""
    if args.skips("ExpectedReplicas") or args.skip_check_expected_replicas:
        return None
    owner = controller_of(pod)
    if owner is None:
        return None
    workload = find_workload(store, _meta(pod).get("namespace") or "default", owner)
    replicas = workload.replicas if workload is not None else 0
    most_migrating = max_unavailable(replicas, args.max_migrating_per_workload)
    most_unavailable = max_unavailable(replicas, args.max_unavailable_per_workload)
    if replicas == 1 or replicas in (most_migrating, most_unavailable):
        return (
            f"expectedReplicas {replicas} of the workload leaves no room to migrate "
            f"(maxMigrating {most_migrating}, maxUnavailable {most_unavailable})"
        )
    return None


def non_retryable_failure(store: Store, pod: Mapping[str, Any], args: MigrationControllerArgs) -> str | None:
    """Why the pod may never be migrated under `args` (None: it may); the evict annotation passes everything."""
    if has_evict_annotation(pod):
        return None
    md = _meta(pod)
    ns = md.get("namespace") or "default"
    if not args.skips("Namespaces"):
        if args.namespaces_include and ns not in args.namespaces_include:
            return f'namespace "{ns}" is not included'
        if ns in args.namespaces_exclude:
            return f'namespace "{ns}" is excluded'
    cost = (md.get("annotations") or _EMPTY).get(ANNOTATION_EVICTION_COST)
    if cost == str(MAX_EVICTION_COST):
        return "pod has the maximum eviction cost"
    failures = _evictor_failures(store, pod, args)
    if failures:
        return ", ".join(failures)
    return _expected_replicas_failure(store, pod, args)


def scheduler_name_failure(pod: Mapping[str, Any], args: MigrationControllerArgs) -> str | None:
    """reservationFilter: in ReservationFirst mode the pod's scheduler must be one that handles Reservations."""
    if args.default_job_mode != MODE_RESERVATION_FIRST:
        return None
    name = (pod.get("spec") or _EMPTY).get("schedulerName") or "default-scheduler"
    if name in args.scheduler_names:
        return None
    return (
        f"pod.schedulerName={name} but scheduler of pmj controller assigned is "
        f"[{' '.join(args.scheduler_names)}]"
    )


def retryable_failure(
    store: Store, pod: Mapping[str, Any], args: MigrationControllerArgs, *, arbitrating: bool
) -> str | None:
    """Which limit the pod's migration would exceed now (None: none); the evict annotation passes."""
    if has_evict_annotation(pod):
        return None
    md = _meta(pod)
    uid = md.get("uid") or ""
    ns = md.get("namespace") or "default"
    migrating = migrating_jobs(store, arbitrating=arbitrating)
    others = [m for m in migrating if m.uid != uid]
    limit = args.max_migrating_globally
    if not args.skips("MaxMigratingGlobally") and limit and len(others) >= limit:
        return f"maxMigratingGlobally {limit} reached ({len(others)} migrating)"
    node = (pod.get("spec") or _EMPTY).get("nodeName")
    limit = args.max_migrating_per_node
    if not args.skips("MaxMigratingPerNode") and node and limit and limit > 0:
        on_node, _ = store.list(POD_KEY, field_selector=f"spec.nodeName={node}")
        count = sum(1 for p in on_node if _meta(p).get("uid") != uid and _has_job(p, migrating))
        if count >= limit:
            return f'maxMigratingPerNode {limit} reached on node "{node}" ({count} migrating)'
    limit = args.max_migrating_per_namespace
    if not args.skips("MaxMigratingPerNamespace") and limit and limit > 0:
        count = sum(1 for m in others if m.namespace == ns)
        if count >= limit:
            return f'maxMigratingPerNamespace {limit} reached in namespace "{ns}" ({count} migrating)'
    return _workload_failure(store, pod, args, migrating)


def _workload_failure(
    store: Store, pod: Mapping[str, Any], args: MigrationControllerArgs, migrating: list[MigratingPod]
) -> str | None:
    """filterMaxMigratingOrUnavailablePerWorkload."""
    skip_migrating = args.skips("MaxMigratingPerWorkload")
    skip_unavailable = args.skips("MaxUnavailablePerWorkload")
    if skip_migrating and skip_unavailable:
        return None
    owner = controller_of(pod)
    if owner is None:
        return None
    md = _meta(pod)
    ns = md.get("namespace") or "default"
    workload = find_workload(store, ns, owner)
    replicas = workload.replicas if workload is not None else 0
    pods = workload.pods if workload is not None else ()
    most_migrating = 0 if skip_migrating else max_unavailable(replicas, args.max_migrating_per_workload)
    most_unavailable = 0 if skip_unavailable else max_unavailable(replicas, args.max_unavailable_per_workload)
    owner_uid = owner.get("uid")
    moving: set[tuple[str, str]] = set()
    for m in migrating:
        if m.uid == md.get("uid") or m.namespace != ns:
            continue
        p = _get(store, POD_KEY, m.namespace, m.name)
        if p is not None and (controller_of(p) or _EMPTY).get("uid") == owner_uid:
            moving.add((m.namespace, m.name))
    if not skip_migrating and moving and len(moving) >= most_migrating:
        return f"maxMigratingPerWorkload {most_migrating} reached ({len(moving)} migrating)"
    if skip_unavailable:
        return None
    unavailable = {
        (_meta(p).get("namespace") or "default", _meta(p).get("name") or "")
        for p in pods
        if not (is_pod_active(p) and is_pod_ready(p))
    }
    unavailable |= moving
    if len(unavailable) >= most_unavailable:
        return f"maxUnavailablePerWorkload {most_unavailable} reached ({len(unavailable)} unavailable)"
    return None
