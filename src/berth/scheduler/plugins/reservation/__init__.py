"""Koordinator's Reservation: reserve node resources for pods that do not exist yet."""

from __future__ import annotations

from berth.scheduler.framework.registry import Registry
from berth.scheduler.plugins.reservation.plugin import NAME, Reservation, ReservationArgs

__all__ = ["NAME", "Reservation", "ReservationArgs", "register"]


def register(registry: Registry) -> None:
    """Add the Reservation plugin."""
    registry.register(NAME, Reservation)
