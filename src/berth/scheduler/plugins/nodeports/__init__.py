"""NodePorts: a pod's host ports must be free on the node (kube's HostPortInfo conflict rules)."""

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
    PreFilterResult,
    Registry,
    Status,
    Verdicts,
)

NAME = "NodePorts"
ERR_REASON = "node(s) didn't have free ports for the requested pod ports"
BIND_ALL = "0.0.0.0"
_SUCCESS = Status()
_SKIP = Status(Code.SKIP)
_REJECT = Status(Code.UNSCHEDULABLE, (ERR_REASON,))

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


class NodePorts:
    """Rejects nodes where a requested host port (ip, protocol, port) is already taken (Unschedulable)."""

    name = NAME

    def pre_filter(
        self, state: CycleState, pod: PodInfo, table: NodeTable
    ) -> tuple[PreFilterResult | None, Status]:
        """Skip pods without host ports."""
        if not pod.host_ports:
            return None, _SKIP
        return None, _SUCCESS

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status:
        """Per-node form."""
        if not pod.host_ports or fits_ports(node.used_ports, pod.host_ports):
            return _SUCCESS
        return _REJECT

    def filter_nodes(self, state: CycleState, pod: PodInfo, table: NodeTable) -> Verdicts:
        """Batched form: only rows that use any host port need a look."""
        n = table.size
        wanted = pod.host_ports
        if not wanted:
            return Verdicts.all_pass(n)
        passed = np.ones(n, dtype=np.bool_)
        for i, used in enumerate(table.ports):
            if used and not fits_ports(used, wanted):
                passed[i] = False
        return Verdicts.single(passed, _REJECT)

    def events_to_register(self) -> list[ClusterEvent]:
        """A deleted pod frees its ports; a new node has free ports."""
        return [
            ClusterEvent("Pod", frozenset({"Delete"})),
            ClusterEvent("Node", frozenset({"Add", "Update"})),
        ]


def new(args: Mapping[str, Any], handle: Handle) -> NodePorts:
    """Factory (the plugin takes no args)."""
    return NodePorts()


def register(registry: Registry) -> None:
    """Add NodePorts to ``registry``."""
    registry.register(NAME, new)


__all__ = ["ERR_REASON", "NAME", "NodePorts", "conflicts", "fits_ports", "new", "register"]
