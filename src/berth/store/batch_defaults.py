"""Admission defaults for batch/v1 Jobs and CronJobs, as kube-apiserver applies them.

A Job gets batch/v1's defaults on every write and, on creation, its generated selector and template labels
(`berth.api.job.generate_selector`, which needs the uid the store has already given it) and an empty status; an
update that changes an immutable field is refused (`berth.api.job.job_update_causes`). A CronJob gets its
defaults on every write.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from berth.api.cronjob import default_cron_job
from berth.api.errors import Invalid
from berth.api.job import default_job, generate_selector, job_update_causes
from berth.store.memory import admits_kinds, status_blind

__all__ = ["batch_admission"]

AdmissionFn = Callable[[str, dict[str, Any], dict[str, Any] | None], dict[str, Any]]


def _is_batch(obj: dict[str, Any]) -> bool:
    api_version = obj.get("apiVersion")
    return isinstance(api_version, str) and api_version.rpartition("/")[0] == "batch"


def batch_admission() -> AdmissionFn:
    """The admission function that defaults Jobs and CronJobs (other objects pass through unchanged)."""

    @admits_kinds("Job", "CronJob")
    @status_blind  # a status write keeps the stored spec, defaulted when it was written
    def admit(operation: str, obj: dict[str, Any], old: dict[str, Any] | None) -> dict[str, Any]:
        kind = obj.get("kind")
        if kind not in ("Job", "CronJob") or not _is_batch(obj):
            return obj
        if kind == "CronJob":
            default_cron_job(obj)
            return obj
        default_job(obj)
        if operation == "CREATE":
            generate_selector(obj)
            obj.pop("status", None)
        elif old is not None:
            causes = job_update_causes(obj, old)
            if causes:
                raise Invalid.of("Job", "batch", str((obj.get("metadata") or {}).get("name") or ""), causes)
        return obj

    return admit
