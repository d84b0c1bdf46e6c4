"""The built-in scheduler plugins, one package each, and the registry of kube's default plugins."""

from __future__ import annotations

from berth.scheduler.framework import Registry
from berth.scheduler.plugins import (
    capacityscheduling,
    coscheduling,
    defaultbinder,
    defaultpreemption,
    gpushare,
    imagelocality,
    interpodaffinity,
    nodeaffinity,
    nodename,
    nodeports,
    nodepreferavoidpods,
    noderesources,
    nodeunschedulable,
    podtopologyspread,
    queuesort,
    reservation,
    schedulinggates,
    schedulingresults,
    tainttoleration,
    volume,
)

_PACKAGES = (
    schedulinggates,
    queuesort,
    nodeunschedulable,
    nodename,
    tainttoleration,
    nodeaffinity,
    nodeports,
    noderesources,
    podtopologyspread,
    interpodaffinity,
    imagelocality,
    volume,
    defaultbinder,
    defaultpreemption,
    reservation,
    nodepreferavoidpods,
    capacityscheduling,
    coscheduling,
    schedulingresults,
    gpushare,
)


def default_registry() -> Registry:
    """A new Registry holding every built-in plugin of this package."""
    registry = Registry()
    for pkg in _PACKAGES:
        pkg.register(registry)
    return registry


__all__ = ["default_registry"]
