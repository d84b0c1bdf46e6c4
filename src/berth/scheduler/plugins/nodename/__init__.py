"""NodeName: a pod with ``spec.nodeName`` set fits only the node of that name."""

from __future__ import annotations

import numpy as np

from berth.scheduler.framework import NodeInfo, NodeTable, PodInfo, Registry
from berth.scheduler.framework.nodetable import BoolArray
from berth.scheduler.framework.status import unresolvable
from berth.scheduler.plugins.common import NodeObjectFilter, OneReasonFilter
from berth.scheduler.plugins.factories import no_args

NAME = "NodeName"
ERR_REASON = "node(s) didn't match the requested node name"


class NodeName(NodeObjectFilter, OneReasonFilter):
    """Filters nodes whose name differs from ``spec.nodeName`` (UnschedulableAndUnresolvable); the named node
    may be added later."""

    name = NAME
    reject = unresolvable(ERR_REASON)

    def fits(self, pod: PodInfo, node: NodeInfo) -> bool:
        """A pod without ``spec.nodeName`` fits every node."""
        return not pod.node_name or pod.node_name == node.name

    def passing_rows(self, pod: PodInfo, table: NodeTable) -> BoolArray | None:
        """Only the row of the named node, if it is in the table."""
        if not pod.node_name:
            return None
        passed = np.zeros(table.size, dtype=np.bool_)
        i = table.index.get(pod.node_name)
        if i is not None:
            passed[i] = True
        return passed


new = no_args(NodeName)


def register(registry: Registry) -> None:
    """Add NodeName to ``registry``."""
    registry.register(NAME, new)


__all__ = ["ERR_REASON", "NAME", "NodeName", "new", "register"]
