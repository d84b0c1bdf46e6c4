"""The Job controller: run a Job's pods until ``completions`` succeed, or fail it, as kube-controller-manager's.

* Pods are created from the template (``<job>-`` names; Indexed: ``<job>-<index>-``, with the
  ``batch.kubernetes.io/job-completion-index`` annotation and label, the ``JOB_COMPLETION_INDEX`` env var and the
  hostname ``<job>-<index>``), at most ``parallelism`` at a time and never more than the completions left.
* Finished pods are counted once each in ``status.succeeded``/``failed`` (a pod deleted before it finished counts
  as failed, as kube's tracking finalizer makes it; Berth remembers the counted pods instead of adding the
  finalizer). Indexed Jobs count distinct succeeded indexes (``status.completedIndexes``, "1,3-5").
* After a failure the next pod waits kube's back-off: 10s doubling with each failure since the last success, at
  most 10 minutes.
* The Job fails with ``BackoffLimitExceeded`` when more pods failed than ``backoffLimit`` (``restartPolicy:
  OnFailure``: when the active pods' container restarts reach it) and with ``DeadlineExceeded`` once it has been
  active ``activeDeadlineSeconds``; it completes (``CompletionsReached``) when ``completions`` succeeded (no
  ``completions``: when a pod succeeded and none is active). As kube 1.32 (JobPodReplacementPolicy), the interim
  condition (``FailureTarget``/``SuccessCriteriaMet``) comes first, the active pods are deleted, and the terminal
  one (``Failed``/``Complete``, with ``completionTime``) once none is terminating.
* ``suspend: true`` deletes the active pods (not counted as failures) with the ``Suspended`` condition.
* A finished Job with ``ttlSecondsAfterFinished`` is deleted (foreground) that long after it finished, as the
  TTL-after-finished controller does; its pods go with it through the garbage collector (ownerReferences).

Events as kube's: SuccessfulCreate/SuccessfulDelete per pod, Completed, BackoffLimitExceeded/DeadlineExceeded,
Suspended/Resumed.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from berth.api.contracts import Recorder, Store
from berth.api.errors import NotFound, StatusError
from berth.api.job import COMPLETION_INDEX, INDEXED
from berth.api.labels import LabelSelectorError, Selector, compile_label_selector
from berth.controllers.workloads.common import (
    BURST_REPLICAS,
    POD_KEY,
    controller_ref,
    int_field,
    is_pod_active,
    parse_time,
)
from berth.controllers.workloads.podindex import PodIndex
from berth.controllers.workloads.syncbase import Requeue, SyncController

__all__ = ["JOB_KEY", "JobController", "format_indexes", "is_job_finished", "parse_indexes"]

Obj = dict[str, Any]
JOB_KEY = ("batch", "Job")

BACKOFF_INITIAL = 10.0
BACKOFF_MAX = 600.0
"""kube's DefaultJobPodFailureBackOff and DefaultJobPodMaxBackOff."""
MSG_BACKOFF = "Job has reached the specified backoff limit"
MSG_DEADLINE = "Job was active longer than specified deadline"
MSG_COMPLETE = "Reached expected number of succeeded pods"


def is_job_finished(job: Mapping[str, Any]) -> str | None:
    """``Complete`` or ``Failed`` when the Job has that condition True, else None (kube's IsJobFinished)."""
    for c in (job.get("status") or {}).get("conditions") or ():
        if c.get("type") in ("Complete", "Failed") and c.get("status") == "True":
            return str(c["type"])
    return None


def parse_indexes(text: str | None) -> set[int]:
    """The indexes a ``completedIndexes`` string names ("1,3-5" → {1, 3, 4, 5})."""
    out: set[int] = set()
    for part in (text or "").split(","):
        if not part:
            continue
        lo, _, hi = part.partition("-")
        out.update(range(int(lo), int(hi or lo) + 1))
    return out


