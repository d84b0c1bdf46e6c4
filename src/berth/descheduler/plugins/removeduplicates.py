"""RemoveDuplicates (upstream ``pkg/framework/plugins/removeduplicates``), a Balance plugin.

Spreads the replicas of one owner over the nodes they could run on. Two pods on the same node are
duplicates when they have the same owner references (namespace, kind, name) and the same container images;
the first such pod on a node is the original, the others duplicates. For each owner (and image set) the
number of its pods, over the number of feasible nodes (the cycle's nodes whose NoSchedule / NoExecute taints
its pods tolerate and whose labels match their node selector and required node affinity, counted only
where a pod shape has at least two), rounded up, is the most a node should hold; the duplicates above that
on each node are evicted. Owners with fewer than two feasible nodes are left alone.

Args (``RemoveDuplicatesArgs``): ``namespaces`` (include or exclude) and ``excludeOwnerKinds`` (pods with an
owner of one of these kinds are ignored).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from berth.api.nodeselector import required_node_affinity
from berth.api.taints import (
    EFFECT_NO_EXECUTE,
    EFFECT_NO_SCHEDULE,
    find_untolerated,
    parse_taints,
    parse_tolerations,
)
from berth.descheduler.args import ArgsReader
from berth.descheduler.framework import BALANCE, Handle, PluginSpec
from berth.descheduler.plugins.eviction_loop import evict_node_by_node, evictor_allows
from berth.descheduler.plugins.podselection import EVERY_POD, PodSelection, is_active, read_pod_selection
from berth.descheduler.view import owner_refs

__all__ = ["NAME", "SPECS", "RemoveDuplicates", "RemoveDuplicatesArgs", "parse_args"]

Obj = dict[str, Any]
NAME = "RemoveDuplicates"
_HARD_EFFECTS = frozenset((EFFECT_NO_SCHEDULE, EFFECT_NO_EXECUTE))


@dataclass(frozen=True)
class RemoveDuplicatesArgs:
    """The plugin's args, defaulted and validated."""

    selection: PodSelection = EVERY_POD
    """``namespaces``: which namespaces' pods are considered."""
    exclude_owner_kinds: frozenset[str] = frozenset()
    """``excludeOwnerKinds``: pods with an owner of one of these kinds are not treated as duplicates."""


def parse_args(reader: ArgsReader) -> RemoveDuplicatesArgs:
    """Read ``RemoveDuplicatesArgs`` (``namespaces``, ``excludeOwnerKinds``)."""
    selection = read_pod_selection(reader, label_selector=False)
    kinds = reader.strings("excludeOwnerKinds")
    reader.finish()
    return RemoveDuplicatesArgs(selection, frozenset(kinds))


class _OwnerKey(NamedTuple):
    """One owner of duplicates: namespace, owner kind and name, and the pods' sorted images."""

    namespace: str
    kind: str
    name: str
    images: str


def _images(pod: Mapping[str, Any]) -> list[str]:
    return sorted(str(c.get("image") or "") for c in (pod.get("spec") or {}).get("containers") or ())


def _shape_key(pod: Mapping[str, Any]) -> str:
    """What decides the nodes a pod may land on here: tolerations, node selector, required node affinity."""
    spec = pod.get("spec") or {}
    required = ((spec.get("affinity") or {}).get("nodeAffinity") or {}).get(
        "requiredDuringSchedulingIgnoredDuringExecution"
    )
    return json.dumps(
        [spec.get("tolerations") or None, spec.get("nodeSelector") or None, required], sort_keys=True
    )


