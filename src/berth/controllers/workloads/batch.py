"""batch/v1 controllers (Job, CronJob) for the control plane, as kube-controller-manager's.

`BatchControllers` takes the store's watch events (`handle_event`) of Pods, Jobs and CronJobs, keeps an
informer-style pod index, and runs each object's sync on a clock timer at the current time (coalesced per
object, so a burst of events syncs once) or later (a controller's requeue: a back-off, a deadline, the next
scheduled time). Single-threaded; nothing sleeps.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from berth.api.contracts import Recorder, Store
from berth.clock import Clock
from berth.controllers.workloads.common import POD_KEY, controller_of, parse_time
from berth.controllers.workloads.cronjob import CRONJOB_KEY, CronJobController
from berth.controllers.workloads.job import JOB_KEY, JobController
from berth.controllers.workloads.podindex import PodIndex
from berth.controllers.workloads.timers import ReconcileTimers
from berth.store.events import EventRecorder

__all__ = ["BATCH_KINDS", "BatchControllers"]

BATCH_KINDS = ("Pod", "Job", "CronJob")
"""The kinds whose events the batch controllers follow."""
RECONCILE_PRIORITY = 10

_Key = tuple[str, str, str]  # (kind, namespace, name)


class BatchControllers:
    """The Job controller (when `jobs`) and the CronJob controller (when `cronjobs`), on `clock`."""

    def __init__(
        self,
        store: Store,
        clock: Clock,
        *,
        jobs: bool = True,
        cronjobs: bool = True,
        job_events: Recorder | None = None,
        cronjob_events: Recorder | None = None,
    ) -> None:
        """Create the controllers over `store` (events from "job-controller" and "cronjob-controller" unless
        other recorders are given); objects already in the store are indexed and synced once."""
        self.store = store
        self.clock = clock
        self._epoch = parse_time(store.timestamp(0.0)) or 0.0
        self.pods = PodIndex()
        self.jobs = (
            JobController(
                store,
                self.pods,
                job_events or EventRecorder(store, component="job-controller"),
                self._now,
                lambda ns, name, delay: self._enqueue_after(("Job", ns, name), delay),
            )
            if jobs
            else None
        )
        self.cronjobs = (
            CronJobController(
                store,
                self.pods,
                cronjob_events or EventRecorder(store, component="cronjob-controller"),
                self._now,
                lambda ns, name, delay: self._enqueue_after(("CronJob", ns, name), delay),
            )
            if cronjobs
            else None
        )
        self._timers = ReconcileTimers(clock, self._run, RECONCILE_PRIORITY)
        if self.jobs is not None:
            for pod in store.list(POD_KEY)[0]:
                if (controller_of(pod) or {}).get("kind") == "Job":
                    self.pods.upsert(pod)
        for key, kind, on in ((JOB_KEY, "Job", jobs), (CRONJOB_KEY, "CronJob", cronjobs)):
            if on:
                for obj in store.list(key)[0]:
                    meta = obj["metadata"]
                    self._enqueue((kind, meta.get("namespace", ""), meta["name"]))

    def _now(self) -> float:
        return self._epoch + self.clock.now()

    # ----- queueing ---------------------------------------------------------------------------
    def _enqueue(self, key: _Key) -> None:
        self._timers.enqueue(key)

    def _enqueue_after(self, key: _Key, delay: float) -> None:
        self._timers.enqueue_after(key, max(delay, 0.0))

    def _run(self, key: _Key) -> None:
        kind, ns, name = key
        if kind == "Job" and self.jobs is not None:
            self.jobs.sync(ns, name)
        elif kind == "CronJob" and self.cronjobs is not None:
            self.cronjobs.sync(ns, name)

    def pending(self) -> int:
        """Number of syncs waiting to run now."""
        return self._timers.pending()

    # ----- events -----------------------------------------------------------------------------
    def handle_event(self, type_: str, obj: Mapping[str, Any]) -> None:
        """React to an ADDED/MODIFIED/DELETED event of a Pod, Job or CronJob (others are ignored)."""
        kind = obj.get("kind")
        if kind == "Pod":
            self.handle_pod(type_, obj)
            return
        meta = obj["metadata"]
        ns = meta.get("namespace", "")
        if kind == "Job":
            ref = controller_of(obj)
            if self.jobs is not None:
                if type_ == "DELETED":
                    self.jobs.job_deleted(obj)
                else:
                    self._enqueue(("Job", ns, meta["name"]))
            if self.cronjobs is not None and ref is not None and ref.get("kind") == "CronJob":
                self._enqueue(("CronJob", ns, str(ref.get("name"))))
        elif kind == "CronJob" and self.cronjobs is not None and type_ != "DELETED":
            self._enqueue(("CronJob", ns, meta["name"]))

    def handle_pod(self, type_: str, obj: Mapping[str, Any]) -> None:
        """React to an ADDED/MODIFIED/DELETED event of a Pod: a Job's own pod is indexed and its Job synced."""
        if self.jobs is None:
            return
        meta = obj["metadata"]
        if not meta.get("ownerReferences"):
            return  # no controller, so no Job's (orphans are not adopted)
        ref = controller_of(obj)
        if ref is None or ref.get("kind") != "Job":
            return  # only a Job's own pods matter here (orphans are not adopted)
        if type_ == "DELETED":
            self.pods.remove(obj)
            self.jobs.pod_deleted(obj)
        else:
            self.pods.upsert(obj)
        self._enqueue(("Job", meta.get("namespace", ""), str(ref.get("name"))))
