"""Coscheduling: gang scheduling of PodGroups (scheduler-plugins), not in kube's default profile."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from berth.scheduler.framework import Handle, Registry
from berth.scheduler.plugins.coscheduling.args import NAME, CoschedulingArgs, parse_coscheduling_args
from berth.scheduler.plugins.coscheduling.plugin import Coscheduling


def new(args: Mapping[str, Any], handle: Handle) -> Coscheduling:
    """Factory: parse and validate CoschedulingArgs."""
    return Coscheduling(parse_coscheduling_args(args or {}), handle)


def register(registry: Registry) -> None:
    """Add Coscheduling to ``registry``."""
    registry.register(NAME, new)


__all__ = ["NAME", "Coscheduling", "CoschedulingArgs", "new", "parse_coscheduling_args", "register"]
