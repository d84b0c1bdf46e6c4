"""InterPodAffinity (placeholder until implemented: takes part in no extension point)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from berth.scheduler.framework import Handle, Registry

NAME = "InterPodAffinity"


class Placeholder:
    """Accepted by name, extends no point."""

    name = NAME


def new(args: Mapping[str, Any], handle: Handle) -> Placeholder:
    """Factory."""
    return Placeholder()


def register(registry: Registry) -> None:
    """Add InterPodAffinity to ``registry``."""
    registry.register(NAME, new)
