"""DefaultPreemption: kube-scheduler's PostFilter preemption, with optional reservation-backed preemption."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from berth.scheduler.framework import Handle, Registry
from berth.scheduler.plugins.defaultpreemption.args import (
    NAME,
    DefaultPreemptionArgs,
    parse_default_preemption_args,
)
from berth.scheduler.plugins.defaultpreemption.pdb import Budget, split_by_pdb_violation
from berth.scheduler.plugins.defaultpreemption.plugin import DefaultPreemption, potential_rows
from berth.scheduler.plugins.defaultpreemption.reservation import preemption_reservation
from berth.scheduler.plugins.defaultpreemption.selection import Candidate, pick_one_node
from berth.scheduler.plugins.defaultpreemption.victims import StartTimes, Victims, select_victims_on_node


def new_default_preemption(args: Mapping[str, Any], handle: Handle) -> DefaultPreemption:
    """Factory of DefaultPreemption (raises ConfigError on bad args)."""
    return DefaultPreemption(parse_default_preemption_args(args), handle)


def register(registry: Registry) -> None:
    """Add DefaultPreemption to ``registry``."""
    registry.register(NAME, new_default_preemption)


__all__ = [
    "NAME",
    "Budget",
    "Candidate",
    "DefaultPreemption",
    "DefaultPreemptionArgs",
    "StartTimes",
    "Victims",
    "new_default_preemption",
    "parse_default_preemption_args",
    "pick_one_node",
    "potential_rows",
    "preemption_reservation",
    "register",
    "select_victims_on_node",
    "split_by_pdb_violation",
]
