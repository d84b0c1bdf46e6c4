"""CapacityScheduling: ElasticQuota admission (PreFilter/Reserve) and quota-aware preemption (PostFilter)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from berth.scheduler.framework import ConfigError, Handle, Registry
from berth.scheduler.plugins.capacityscheduling.plugin import (
    NAME,
    STATE_KEY,
    CapacityScheduling,
    over_max_message,
    over_min_message,
)
from berth.scheduler.plugins.capacityscheduling.preemption import (
    QuotaPreemption,
    potential_victims,
    select_quota_victims,
)
from berth.scheduler.plugins.capacityscheduling.quota import PreFilterState, QuotaBook, QuotaInfo, QuotaLedger


def new_capacity_scheduling(args: Mapping[str, Any], handle: Handle) -> CapacityScheduling:
    """Factory of CapacityScheduling (its args, e.g. kubeConfigPath, are accepted and unused)."""
    if args is not None and not isinstance(args, Mapping):
        raise ConfigError(f"{NAME}: args must be an object")
    return CapacityScheduling(handle)


def register(registry: Registry) -> None:
    """Add CapacityScheduling to ``registry``."""
    registry.register(NAME, new_capacity_scheduling)


__all__ = [
    "NAME",
    "STATE_KEY",
    "CapacityScheduling",
    "PreFilterState",
    "QuotaBook",
    "QuotaInfo",
    "QuotaLedger",
    "QuotaPreemption",
    "new_capacity_scheduling",
    "over_max_message",
    "over_min_message",
    "potential_victims",
    "register",
    "select_quota_victims",
]
