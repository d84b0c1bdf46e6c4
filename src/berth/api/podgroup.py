"""PodGroup (scheduler-plugins' gang of pods): well-known names, the compiled spec and its validation.

A pod joins the group named by its ``scheduling.x-k8s.io/pod-group`` label, in its own namespace.
Validation follows the PodGroup CRD's OpenAPI schema (minMember >= 1, int32 fields, quantities).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from berth.api.quantity import resource_amount

if TYPE_CHECKING:
    from berth.api.checks import Context

POD_GROUP_LABEL = "scheduling.x-k8s.io/pod-group"
POD_GROUP_KIND = "PodGroup"
POD_GROUP_GROUPS = ("scheduling.x-k8s.io", "scheduling.sigs.k8s.io")

PHASE_PENDING = "Pending"
PHASE_SCHEDULING = "Scheduling"
PHASE_RUNNING = "Running"
PHASE_FINISHED = "Finished"
PHASE_FAILED = "Failed"

_INT32_MAX = (1 << 31) - 1
_INT32_MIN = -(1 << 31)
_EMPTY: Mapping[str, Any] = {}


@dataclass(frozen=True, slots=True)
class PodGroupSpec:
    """A PodGroup's spec compiled for the scheduler: amounts in scheduler units (cpu in milli-units)."""

    namespace: str
    name: str
    min_member: int
    min_resources: Mapping[str, int] | None
    schedule_timeout_seconds: int | None
    created: str  # metadata.creationTimestamp (RFC 3339)

    @property
    def full_name(self) -> str:
        """``<namespace>/<name>``, as scheduler-plugins names a group in messages."""
        return f"{self.namespace}/{self.name}"


def compile_pod_group(obj: Mapping[str, Any]) -> PodGroupSpec:
    """The compiled form of a (validated) PodGroup object."""
    meta = obj.get("metadata") or _EMPTY
    spec = obj.get("spec") or _EMPTY
    raw = spec.get("minResources")
    min_resources = None if raw is None else {k: resource_amount(k, v) for k, v in raw.items()}
    timeout = spec.get("scheduleTimeoutSeconds")
    return PodGroupSpec(
        namespace=meta.get("namespace") or "default",
        name=meta.get("name") or "",
        min_member=int(spec.get("minMember") or 0),
        min_resources=min_resources,
        schedule_timeout_seconds=None if timeout is None else int(timeout),
        created=meta.get("creationTimestamp") or "",
    )


def pod_group_name(pod: Mapping[str, Any]) -> str:
    """The PodGroup a pod (wire form) belongs to ("" if none)."""
    labels = (pod.get("metadata") or _EMPTY).get("labels") or _EMPTY
    value = labels.get(POD_GROUP_LABEL)
    return value if isinstance(value, str) else ""


def _int32(ctx: Context, path: str, value: object, minimum: int | None = None) -> None:
    """An int32 field as the CRD schema checks it (type, format, then minimum)."""
    if value is None:
        return
    if type(value) is not int:
        kind = "string" if isinstance(value, str) else type(value).__name__
        ctx.invalid(path, value, f'{path} in body must be of type integer: "{kind}"')
    if not _INT32_MIN <= value <= _INT32_MAX:
        ctx.invalid(path, value, f"{path} in body should be between {_INT32_MIN} and {_INT32_MAX}")
    if minimum is not None and value < minimum:
        ctx.invalid(path, value, f"{path} in body should be greater than or equal to {minimum}")


def validate_pod_group(obj: Mapping[str, Any], ctx: Context) -> None:
    """Check a PodGroup against the CRD schema; raises through ``ctx`` naming the field and value."""
    spec = ctx.mapping("spec", obj.get("spec"))
    _int32(ctx, "spec.minMember", spec.get("minMember"), minimum=1)
    _int32(ctx, "spec.scheduleTimeoutSeconds", spec.get("scheduleTimeoutSeconds"))
    ctx.resource_list("spec.minResources", spec.get("minResources"))
    status = ctx.mapping("status", obj.get("status"))
    phase = status.get("phase")
    if phase is not None:
        ctx.string("status.phase", phase)
    for key in ("running", "succeeded", "failed"):
        _int32(ctx, f"status.{key}", status.get(key))


__all__ = [
    "GANG_DONE_PHASES",
    "PHASE_FAILED",
    "PHASE_FINISHED",
    "PHASE_PENDING",
    "PHASE_RUNNING",
    "PHASE_SCHEDULING",
    "POD_GROUP_GROUPS",
    "POD_GROUP_KIND",
    "POD_GROUP_LABEL",
    "PodGroupSpec",
    "compile_pod_group",
    "gang_waiting",
    "pod_group_name",
    "validate_pod_group",
]


GANG_DONE_PHASES = frozenset({"Scheduled", "Running", "Finished", "Succeeded"})
"""PodGroup phases after which a gang no longer waits for members."""


def gang_waiting(min_member: int, phase: str, scheduled: int, running: int, succeeded: int) -> bool:
    """Whether a gang is still short of ``minMember``: fewer pods scheduled (or running plus succeeded) than it
    needs, and its phase not past waiting (the reports' and the dashboard's "PodGroups short of minMember")."""
    return max(scheduled, running + succeeded) < min_member and phase not in GANG_DONE_PHASES
