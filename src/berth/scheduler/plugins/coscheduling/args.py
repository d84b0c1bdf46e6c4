"""CoschedulingArgs: scheduler-plugins' defaults and validation, plus Berth's podGroupRejectPercentage."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from berth.scheduler.framework import ConfigError
from berth.scheduler.plugins.helpers import as_int, check_fields, fmt_value

NAME = "Coscheduling"

DEFAULT_PERMIT_WAITING_TIME_SECONDS = 60
DEFAULT_POD_GROUP_BACKOFF_SECONDS = 0
DEFAULT_POD_GROUP_REJECT_PERCENTAGE = 10


@dataclass(frozen=True, slots=True)
class CoschedulingArgs:
    """How long members wait at Permit, how long a failed group backs off, and when PostFilter gives up."""

    permit_waiting_time_seconds: int = DEFAULT_PERMIT_WAITING_TIME_SECONDS
    pod_group_backoff_seconds: int = DEFAULT_POD_GROUP_BACKOFF_SECONDS
    # PostFilter keeps the waiting members while the share of members still missing is at most this (%)
    pod_group_reject_percentage: int = DEFAULT_POD_GROUP_REJECT_PERCENTAGE


def parse_coscheduling_args(args: Mapping[str, Any]) -> CoschedulingArgs:
    """Build the args from a pluginConfig args dict (v1 defaults), validated as ValidateCoschedulingArgs.

    Several errors are reported together as kube's aggregate (``[e1, e2]``).
    """
    fields = ("permitWaitingTimeSeconds", "podGroupBackoffSeconds", "podGroupRejectPercentage")
    check_fields(NAME, "", args, fields)
    values: dict[str, int] = {}
    defaults = (
        DEFAULT_PERMIT_WAITING_TIME_SECONDS,
        DEFAULT_POD_GROUP_BACKOFF_SECONDS,
        DEFAULT_POD_GROUP_REJECT_PERCENTAGE,
    )
    for key, default in zip(fields, defaults, strict=True):
        raw = args.get(key)
        values[key] = default if raw is None else as_int(NAME, key, raw)
    errors: list[str] = []
    for key in ("permitWaitingTimeSeconds", "podGroupBackoffSeconds"):
        if values[key] < 0:
            errors.append(f"{key}: Invalid value: {fmt_value(values[key])}: must be greater than 0")
    pct = values["podGroupRejectPercentage"]
    if not 0 <= pct <= 100:
        errors.append(f"podGroupRejectPercentage: Invalid value: {pct}: not in valid range [0, 100]")
    if errors:
        text = errors[0] if len(errors) == 1 else "[" + ", ".join(errors) + "]"
        raise ConfigError(f"{NAME}: {text}")
    return CoschedulingArgs(*values.values())


__all__ = [
    "DEFAULT_PERMIT_WAITING_TIME_SECONDS",
    "DEFAULT_POD_GROUP_BACKOFF_SECONDS",
    "DEFAULT_POD_GROUP_REJECT_PERCENTAGE",
    "NAME",
    "CoschedulingArgs",
    "parse_coscheduling_args",
]