def format_indexes(indexes: set[int]) -> str:
    """Sorted indexes as kube writes ``completedIndexes``: three or more consecutive ones as "first-last",
    others listed ("1,3-5,7,8")."""
    runs: list[list[int]] = []
    for i in sorted(indexes):
        if runs and i == runs[-1][-1] + 1:
            runs[-1].append(i)
        else:
            runs.append([i])
    parts: list[str] = []
    for run in runs:
        if len(run) >= 3:
            parts.append(f"{run[0]}-{run[-1]}")
        else:
            parts.extend(str(i) for i in run)
    return ",".join(parts)


def _condition(status: Mapping[str, Any], type_: str) -> Mapping[str, Any] | None:
    for c in status.get("conditions") or ():
        if c.get("type") == type_ and c.get("status") == "True":
            return c  # type: ignore[no-any-return]
    return None


def _index_of(pod: Mapping[str, Any]) -> int | None:
    raw = (pod["metadata"].get("annotations") or {}).get(COMPLETION_INDEX)
    try:
        return int(raw) if raw is not None else None
    except ValueError:
        return None


def _finished_at(pod: Mapping[str, Any], default: float) -> float:
    """When a finished pod's last container stopped (Unix seconds), `default` when it does not say."""
    latest: float | None = None
    for cs in (pod.get("status") or {}).get("containerStatuses") or ():
        t = parse_time(((cs.get("state") or {}).get("terminated") or {}).get("finishedAt"))
        if t is not None and (latest is None or t > latest):
            latest = t
    return default if latest is None else latest


class _Tracking:
    """What the controller remembers of one Job between syncs (kube keeps it in the tracking finalizers and its
    back-off store): the pods already counted, and the failures since the last success."""

    __slots__ = ("counted", "failures", "gone", "last_failure")

    def __init__(self) -> None:
        self.counted: set[str] = set()
        self.gone: dict[
            str, tuple[bool, int | None]
        ] = {}  # deleted before counted: uid -> (succeeded, index)
        self.failures = 0
        self.last_failure = 0.0

    def copy(self) -> _Tracking:
        """An independent copy (restored when a sync's status write fails)."""
        out = _Tracking()
        out.counted, out.gone = set(self.counted), dict(self.gone)
        out.failures, out.last_failure = self.failures, self.last_failure
        return out


