"""NodeName: a pod with ``spec.nodeName`` set fits only the node of that name."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from berth.scheduler.framework import (
    ClusterEvent,
    Code,
    CycleState,
    Handle,
    NodeInfo,
    NodeTable,
    PodInfo,
    Registry,
    Status,
    Verdicts,
)

NAME = "NodeName"
ERR_REASON = "node(s) didn't match the requested node name"
_SUCCESS = Status()
_REJECT = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (ERR_REASON,))


class NodeName:
    """Filters nodes whose name differs from ``spec.nodeName`` (UnschedulableAndUnresolvable)."""

    name = NAME
    # its Filter reads only the node object, never the pods on it (see Framework.run_filter_node)
    filter_ignores_node_pods = True

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status:
        """Per-node form."""
        if not pod.node_name or pod.node_name == node.name:
            return _SUCCESS
        return _REJECT

    def filter_nodes(self, state: CycleState, pod: PodInfo, table: NodeTable) -> Verdicts:
        """Batched form over every row."""
        n = table.size
        if not pod.node_name:
            return Verdicts.all_pass(n)
        passed = np.zeros(n, dtype=np.bool_)
        i = table.index.get(pod.node_name)
        if i is not None:
            passed[i] = True
        return Verdicts.single(passed, _REJECT)

    def events_to_register(self) -> list[ClusterEvent]:
        """The named node may be added later."""
        return [ClusterEvent("Node", frozenset({"Add", "Update"}))]


def new(args: Mapping[str, Any], handle: Handle) -> NodeName:
    """Factory (the plugin takes no args)."""
    return NodeName()


def register(registry: Registry) -> None:
    """Add NodeName to ``registry``."""
    registry.register(NAME, new)


__all__ = ["ERR_REASON", "NAME", "NodeName", "new", "register"]
