"""SchedulingResults: a marker plugin; a profile that enables it gets kube-scheduler-simulator's result
annotations (``kube-scheduler-simulator.sigs.k8s.io/filter-result``, ``/score-result``,
``/finalscore-result``, ``/prefilter-result-status``, ``/selected-node``) written on its pods."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from berth.scheduler.framework import Handle, Registry

NAME = "SchedulingResults"


class SchedulingResults:
    """Extends no point; the scheduler records each attempt of the profile's pods when it is enabled."""

    name = NAME


def new(args: Mapping[str, Any], handle: Handle) -> SchedulingResults:
    """Factory (no args)."""
    return SchedulingResults()


def register(registry: Registry) -> None:
    """Add SchedulingResults to ``registry``."""
    registry.register(NAME, new)
