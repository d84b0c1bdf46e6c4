"""NodeResourcesFit and NodeResourcesBalancedAllocation, with their args and the resource scorers."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from berth.scheduler.framework import Handle, Registry
from berth.scheduler.plugins.noderesources.args import (
    BALANCED,
    FIT,
    LEAST_ALLOCATED,
    MOST_ALLOCATED,
    REQUESTED_TO_CAPACITY_RATIO,
    NodeResourcesBalancedAllocationArgs,
    NodeResourcesFitArgs,
    ResourceSpec,
    ScoringStrategy,
    UtilizationShapePoint,
    parse_balanced_args,
    parse_fit_args,
)
from berth.scheduler.plugins.noderesources.balanced import BalancedAllocation
from berth.scheduler.plugins.noderesources.fit import Fit, fit_checks
from berth.scheduler.plugins.noderesources.scorers import (
    LeastAllocated,
    MostAllocated,
    RequestedToCapacityRatio,
    balanced_score,
)


def new_fit(args: Mapping[str, Any], handle: Handle) -> Fit:
    """Factory of NodeResourcesFit (raises ConfigError on bad args)."""
    return Fit(parse_fit_args(args))


def new_balanced(args: Mapping[str, Any], handle: Handle) -> BalancedAllocation:
    """Factory of NodeResourcesBalancedAllocation (raises ConfigError on bad args)."""
    return BalancedAllocation(parse_balanced_args(args))


def register(registry: Registry) -> None:
    """Add NodeResourcesFit and NodeResourcesBalancedAllocation to ``registry``."""
    registry.register(FIT, new_fit)
    registry.register(BALANCED, new_balanced)


__all__ = [
    "BALANCED",
    "FIT",
    "LEAST_ALLOCATED",
    "MOST_ALLOCATED",
    "REQUESTED_TO_CAPACITY_RATIO",
    "BalancedAllocation",
    "Fit",
    "LeastAllocated",
    "MostAllocated",
    "NodeResourcesBalancedAllocationArgs",
    "NodeResourcesFitArgs",
    "RequestedToCapacityRatio",
    "ResourceSpec",
    "ScoringStrategy",
    "UtilizationShapePoint",
    "balanced_score",
    "fit_checks",
    "new_balanced",
    "new_fit",
    "parse_balanced_args",
    "parse_fit_args",
    "register",
]
