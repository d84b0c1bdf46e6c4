"""Status conditions of Kubernetes objects: finding one, and building or setting one as upstream does."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["find_condition", "is_pod_ready", "pod_condition", "probe_condition", "set_status_condition"]


def find_condition(conditions: Iterable[Mapping[str, Any]] | None, type_: str) -> Mapping[str, Any] | None:
    """The first condition of type `type_` in `conditions` (e.g. ``status.conditions``), or None."""
    for c in conditions or ():
        if c.get("type") == type_:
            return c
    return None


def pod_condition(pod: Mapping[str, Any], type_: str) -> Mapping[str, Any] | None:
    """The pod's condition of type `type_` (``status.conditions``), or None."""
    return find_condition((pod.get("status") or {}).get("conditions"), type_)


def is_pod_ready(pod: Mapping[str, Any]) -> bool:
    """podutil.IsPodReady: the pod's Ready condition is True."""
    c = pod_condition(pod, "Ready")
    return c is not None and c.get("status") == "True"


def probe_condition(type_: str, status: str, reason: str, now: str) -> dict[str, Any]:
    """A new condition probed and changed at `now` (the shape Koordinator's Reservation conditions have)."""
    return {
        "type": type_,
        "status": status,
        "reason": reason,
        "lastProbeTime": now,
        "lastTransitionTime": now,
    }


def set_status_condition(
    status: dict[str, Any], type_: str, cond_status: str, reason: str, message: str, generation: int, now: str
) -> None:
    """apimeta.SetStatusCondition: add or update a metav1.Condition (transition time only on status change)."""
    conditions = [dict(c) for c in status.get("conditions") or ()]
    for c in conditions:
        if c.get("type") == type_:
            if c.get("status") != cond_status:
                c["status"] = cond_status
                c["lastTransitionTime"] = now
            c["reason"] = reason
            c["message"] = message
            c["observedGeneration"] = generation
            break
    else:
        conditions.append(
            {
                "type": type_,
                "status": cond_status,
                "observedGeneration": generation,
                "lastTransitionTime": now,
                "reason": reason,
                "message": message,
            }
        )
    status["conditions"] = conditions
