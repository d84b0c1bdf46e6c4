"""Reservation-backed preemption (a Berth extension): hold the room a preemption freed for its preemptor.

With ``reservePreemptedResources: true`` a successful preemption also creates a Koordinator Reservation
named ``preemption-<preemptor uid>``, owned by the preemptor alone, pinned to the nominated node, with the
preemptor's labels, namespace and spec as its template (so it reserves exactly the preemptor's requests and
is scheduled by the preemptor's profile; without the preemptor's priority, so its reserve pod outranks every
pod), ``allocateOnce: true`` and ``ttl: 5m``. When the victims are gone
the reservation claims their room and the preemptor allocates it (allocateOnce then ends it). If the
preemptor is bound without it (it was scheduled first) or is deleted, the plugin deletes the reservation;
otherwise it expires after five minutes. A reservation left from an earlier preemption on another node is
replaced.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from berth.scheduler.framework.podinfo import PodInfo

RESERVATION_API_VERSION = "scheduling.koordinator.sh/v1alpha1"
RESERVATION_KEY = ("scheduling.koordinator.sh", "Reservation")
RESERVATION_TTL = "5m"
NAME_PREFIX = "preemption-"


def reservation_name(preemptor: PodInfo) -> str:
    """The name of the reservation created for ``preemptor``."""
    return NAME_PREFIX + preemptor.uid


def preemption_reservation(preemptor: PodInfo, node: str) -> dict[str, Any]:
    """The Reservation that holds ``node``'s freed resources for ``preemptor``."""
    obj: Mapping[str, Any] = preemptor.obj
    meta: Mapping[str, Any] = obj.get("metadata") or {}
    spec = dict(obj.get("spec") or {})
    spec["nodeName"] = node
    spec["schedulerName"] = preemptor.scheduler_name
    # no priority: the reserve pod then ranks above every pod (Koordinator's MaxInt32 default), so it claims
    # the freed room the moment the victims are gone, before any other pod can
    for field in ("priority", "priorityClassName", "preemptionPolicy", "nominatedNodeName"):
        spec.pop(field, None)
    template_meta: dict[str, Any] = {"namespace": preemptor.namespace}
    labels = meta.get("labels")
    if labels:
        template_meta["labels"] = dict(labels)
    return {
        "apiVersion": RESERVATION_API_VERSION,
        "kind": "Reservation",
        "metadata": {"name": reservation_name(preemptor)},
        "spec": {
            "template": {"metadata": template_meta, "spec": spec},
            "owners": [
                {"object": {"name": preemptor.name, "namespace": preemptor.namespace, "uid": preemptor.uid}}
            ],
            "allocateOnce": True,
            "ttl": RESERVATION_TTL,
        },
    }


def pinned_node(reservation: Mapping[str, Any]) -> str:
    """The node a reservation's template pins (template.spec.nodeName)."""
    template = (reservation.get("spec") or {}).get("template") or {}
    return str((template.get("spec") or {}).get("nodeName") or "")
