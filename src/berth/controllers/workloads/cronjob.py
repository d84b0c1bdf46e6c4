"""The CronJob controller: make a Job at each scheduled time, as kube-controller-manager's (cronjob v2).

At each time the schedule names (read in ``spec.timeZone``, UTC when absent) the controller creates the Job
``<cronjob>-<scheduled time in minutes since the Unix epoch>`` from ``spec.jobTemplate``, annotated with
``batch.kubernetes.io/cronjob-scheduled-timestamp`` and controlled by the CronJob; it then sleeps (a clock timer)
until the next scheduled time. A time missed by more than ``startingDeadlineSeconds`` is skipped
(``MissSchedule``). ``concurrencyPolicy``: Allow runs Jobs side by side, Forbid skips a time while a Job is active
(``JobAlreadyActive``), Replace deletes the active Jobs first. ``suspend: true`` creates nothing. Finished Jobs
leave ``status.active`` (``SawCompletedJob``; a Complete one sets ``lastSuccessfulTime``) and all but the newest
``successfulJobsHistoryLimit`` (3) / ``failedJobsHistoryLimit`` (1) of them are deleted.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, tzinfo
from typing import Any

from berth.api.cronjob import SCHEDULED_TIMESTAMP, Schedule, ScheduleError, load_time_zone, parse_schedule
from berth.api.errors import AlreadyExists, NotFound, StatusError
from berth.controllers.workloads.common import controller_of, controller_ref, parse_time
from berth.controllers.workloads.job import JOB_KEY, is_job_finished
from berth.controllers.workloads.syncbase import SyncController

__all__ = ["CRONJOB_KEY", "CronJobController", "job_name"]

Obj = dict[str, Any]
CRONJOB_KEY = ("batch", "CronJob")
MAX_MISSED = 100
"""More missed start times than this get a TooManyMissedTimes warning (kube's limit)."""
_SEARCH_LIMIT = 100_000


def job_name(cron_job: str, scheduled: datetime) -> str:
    """getJobName: ``<cronjob>-<scheduled time in minutes since the Unix epoch>``."""
    return f"{cron_job}-{int(scheduled.timestamp()) // 60}"


def _rfc3339(t: datetime) -> str:
    """Go's RFC 3339 (``Z`` for UTC, else the offset)."""
    text = t.isoformat()
    return text[:-6] + "Z" if text.endswith("+00:00") else text


def _utc(ts: str | None) -> datetime | None:
    t = parse_time(ts)
    return None if t is None else datetime.fromtimestamp(t, UTC)


def _ts(t: datetime) -> str:
    return t.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


class CronJobController(SyncController):
    """Reconciles CronJobs against the Jobs they own (see the module docstring)."""

    def sync(self, namespace: str, name: str) -> None:
        """Account for one CronJob's Jobs, start the Job due now, trim the history, and sleep to the next time."""
        try:
            cj = self.store.get(CRONJOB_KEY, namespace, name)
        except NotFound:
            self._forget(namespace, name)
            return
        if cj["metadata"].get("deletionTimestamp"):
            return
        uid = cj["metadata"]["uid"]
        jobs = [
            j for j in self.store.list(JOB_KEY, namespace)[0] if (controller_of(j) or {}).get("uid") == uid
        ]
        old: Mapping[str, Any] = cj.get("status") or {}
        status: Obj = {k: v for k, v in old.items()}
        status["active"] = [dict(r) for r in old.get("active") or ()]
        try:
            delay = self._sync(cj, jobs, status)
            self._cleanup(cj, jobs)
        except StatusError:
            self._write(cj, status)
            self._retry_later(namespace, name)
            return
        self._write(cj, status)
        self._forget(namespace, name)
        if delay is not None:
            self._requeue(namespace, name, delay)

    def _write(self, cj: Mapping[str, Any], status: Obj) -> None:
        if not status.get("active"):
            status.pop("active", None)
        if status != (cj.get("status") or {}):
            try:
                self.store.update_status({**cj, "status": status})
            except NotFound:
                return

    def _sync(self, cj: Mapping[str, Any], jobs: Sequence[Mapping[str, Any]], status: Obj) -> float | None:
        """syncCronJob: returns the delay to the next sync (None: none until the CronJob changes)."""
        active: list[Obj] = status["active"]
        by_uid = {j["metadata"]["uid"]: j for j in jobs}
        for job in sorted(jobs, key=lambda j: j["metadata"]["name"]):
            juid = job["metadata"]["uid"]
            finished = is_job_finished(job)
            if finished and any(r.get("uid") == juid for r in active):
                active[:] = [r for r in active if r.get("uid") != juid]
                self.recorder.event(
                    cj,
                    "Normal",
                    "SawCompletedJob",
                    f"Saw completed job: {job['metadata']['name']}, condition: {finished}",
                )
            if finished == "Complete":
                done = _utc((job.get("status") or {}).get("completionTime"))
                last = _utc(status.get("lastSuccessfulTime"))
                if done is not None and (last is None or done > last):
                    status["lastSuccessfulTime"] = _ts(done)
        for ref in list(active):
            if ref.get("uid") not in by_uid:
                active.remove(ref)
                self.recorder.event(cj, "Normal", "MissingJob", f"Active job went missing: {ref.get('name')}")
        spec = cj.get("spec") or {}
        try:
            zone = load_time_zone(spec.get("timeZone"))
        except ValueError as e:
            self.recorder.event(
                cj, "Warning", "UnknownTimeZone", f'invalid timeZone: "{spec.get("timeZone")}": {e}'
            )
            return None
        if spec.get("suspend") is True:
            return None
        try:
            sched = parse_schedule(str(spec.get("schedule") or ""))
        except ScheduleError as e:
            self.recorder.event(
                cj, "Warning", "UnparseableSchedule", f'unparseable schedule: "{spec.get("schedule")}" : {e}'
            )
            return None
        now = datetime.fromtimestamp(self._now(), UTC)
        scheduled = self._most_recent(cj, status, sched, zone, now)
        if scheduled is None:
            return self._until_next(sched, zone, now)
        deadline = spec.get("startingDeadlineSeconds")
        if deadline is not None and scheduled.timestamp() + int(deadline) < now.timestamp():
            when = scheduled.strftime("%a, %d %b %Y %H:%M:%S +0000")
            self.recorder.event(
                cj, "Warning", "MissSchedule", f"Missed scheduled time to start a job: {when}"
            )
            return self._until_next(sched, zone, now)
        name = job_name(cj["metadata"]["name"], scheduled)
        if any(r.get("name") == name for r in active) or status.get("lastScheduleTime") == _ts(scheduled):
            return self._until_next(sched, zone, now)
        policy = spec.get("concurrencyPolicy") or "Allow"
        if policy == "Forbid" and active:
            self.recorder.event(
                cj,
                "Normal",
                "JobAlreadyActive",
                "Not starting job because prior execution is running and concurrency policy is Forbid",
            )
            return self._until_next(sched, zone, now)
        if policy == "Replace":
            for ref in list(active):
                replaced = by_uid.get(ref.get("uid"))
                if replaced is None:
                    continue
                self._delete_job(cj, replaced)
                active.remove(ref)
        try:
            created = self.store.create(self._job_from_template(cj, name, scheduled, zone))
        except AlreadyExists:
            status["lastScheduleTime"] = _ts(scheduled)
            return self._until_next(sched, zone, now)
        except StatusError as e:
            self.recorder.event(cj, "Warning", "FailedCreate", f"Error creating job: {e}")
            raise
        self.recorder.event(cj, "Normal", "SuccessfulCreate", f"Created job {name}")
        meta = created["metadata"]
        active.append(
            {
                "kind": "Job",
                "namespace": meta.get("namespace", ""),
                "name": meta["name"],
                "uid": meta["uid"],
                "apiVersion": "batch/v1",
                "resourceVersion": meta.get("resourceVersion", ""),
            }
        )
        status["lastScheduleTime"] = _ts(scheduled)
        return self._until_next(sched, zone, now)

    def _most_recent(
        self, cj: Mapping[str, Any], status: Mapping[str, Any], sched: Schedule, zone: tzinfo, now: datetime
    ) -> datetime | None:
        """mostRecentScheduleTime: the latest scheduled time not yet started, or None."""
        earliest = (
            _utc(status.get("lastScheduleTime")) or _utc(cj["metadata"].get("creationTimestamp")) or now
        )
        deadline = (cj.get("spec") or {}).get("startingDeadlineSeconds")
        if deadline is not None:
            floor = datetime.fromtimestamp(now.timestamp() - int(deadline), UTC)
            if floor > earliest:
                earliest = floor
        t = sched.next(earliest, zone)
        if t is None or t > now:
            return None
        missed = 1
        while missed < _SEARCH_LIMIT:
            following = sched.next(t, zone)
            if following is None or following > now:
                break
            t = following
            missed += 1
        if missed > MAX_MISSED:
            self.recorder.event(
                cj,
                "Warning",
                "TooManyMissedTimes",
                f"too many missed start times: {missed}. Set or decrease .spec.startingDeadlineSeconds or check "
                "clock skew",
            )
        return t

    def _until_next(self, sched: Schedule, zone: tzinfo, now: datetime) -> float | None:
        following = sched.next(now, zone)
        return None if following is None else following.timestamp() - now.timestamp()

    def _job_from_template(self, cj: Mapping[str, Any], name: str, scheduled: datetime, zone: tzinfo) -> Obj:
        """getJobFromTemplate2: the Job for one scheduled time."""
        template = (cj.get("spec") or {}).get("jobTemplate") or {}
        tmeta = template.get("metadata") or {}
        meta: Obj = {"name": name, "namespace": cj["metadata"].get("namespace", "default")}
        if tmeta.get("labels"):
            meta["labels"] = dict(tmeta["labels"])
        meta["annotations"] = {
            **(tmeta.get("annotations") or {}),
            SCHEDULED_TIMESTAMP: _rfc3339(scheduled.astimezone(zone)),
        }
        meta["ownerReferences"] = [controller_ref(cj)]
        return {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": meta,
            "spec": dict(template.get("spec") or {}),
        }

    def _delete_job(self, cj: Mapping[str, Any], job: Mapping[str, Any]) -> None:
        """deleteJob: delete one Job (its pods go in the background) with a SuccessfulDelete event."""
        meta = job["metadata"]
        try:
            self.store.delete(
                JOB_KEY, meta.get("namespace", ""), meta["name"], uid=meta["uid"], propagation="Background"
            )
        except NotFound:
            return
        except StatusError as e:
            self.recorder.event(cj, "Warning", "FailedDelete", f"Deleted job: {e}")
            raise
        self.recorder.event(cj, "Normal", "SuccessfulDelete", f"Deleted job {meta['name']}")

    def _cleanup(self, cj: Mapping[str, Any], jobs: Sequence[Mapping[str, Any]]) -> None:
        """cleanupFinishedJobs: keep the newest successfulJobsHistoryLimit / failedJobsHistoryLimit finished Jobs."""
        spec = cj.get("spec") or {}
        for outcome, field, default in (
            ("Complete", "successfulJobsHistoryLimit", 3),
            ("Failed", "failedJobsHistoryLimit", 1),
        ):
            limit = spec.get(field)
            limit = default if limit is None else int(limit)
            finished = [j for j in jobs if is_job_finished(j) == outcome]
            if len(finished) <= limit:
                continue
            finished.sort(key=_start_order)
            for job in finished[: len(finished) - limit]:
                self._delete_job(cj, job)


def _start_order(job: Mapping[str, Any]) -> tuple[int, float, str]:
    """byJobStartTime: by status.startTime (Jobs without one last), then by name."""
    start = parse_time((job.get("status") or {}).get("startTime"))
    return (0 if start is not None else 1, start or 0.0, job["metadata"]["name"])
