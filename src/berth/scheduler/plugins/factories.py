"""Registry factories of plugins built without the scheduler's handle."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from berth.scheduler.framework import Handle

P = TypeVar("P")
A = TypeVar("A")


def no_args(plugin: Callable[[], P]) -> Callable[[Mapping[str, Any], Handle], P]:
    """The registry factory of a plugin that takes no args (and no handle): it builds ``plugin()``."""

    def new(args: Mapping[str, Any], handle: Handle) -> P:
        """Build the plugin (it takes no args)."""
        return plugin()

    return new


def args_only(
    parse: Callable[[Mapping[str, Any]], A], plugin: Callable[[A], P]
) -> Callable[[Mapping[str, Any], Handle], P]:
    """The registry factory of a plugin built from its args alone: ``plugin(parse(args))`` (``parse`` raises
    ConfigError on bad args)."""

    def new(args: Mapping[str, Any], handle: Handle) -> P:
        """Parse the args and build the plugin (raises ConfigError on bad args)."""
        return plugin(parse(args))

    return new


__all__ = ["args_only", "no_args"]
