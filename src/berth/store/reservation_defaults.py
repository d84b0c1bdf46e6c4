"""Admission defaults for Koordinator ``Reservation`` objects (the CRD's schema defaults).

* ``spec.ttl: "24h"`` when ``ttl`` is absent (the CRD default applies whenever the field is missing, so a
  reservation with only ``expires`` also gets it, and expires at the earlier of the two);
* ``spec.allocateOnce: true`` when absent;
* ``spec.preAllocationPolicy.mode: Default`` and ``enableMultiple: false`` inside a given
  ``preAllocationPolicy``;
* ``status.phase: Pending`` on creation when no phase is given.

Spec defaults are applied on CREATE and UPDATE, as the API server defaults every decoded request.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from berth.api.reservation import DEFAULT_TTL, PHASE_PENDING, PRE_ALLOCATION_MODE_DEFAULT, RESERVATION_GROUP
from berth.store.memory import admits_kinds, status_blind

__all__ = ["default_reservation_spec", "reservation_admission"]

AdmissionFn = Callable[[str, dict[str, Any], dict[str, Any] | None], dict[str, Any]]


def default_reservation_spec(spec: dict[str, Any]) -> None:
    """Fill the CRD schema defaults into a Reservation spec (in place)."""
    if spec.get("ttl") is None:
        spec["ttl"] = DEFAULT_TTL
    if spec.get("allocateOnce") is None:
        spec["allocateOnce"] = True
    pap = spec.get("preAllocationPolicy")
    if isinstance(pap, dict):
        if pap.get("mode") is None:
            pap["mode"] = PRE_ALLOCATION_MODE_DEFAULT
        if pap.get("enableMultiple") is None:
            pap["enableMultiple"] = False


def _is_reservation(obj: dict[str, Any]) -> bool:
    if obj.get("kind") != "Reservation":
        return False
    api_version = obj.get("apiVersion")
    return isinstance(api_version, str) and api_version.rpartition("/")[0] == RESERVATION_GROUP


def reservation_admission() -> AdmissionFn:
    """The admission function that defaults Reservations (other objects pass through unchanged)."""

    @admits_kinds("Reservation")
    @status_blind  # a status write keeps only the status, and that is defaulted on create only
    def admit(operation: str, obj: dict[str, Any], old: dict[str, Any] | None) -> dict[str, Any]:
        if not _is_reservation(obj):
            return obj
        spec = obj.get("spec")
        if isinstance(spec, dict):
            default_reservation_spec(spec)
        if operation == "CREATE":
            status = obj.get("status")
            if status is None:
                obj["status"] = {"phase": PHASE_PENDING}
            elif isinstance(status, dict) and not status.get("phase"):
                status["phase"] = PHASE_PENDING
        return obj

    return admit
