"""PrioritySort: the default queue order (higher priority first, then earlier enqueue time)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from berth.scheduler.framework import Handle, PodInfo, Registry

NAME = "PrioritySort"


class PrioritySort:
    """Orders the active queue by descending pod priority, then by the time the pod was enqueued."""

    name = NAME

    def sort_key(self, pod: PodInfo, enqueued_at: float) -> tuple[int, float]:
        """Smaller keys pop first: ``(-priority, enqueued_at)``."""
        return (-pod.priority, enqueued_at)

    def less(self, a: PodInfo, a_enqueued: float, b: PodInfo, b_enqueued: float) -> bool:
        """kube's Less: whether ``a`` should be popped before ``b``."""
        return self.sort_key(a, a_enqueued) < self.sort_key(b, b_enqueued)


def new(args: Mapping[str, Any], handle: Handle) -> PrioritySort:
    """Factory (the plugin takes no args)."""
    return PrioritySort()


def register(registry: Registry) -> None:
    """Add PrioritySort to ``registry``."""
    registry.register(NAME, new)


__all__ = ["NAME", "PrioritySort", "new", "register"]
