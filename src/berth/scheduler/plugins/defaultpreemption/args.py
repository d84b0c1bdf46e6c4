"""DefaultPreemptionArgs: kube's v1 defaults and validation, plus Berth's reservePreemptedResources."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from berth.scheduler.framework import ConfigError
from berth.scheduler.plugins.helpers import as_int, check_fields, fmt_value, invalid

NAME = "DefaultPreemption"

DEFAULT_MIN_CANDIDATE_NODES_PERCENTAGE = 10
DEFAULT_MIN_CANDIDATE_NODES_ABSOLUTE = 100


@dataclass(frozen=True, slots=True)
class DefaultPreemptionArgs:
    """How many candidate nodes a dry run looks for, and whether preempted resources are reserved."""

    min_candidate_nodes_percentage: int = DEFAULT_MIN_CANDIDATE_NODES_PERCENTAGE
    min_candidate_nodes_absolute: int = DEFAULT_MIN_CANDIDATE_NODES_ABSOLUTE
    # Berth extension: after a preemption, hold the freed room with a Reservation owned by the preemptor
    reserve_preempted_resources: bool = False

    def num_candidates(self, num_nodes: int) -> int:
        """kube's calculateNumCandidates: a percentage of ``num_nodes``, at least the absolute, at most all."""
        n = num_nodes * self.min_candidate_nodes_percentage // 100
        n = max(n, self.min_candidate_nodes_absolute)
        return min(n, num_nodes)


def _field_error(path: str, value: object, detail: str) -> str:
    return f"{path}: Invalid value: {fmt_value(value)}: {detail}"


def parse_default_preemption_args(args: Mapping[str, Any]) -> DefaultPreemptionArgs:
    """Build the args from a pluginConfig args dict (v1 defaults), validated as ValidateDefaultPreemptionArgs.

    Several errors are reported together as kube's aggregate (``[e1, e2]``).
    """
    check_fields(
        NAME,
        "",
        args,
        ("minCandidateNodesPercentage", "minCandidateNodesAbsolute", "reservePreemptedResources"),
    )
    pct_raw = args.get("minCandidateNodesPercentage")
    abs_raw = args.get("minCandidateNodesAbsolute")
    pct = (
        DEFAULT_MIN_CANDIDATE_NODES_PERCENTAGE
        if pct_raw is None
        else as_int(NAME, "minCandidateNodesPercentage", pct_raw)
    )
    absolute = (
        DEFAULT_MIN_CANDIDATE_NODES_ABSOLUTE
        if abs_raw is None
        else as_int(NAME, "minCandidateNodesAbsolute", abs_raw)
    )
    reserve = args.get("reservePreemptedResources", False)
    if reserve is None:
        reserve = False
    if not isinstance(reserve, bool):
        raise invalid(NAME, "reservePreemptedResources", reserve, "must be a boolean")
    errors: list[str] = []
    if pct < 0 or pct > 100:
        errors.append(_field_error("minCandidateNodesPercentage", pct, "not in valid range [0, 100]"))
    if absolute < 0:
        errors.append(_field_error("minCandidateNodesAbsolute", absolute, "not in valid range [0, inf)"))
    if pct == 0 and absolute == 0:
        errors.append(
            _field_error(
                "minCandidateNodesPercentage",
                pct,
                "cannot be zero at the same time as minCandidateNodesAbsolute",
            )
        )
        errors.append(
            _field_error(
                "minCandidateNodesAbsolute",
                absolute,
                "cannot be zero at the same time as minCandidateNodesPercentage",
            )
        )
    if len(errors) == 1:
        raise ConfigError(f"{NAME}: {errors[0]}")
    if errors:
        raise ConfigError(f"{NAME}: [{', '.join(errors)}]")
    return DefaultPreemptionArgs(pct, absolute, reserve)
