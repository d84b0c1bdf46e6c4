"""The registry the scheduler uses by default: the built-in plugins plus names reserved for later ones.

kube-scheduler's default profile names PodTopologySpread, InterPodAffinity and ImageLocality. Until
Berth implements them they are registered as plugins that take part in no extension point, so kube's
configurations (and Berth's default profile) load unchanged.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from berth.scheduler.framework.plugin import Handle
from berth.scheduler.framework.registry import Registry
from berth.scheduler.plugins import default_registry

NOT_YET_IMPLEMENTED = ("PodTopologySpread", "InterPodAffinity", "ImageLocality")


class ReservedPlugin:
    """A known kube plugin name that Berth does not implement yet: it extends no point."""

    def __init__(self, name: str) -> None:
        self.name = name


def _reserved(name: str) -> Any:
    def factory(args: Mapping[str, Any], handle: Handle) -> ReservedPlugin:
        return ReservedPlugin(name)

    return factory


def builtin_registry() -> Registry:
    """Every built-in plugin, plus the reserved names."""
    registry = default_registry()
    for name in NOT_YET_IMPLEMENTED:
        if name not in registry:
            registry.register(name, _reserved(name))
    return registry
