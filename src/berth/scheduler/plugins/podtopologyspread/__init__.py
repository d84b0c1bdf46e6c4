"""PodTopologySpread: spread pods over topology domains as their topologySpreadConstraints (or the
plugin's default constraints) ask, with kube's reasons, score formula and normalisation."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from berth.scheduler.framework import Handle, Registry
from berth.scheduler.plugins.podtopologyspread.args import PodTopologySpreadArgs, parse_args
from berth.scheduler.plugins.podtopologyspread.filtering import (
    ERR_REASON_CONSTRAINTS_NOT_MATCH,
    ERR_REASON_NODE_LABEL_NOT_MATCH,
)
from berth.scheduler.plugins.podtopologyspread.plugin import NAME, PodTopologySpread


def new(args: Mapping[str, Any], handle: Handle) -> PodTopologySpread:
    """Factory: parses PodTopologySpreadArgs (raises ConfigError on bad args)."""
    return PodTopologySpread(parse_args(args), handle)


def register(registry: Registry) -> None:
    """Add PodTopologySpread to ``registry``."""
    registry.register(NAME, new)


__all__ = [
    "ERR_REASON_CONSTRAINTS_NOT_MATCH",
    "ERR_REASON_NODE_LABEL_NOT_MATCH",
    "NAME",
    "PodTopologySpread",
    "PodTopologySpreadArgs",
    "new",
    "parse_args",
    "register",
]
