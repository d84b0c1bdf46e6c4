"""The built-in descheduler plugins by name (upstream's ``RegisterDefaultPlugins``)."""

from __future__ import annotations

from collections.abc import Mapping

from berth.descheduler.framework import PluginSpec
from berth.descheduler.plugins import (
    defaultevictor,
    failedpods,
    interpodantiaffinity,
    nodeaffinity,
    nodetaints,
    nodeutilization,
    podlifetime,
    removeduplicates,
    toomanyrestarts,
    topologyspread,
)

__all__ = ["builtin_plugins"]

_MODULES = (
    defaultevictor,
    nodeutilization,
    podlifetime,
    removeduplicates,
    failedpods,
    toomanyrestarts,
    interpodantiaffinity,
    nodeaffinity,
    nodetaints,
    topologyspread,
)


def builtin_plugins() -> Mapping[str, PluginSpec]:
    """Every built-in plugin, by its registered name."""
    return {spec.name: spec for module in _MODULES for spec in module.SPECS}