class RemoveDuplicates:
    """Evicts duplicate pods of an owner from nodes holding more than their share."""

    name = NAME

    def __init__(self, args: RemoveDuplicatesArgs, handle: Handle) -> None:
        """Build over the profile's handle."""
        self.args = args
        self.handle = handle

    def _considered(self, pod: Obj) -> bool:
        """The pod filter: selected namespace, active, and allowed by the profile's evictor."""
        return (
            is_active(pod) and self.args.selection.matches(pod) and evictor_allows(self.handle.evictor, pod)
        )

    def balance(self, nodes: Sequence[Obj]) -> None:
        """Find the duplicates on `nodes` and evict those above each owner's per-node share."""
        view = self.handle.view
        excluded = self.args.exclude_owner_kinds
        duplicates: dict[_OwnerKey, dict[str, list[Obj]]] = {}
        occurrences: dict[_OwnerKey, int] = {}
        for node in nodes:
            node_name = str(node["metadata"]["name"])
            seen: set[tuple[str, ...]] = set()
            for pod in view.pods_on(node_name):
                refs = owner_refs(pod)
                if not refs or (excluded and any(str(r.get("kind") or "") in excluded for r in refs)):
                    continue
                if not self._considered(pod):
                    continue
                namespace = str(pod["metadata"].get("namespace") or "")
                images = _images(pod)
                images_hash = "#".join(images)
                owners = [
                    _OwnerKey(namespace, str(r.get("kind") or ""), str(r.get("name") or ""), images_hash)
                    for r in refs
                ]
                for owner in owners:
                    occurrences[owner] = occurrences.get(owner, 0) + 1
                keys = tuple(
                    sorted(f"{namespace}/{o.kind}/{o.name}/{image}" for o in owners for image in images)
                )
                if keys not in seen:
                    seen.add(keys)
                    continue
                for owner in owners:
                    duplicates.setdefault(owner, {}).setdefault(node_name, []).append(pod)

        evict_node_by_node(self.handle.evictor, NAME, self._excess(duplicates, occurrences, nodes))

    def _excess(
        self,
        duplicates: Mapping[_OwnerKey, Mapping[str, list[Obj]]],
        occurrences: Mapping[_OwnerKey, int],
        nodes: Sequence[Obj],
    ) -> Iterator[list[Obj]]:
        """Owner by owner, each node's duplicates above the owner's per-node share (its pods over its feasible
        nodes, rounded up)."""
        feasible_cache: dict[str, tuple[str, ...]] = {}
        for owner, pods_by_node in duplicates.items():
            targets = self._target_nodes(pods_by_node, nodes, feasible_cache)
            if len(targets) < 2:
                continue
            upper_avg = math.ceil(occurrences[owner] / len(targets))
            for pods in pods_by_node.values():
                if len(pods) + 1 > upper_avg:
                    yield pods[upper_avg - 1 :]

    @staticmethod
    def _target_nodes(
        pods_by_node: Mapping[str, list[Obj]], nodes: Sequence[Obj], cache: dict[str, tuple[str, ...]]
    ) -> set[str]:
        """The nodes where the duplicates may land: for each distinct pod shape, the nodes whose hard taints
        it tolerates and whose labels its node selector and required affinity match, when at least two."""
        targets: set[str] = set()
        shapes: dict[str, Obj] = {}
        for pods in pods_by_node.values():
            for pod in pods:
                shapes.setdefault(_shape_key(pod), pod)
        for key, pod in shapes.items():
            got = cache.get(key)
            if got is None:
                spec = pod.get("spec") or {}
                tolerations = parse_tolerations(spec.get("tolerations"))
                affinity = required_node_affinity(pod)
                matching = []
                for node in nodes:
                    name = str(node["metadata"]["name"])
                    taints = parse_taints((node.get("spec") or {}).get("taints"))
                    if find_untolerated(taints, tolerations, _HARD_EFFECTS) is not None:
                        continue
                    if not affinity.matches(node["metadata"].get("labels") or {}, name):
                        continue
                    matching.append(name)
                got = tuple(matching) if len(matching) > 1 else ()
                cache[key] = got
            targets.update(got)
        return targets


def _build(args: Any, handle: Handle) -> RemoveDuplicates:
    return RemoveDuplicates(args, handle)


SPECS: tuple[PluginSpec, ...] = (PluginSpec(NAME, frozenset((BALANCE,)), parse_args, _build),)
