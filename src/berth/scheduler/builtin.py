"""The registry the scheduler uses by default: every built-in plugin."""

from __future__ import annotations

from berth.scheduler.framework.registry import Registry
from berth.scheduler.plugins import default_registry


def builtin_registry() -> Registry:
    """Every built-in plugin."""
    return default_registry()
