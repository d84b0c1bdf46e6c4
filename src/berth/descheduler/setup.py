"""The descheduler as a command or a simulation sets it up: the built-in plugins, Koordinator's
MigrationController at the ``evict`` extension point, and a policy read from a file."""

from __future__ import annotations

from berth.descheduler.policy import Policy, read_policy_file
from berth.descheduler.registry import builtin_plugins

__all__ = ["read_policy"]


def read_policy(path: str) -> Policy:
    """Load and validate a DeschedulerPolicy file against the built-in plugins; raises PolicyError."""
    return read_policy_file(path, builtin_plugins())
