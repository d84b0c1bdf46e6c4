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

from berth.descheduler.args import ArgsReader, PolicyError
from berth.descheduler.framework import DESCHEDULE, EvictOutcome, Handle, PluginSpec
from berth.descheduler.plugins.podselection import EVERY_POD, PodSelection, read_pod_selection
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
    if len(errors) == 1:
        raise reader.error(*errors[0])
    if errors:
        raise PolicyError("; ".join(str(reader.error(f, m)) for f, m in errors))
    return RemovePodsHavingTooManyRestartsArgs(
        pod_restart_threshold=threshold,
        including_init_containers=including_init,
        states=frozenset(states),
        selection=selection,
    )


def pod_restarts(pod: Mapping[str, Any], including_init_containers: bool) -> int:
    """The restart count of the pod's containers (and init containers, when asked), summed."""
    status = pod.get("status") or {}
    total = sum(int(cs.get("restartCount") or 0) for cs in status.get("containerStatuses") or ())
    if including_init_containers:
        total += sum(int(cs.get("restartCount") or 0) for cs in status.get("initContainerStatuses") or ())
    return total


def _waiting_reasons(statuses: Sequence[Mapping[str, Any]]) -> list[str]:
    out: list[str] = []
    for cs in statuses:
        waiting = (cs.get("state") or {}).get("waiting")
        if waiting is not None:
            out.append(str(waiting.get("reason") or ""))
    return out


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
        status = pod.get("status") or {}
        reasons = _waiting_reasons(status.get("containerStatuses") or ())
        if self.args.including_init_containers:
            reasons += _waiting_reasons(status.get("initContainerStatuses") or ())
        return any(r in states for r in reasons)

    def candidate(self, pod: Obj, restarts: int) -> bool:
        """Whether the pod (with `restarts`) meets the criteria and the evictor lets it go."""
        if (
            restarts < self.args.pod_restart_threshold
            or not self._in_state(pod)
            or not self.args.selection.matches(pod)
        ):
            return False
        evictor = self.handle.evictor
        return evictor.filter(pod) and evictor.pre_eviction_filter(pod)

    def deschedule(self, nodes: Sequence[Obj]) -> None:
        """Evict the pods of `nodes` that restarted too often, node by node, most restarts first."""
        view = self.handle.view
        evictor = self.handle.evictor
        init = self.args.including_init_containers
        for node in nodes:
            counted = [(pod_restarts(pod, init), pod) for pod in view.pods_on(str(node["metadata"]["name"]))]
            chosen = [(n, pod) for n, pod in counted if self.candidate(pod, n)]
            chosen.sort(key=lambda item: -item[0])
            for _, pod in chosen:
                outcome = evictor.evict(pod, NAME)
                if outcome is EvictOutcome.NODE_LIMIT:
                    break
                if outcome is EvictOutcome.TOTAL_LIMIT:
                    return


def _build(args: RemovePodsHavingTooManyRestartsArgs, handle: Handle) -> RemovePodsHavingTooManyRestarts:
    return RemovePodsHavingTooManyRestarts(args, handle)


SPECS: tuple[PluginSpec, ...] = (PluginSpec(NAME, frozenset((DESCHEDULE,)), parse_args, _build),)
