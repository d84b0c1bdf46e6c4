"""Plugin registry: plugin name → factory building the plugin from its args and the handle."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any

from berth.scheduler.framework.plugin import Handle

PluginFactory = Callable[[Mapping[str, Any], Handle], Any]


class Registry:
    """A mapping of plugin names to factories; each scheduler owns one (there is no global registry)."""

    def __init__(self, factories: Mapping[str, PluginFactory] | None = None) -> None:
        self._factories: dict[str, PluginFactory] = dict(factories or {})

    def register(self, name: str, factory: PluginFactory) -> None:
        """Add ``factory`` under ``name``; a name may be registered once."""
        if name in self._factories:
            raise ValueError(f"a plugin named {name!r} already exists")
        self._factories[name] = factory

    def merge(self, other: Registry) -> None:
        """Register every factory of ``other``."""
        for name, factory in other.items():
            self.register(name, factory)

    def get(self, name: str) -> PluginFactory | None:
        """The factory for ``name``, if any."""
        return self._factories.get(name)

    def items(self) -> Iterator[tuple[str, PluginFactory]]:
        """All (name, factory) pairs."""
        return iter(self._factories.items())

    def __contains__(self, name: object) -> bool:
        return name in self._factories
