"""RemovePodsViolatingNodeAffinity (upstream ``pkg/framework/plugins/removepodsviolatingnodeaffinity``), a
Deschedule plugin.

For each ``nodeAffinityType`` in turn, node by node, evicts the pods that

* ``requiredDuringSchedulingIgnoredDuringExecution``: have required node affinity, no longer match their
  node (its nodeSelector and required node affinity), and fit some node of the cycle (NodeFit);
* ``preferredDuringSchedulingIgnoredDuringExecution``: have preferred node affinity, fit some node of the
  cycle, and some node of the cycle scores higher on their preferred terms (sum of the matching terms'
  weights) than their own.

Only pods the profile's evictor allows (filter and preEvictionFilter) and that ``namespaces`` /
``labelSelector`` select are considered.

Args (``RemovePodsViolatingNodeAffinityArgs``): ``nodeAffinityType`` (required, non-empty), ``namespaces``
(include or exclude), ``labelSelector``. Upstream accepts an unknown ``nodeAffinityType`` and ignores it at
run time; Berth rejects it when the policy is read.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from berth.api.nodeselector import (
    RequiredNodeAffinity,
    compile_preferred_terms,
    preferred_score,
    required_node_affinity,
)
from berth.descheduler.args import ArgsReader
from berth.descheduler.framework import DESCHEDULE, Handle, PluginSpec
from berth.descheduler.plugins._fitcache import FitMasks
from berth.descheduler.plugins.eviction_loop import evict_node_by_node, evictor_allows
from berth.descheduler.plugins.podselection import EVERY_POD, PodSelection, is_active, read_pod_selection

__all__ = [
    "NAME",
    "PREFERRED",
    "REQUIRED",
    "SPECS",
    "RemovePodsViolatingNodeAffinity",
    "RemovePodsViolatingNodeAffinityArgs",
    "parse_args",
]

Obj = dict[str, Any]
NAME = "RemovePodsViolatingNodeAffinity"
REQUIRED = "requiredDuringSchedulingIgnoredDuringExecution"
PREFERRED = "preferredDuringSchedulingIgnoredDuringExecution"
_TYPES = (REQUIRED, PREFERRED)


@dataclass(frozen=True)
class RemovePodsViolatingNodeAffinityArgs:
    """The plugin's args, defaulted and validated."""

    node_affinity_type: tuple[str, ...] = (REQUIRED,)
    """``nodeAffinityType``: the kinds of node affinity enforced, in order."""
    selection: PodSelection = EVERY_POD
    """``namespaces`` and ``labelSelector``: the pods considered."""


def parse_args(reader: ArgsReader) -> RemovePodsViolatingNodeAffinityArgs:
    """Read ``RemovePodsViolatingNodeAffinityArgs``; ``nodeAffinityType`` must name at least one type."""
    types = reader.strings("nodeAffinityType")
    if not types:
        raise reader.error("nodeAffinityType", "nodeAffinityType needs to be set")
    for i, kind in enumerate(types):
        if kind not in _TYPES:
            raise reader.error(
                f"nodeAffinityType[{i}]", f"unsupported value {kind!r}: must be one of {', '.join(_TYPES)}"
            )
    selection = read_pod_selection(reader)
    reader.finish()
    return RemovePodsViolatingNodeAffinityArgs(types, selection)


def _node_affinity(pod: Obj) -> dict[str, Any]:
    affinity = (pod.get("spec") or {}).get("affinity") or {}
    got: dict[str, Any] = affinity.get("nodeAffinity") or {}
    return got


class RemovePodsViolatingNodeAffinity:
    """Evicts pods whose node no longer satisfies (or no longer best satisfies) their node affinity."""

    name = NAME

    def __init__(self, args: RemovePodsViolatingNodeAffinityArgs, handle: Handle) -> None:
        """Build over the profile's handle."""
        self.args = args
        self.handle = handle

    def deschedule(self, nodes: Sequence[Obj]) -> None:
        """Evict, type by type and node by node, the pods violating their node affinity."""
        fits = FitMasks(self.handle.fit, self.handle.view)
        indices = fits.indices(_node_name(n) for n in nodes)
        scores: dict[str, npt.NDArray[np.int64]] = {}

        def fits_any(pod: Obj) -> bool:
            return fits.fits_any(pod, indices)

        def preferred_scores(pod: Obj) -> npt.NDArray[np.int64]:
            raw = _node_affinity(pod).get(PREFERRED)
            key = repr(raw)
            got = scores.get(key)
            if got is None:
                terms = compile_preferred_terms(raw)
                got = np.fromiter(
                    (
                        preferred_score(terms, n["metadata"].get("labels") or {}, str(n["metadata"]["name"]))
                        for n in nodes
                    ),
                    dtype=np.int64,
                    count=len(nodes),
                )
                scores[key] = got
            return got

        positions = {str(n["metadata"]["name"]): i for i, n in enumerate(nodes)}

        compiled: dict[str, RequiredNodeAffinity] = {}

        def violates_required(pod: Obj, node: Obj) -> bool:
            required = _node_affinity(pod).get(REQUIRED)
            if required is None:
                return False
            key = repr((required, (pod.get("spec") or {}).get("nodeSelector")))
            affinity = compiled.get(key)
            if affinity is None:
                affinity = compiled[key] = required_node_affinity(pod)
            if affinity.matches(node["metadata"].get("labels") or {}, _node_name(node)):
                return False
            return self._evictable(pod) and fits_any(pod)

        def violates_preferred(pod: Obj, node: Obj) -> bool:
            if not _node_affinity(pod).get(PREFERRED):
                return False
            got = preferred_scores(pod)
            best = max(int(got.max()), 0) if len(got) else 0
            if best <= int(got[positions[_node_name(node)]]):
                return False
            return self._evictable(pod) and fits_any(pod)

        for kind in self.args.node_affinity_type:
            check = violates_required if kind == REQUIRED else violates_preferred
            if not self._process(nodes, check):
                return

    def _evictable(self, pod: Obj) -> bool:
        return self.args.selection.matches(pod) and evictor_allows(self.handle.evictor, pod)

    def _process(self, nodes: Sequence[Obj], check: Callable[[Obj, Obj], bool]) -> bool:
        """Evict the pods `check` picks, node by node; False once the total limit is reached."""
        view = self.handle.view
        return evict_node_by_node(
            self.handle.evictor,
            NAME,
            (
                [p for p in view.pods_on(_node_name(node)) if is_active(p) and check(p, node)]
                for node in nodes
            ),
        )


def _node_name(node: Obj) -> str:
    return str(node["metadata"]["name"])


def _build(args: Any, handle: Handle) -> RemovePodsViolatingNodeAffinity:
    return RemovePodsViolatingNodeAffinity(args, handle)


SPECS: tuple[PluginSpec, ...] = (PluginSpec(NAME, frozenset((DESCHEDULE,)), parse_args, _build),)
