"""The descheduling framework's contract: what a plugin is, what it is handed, and how it evicts.

As in kubernetes-sigs/descheduler: a profile enables plugins at the extension points ``deschedule`` and
``balance`` (strategies that pick pods to evict) and ``filter`` / ``preEvictionFilter`` (evictor plugins
that say which pods may go, DefaultEvictor first). A strategy receives the cycle's nodes and a `Handle`:
the `ClusterView`, the `NodeFit` question and the profile's `Evictor`, whose `filter` and
`pre_eviction_filter` are the AND of the profile's evictor plugins and whose `evict` applies the policy's
limits and goes through the eviction API (or a PodMigrationJob).
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Protocol, runtime_checkable

from berth.descheduler.args import ArgsReader
from berth.descheduler.nodefit import NodeFit
from berth.descheduler.view import ClusterView

__all__ = [
    "BALANCE",
    "DESCHEDULE",
    "FILTER",
    "PRE_EVICTION_FILTER",
    "BalancePlugin",
    "DeschedulePlugin",
    "EvictOutcome",
    "Evictor",
    "EvictorPlugin",
    "Handle",
    "Plugin",
    "PluginSpec",
]

Obj = dict[str, Any]

DESCHEDULE = "deschedule"
BALANCE = "balance"
FILTER = "filter"
PRE_EVICTION_FILTER = "preEvictionFilter"


class EvictOutcome(enum.Enum):
    """What became of one eviction request."""

    EVICTED = "evicted"
    """The pod was evicted (or handed to a PodMigrationJob)."""
    NODE_LIMIT = "node limit"
    """maxNoOfPodsToEvictPerNode reached for the pod's node: try no more pods of that node."""
    NAMESPACE_LIMIT = "namespace limit"
    """maxNoOfPodsToEvictPerNamespace reached for the pod's namespace."""
    TOTAL_LIMIT = "total limit"
    """maxNoOfPodsToEvictTotal reached: the cycle evicts nothing more."""
    REFUSED = "refused"
    """The eviction API refused (429: a PodDisruptionBudget, the rate limit) or the pod is gone: skipped."""

    @property
    def evicted(self) -> bool:
        """Whether the pod went."""
        return self is EvictOutcome.EVICTED


class Evictor(Protocol):
    """The profile's evictor as a plugin sees it."""

    def filter(self, pod: Obj) -> bool:
        """Whether every filter plugin of the profile lets the pod be evicted."""
        ...

    def pre_eviction_filter(self, pod: Obj) -> bool:
        """Whether every preEvictionFilter plugin lets the pod be evicted (checked right before evicting)."""
        ...

    def evict(self, pod: Obj, plugin: str, reason: str = "") -> EvictOutcome:
        """Evict the pod on behalf of `plugin` (no filter is run here), within the policy's limits."""
        ...

    def node_limit_reached(self, node_name: str) -> bool:
        """Whether the per-node limit leaves no eviction for the node."""
        ...

    def total_limit_reached(self) -> bool:
        """Whether the total limit leaves no eviction in this cycle."""
        ...

    def evicted_from(self, node_name: str) -> int:
        """Pods evicted from the node so far in this cycle."""
        ...


@dataclass
class Handle:
    """What a plugin is built with: the cycle's view, the profile's evictor and name."""

    view: ClusterView
    evictor: Evictor
    profile: str = ""
    extras: dict[str, Any] = field(default_factory=dict)

    @cached_property
    def fit(self) -> NodeFit:
        """The descheduler's NodeFit over this view."""
        return NodeFit(self.view)


@runtime_checkable
class Plugin(Protocol):
    """Every plugin has its registered name."""

    name: str


@runtime_checkable
class DeschedulePlugin(Plugin, Protocol):
    """A strategy that evicts pods that should not stay where they are."""

    def deschedule(self, nodes: Sequence[Obj]) -> None:
        """Evict what must go from `nodes`."""
        ...


@runtime_checkable
class BalancePlugin(Plugin, Protocol):
    """A strategy that evicts pods to spread or pack the cluster."""

    def balance(self, nodes: Sequence[Obj]) -> None:
        """Evict pods to balance `nodes`."""
        ...


@runtime_checkable
class EvictorPlugin(Plugin, Protocol):
    """A plugin that says which pods may be evicted."""

    def filter(self, pod: Obj) -> bool:
        """Whether the pod may be evicted at all."""
        ...

    def pre_eviction_filter(self, pod: Obj) -> bool:
        """Whether the pod may be evicted now (right before the eviction)."""
        ...


@dataclass(frozen=True)
class PluginSpec:
    """A registered plugin: its name, the extension points it serves, how its args are read and how it
    is built. `parse_args` reads the raw args with an `ArgsReader` (it must call ``finish``) and returns the
    plugin's args object; `build` makes the plugin from those args and a `Handle`."""

    name: str
    points: frozenset[str]
    parse_args: Callable[[ArgsReader], Any]
    build: Callable[[Any, Handle], Plugin]

    def read_args(self, raw: Mapping[str, Any] | None, where: str) -> Any:
        """Parse and validate `raw` args; errors are PolicyErrors prefixed with `where`."""
        return self.parse_args(ArgsReader(raw, where))
