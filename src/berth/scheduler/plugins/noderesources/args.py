"""Args of NodeResourcesFit and NodeResourcesBalancedAllocation, with kube's v1 defaults and validation."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from berth.scheduler.framework import ConfigError
from berth.scheduler.plugins.helpers import (
    as_int,
    as_list,
    as_mapping,
    as_str,
    check_fields,
    invalid,
    required,
    unsupported,
)

FIT = "NodeResourcesFit"
BALANCED = "NodeResourcesBalancedAllocation"

LEAST_ALLOCATED = "LeastAllocated"
MOST_ALLOCATED = "MostAllocated"
REQUESTED_TO_CAPACITY_RATIO = "RequestedToCapacityRatio"
SCORING_STRATEGY_TYPES = (LEAST_ALLOCATED, MOST_ALLOCATED, REQUESTED_TO_CAPACITY_RATIO)

MAX_CUSTOM_PRIORITY_SCORE = 10
MAX_UTILIZATION = 100


@dataclass(frozen=True, slots=True)
class ResourceSpec:
    """A resource taken into account by a scorer, with its weight."""

    name: str
    weight: int = 1


DEFAULT_RESOURCES = (ResourceSpec("cpu", 1), ResourceSpec("memory", 1))


@dataclass(frozen=True, slots=True)
class UtilizationShapePoint:
    """A point of the RequestedToCapacityRatio function: utilization 0..100 → score 0..10."""

    utilization: int
    score: int


@dataclass(frozen=True, slots=True)
class ScoringStrategy:
    """How NodeResourcesFit scores: the strategy type, the resources and (ratio only) the shape."""

    type: str = LEAST_ALLOCATED
    resources: tuple[ResourceSpec, ...] = DEFAULT_RESOURCES
    shape: tuple[UtilizationShapePoint, ...] = ()


@dataclass(frozen=True, slots=True)
class NodeResourcesFitArgs:
    """NodeResourcesFitArgs: ignored extended resources / resource groups and the scoring strategy."""

    ignored_resources: frozenset[str] = frozenset()
    ignored_resource_groups: frozenset[str] = frozenset()
    scoring_strategy: ScoringStrategy = field(default_factory=ScoringStrategy)


@dataclass(frozen=True, slots=True)
class NodeResourcesBalancedAllocationArgs:
    """NodeResourcesBalancedAllocationArgs: the resources whose utilisation should be balanced."""

    resources: tuple[ResourceSpec, ...] = DEFAULT_RESOURCES


def _resources(plugin: str, path: str, value: Any) -> tuple[ResourceSpec, ...]:
    items = as_list(plugin, path, value)
    if not items:
        return DEFAULT_RESOURCES
    out = []
    for i, item in enumerate(items):
        p = f"{path}[{i}]"
        m = as_mapping(plugin, p, item)
        check_fields(plugin, p, m, ("name", "weight"))
        name = as_str(plugin, f"{p}.name", m.get("name", ""))
        weight = as_int(plugin, f"{p}.weight", m.get("weight", 0) or 0)
        out.append(ResourceSpec(name, weight or 1))  # an unset or zero weight defaults to 1
    return tuple(out)


def _shape(path: str, value: Any) -> tuple[UtilizationShapePoint, ...]:
    items = as_list(FIT, path, value)
    if not items:
        raise required(FIT, path, "at least one point must be specified")
    points = []
    for i, item in enumerate(items):
        p = f"{path}[{i}]"
        m = as_mapping(FIT, p, item)
        check_fields(FIT, p, m, ("utilization", "score"))
        points.append(
            UtilizationShapePoint(
                as_int(FIT, f"{p}.utilization", m.get("utilization", 0)),
                as_int(FIT, f"{p}.score", m.get("score", 0)),
            )
        )
    for i in range(1, len(points)):
        if points[i - 1].utilization >= points[i].utilization:
            raise invalid(
                FIT,
                f"{path}[{i}].utilization",
                points[i].utilization,
                "utilization values must be sorted in increasing order",
            )
    for i, pt in enumerate(points):
        if not 0 <= pt.utilization <= MAX_UTILIZATION:
            raise invalid(
                FIT, f"{path}[{i}].utilization", pt.utilization, f"not in valid range [0, {MAX_UTILIZATION}]"
            )
        if not 0 <= pt.score <= MAX_CUSTOM_PRIORITY_SCORE:
            raise invalid(
                FIT, f"{path}[{i}].score", pt.score, f"not in valid range [0, {MAX_CUSTOM_PRIORITY_SCORE}]"
            )
    return tuple(points)


def parse_fit_args(args: Mapping[str, Any]) -> NodeResourcesFitArgs:
    """Build NodeResourcesFitArgs from a pluginConfig args dict (kube's defaults, then validation)."""
    check_fields(FIT, "", args, ("ignoredResources", "ignoredResourceGroups", "scoringStrategy"))
    ignored = []
    for i, r in enumerate(as_list(FIT, "ignoredResources", args.get("ignoredResources"))):
        name = as_str(FIT, f"ignoredResources[{i}]", r)
        if not name:
            raise invalid(FIT, f"ignoredResources[{i}]", name, "name part must be non-empty")
        ignored.append(name)
    groups = []
    for i, g in enumerate(as_list(FIT, "ignoredResourceGroups", args.get("ignoredResourceGroups"))):
        name = as_str(FIT, f"ignoredResourceGroups[{i}]", g)
        if "/" in name:
            raise invalid(FIT, f"ignoredResourceGroups[{i}]", name, "resource group name can't contain '/'")
        if not name:
            raise invalid(FIT, f"ignoredResourceGroups[{i}]", name, "name part must be non-empty")
        groups.append(name)
    strategy_doc = args.get("scoringStrategy")
    if strategy_doc is None:
        strategy = ScoringStrategy()
    else:
        sp = "scoringStrategy"
        sd = as_mapping(FIT, sp, strategy_doc)
        check_fields(FIT, sp, sd, ("type", "resources", "requestedToCapacityRatio"))
        stype = as_str(FIT, f"{sp}.type", sd.get("type", "") or "")
        if stype not in SCORING_STRATEGY_TYPES:
            raise unsupported(FIT, f"{sp}.type", stype, SCORING_STRATEGY_TYPES)
        resources = _resources(FIT, f"{sp}.resources", sd.get("resources"))
        for i, r in enumerate(resources):
            if not 1 <= r.weight <= 100:
                raise invalid(
                    FIT,
                    f"{sp}.resources[{i}].weight",
                    r.weight,
                    f"resource weight of {r.name} not in valid range [1, 100]",
                )
        shape: tuple[UtilizationShapePoint, ...] = ()
        ratio = sd.get("requestedToCapacityRatio")
        if ratio is not None:
            rd = as_mapping(FIT, f"{sp}.requestedToCapacityRatio", ratio)
            check_fields(FIT, f"{sp}.requestedToCapacityRatio", rd, ("shape",))
            shape = _shape(f"{sp}.shape", rd.get("shape"))
        if stype == REQUESTED_TO_CAPACITY_RATIO and not shape:
            raise required(
                FIT, f"{sp}.requestedToCapacityRatio", "must be set for type RequestedToCapacityRatio"
            )
        strategy = ScoringStrategy(stype, resources, shape)
    return NodeResourcesFitArgs(frozenset(ignored), frozenset(groups), strategy)


def parse_balanced_args(args: Mapping[str, Any]) -> NodeResourcesBalancedAllocationArgs:
    """Build NodeResourcesBalancedAllocationArgs (resources default cpu:1, memory:1; weights must be 1)."""
    check_fields(BALANCED, "", args, ("resources",))
    resources = _resources(BALANCED, "resources", args.get("resources"))
    seen: set[str] = set()
    for i, r in enumerate(resources):
        if r.name in seen:
            raise ConfigError(f'{BALANCED}: resources[{i}].name: Duplicate value: "{r.name}"')
        seen.add(r.name)
        if r.weight != 1:
            raise invalid(BALANCED, f"resources[{i}].weight", r.weight, "must be 1")
    return NodeResourcesBalancedAllocationArgs(resources)