class JobController(SyncController):
    """Reconciles Jobs against the pods they own (see the module docstring)."""

    def __init__(
        self,
        store: Store,
        pods: PodIndex,
        recorder: Recorder,
        now: Callable[[], float],
        requeue: Requeue,
    ) -> None:
        """As `SyncController`."""
        super().__init__(store, pods, recorder, now, requeue)
        self._tracking: dict[str, _Tracking] = {}
        self._write_failed = (
            False  # a pod create/delete of the current sync failed: sync again after a back-off
        )

    def job_deleted(self, job: Mapping[str, Any]) -> None:
        """A Job went: forget what was remembered of it."""
        self._tracking.pop(job["metadata"].get("uid", ""), None)

    def pod_deleted(self, pod: Mapping[str, Any]) -> None:
        """A pod of a Job went: count it at the next sync if it was not counted yet."""
        for ref in pod["metadata"].get("ownerReferences") or ():
            if ref.get("controller") and ref.get("kind") == "Job":
                tracking = self._tracking.get(str(ref.get("uid")))
                uid = pod["metadata"].get("uid", "")
                if tracking is not None and uid not in tracking.counted:
                    succeeded = (pod.get("status") or {}).get("phase") == "Succeeded"
                    tracking.gone[uid] = (succeeded, _index_of(pod))

    # ----- the sync ---------------------------------------------------------------------------
    def sync(self, namespace: str, name: str) -> None:
        """Bring one Job's pods and status up to date."""
        try:
            job = self.store.get(JOB_KEY, namespace, name)
        except NotFound:
            self._forget(namespace, name)
            return
        meta = job["metadata"]
        if meta.get("deletionTimestamp"):
            return
        if is_job_finished(job):
            self._expire(job)
            return
        spec = job.get("spec") or {}
        try:
            selector = compile_label_selector(spec.get("selector"))
        except LabelSelectorError:
            return
        self._write_failed = False
        uid = meta["uid"]
        before = self._tracking[uid].copy() if uid in self._tracking else None
        try:
            self._sync(job, self._claim(job, selector))
        except StatusError:  # the status write (a conflict): count again from the stored status next time
            if before is None:
                self._tracking.pop(uid, None)
            else:
                self._tracking[uid] = before
            self._retry_later(namespace, name)
            return
        if self._write_failed:
            self._retry_later(namespace, name)
        else:
            self._forget(namespace, name)

    def _claim(self, job: Mapping[str, Any], selector: Selector) -> list[Mapping[str, Any]]:
        """The Job's pods: those it controls that its selector matches (orphans are not adopted)."""
        return [
            p
            for p in self.pods.owned_by(job["metadata"]["uid"])
            if selector.matches(p["metadata"].get("labels") or {})
        ]

    def _tracking_of(self, job: Mapping[str, Any], pods: list[Mapping[str, Any]]) -> _Tracking:
        uid = job["metadata"]["uid"]
        tracking = self._tracking.get(uid)
        if tracking is None:
            tracking = self._tracking[uid] = _Tracking()
            status = job.get("status") or {}
            if status.get("succeeded") or status.get("failed"):
                # a Job synced before (a restarted control plane): its finished pods are in its counts
                for pod in pods:
                    if (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
                        tracking.counted.add(pod["metadata"]["uid"])
        return tracking

    def _sync(self, job: Mapping[str, Any], pods: list[Mapping[str, Any]]) -> None:
        spec = job.get("spec") or {}
        old: Mapping[str, Any] = job.get("status") or {}
        now = self._now()
        now_ts = self.store.timestamp()
        indexed = spec.get("completionMode") == INDEXED
        tracking = self._tracking_of(job, pods)
        succeeded, failed = int(old.get("succeeded") or 0), int(old.get("failed") or 0)
        done = parse_indexes(old.get("completedIndexes")) if indexed else set()
        suspended = spec.get("suspend") is True

        # count the pods that finished (or went) since the last sync
        def count(uid: str, ok: bool, index: int | None, at: float) -> None:
            nonlocal succeeded, failed
            tracking.counted.add(uid)
            if ok:
                if indexed:
                    if index is not None and index < int_field(spec, "completions", 0):
                        done.add(index)
                else:
                    succeeded += 1
                tracking.failures = 0
            else:
                failed += 1
                tracking.failures += 1
                tracking.last_failure = max(tracking.last_failure, at)

        for pod in pods:
            uid = pod["metadata"]["uid"]
            if uid in tracking.counted:
                continue
            phase = (pod.get("status") or {}).get("phase")
            if phase == "Succeeded":
                count(uid, True, _index_of(pod), now)
            elif phase == "Failed" or (pod["metadata"].get("deletionTimestamp") and not suspended):
                count(uid, False, _index_of(pod), _finished_at(pod, now))
        for uid, (ok, index) in sorted(tracking.gone.items()):
            if uid not in tracking.counted:
                count(uid, ok, index, now)
        tracking.gone.clear()
        if indexed:
            succeeded = len(done)

        active = [p for p in pods if is_pod_active(p)]
        terminating = [
            p
            for p in pods
            if p["metadata"].get("deletionTimestamp")
            and (p.get("status") or {}).get("phase") not in ("Succeeded", "Failed")
        ]
        status: Obj = {k: v for k, v in old.items() if k in ("conditions", "startTime", "completionTime")}
        conditions: list[Obj] = [dict(c) for c in status.get("conditions") or ()]
        interim = _condition(old, "FailureTarget") or _condition(old, "SuccessCriteriaMet")
        if interim is None:
            if suspended:
                self._suspend(job, active, conditions, now_ts)
                active = []
            else:
                if _condition({"conditions": conditions}, "Suspended") is not None:
                    self._resume(job, conditions, now_ts)
                    status["startTime"] = now_ts
                status.setdefault("startTime", now_ts)
                interim = self._judge(job, status, active, succeeded, failed, now, conditions, now_ts)
                if interim is None:
                    active = self._manage(job, pods, active, done, succeeded, tracking, now)
        if interim is not None:
            for pod in active:
                if self._delete_pod(job, pod):
                    terminating.append(pod)
                    if interim["type"] == "FailureTarget" and pod["metadata"]["uid"] not in tracking.counted:
                        tracking.counted.add(pod["metadata"]["uid"])
                        failed += 1
            active = []
            terminating = [p for p in terminating if self._still_there(p)]
            if not terminating:
                self._finish(job, status, conditions, interim, now_ts)
        status["conditions"] = conditions
        if not conditions:
            del status["conditions"]
        self._write_status(job, status, active, terminating, succeeded, failed, done if indexed else None)

    # ----- judging ------------------------------------------------------------------------------
    def _judge(
        self,
        job: Mapping[str, Any],
        status: Obj,
        active: list[Mapping[str, Any]],
        succeeded: int,
        failed: int,
        now: float,
        conditions: list[Obj],
        now_ts: str,
    ) -> Obj | None:
        """The interim condition the Job has reached now (added to `conditions`), or None."""
        spec = job.get("spec") or {}
        limit = int_field(spec, "backoffLimit", 6)
        restart = ((spec.get("template") or {}).get("spec") or {}).get("restartPolicy")
        reason = message = ""
        if failed > limit or (restart == "OnFailure" and _past_restart_limit(active, limit)):
            reason, message = "BackoffLimitExceeded", MSG_BACKOFF
        deadline = spec.get("activeDeadlineSeconds")
        start = parse_time(status.get("startTime"))
        if not reason and deadline is not None and start is not None:
            if now >= start + int(deadline):
                reason, message = "DeadlineExceeded", MSG_DEADLINE
            else:
                self._requeue(
                    job["metadata"].get("namespace", ""), job["metadata"]["name"], start + int(deadline) - now
                )
        if reason:
            cond = _new_condition("FailureTarget", reason, message, now_ts)
            conditions.append(cond)
            return cond
        completions = spec.get("completions")
        if succeeded > 0 and not active if completions is None else succeeded >= int(completions):
            cond = _new_condition("SuccessCriteriaMet", "CompletionsReached", MSG_COMPLETE, now_ts)
            conditions.append(cond)
            return cond
        return None

    def _finish(
        self,
        job: Mapping[str, Any],
        status: Obj,
        conditions: list[Obj],
        interim: Mapping[str, Any],
        now_ts: str,
    ) -> None:
        """No pod of the Job is left running: the terminal condition, completionTime and the event."""
        if interim["type"] == "SuccessCriteriaMet":
            conditions.append(_new_condition("Complete", "CompletionsReached", MSG_COMPLETE, now_ts))
            status["completionTime"] = now_ts
            self.recorder.event(job, "Normal", "Completed", "Job completed")
        else:
            conditions.append(_new_condition("Failed", interim["reason"], interim["message"], now_ts))
            self.recorder.event(job, "Warning", interim["reason"], interim["message"])
        meta = job["metadata"]
        if (job.get("spec") or {}).get("ttlSecondsAfterFinished") is not None:
            self._requeue(
                meta.get("namespace", ""), meta["name"], float(job["spec"]["ttlSecondsAfterFinished"])
            )

    # ----- pods -----------------------------------------------------------------------------------
    def _manage(
        self,
        job: Mapping[str, Any],
        pods: list[Mapping[str, Any]],
        active: list[Mapping[str, Any]],
        done: set[int],
        succeeded: int,
        tracking: _Tracking,
        now: float,
    ) -> list[Mapping[str, Any]]:
        """Create or delete pods toward the active count the Job wants; returns the active pods after."""
        spec = job.get("spec") or {}
        parallelism = int_field(spec, "parallelism", 1)
        completions = spec.get("completions")
        if completions is None:
            want = len(active) if succeeded > 0 else parallelism
        else:
            want = max(min(int(completions) - succeeded, parallelism), 0)
        if len(active) > want:
            extra = sorted(active, key=_deletion_rank)[: len(active) - want]
            for pod in extra:
                self._delete_pod(job, pod)
            return [p for p in active if p not in extra]
        diff = min(want - len(active), BURST_REPLICAS)
        if spec.get("podReplacementPolicy") == "Failed":
            diff -= sum(1 for p in pods if p["metadata"].get("deletionTimestamp") and is_pod_active(p))
        if diff <= 0:
            return active
        if tracking.failures:
            delay = min(BACKOFF_INITIAL * 2 ** (tracking.failures - 1), BACKOFF_MAX)
            remaining = tracking.last_failure + delay - now
            if remaining > 0:
                meta = job["metadata"]
                self._requeue(meta.get("namespace", ""), meta["name"], remaining)
                return active
        indexes: list[int | None] = [None] * diff
        if spec.get("completionMode") == INDEXED:
            busy = {_index_of(p) for p in active} | done
            free = (i for i in range(int(completions or 0)) if i not in busy)
            indexes = [i for _, i in zip(range(diff), free, strict=False)]
        created = list(active)
        for index in indexes:
            try:
                pod = self.store.create(_pod_from_job(job, index))
            except StatusError as e:
                self.recorder.event(job, "Warning", "FailedCreate", f"Error creating: {e}")
                self._write_failed = True
                break
            self.recorder.event(job, "Normal", "SuccessfulCreate", f"Created pod: {pod['metadata']['name']}")
            created.append(pod)
        return created

    def _delete_pod(self, job: Mapping[str, Any], pod: Mapping[str, Any]) -> bool:
        """Delete one pod with a SuccessfulDelete event; False when it was already gone."""
        meta = pod["metadata"]
        try:
            self.store.delete(POD_KEY, meta.get("namespace", ""), meta["name"], uid=meta["uid"])
        except NotFound:
            return False
        except StatusError as e:
            self.recorder.event(job, "Warning", "FailedDelete", f"Error deleting: {e}")
            self._write_failed = True
            return False
        self.recorder.event(job, "Normal", "SuccessfulDelete", f"Deleted pod: {meta['name']}")
        return True

    def _still_there(self, pod: Mapping[str, Any]) -> bool:
        meta = pod["metadata"]
        try:
            current = self.store.get(POD_KEY, meta.get("namespace", ""), meta["name"])
        except NotFound:
            return False
        return bool(current["metadata"].get("uid") == meta["uid"])

    def _suspend(
        self, job: Mapping[str, Any], active: list[Mapping[str, Any]], conditions: list[Obj], now_ts: str
    ) -> None:
        """``suspend: true``: the active pods go (not counted as failures) and the Suspended condition is set."""
        tracking = self._tracking[job["metadata"]["uid"]]
        for pod in active:
            tracking.counted.add(pod["metadata"]["uid"])
            self._delete_pod(job, pod)
        if _condition({"conditions": conditions}, "Suspended") is None:
            conditions[:] = [c for c in conditions if c.get("type") != "Suspended"]
            conditions.append(_new_condition("Suspended", "JobSuspended", "Job suspended", now_ts))
            self.recorder.event(job, "Normal", "Suspended", "Job suspended")

    def _resume(self, job: Mapping[str, Any], conditions: list[Obj], now_ts: str) -> None:
        for c in conditions:
            if c.get("type") == "Suspended":
                c.update(
                    status="False",
                    reason="JobResumed",
                    message="Job resumed",
                    lastProbeTime=now_ts,
                    lastTransitionTime=now_ts,
                )
        self.recorder.event(job, "Normal", "Resumed", "Job resumed")

    # ----- status and expiry ----------------------------------------------------------------------
    def _write_status(
        self,
        job: Mapping[str, Any],
        status: Obj,
        active: list[Mapping[str, Any]],
        terminating: list[Mapping[str, Any]],
        succeeded: int,
        failed: int,
        done: set[int] | None,
    ) -> None:
        out: Obj = {k: status[k] for k in ("conditions", "startTime", "completionTime") if k in status}
        for field, value in (("active", len(active)), ("succeeded", succeeded), ("failed", failed)):
            if value:
                out[field] = value
        out["terminating"] = len(terminating)
        if done:
            out["completedIndexes"] = format_indexes(done)
        out["uncountedTerminatedPods"] = {}
        out["ready"] = sum(1 for p in active if _is_ready(p))
        if out != (job.get("status") or {}):
            self.store.update_status({**job, "status": out})

    def _expire(self, job: Mapping[str, Any]) -> None:
        """ttlSecondsAfterFinished: delete the finished Job (foreground) once its time is up."""
        ttl = (job.get("spec") or {}).get("ttlSecondsAfterFinished")
        if ttl is None:
            return
        meta = job["metadata"]
        finished = None
        for c in (job.get("status") or {}).get("conditions") or ():
            if c.get("type") in ("Complete", "Failed") and c.get("status") == "True":
                finished = parse_time(c.get("lastTransitionTime"))
        if finished is None:
            return
        left = finished + int(ttl) - self._now()
        if left > 0:
            self._requeue(meta.get("namespace", ""), meta["name"], left)
            return
        try:
            self.store.delete(
                JOB_KEY, meta.get("namespace", ""), meta["name"], uid=meta["uid"], propagation="Foreground"
            )
        except NotFound:
            return


def _past_restart_limit(active: list[Mapping[str, Any]], limit: int) -> bool:
    """pastBackoffLimitOnFailure: the container restarts of the running/pending pods reach the limit."""
    restarts = 0
    for pod in active:
        status = pod.get("status") or {}
        if status.get("phase") in ("Running", "Pending", None):
            for part in ("initContainerStatuses", "containerStatuses"):
                restarts += sum(int(cs.get("restartCount") or 0) for cs in status.get(part) or ())
    return restarts > 0 if limit == 0 else restarts >= limit


def _is_ready(pod: Mapping[str, Any]) -> bool:
    for c in (pod.get("status") or {}).get("conditions") or ():
        if c.get("type") == "Ready":
            return bool(c.get("status") == "True")
    return False


def _deletion_rank(pod: Mapping[str, Any]) -> tuple[int, int, str]:
    """Which active pods go first when there are too many: unscheduled, then not running, then not ready."""
    status = pod.get("status") or {}
    scheduled = 1 if (pod.get("spec") or {}).get("nodeName") else 0
    running = 1 if status.get("phase") == "Running" else 0
    return (scheduled, running + (1 if _is_ready(pod) else 0), pod["metadata"]["name"])


def _new_condition(type_: str, reason: str, message: str, now_ts: str) -> Obj:
    return {
        "type": type_,
        "status": "True",
        "lastProbeTime": now_ts,
        "lastTransitionTime": now_ts,
        "reason": reason,
        "message": message,
    }


def _pod_from_job(job: Mapping[str, Any], index: int | None) -> Obj:
    """A new pod from the Job's template (``<job>-`` or ``<job>-<index>-``), controlled by the Job."""
    meta = job["metadata"]
    template = (job.get("spec") or {}).get("template") or {}
    tmeta = template.get("metadata") or {}
    name = meta["name"]
    pmeta: Obj = {"namespace": meta.get("namespace", "default")}
    labels = dict(tmeta.get("labels") or {})
    annotations = dict(tmeta.get("annotations") or {})
    spec: Obj = dict(template.get("spec") or {})
    if index is None:
        pmeta["generateName"] = f"{name}-"
    else:
        pmeta["generateName"] = f"{name}-{index}-"
        labels[COMPLETION_INDEX] = str(index)
        annotations[COMPLETION_INDEX] = str(index)
        spec.setdefault("hostname", f"{name}-{index}")
        env_var = {
            "name": "JOB_COMPLETION_INDEX",
            "valueFrom": {"fieldRef": {"fieldPath": f"metadata.annotations['{COMPLETION_INDEX}']"}},
        }
        spec["containers"] = [
            {**c, "env": [*(c.get("env") or ()), env_var]} for c in spec.get("containers") or ()
        ]
    if labels:
        pmeta["labels"] = labels
    if annotations:
        pmeta["annotations"] = annotations
    if tmeta.get("finalizers"):
        pmeta["finalizers"] = list(tmeta["finalizers"])
    pmeta["ownerReferences"] = [controller_ref(job)]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": pmeta, "spec": spec}
