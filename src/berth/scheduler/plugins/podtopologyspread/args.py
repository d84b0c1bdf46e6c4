"""PodTopologySpreadArgs: ``defaultConstraints`` and ``defaultingType`` (System or List), validated as kube."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from berth.api.labels import qualified_name_errors
from berth.scheduler.framework import ConfigError
from berth.scheduler.plugins.helpers import (
    as_int,
    as_list,
    as_mapping,
    as_str,
    check_fields,
    fmt_value,
    invalid,
    required,
    unsupported,
)
from berth.scheduler.plugins.podtopologyspread.constraints import (
    DO_NOT_SCHEDULE,
    SCHEDULE_ANYWAY,
    SYSTEM_DEFAULT_CONSTRAINTS,
    DefaultConstraint,
)

PLUGIN = "PodTopologySpread"
SYSTEM_DEFAULTING = "System"
LIST_DEFAULTING = "List"
_CONSTRAINT_FIELDS = (
    "maxSkew",
    "topologyKey",
    "whenUnsatisfiable",
    "labelSelector",
    "minDomains",
    "nodeAffinityPolicy",
    "nodeTaintsPolicy",
    "matchLabelKeys",
)


@dataclass(frozen=True, slots=True)
class PodTopologySpreadArgs:
    """The default constraints in force and whether they are the system defaults."""

    default_constraints: tuple[DefaultConstraint, ...] = SYSTEM_DEFAULT_CONSTRAINTS
    system_defaulted: bool = True


def _constraint(path: str, item: Mapping[str, Any]) -> DefaultConstraint:
    check_fields(PLUGIN, path, item, _CONSTRAINT_FIELDS)
    skew = as_int(PLUGIN, f"{path}.maxSkew", item.get("maxSkew", 0))
    if skew <= 0:
        raise invalid(PLUGIN, f"{path}.maxSkew", skew, "not in valid range")
    key = as_str(PLUGIN, f"{path}.topologyKey", item.get("topologyKey", ""))
    if not key:
        raise required(PLUGIN, f"{path}.topologyKey", "can not be empty")
    errs = qualified_name_errors(key)
    if errs:
        raise invalid(PLUGIN, f"{path}.topologyKey", key, errs[0])
    action = as_str(PLUGIN, f"{path}.whenUnsatisfiable", item.get("whenUnsatisfiable", ""))
    if not action:
        raise required(PLUGIN, f"{path}.whenUnsatisfiable", "can not be empty")
    if action not in (DO_NOT_SCHEDULE, SCHEDULE_ANYWAY):
        raise unsupported(PLUGIN, f"{path}.whenUnsatisfiable", action, (DO_NOT_SCHEDULE, SCHEDULE_ANYWAY))
    if item.get("labelSelector") is not None:
        raise ConfigError(
            f"{PLUGIN}: {path}.labelSelector: Forbidden: constraint must not define a selector, "
            "as they deduced for each pod"
        )
    return DefaultConstraint(skew, key, action)


def parse_args(args: Mapping[str, Any]) -> PodTopologySpreadArgs:
    """Build the args from a pluginConfig args dict (kube's ValidatePodTopologySpreadArgs)."""
    check_fields(PLUGIN, "", args, ("defaultConstraints", "defaultingType"))
    defaulting = args.get("defaultingType")
    defaulting = (
        SYSTEM_DEFAULTING if defaulting in (None, "") else as_str(PLUGIN, "defaultingType", defaulting)
    )
    items = as_list(PLUGIN, "defaultConstraints", args.get("defaultConstraints"))
    if defaulting not in (SYSTEM_DEFAULTING, LIST_DEFAULTING):
        raise unsupported(PLUGIN, "defaultingType", defaulting, (SYSTEM_DEFAULTING, LIST_DEFAULTING))
    if defaulting == SYSTEM_DEFAULTING and items:
        raise invalid(PLUGIN, "defaultingType", defaulting, "when .defaultConstraints are not empty")
    out: list[DefaultConstraint] = []
    for i, raw in enumerate(items):
        path = f"defaultConstraints[{i}]"
        c = _constraint(path, as_mapping(PLUGIN, path, raw))
        for prev in out:
            if (prev.topology_key, prev.when_unsatisfiable) == (c.topology_key, c.when_unsatisfiable):
                detail = fmt_value(f"{{{c.topology_key}, {c.when_unsatisfiable}}}")
                raise ConfigError(f"{PLUGIN}: {path}: Duplicate value: {detail}")
        out.append(c)
    if defaulting == SYSTEM_DEFAULTING:
        return PodTopologySpreadArgs()
    return PodTopologySpreadArgs(tuple(out), False)
