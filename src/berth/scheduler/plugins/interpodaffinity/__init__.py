"""InterPodAffinity: required and preferred pod affinity / anti-affinity (kube-scheduler's plugin)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from berth.scheduler.framework import Handle, Registry
from berth.scheduler.plugins.interpodaffinity.args import InterPodAffinityArgs, parse_args
from berth.scheduler.plugins.interpodaffinity.plugin import (
    ERR_REASON_AFFINITY,
    ERR_REASON_ANTI_AFFINITY,
    ERR_REASON_EXISTING_ANTI_AFFINITY,
    InterPodAffinity,
)
from berth.scheduler.plugins.interpodaffinity.terms import NAME


def new(args: Mapping[str, Any], handle: Handle) -> InterPodAffinity:
    """Factory: parses InterPodAffinityArgs (raises ConfigError on bad args)."""
    return InterPodAffinity(parse_args(args), handle)


def register(registry: Registry) -> None:
    """Add InterPodAffinity to ``registry``."""
    registry.register(NAME, new)


__all__ = [
    "ERR_REASON_AFFINITY",
    "ERR_REASON_ANTI_AFFINITY",
    "ERR_REASON_EXISTING_ANTI_AFFINITY",
    "NAME",
    "InterPodAffinity",
    "InterPodAffinityArgs",
    "new",
    "parse_args",
    "register",
]
