"""Volume plugins of kube's default profile as no-op placeholders (Berth models no volumes yet).

They implement no extension point, so they never affect a decision; they exist so that the
default plugin names, and configurations naming them, resolve.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from berth.scheduler.framework import ClusterEvent, Handle, Registry

NAMES = ("VolumeRestrictions", "NodeVolumeLimits", "VolumeBinding", "VolumeZone")


class VolumePlaceholder:
    """A named plugin that takes part in no extension point."""

    def __init__(self, name: str) -> None:
        self.name = name

    def events_to_register(self) -> list[ClusterEvent]:
        """It never rejects a pod, so no event is of interest."""
        return []

    def __repr__(self) -> str:
        return f"VolumePlaceholder({self.name})"


def _factory(name: str) -> Callable[[Mapping[str, Any], Handle], VolumePlaceholder]:
    def new(args: Mapping[str, Any], handle: Handle) -> VolumePlaceholder:
        return VolumePlaceholder(name)

    return new


def register(registry: Registry) -> None:
    """Add the four volume placeholders to ``registry``."""
    for name in NAMES:
        registry.register(name, _factory(name))


__all__ = ["NAMES", "VolumePlaceholder", "register"]
