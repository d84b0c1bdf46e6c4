"""NodeUnschedulable: filters out nodes with ``spec.unschedulable`` unless the pod tolerates it."""

from __future__ import annotations

import numpy as np

from berth.api.taints import Taint, tolerates_all
from berth.scheduler.framework import NodeInfo, NodeTable, PodInfo, Registry
from berth.scheduler.framework.nodetable import BoolArray
from berth.scheduler.framework.status import unresolvable
from berth.scheduler.plugins.common import NodeObjectFilter, OneReasonFilter
from berth.scheduler.plugins.factories import no_args

NAME = "NodeUnschedulable"
ERR_REASON_UNSCHEDULABLE = "node(s) were unschedulable"
TAINT_NODE_UNSCHEDULABLE = "node.kubernetes.io/unschedulable"
_UNSCHEDULABLE_TAINT = Taint(TAINT_NODE_UNSCHEDULABLE, "", "NoSchedule")


def tolerates_unschedulable(pod: PodInfo) -> bool:
    """Whether the pod tolerates the ``node.kubernetes.io/unschedulable:NoSchedule`` taint."""
    return bool(pod.tolerations) and tolerates_all(pod.tolerations, _UNSCHEDULABLE_TAINT)


class NodeUnschedulable(NodeObjectFilter, OneReasonFilter):
    """Rejects cordoned nodes (UnschedulableAndUnresolvable) for pods without the matching toleration; a node
    added or uncordoned may admit the pod."""

    name = NAME
    reject = unresolvable(ERR_REASON_UNSCHEDULABLE)

    def fits(self, pod: PodInfo, node: NodeInfo) -> bool:
        """The node is not cordoned, or the pod tolerates that."""
        return not node.unschedulable or tolerates_unschedulable(pod)

    def passing_rows(self, pod: PodInfo, table: NodeTable) -> BoolArray | None:
        """The rows not cordoned (every row when the pod tolerates it)."""
        cordoned = table.unschedulable[: table.size]
        if not np.count_nonzero(cordoned) or tolerates_unschedulable(pod):
            return None
        passed: BoolArray = np.logical_not(cordoned)
        return passed


new = no_args(NodeUnschedulable)


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
