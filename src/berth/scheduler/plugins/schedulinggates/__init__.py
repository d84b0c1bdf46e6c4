"""SchedulingGates: keeps pods with non-empty ``spec.schedulingGates`` out of the active queue."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from berth.scheduler.framework import ClusterEvent, Code, Handle, PodInfo, Registry, Status

NAME = "SchedulingGates"
_SUCCESS = Status()


class SchedulingGates:
    """PreEnqueue gate: a pod waits while any scheduling gate remains."""

    name = NAME

    def pre_enqueue(self, pod: PodInfo) -> Status:
        """UnschedulableAndUnresolvable ``waiting for scheduling gates: [a b]`` while gates remain."""
        gates = pod.scheduling_gates
        if not gates:
            return _SUCCESS
        return Status(
            Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (f"waiting for scheduling gates: [{' '.join(gates)}]",)
        )

    def events_to_register(self) -> list[ClusterEvent]:
        """Removing a gate is a pod update."""
        return [ClusterEvent("Pod", frozenset({"Update"}))]


def new(args: Mapping[str, Any], handle: Handle) -> SchedulingGates:
    """Factory (the plugin takes no args)."""
    return SchedulingGates()


def register(registry: Registry) -> None:
    """Add SchedulingGates to ``registry``."""
    registry.register(NAME, new)


__all__ = ["NAME", "SchedulingGates", "new", "register"]
