"""RemovePodsHavingTooManyRestarts: kubernetes-sigs/descheduler's
``pkg/framework/plugins/removepodshavingtoomanyrestarts``.

A Deschedule plugin. On each of the cycle's nodes, in turn, the pods (whatever their phase) that pass the
profile's evictor (filter and preEvictionFilter), ``namespaces`` and ``labelSelector``, whose containers
restarted at least ``podRestartThreshold`` times in all (init containers counted too with
``includingInitContainers``) and, with ``states``, whose phase or a container's waiting reason (an init
container's too with ``includingInitContainers``) is listed (``Running``, ``CrashLoopBackOff``), are
evicted, most restarts first. A node-limit refusal moves on to the next node; the total limit ends the
plugin's run.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from berth.descheduler.args import ArgsReader
from berth.descheduler.framework import DESCHEDULE, Handle, PluginSpec
from berth.descheduler.plugins.eviction_loop import evict_node_by_node, evictor_allows
from berth.descheduler.plugins.podselection import (
    EVERY_POD,
    PodSelection,
    container_statuses,
    read_pod_selection,
    state_reasons,
)
from berth.descheduler.view import pod_phase

__all__ = [
    "ALLOWED_STATES",
    "NAME",
    "SPECS",
    "RemovePodsHavingTooManyRestarts",
    "RemovePodsHavingTooManyRestartsArgs",
    "parse_args",
    "pod_restarts",
]

Obj = dict[str, Any]
NAME = "RemovePodsHavingTooManyRestarts"
ALLOWED_STATES = frozenset(("Running", "CrashLoopBackOff"))
"""The values ``states`` accepts."""


@dataclass(frozen=True)
class RemovePodsHavingTooManyRestartsArgs:
    """RemovePodsHavingTooManyRestartsArgs (``podRestartThreshold`` must be at least 1)."""

    pod_restart_threshold: int = 0
    including_init_containers: bool = False
    states: frozenset[str] = frozenset()
    selection: PodSelection = EVERY_POD
    """``namespaces`` and ``labelSelector``."""


def parse_args(reader: ArgsReader) -> RemovePodsHavingTooManyRestartsArgs:
    """Read and validate the args (upstream's ``ValidateRemovePodsHavingTooManyRestartsArgs``)."""
    selection = read_pod_selection(reader)
    threshold = reader.integer("podRestartThreshold", 0) or 0
    including_init = reader.flag("includingInitContainers")
    states = reader.strings("states")
    reader.finish()

    errors: list[tuple[str, str]] = []
    if threshold < 1:
        errors.append(("podRestartThreshold", "invalid PodsHavingTooManyRestarts threshold"))
    if any(s not in ALLOWED_STATES for s in states):
        errors.append(("states", f"states must be one of [{' '.join(sorted(ALLOWED_STATES))}]"))
    reader.raise_all(errors)
    return RemovePodsHavingTooManyRestartsArgs(
        pod_restart_threshold=threshold,
        including_init_containers=including_init,
        states=frozenset(states),
        selection=selection,
    )


def pod_restarts(pod: Mapping[str, Any], including_init_containers: bool) -> int:
    """The restart count of the pod's containers (and init containers, when asked), summed."""
    statuses = container_statuses(pod, init=including_init_containers)
    return sum(int(cs.get("restartCount") or 0) for cs in statuses)


class RemovePodsHavingTooManyRestarts:
    """The RemovePodsHavingTooManyRestarts plugin over one cycle's view."""

    name = NAME

    def __init__(self, args: RemovePodsHavingTooManyRestartsArgs, handle: Handle) -> None:
        """Keep the args and the handle."""
        self.args = args
        self.handle = handle

    def _in_state(self, pod: Obj) -> bool:
        states = self.args.states
        if not states or pod_phase(pod) in states:
            return True
        statuses = container_statuses(pod, init=self.args.including_init_containers)
        return any(r in states for r in state_reasons(statuses, ("waiting",)))

    def candidate(self, pod: Obj, restarts: int) -> bool:
        """Whether the pod (with `restarts`) meets the criteria and the evictor lets it go."""
        if (
            restarts < self.args.pod_restart_threshold
            or not self._in_state(pod)
            or not self.args.selection.matches(pod)
        ):
            return False
        return evictor_allows(self.handle.evictor, pod)

    def deschedule(self, nodes: Sequence[Obj]) -> None:
        """Evict the pods of `nodes` that restarted too often, node by node, most restarts first."""
        evict_node_by_node(self.handle.evictor, NAME, (self._chosen(node) for node in nodes))

    def _chosen(self, node: Obj) -> list[Obj]:
        """The node's candidates, most restarts first."""
        init = self.args.including_init_containers
        pods = self.handle.view.pods_on(str(node["metadata"]["name"]))
        counted = [(pod_restarts(pod, init), pod) for pod in pods]
        chosen = [(n, pod) for n, pod in counted if self.candidate(pod, n)]
        chosen.sort(key=lambda item: -item[0])
        return [pod for _, pod in chosen]


def _build(args: RemovePodsHavingTooManyRestartsArgs, handle: Handle) -> RemovePodsHavingTooManyRestarts:
    return RemovePodsHavingTooManyRestarts(args, handle)


SPECS: tuple[PluginSpec, ...] = (PluginSpec(NAME, frozenset((DESCHEDULE,)), parse_args, _build),)
