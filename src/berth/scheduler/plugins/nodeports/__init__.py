"""NodePorts: a pod's host ports must be free on the node (kube's HostPortInfo conflict rules)."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from berth.scheduler.framework import CycleState, NodeInfo, NodeTable, PodInfo, PreFilterResult, Registry
from berth.scheduler.framework.nodetable import BoolArray
from berth.scheduler.framework.status import SKIP, SUCCESS, Status, unschedulable
from berth.scheduler.plugins.common import OneReasonFilter, PodHoldingsFilter
from berth.scheduler.plugins.factories import no_args

NAME = "NodePorts"
ERR_REASON = "node(s) didn't have free ports for the requested pod ports"
BIND_ALL = "0.0.0.0"

Port = tuple[str, str, int]


def _sanitize(port: Port) -> Port:
    ip, protocol, number = port
    return (ip or BIND_ALL, protocol or "TCP", number)


def conflicts(used: Mapping[Port, int], wanted: Port) -> bool:
    """kube's HostPortInfo.CheckConflict: 0.0.0.0 clashes with any IP; a specific IP with itself and 0.0.0.0."""
    ip, protocol, number = _sanitize(wanted)
    if number <= 0 or not used:
        return False
    if ip == BIND_ALL:
        return any(p == protocol and n == number for (_, p, n) in used)
    return (ip, protocol, number) in used or (BIND_ALL, protocol, number) in used


def fits_ports(used: Mapping[Port, int], wanted: tuple[Port, ...]) -> bool:
    """Whether none of the ``wanted`` host ports conflicts with the node's ``used`` ports."""
    return not any(conflicts(used, w) for w in wanted)


class NodePorts(PodHoldingsFilter, OneReasonFilter):
    """Rejects nodes where a requested host port (ip, protocol, port) is already taken (Unschedulable)."""

    name = NAME
    reject = unschedulable(ERR_REASON)

    def pre_filter(
        self, state: CycleState, pod: PodInfo, table: NodeTable
    ) -> tuple[PreFilterResult | None, Status]:
        """Skip pods without host ports."""
        if not pod.host_ports:
            return None, SKIP
        return None, SUCCESS

    def fits(self, pod: PodInfo, node: NodeInfo) -> bool:
        """None of the pod's host ports is taken on the node."""
        return not pod.host_ports or fits_ports(node.used_ports, pod.host_ports)

    def passing_rows(self, pod: PodInfo, table: NodeTable) -> BoolArray | None:
        """Only rows that use any host port need a look."""
        wanted = pod.host_ports
        if not wanted:
            return None
        passed = np.ones(table.size, dtype=np.bool_)
        for i, used in enumerate(table.ports):
            if used and not fits_ports(used, wanted):
                passed[i] = False
        return passed


new = no_args(NodePorts)


def register(registry: Registry) -> None:
    """Add NodePorts to ``registry``."""
    registry.register(NAME, new)


__all__ = ["ERR_REASON", "NAME", "NodePorts", "conflicts", "fits_ports", "new", "register"]
