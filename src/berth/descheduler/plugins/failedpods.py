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

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from berth.api.timestamps import unix_seconds
from berth.descheduler.args import ArgsReader
from berth.descheduler.framework import DESCHEDULE, EvictOutcome, Handle, PluginSpec
from berth.descheduler.plugins.podselection import EVERY_POD, PodSelection, read_pod_selection
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


def _int_list(reader: ArgsReader, name: str) -> tuple[int, ...]:
    """A list of integers (empty when absent)."""
    raw = reader.value(name)
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise reader.error(name, "must be a list of integers")
    for i, item in enumerate(raw):
        if isinstance(item, bool) or not isinstance(item, int):
            raise reader.error(f"{name}[{i}]", f"must be an integer, not {item!r}")
    return tuple(raw)


def parse_args(reader: ArgsReader) -> RemoveFailedPodsArgs:
    """Read and validate RemoveFailedPodsArgs (upstream's ``ValidateRemoveFailedPodsArgs``)."""
    selection = read_pod_selection(reader)
    exclude_kinds = reader.strings("excludeOwnerKinds")
    min_lifetime = reader.integer("minPodLifetimeSeconds", DEFAULT_MIN_POD_LIFETIME_SECONDS, minimum=0)
    reasons = reader.strings("reasons")
    exit_codes = _int_list(reader, "exitCodes")
    including_init = reader.flag("includingInitContainers")
    reader.finish()
    assert min_lifetime is not None
    return RemoveFailedPodsArgs(
        selection=selection,
        exclude_owner_kinds=frozenset(exclude_kinds),
        min_pod_lifetime_seconds=min_lifetime,
        reasons=frozenset(reasons),
        exit_codes=frozenset(exit_codes),
        including_init_containers=including_init,
    )


def _statuses(status: Mapping[str, Any], key: str) -> list[Mapping[str, Any]]:
    return list(status.get(key) or ())


def _failed_reasons(statuses: list[Mapping[str, Any]]) -> list[str]:
    """The non-empty waiting and terminated reasons of container statuses."""
    out: list[str] = []
    for cs in statuses:
        state = cs.get("state") or {}
        for which in ("waiting", "terminated"):
            got = state.get(which)
            if got is not None and got.get("reason"):
                out.append(str(got["reason"]))
    return out


def _exit_codes(statuses: list[Mapping[str, Any]]) -> list[int]:
    """The exit codes of terminated container statuses."""
    out: list[int] = []
    for cs in statuses:
        terminated = (cs.get("state") or {}).get("terminated")
        if terminated is not None:
            out.append(int(terminated.get("exitCode") or 0))
    return out


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
        status = pod.get("status") or {}
        if args.reasons:
            reasons = _failed_reasons(_statuses(status, "containerStatuses"))
            if pod_phase(pod) == "Failed" and status.get("reason"):
                reasons.append(str(status["reason"]))
            if args.including_init_containers:
                reasons += _failed_reasons(_statuses(status, "initContainerStatuses"))
            if not any(r in args.reasons for r in reasons):
                return False
        if args.exit_codes:
            codes = _exit_codes(_statuses(status, "containerStatuses"))
            if args.including_init_containers:
                codes += _exit_codes(_statuses(status, "initContainerStatuses"))
            if not any(c in args.exit_codes for c in codes):
                return False
        return True

    def candidate(self, pod: Obj) -> bool:
        """Whether the pod has failed, meets the criteria and the evictor lets it go."""
        if pod_phase(pod) != "Failed" or not self.args.selection.matches(pod) or not self.can_evict(pod):
            return False
        evictor = self.handle.evictor
        return evictor.filter(pod) and evictor.pre_eviction_filter(pod)

    def deschedule(self, nodes: Sequence[Obj]) -> None:
        """Evict the failed pods of `nodes`, node by node."""
        view = self.handle.view
        evictor = self.handle.evictor
        for node in nodes:
            for pod in view.pods_on(str(node["metadata"]["name"])):
                if not self.candidate(pod):
                    continue
                outcome = evictor.evict(pod, NAME)
                if outcome is EvictOutcome.NODE_LIMIT:
                    break
                if outcome is EvictOutcome.TOTAL_LIMIT:
                    return


def _build(args: RemoveFailedPodsArgs, handle: Handle) -> RemoveFailedPods:
    return RemoveFailedPods(args, handle)


SPECS: tuple[PluginSpec, ...] = (PluginSpec(NAME, frozenset((DESCHEDULE,)), parse_args, _build),)
