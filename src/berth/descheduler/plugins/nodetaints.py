"""RemovePodsViolatingNodeTaints (upstream ``pkg/framework/plugins/removepodsviolatingnodetaints``), a
Deschedule plugin.

Evicts, node by node, the pods that do not tolerate one of their node's ``NoSchedule`` taints (and
``PreferNoSchedule`` ones with ``includePreferNoSchedule``) — typically taints added after the pods were
scheduled. ``NoExecute`` taints are left to the taint manager. A taint is skipped when ``excludedTaints``
names its key or ``key=value``; with ``includedTaints`` only the taints it names (key or ``key=value``)
count. As upstream, ``includedTaints: []`` (given but empty) counts no taint at all.

Only pods the profile's evictor allows and that ``namespaces`` / ``labelSelector`` select are considered.

Args (``RemovePodsViolatingNodeTaintsArgs``): ``namespaces``, ``labelSelector``, ``includePreferNoSchedule``
(false), ``excludedTaints``, ``includedTaints`` (at most one of the two).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from berth.api.taints import (
    EFFECT_NO_SCHEDULE,
    EFFECT_PREFER_NO_SCHEDULE,
    Taint,
    Toleration,
    parse_taints,
    parse_tolerations,
)
from berth.descheduler.args import ArgsReader
from berth.descheduler.framework import DESCHEDULE, Handle, PluginSpec
from berth.descheduler.plugins.eviction_loop import evict_node_by_node, evictor_allows
from berth.descheduler.plugins.podselection import EVERY_POD, PodSelection, is_active, read_pod_selection

__all__ = [
    "NAME",
    "SPECS",
    "RemovePodsViolatingNodeTaints",
    "RemovePodsViolatingNodeTaintsArgs",
    "parse_args",
]

Obj = dict[str, Any]
NAME = "RemovePodsViolatingNodeTaints"


@dataclass(frozen=True)
class RemovePodsViolatingNodeTaintsArgs:
    """The plugin's args, defaulted and validated."""

    selection: PodSelection = EVERY_POD
    """``namespaces`` and ``labelSelector``: the pods considered."""
    include_prefer_no_schedule: bool = False
    """``includePreferNoSchedule``: also enforce PreferNoSchedule taints."""
    excluded_taints: frozenset[str] = frozenset()
    """``excludedTaints``: taint keys or ``key=value`` pairs never enforced."""
    included_taints: frozenset[str] | None = None
    """``includedTaints``: when given, only these taint keys or ``key=value`` pairs are enforced."""

    def enforces(self, taint: Taint) -> bool:
        """Whether the plugin evicts pods for not tolerating `taint`."""
        if taint.effect != EFFECT_NO_SCHEDULE and not (
            self.include_prefer_no_schedule and taint.effect == EFFECT_PREFER_NO_SCHEDULE
        ):
            return False
        pair = f"{taint.key}={taint.value}" if taint.value else None
        if taint.key in self.excluded_taints or (pair is not None and pair in self.excluded_taints):
            return False
        included = self.included_taints
        return included is None or taint.key in included or (pair is not None and pair in included)


def parse_args(reader: ArgsReader) -> RemovePodsViolatingNodeTaintsArgs:
    """Read ``RemovePodsViolatingNodeTaintsArgs``; ``includedTaints`` and ``excludedTaints`` exclude each
    other."""
    selection = read_pod_selection(reader)
    prefer = reader.flag("includePreferNoSchedule")
    excluded = reader.strings("excludedTaints")
    included_given = reader.has("includedTaints")
    included = reader.strings("includedTaints")
    if excluded and included:
        raise reader.error(
            "includedTaints", "either includedTaints or excludedTaints can be set, but not both"
        )
    reader.finish()
    return RemovePodsViolatingNodeTaintsArgs(
        selection, prefer, frozenset(excluded), frozenset(included) if included_given else None
    )


class RemovePodsViolatingNodeTaints:
    """Evicts pods that do not tolerate their node's (enforced) taints."""

    name = NAME

    def __init__(self, args: RemovePodsViolatingNodeTaintsArgs, handle: Handle) -> None:
        """Build over the profile's handle."""
        self.args = args
        self.handle = handle
        self._tolerations: dict[str, tuple[Toleration, ...]] = {}

    def _pod_tolerations(self, pod: Obj) -> tuple[Toleration, ...]:
        raw = (pod.get("spec") or {}).get("tolerations")
        if not raw:
            return ()
        key = json.dumps(raw, sort_keys=True)
        got = self._tolerations.get(key)
        if got is None:
            got = parse_tolerations(raw)
            self._tolerations[key] = got
        return got

    def deschedule(self, nodes: Sequence[Obj]) -> None:
        """Evict, node by node, the pods not tolerating an enforced taint of their node."""
        evict_node_by_node(self.handle.evictor, NAME, (self._chosen(node) for node in nodes))

    def _chosen(self, node: Obj) -> list[Obj]:
        """The node's selected pods that do not tolerate one of its enforced taints."""
        taints = [t for t in parse_taints((node.get("spec") or {}).get("taints")) if self.args.enforces(t)]
        if not taints:
            return []
        selection = self.args.selection
        evictor = self.handle.evictor
        return [
            pod
            for pod in self.handle.view.pods_on(str(node["metadata"]["name"]))
            if is_active(pod)
            and selection.matches(pod)
            and not self._tolerates(pod, taints)
            and evictor_allows(evictor, pod)
        ]

    def _tolerates(self, pod: Obj, taints: Sequence[Taint]) -> bool:
        """Whether the pod tolerates every one of `taints`."""
        tolerations = self._pod_tolerations(pod)
        return all(any(t.tolerates(taint) for t in tolerations) for taint in taints)


def _build(args: Any, handle: Handle) -> RemovePodsViolatingNodeTaints:
    return RemovePodsViolatingNodeTaints(args, handle)


SPECS: tuple[PluginSpec, ...] = (PluginSpec(NAME, frozenset((DESCHEDULE,)), parse_args, _build),)
