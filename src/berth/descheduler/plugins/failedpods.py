"""RemoveFailedPods: kubernetes-sigs/descheduler's ``pkg/framework/plugins/removefailedpods``.

A Deschedule plugin. On each of the cycle's nodes, in turn, every pod in phase ``Failed`` that passes the
profile's evictor (filter and preEvictionFilter), ``namespaces`` and ``labelSelector`` is evicted when:

* it is at least ``minPodLifetimeSeconds`` old (default 3600; measured against the view's ``now``);
* none of its owners' kinds is in ``excludeOwnerKinds``;
* with ``reasons``: a container's waiting or terminated reason, or the pod's ``status.reason``, is listed
  (init containers too with ``includingInitContainers``);
* with ``exitCodes``: a (init, with ``includingInitContainers``) container terminated with a listed code.

A node-limit refusal moves on to the next node; the total limit ends the plugin's run.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from berth.api.timestamps import unix_seconds
from berth.descheduler.args import ArgsReader
from berth.descheduler.framework import DESCHEDULE, Handle, PluginSpec
from berth.descheduler.plugins.eviction_loop import evict_node_by_node, evictor_allows
from berth.descheduler.plugins.podselection import (
    EVERY_POD,
    PodSelection,
    container_statuses,
    exit_codes,
    read_pod_selection,
    state_reasons,
)
from berth.descheduler.view import owner_refs, pod_phase

__all__ = [
    "DEFAULT_MIN_POD_LIFETIME_SECONDS",
    "NAME",
    "SPECS",
    "RemoveFailedPods",
    "RemoveFailedPodsArgs",
    "parse_args",
]

Obj = dict[str, Any]
NAME = "RemoveFailedPods"
DEFAULT_MIN_POD_LIFETIME_SECONDS = 3600


@dataclass(frozen=True)
class RemoveFailedPodsArgs:
    """RemoveFailedPodsArgs with upstream's defaults (``minPodLifetimeSeconds`` 3600)."""

    selection: PodSelection = EVERY_POD
    """``namespaces`` and ``labelSelector``."""
    exclude_owner_kinds: frozenset[str] = frozenset()
    min_pod_lifetime_seconds: int = DEFAULT_MIN_POD_LIFETIME_SECONDS
    reasons: frozenset[str] = frozenset()
    exit_codes: frozenset[int] = frozenset()
    including_init_containers: bool = False


def parse_args(reader: ArgsReader) -> RemoveFailedPodsArgs:
    """Read and validate RemoveFailedPodsArgs (upstream's ``ValidateRemoveFailedPodsArgs``)."""
    selection = read_pod_selection(reader)
    exclude_kinds = reader.strings("excludeOwnerKinds")
    min_lifetime = reader.integer("minPodLifetimeSeconds", DEFAULT_MIN_POD_LIFETIME_SECONDS, minimum=0)
    reasons = reader.strings("reasons")
    codes = reader.integers("exitCodes")
    including_init = reader.flag("includingInitContainers")
    reader.finish()
    assert min_lifetime is not None
    return RemoveFailedPodsArgs(
        selection=selection,
        exclude_owner_kinds=frozenset(exclude_kinds),
        min_pod_lifetime_seconds=min_lifetime,
        reasons=frozenset(reasons),
        exit_codes=frozenset(codes),
        including_init_containers=including_init,
    )


class RemoveFailedPods:
    """The RemoveFailedPods plugin over one cycle's view."""

    name = NAME

    def __init__(self, args: RemoveFailedPodsArgs, handle: Handle) -> None:
        """Keep the args and the handle."""
        self.args = args
        self.handle = handle

    def can_evict(self, pod: Obj) -> bool:
        """The plugin's own criteria (upstream's ``validateCanEvict``) for a failed pod."""
        args = self.args
        created = unix_seconds((pod.get("metadata") or {}).get("creationTimestamp"))
        if created is not None:
            age = self.handle.view.now - created
            if max(0, int(age)) < args.min_pod_lifetime_seconds:
                return False
        if args.exclude_owner_kinds and any(
            ref.get("kind") in args.exclude_owner_kinds for ref in owner_refs(pod)
        ):
            return False
        statuses = container_statuses(pod, init=args.including_init_containers)
        if args.reasons:
            reasons = state_reasons(statuses)
            status = pod.get("status") or {}
            if pod_phase(pod) == "Failed" and status.get("reason"):
                reasons.append(str(status["reason"]))
            if not any(r in args.reasons for r in reasons):
                return False
        return not args.exit_codes or any(c in args.exit_codes for c in exit_codes(statuses))

    def candidate(self, pod: Obj) -> bool:
        """Whether the pod has failed, meets the criteria and the evictor lets it go."""
        if pod_phase(pod) != "Failed" or not self.args.selection.matches(pod) or not self.can_evict(pod):
            return False
        return evictor_allows(self.handle.evictor, pod)

    def deschedule(self, nodes: Sequence[Obj]) -> None:
        """Evict the failed pods of `nodes`, node by node."""
        view = self.handle.view
        evict_node_by_node(
            self.handle.evictor,
            NAME,
            (
                (pod for pod in view.pods_on(str(node["metadata"]["name"])) if self.candidate(pod))
                for node in nodes
            ),
        )


def _build(args: RemoveFailedPodsArgs, handle: Handle) -> RemoveFailedPods:
    return RemoveFailedPods(args, handle)


SPECS: tuple[PluginSpec, ...] = (PluginSpec(NAME, frozenset((DESCHEDULE,)), parse_args, _build),)
