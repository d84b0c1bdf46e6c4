"""How a descheduler strategy evicts the pods it chose and reacts to each outcome, as upstream's strategies
all do: a pod refused (a PodDisruptionBudget, the rate limit, the namespace limit, a pod already gone) is
skipped; the per-node limit (``maxNoOfPodsToEvictPerNode``) ends the pods of that node; the total limit
(``maxNoOfPodsToEvictTotal``) ends the plugin's run.

`evict_in_turn` evicts one sequence of pods; `evict_node_by_node` one sequence a node, stopping at the total
limit; `evictor_allows` is the profile's evictor check a strategy makes on each candidate (its filter, then
its preEvictionFilter). The pods are taken from their iterables one at a time, so a candidate test written
as a generator runs after the evictions before it, as it does in upstream's loops.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from berth.descheduler.framework import Evictor, EvictOutcome

__all__ = ["evict_in_turn", "evict_node_by_node", "evictor_allows"]

Obj = dict[str, Any]


def evictor_allows(evictor: Evictor, pod: Obj) -> bool:
    """Whether the profile's evictor lets the pod go: its filter, then its preEvictionFilter."""
    return evictor.filter(pod) and evictor.pre_eviction_filter(pod)


def evict_in_turn(
    evictor: Evictor,
    plugin: str,
    pods: Iterable[Obj],
    *,
    node_limit_ends: bool = True,
    on_evicted: Callable[[Obj], bool] | None = None,
) -> EvictOutcome | None:
    """Evict `pods` one after the other on behalf of `plugin`; the limit outcome that ended the run, if any.

    The total limit ends the run (``TOTAL_LIMIT`` is returned); so does the node limit (``NODE_LIMIT``)
    unless `node_limit_ends` is False, when that pod is skipped like a refused one. After each eviction
    `on_evicted(pod)` is called, when given: False from it ends the run (None is returned).
    """
    for pod in pods:
        outcome = evictor.evict(pod, plugin)
        if outcome is EvictOutcome.TOTAL_LIMIT or (outcome is EvictOutcome.NODE_LIMIT and node_limit_ends):
            return outcome
        if outcome.evicted and on_evicted is not None and not on_evicted(pod):
            return None
    return None


def evict_node_by_node(
    evictor: Evictor,
    plugin: str,
    pods_per_node: Iterable[Iterable[Obj]],
    *,
    on_evicted: Callable[[Obj], bool] | None = None,
) -> bool:
    """`evict_in_turn` for each node's pods in turn: the node limit moves on to the next node, the total limit
    ends it all. False when the total limit was reached, else True."""
    for pods in pods_per_node:
        if evict_in_turn(evictor, plugin, pods, on_evicted=on_evicted) is EvictOutcome.TOTAL_LIMIT:
            return False
    return True
