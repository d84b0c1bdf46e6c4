"""NodeUnschedulable: filters out nodes with ``spec.unschedulable`` unless the pod tolerates it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from berth.api.taints import Taint, tolerates_all
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

NAME = "NodeUnschedulable"
ERR_REASON_UNSCHEDULABLE = "node(s) were unschedulable"
TAINT_NODE_UNSCHEDULABLE = "node.kubernetes.io/unschedulable"
_UNSCHEDULABLE_TAINT = Taint(TAINT_NODE_UNSCHEDULABLE, "", "NoSchedule")
_SUCCESS = Status()
_REJECT = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (ERR_REASON_UNSCHEDULABLE,))


def tolerates_unschedulable(pod: PodInfo) -> bool:
    """Whether the pod tolerates the ``node.kubernetes.io/unschedulable:NoSchedule`` taint."""
    return bool(pod.tolerations) and tolerates_all(pod.tolerations, _UNSCHEDULABLE_TAINT)


class NodeUnschedulable:
    """Rejects cordoned nodes (UnschedulableAndUnresolvable) for pods without the matching toleration."""

    name = NAME
    # its Filter reads only the node object, never the pods on it (see Framework.run_filter_node)
    filter_ignores_node_pods = True

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status:
        """Per-node form."""
        if not node.unschedulable or tolerates_unschedulable(pod):
            return _SUCCESS
        return _REJECT

    def filter_nodes(self, state: CycleState, pod: PodInfo, table: NodeTable) -> Verdicts:
        """Batched form over every row."""
        n = table.size
        if tolerates_unschedulable(pod):
            return Verdicts.all_pass(n)
        passed = np.logical_not(table.unschedulable[:n])
        return Verdicts.single(passed, _REJECT)

    def events_to_register(self) -> list[ClusterEvent]:
        """A node added or uncordoned may admit the pod."""
        return [ClusterEvent("Node", frozenset({"Add", "Update"}))]


def new(args: Mapping[str, Any], handle: Handle) -> NodeUnschedulable:
    """Factory (the plugin takes no args)."""
    return NodeUnschedulable()


def register(registry: Registry) -> None:
    """Add NodeUnschedulable to ``registry``."""
    registry.register(NAME, new)


__all__ = [
    "ERR_REASON_UNSCHEDULABLE",
    "NAME",
    "NodeUnschedulable",
    "new",
    "register",
    "tolerates_unschedulable",
]
