"""Shared facts of the apps/v1 workload controllers: keys, well-known names, pod and owner helpers."""

from __future__ import annotations

import math
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from berth.api.conditions import pod_condition
from berth.api.contracts import Store
from berth.api.errors import StatusError

__all__ = [
    "DEPLOYMENT_KEY",
    "HASH_LABEL",
    "POD_KEY",
    "RS_KEY",
    "controller_of",
    "controller_ref",
    "is_pod_active",
    "ready_since",
    "scaled_value",
    "set_controller",
]

Obj = dict[str, Any]

POD_KEY = ("", "Pod")
RS_KEY = ("apps", "ReplicaSet")
DEPLOYMENT_KEY = ("apps", "Deployment")

HASH_LABEL = "pod-template-hash"
"""apps.DefaultDeploymentUniqueLabelKey: the label tying a ReplicaSet and its pods to one template."""

REVISION = "deployment.kubernetes.io/revision"
REVISION_HISTORY = "deployment.kubernetes.io/revision-history"
DESIRED_REPLICAS = "deployment.kubernetes.io/desired-replicas"
MAX_REPLICAS = "deployment.kubernetes.io/max-replicas"
DELETION_COST = "controller.kubernetes.io/pod-deletion-cost"

BURST_REPLICAS = 500
"""The ReplicaSet controller creates or deletes at most this many pods per sync (kube's burstReplicas)."""


def controller_ref(owner: Mapping[str, Any]) -> Obj:
    """metav1.NewControllerRef: the ownerReference a controller puts on the objects it creates."""
    meta = owner["metadata"]
    return {
        "apiVersion": owner.get("apiVersion", "apps/v1"),
        "kind": owner["kind"],
        "name": meta["name"],
        "uid": meta["uid"],
        "controller": True,
        "blockOwnerDeletion": True,
    }


def controller_of(obj: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The ownerReference with ``controller: true``, or None (metav1.GetControllerOf)."""
    for ref in obj["metadata"].get("ownerReferences") or ():
        if ref.get("controller"):
            return ref  # type: ignore[no-any-return]
    return None


def is_pod_active(pod: Mapping[str, Any]) -> bool:
    """controller.IsPodActive: not Succeeded/Failed and not being deleted."""
    if pod["metadata"].get("deletionTimestamp"):
        return False
    return (pod.get("status") or {}).get("phase") not in ("Succeeded", "Failed")


def parse_time(ts: str | None) -> float | None:
    """Seconds since the Unix epoch of an RFC 3339 timestamp, or None when absent/unparseable."""
    if not ts:
        return None
    try:
        return datetime.strptime(ts, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC).timestamp()
    except ValueError:
        return None


def ready_since(pod: Mapping[str, Any]) -> float | None:
    """When the pod last became Ready (the Ready condition's lastTransitionTime), or None."""
    c = pod_condition(pod, "Ready")
    if c is None or c.get("status") != "True":
        return None
    return parse_time(c.get("lastTransitionTime"))


def scaled_value(value: object, total: int, round_up: bool) -> int:
    """intstr.GetScaledValueFromIntOrPercent: an int as is, "N%" of `total` rounded up or down."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str) and value.endswith("%") and value[:-1].isdigit():
        exact = int(value[:-1]) * total / 100
        return math.ceil(exact) if round_up else math.floor(exact)
    raise ValueError(f"invalid value for IntOrString: invalid type: string is not a percentage: {value!r}")


def int_field(spec: Mapping[str, Any], name: str, default: int) -> int:
    """An int32 spec field with its apps/v1 default when absent."""
    v = spec.get(name)
    return default if v is None else int(v)


def set_controller(
    store: Store,
    obj: Mapping[str, Any],
    owner_uid: str,
    ref: Mapping[str, Any] | None,
    key: tuple[str, str] = POD_KEY,
) -> dict[str, Any] | None:
    """Adopt (`ref`: the new controller reference) or release (None) an object of kind `key` for the owner
    `owner_uid`, with a uid-preconditioned patch as kube's ClaimPods does; the patched object, or None when the
    patch failed."""
    meta = obj["metadata"]
    refs = [r for r in meta.get("ownerReferences") or () if r.get("uid") != owner_uid]
    if ref is not None:
        refs.append(dict(ref))
    patch = {"metadata": {"uid": meta["uid"], "ownerReferences": refs or None}}
    try:
        return store.patch(key, meta.get("namespace", ""), meta["name"], patch)
    except StatusError:
        return None
